#!/usr/bin/env bash
# aarch64_test.sh SOURCE_DIR BUILD_DIR: cross-build the release binary for
# aarch64 (packaging/aarch64-linux-gnu.cmake, -DTPT_STATIC=ON) and run it
# under qemu-user on the founding case. Exits 77 (skip) when the cross
# toolchain, qemu-user or the :arm64 libraries are not installed
# (.ci/setup --cross installs them).
set -uo pipefail
src=$(realpath "$1"); build="$(realpath "$2")/aarch64"
fail() { echo "FAIL: $*"; exit 1; }
for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed (.ci/setup --cross)"; exit 77; }
done
for lib in libre2.a libhs.a libboost_program_options.a libz.a libarchive.a liblzma.a libzstd.a libnettle.a libbz2.a; do
  [ -e "/usr/lib/aarch64-linux-gnu/$lib" ] || { echo "SKIP: /usr/lib/aarch64-linux-gnu/$lib missing (.ci/setup --cross)"; exit 77; }
done
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$src" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$src/packaging/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DTPT_STATIC=ON -DTPT_WITH_CUDA=OFF -DTPT_BUILD_TESTS=OFF "${launcher[@]}" > "$build.configure.log" 2>&1 \
  || { tail -20 "$build.configure.log"; fail "configure"; }
cmake --build "$build" -j"$(nproc)" --target tptriage > "$build.build.log" 2>&1 \
  || { tail -30 "$build.build.log"; fail "build"; }
bin="$build/tptriage"
readelf -h "$bin" | grep -q 'AArch64' || fail "$bin is not an aarch64 binary"
needed=$(readelf -d "$bin" | grep NEEDED | grep -o '\[.*\]' | tr '\n' ' ')
echo "aarch64: $(stat -c %s "$bin") B, needs $needed"
grep -qE 'libre2|libhs|libboost|libz\.|libstdc|libarchive|liblzma|libzstd|libnettle|libbz2' <<<"$needed" && fail "not one file: needs $needed"
run() { qemu-aarch64 -L /usr/aarch64-linux-gnu "$bin" "$@"; }
run --version | grep -q '^tptriage ' || fail "--version under qemu"
out=$(run analyze "$src/samples/founding/sglang-tp8-rtxpro6000-mfs050.log" --format json); code=$?
[ "$code" -eq 1 ] || fail "analyze under qemu: exit $code"
grep -q '"root_cause": "kv_pool_no_room"' <<<"$out" || fail "analyze under qemu: wrong root cause"
grep -q '"min_viable_mem_fraction_static": 0.77' <<<"$out" || fail "analyze under qemu: wrong figures"
# Inputs as they come, decoded by the static libarchive/liblzma/libzstd.
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
log="$src/samples/founding/sglang-tp8-rtxpro6000-mfs050.log"
python3 -c 'import lzma,sys,zipfile
d = open(sys.argv[1], "rb").read()
open(sys.argv[2] + "/run.log.xz", "wb").write(lzma.compress(d))
with zipfile.ZipFile(sys.argv[2] + "/logs.zip", "w", zipfile.ZIP_DEFLATED) as z: z.writestr("serve/2_Run server.txt", d)' "$log" "$work"
for in in "$work/run.log.xz" "$work/logs.zip"; do
  out=$(run analyze "$in" --format json); code=$?
  [ "$code" -eq 1 ] && grep -q '"root_cause": "kv_pool_no_room"' <<<"$out" || fail "analyze $(basename "$in") under qemu: exit $code"
done
echo "aarch64: ok"
