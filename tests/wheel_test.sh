#!/usr/bin/env bash
# wheel_test.sh TPTRIAGE SOURCE_DIR [auditwheel [TAG]]: the Python wheel
# (packaging/wheel/build_wheel.py) built from the binary, installed offline
# into a fresh venv: `tptriage` on the venv's PATH and `python -m tptriage`
# both analyse the founding case. With "auditwheel": `auditwheel show` agrees
# with the wheel's platform tag (and it is TAG, when given). Exits 77 (skip) when the binary is not a
# release (static) build, or when python3 -m venv / auditwheel are missing.
set -uo pipefail
. "$(dirname "$0")/elf_arch.sh"
[ -e "$1" ] || { echo "SKIP: $1 not built"; exit 77; }
bin=$(realpath "$1"); src=$(realpath "$2"); mode="${3:-install}"; want_tag="${4:-}"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
sample="$src/samples/founding/sglang-tp8-rtxpro6000-mfs050.log"
if readelf -d "$bin" | grep NEEDED | grep -qvE 'lib(c|m|dl|pthread|rt|gcc_s)\.so|ld-linux'; then
  echo "SKIP: $bin needs shared libraries beyond glibc; the wheel takes a -DTPT_STATIC=ON build"; exit 77
fi
# With TAG (manylinux_2_Y_ARCH) the wheel is built for glibc 2.Y (--glibc).
glibc_opt=()
[ -z "$want_tag" ] || glibc_opt=(--glibc "2.$(echo "$want_tag" | sed -E 's/^manylinux_2_([0-9]+)_.*/\1/')")
# A binary of another machine cannot say its version here: asked under qemu-user.
version_opt=()
if [ "$(elf_arch "$bin")" != "$(uname -m)" ]; then
  runner=$(elf_runner "$bin") || { echo "SKIP: $bin is $(elf_arch "$bin"): no qemu-$(elf_arch "$bin") to ask its version"; exit 77; }
  version_opt=(--version "$($runner "$bin" --version | head -1 | cut -d' ' -f2)")
fi
whl=$(python3 "$src/packaging/wheel/build_wheel.py" "$bin" "$work/dist" "${glibc_opt[@]}" "${version_opt[@]}") || fail "build_wheel.py failed"
# The licence travels in the wheel's metadata.
python3 - "$whl" <<'PY' || fail "the wheel carries no Apache-2.0 licence"
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
assert "License: Apache-2.0" in z.read(meta).decode(), "METADATA"
assert any(n.endswith(".dist-info/LICENSE") for n in z.namelist()), "LICENSE"
PY
case "$(basename "$whl")" in
  tptriage-*-py3-none-manylinux_2_*_"$(elf_arch "$bin")".whl) ;;
  *) fail "unexpected wheel name $(basename "$whl")" ;;
esac
if [ "$mode" = auditwheel ]; then
  command -v auditwheel >/dev/null || { echo "SKIP: auditwheel not installed (.ci/setup --test installs it)"; exit 77; }
  tag=$(basename "$whl" .whl); tag=${tag##*-}
  [ -z "$want_tag" ] || [ "$tag" = "$want_tag" ] || fail "the wheel's tag is $tag, not $want_tag"
  out=$(auditwheel show "$whl" 2>&1) || fail "auditwheel show: $out"
  echo "$out"
  allowed=$(echo "$out" | tr -s ' \n' ' ' | sed -nE 's/.*consistent with the following platform tag: "([^"]+)".*/\1/p')
  [ -n "$allowed" ] || fail "auditwheel names no platform tag"
  if [ -z "$want_tag" ]; then
    [ "$allowed" = "$tag" ] || fail "auditwheel does not confirm $tag (it says $allowed)"
  else
    # auditwheel names the oldest glibc the wheel allows; the tag may be newer, never older.
    newer=$(printf '%s\n%s\n' "${allowed#manylinux_2_}" "${tag#manylinux_2_}" | sort -V | tail -1)
    [ "$newer" = "${tag#manylinux_2_}" ] || fail "the tag $tag claims an older glibc than auditwheel allows ($allowed)"
  fi
  echo "wheel: auditwheel confirms $tag"; exit 0
fi
[ "$(elf_arch "$bin")" = "$(uname -m)" ] || { echo "SKIP: a $(elf_arch "$bin") wheel installs into a venv of its own machine only"; exit 77; }
python3 -m venv "$work/venv" >/dev/null 2>&1 || { echo "SKIP: python3 -m venv unavailable (Debian: python3-venv)"; exit 77; }
start=$(date +%s.%N)
"$work/venv/bin/python" -m pip install --no-index --no-deps --disable-pip-version-check -q "$whl" \
  || fail "pip install --no-index of $whl failed"
end=$(date +%s.%N)
echo "wheel: offline install into a fresh venv took $(echo "$end - $start" | bc 2>/dev/null || echo '?') s"
[ -x "$work/venv/bin/tptriage" ] || fail "tptriage not in the venv's bin"
"$work/venv/bin/tptriage" --version | grep -q '^tptriage ' || fail "venv tptriage --version"
out=$(PATH="$work/venv/bin:/usr/bin:/bin" tptriage analyze "$sample" --format json); code=$?
[ "$code" -eq 1 ] || fail "tptriage from PATH: exit $code"
grep -q '"root_cause": "kv_pool_no_room"' <<<"$out" || fail "tptriage from PATH: wrong answer"
out=$("$work/venv/bin/python" -m tptriage analyze "$sample" --format json); code=$?
[ "$code" -eq 1 ] || fail "python -m tptriage: exit $code"
grep -q '"root_cause": "kv_pool_no_room"' <<<"$out" || fail "python -m tptriage: wrong answer"
# Nothing but the launcher is Python.
n=$(python3 -c 'import sys,zipfile; print(sum(n.endswith(".py") for n in zipfile.ZipFile(sys.argv[1]).namelist()))' "$whl")
[ "$n" -eq 2 ] || fail "the wheel holds $n Python files; expected __init__.py and __main__.py"
"$work/venv/bin/python" -m pip uninstall -y -q tptriage || fail "uninstall"
[ ! -e "$work/venv/bin/tptriage" ] || fail "uninstall left the binary"
echo "wheel: ok"
