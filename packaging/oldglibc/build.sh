#!/usr/bin/env bash
# packaging/oldglibc/build.sh [x86_64|aarch64]: the release binary for glibc
# >= 2.28 (manylinux_2_28). zig's clang (PyPI `ziglang`) compiles for
# ARCH-linux-gnu.2.28 against the glibc 2.28 stubs zig carries, with LLVM's
# libc++ linked statically; every library the binary links statically is
# built here from source with that compiler:
#   zlib, bzip2, xz (liblzma), zstd, nettle, libarchive, RE2 (20220601, no
#   abseil), Boost.ProgramOptions 1.74: Debian 12's source packages
#   (`apt-get source`, needs a deb-src line);
#   Vectorscan: Debian's source (5.4.9) is not served by the mirror reached
#   here, so $TPT_VECTORSCAN_SRC (a checkout or git dir of
#   github.com/VectorCamp/vectorscan) is built, at -march=x86_64_v2 (zig's spelling of x86-64-v2).
# Nothing is fetched twice: sources, the zig venv and each built library stay
# in $TPT_OLDGLIBC_CACHE (default ~/.cache/tptriage-oldglibc); a library is
# rebuilt only when its stamp file is removed. Output: build-oldglibc-ARCH/tptriage.
# CPU-heavy (about an hour at -j2 on the first run): JOBS=N, default 2.
# It is not part of .ci/test; tests/glibc_floor_test.sh checks what it made.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
arch=${1:-$(uname -m)}
glibc=2.28
target=$arch-linux-gnu.$glibc
jobs=${JOBS:-2}
cache=${TPT_OLDGLIBC_CACHE:-$HOME/.cache/tptriage-oldglibc}
prefix=$cache/$target/prefix
work=$cache/$target/work
bin=$cache/$target/bin
src=$cache/src
mkdir -p "$prefix/lib/pkgconfig" "$prefix/include" "$work" "$bin" "$src"
log() { echo "oldglibc: $*" >&2; }

# --- zig from PyPI, wrapped so that build systems see plain cc/c++/ar.
if [ ! -x "$cache/venv/bin/python" ]; then
  python3 -m venv "$cache/venv"
  "$cache/venv/bin/pip" install --quiet ziglang
fi
zig="$("$cache/venv/bin/python" -c 'import ziglang,os;print(os.path.dirname(ziglang.__file__))')/zig"
for t in cc c++; do
  printf '#!/bin/sh\nexec "%s" %s -target %s "$@"\n' "$zig" "$t" "$target" > "$bin/$t"
done
for t in ar ranlib; do printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$zig" "$t" > "$bin/$t"; done
chmod +x "$bin"/*
export CC="$bin/cc" CXX="$bin/c++" AR="$bin/ar" RANLIB="$bin/ranlib"
# Boost 1.74 predates libc++ dropping std::unary_function (C++17).
export CFLAGS="-O2 -fPIC -w" CXXFLAGS="-O2 -fPIC -w -DBOOST_NO_CXX98_FUNCTION_BASE"
case "$arch" in
  x86_64) CFLAGS="$CFLAGS -march=x86_64_v2"; CXXFLAGS="$CXXFLAGS -march=x86_64_v2"; host=x86_64-linux-gnu ;;
  # An explicit -march also keeps Vectorscan from adding -march=native (the
  # build host's CPU, unknown to an aarch64 target).
  aarch64) CFLAGS="$CFLAGS -march=generic"; CXXFLAGS="$CXXFLAGS -march=generic"; host=aarch64-linux-gnu ;;
  *) echo "oldglibc: unknown architecture '$arch' (x86_64 or aarch64)" >&2; exit 2 ;;
esac
export PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" PKG_CONFIG_PATH=""
cmake_dep=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_PREFIX_PATH="$prefix"
           -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_AR="$AR" -DCMAKE_RANLIB="$RANLIB"
           -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS" -DBUILD_SHARED_LIBS=OFF
           -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_INSTALL_LIBDIR=lib)
[ "$arch" = "$(uname -m)" ] || cmake_dep+=(-DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR="$arch")

# --- Debian source packages, downloaded once.
fetch_src() {  # fetch_src PACKAGE: unpacks PACKAGE's orig tarball into $work/PACKAGE
  local pkg=$1
  if ! ls "$src/${pkg}_"*.orig.tar.* >/dev/null 2>&1; then
    (cd "$src" && apt-get source --download-only -qq "$pkg") || {
      echo "oldglibc: 'apt-get source $pkg' failed: add a deb-src line for bookworm (see packaging/README.md)" >&2; exit 3; }
  fi
  rm -rf "$work/$pkg" && mkdir -p "$work/$pkg"
  tar -xf "$(ls "$src/${pkg}_"*.orig.tar.* | grep -v '\.asc$' | head -1)" -C "$work/$pkg" --strip-components=1 "${@:2}"
}
done_() { [ -f "$prefix/.done-$1" ]; }
mark() { touch "$prefix/.done-$1"; log "$1 built"; }

if ! done_ zlib; then
  fetch_src zlib
  (cd "$work/zlib" && ./configure --static --prefix="$prefix" >/dev/null && make -j"$jobs" >/dev/null && make install >/dev/null)
  mark zlib
fi
if ! done_ bzip2; then
  fetch_src bzip2
  (cd "$work/bzip2" && make -j"$jobs" CC="$CC" AR="$AR" RANLIB="$RANLIB" CFLAGS="$CFLAGS -D_FILE_OFFSET_BITS=64" libbz2.a >/dev/null \
     && cp libbz2.a "$prefix/lib/" && cp bzlib.h "$prefix/include/")
  mark bzip2
fi
if ! done_ xz; then
  fetch_src xz-utils
  (cd "$work/xz-utils" && ./configure --host=$host --prefix="$prefix" --disable-shared --enable-static --disable-xz \
     --disable-xzdec --disable-lzmadec --disable-lzmainfo --disable-lzma-links --disable-scripts --disable-doc \
     --disable-nls >/dev/null && make -j"$jobs" >/dev/null && make install >/dev/null)
  mark xz
fi
if ! done_ zstd; then
  fetch_src libzstd
  (cd "$work/libzstd/lib" && make -j"$jobs" CC="$CC" AR="$AR" libzstd.a >/dev/null \
     && make PREFIX="$prefix" LIBDIR="$prefix/lib" install-static install-includes install-pc >/dev/null)
  mark zstd
fi
if ! done_ nettle; then
  fetch_src nettle
  (cd "$work/nettle" && ./configure --host=$host --prefix="$prefix" --libdir="$prefix/lib" --disable-shared \
     --disable-public-key --disable-openssl --disable-documentation --disable-assembler >/dev/null \
     && make -j"$jobs" >/dev/null && make install >/dev/null)
  mark nettle
fi
if ! done_ libarchive; then
  fetch_src libarchive
  cmake -S "$work/libarchive" -B "$work/libarchive/b" "${cmake_dep[@]}" -DENABLE_TEST=OFF -DENABLE_TAR=OFF \
    -DENABLE_CPIO=OFF -DENABLE_CAT=OFF -DENABLE_UNZIP=OFF -DENABLE_OPENSSL=OFF -DENABLE_NETTLE=ON -DENABLE_MBEDTLS=OFF \
    -DENABLE_LIBB2=OFF -DENABLE_LZ4=OFF -DENABLE_LZO=OFF -DENABLE_LIBXML2=OFF -DENABLE_EXPAT=OFF -DENABLE_PCREPOSIX=OFF \
    -DENABLE_PCRE2POSIX=OFF -DENABLE_CNG=OFF -DENABLE_ACL=OFF -DENABLE_XATTR=OFF -DENABLE_ICONV=OFF \
    -DENABLE_BZip2=ON -DENABLE_LZMA=ON -DENABLE_ZSTD=ON -DENABLE_ZLIB=ON >/dev/null
  cmake --build "$work/libarchive/b" -j"$jobs" --target archive_static >/dev/null
  cp "$work/libarchive/b/libarchive/libarchive.a" "$prefix/lib/"
  cp "$work/libarchive/libarchive/archive.h" "$work/libarchive/libarchive/archive_entry.h" "$prefix/include/"
  printf 'prefix=%s\nName: libarchive\nDescription: libarchive\nVersion: 3.6.2\nLibs: -L${prefix}/lib -larchive\nLibs.private: -lnettle -lbz2 -llzma -lzstd -lz\nCflags: -I${prefix}/include\n' \
    "$prefix" > "$prefix/lib/pkgconfig/libarchive.pc"
  mark libarchive
fi
if ! done_ re2; then
  fetch_src re2
  # Debian's +dfsg tarball leaves out the generated tables; Debian's rules
  # rebuild them (REBUILD_TABLES=1) from the unicode-data package, with its patch.
  [ -f /usr/share/unicode/UnicodeData.txt ] || { echo "oldglibc: RE2's tables need Debian's unicode-data (apt-get install unicode-data)" >&2; exit 3; }
  tar -xf "$(ls "$src"/re2_*.debian.tar.*)" -C "$work/re2"
  (cd "$work/re2" && for p in $(cat debian/patches/series); do patch -p1 -s < "debian/patches/$p"; done \
     && make REBUILD_TABLES=1 re2/perl_groups.cc re2/unicode_casefold.cc re2/unicode_groups.cc >/dev/null)
  cmake -S "$work/re2" -B "$work/re2/b" "${cmake_dep[@]}" -DRE2_BUILD_TESTING=OFF >/dev/null
  cmake --build "$work/re2/b" -j"$jobs" >/dev/null && cmake --install "$work/re2/b" >/dev/null
  [ -f "$prefix/lib/pkgconfig/re2.pc" ] || printf 'prefix=%s\nName: re2\nDescription: RE2\nVersion: 0.0.0\nLibs: -L${prefix}/lib -lre2 -pthread\nCflags: -I${prefix}/include -pthread\n' \
    "$prefix" > "$prefix/lib/pkgconfig/re2.pc"
  mark re2
fi
# Boost 1.74: Debian's headers (the same release) and program_options built here.
if ! done_ boost_po; then
  # Debian's tarball is modular (libs/NAME/include/boost/...): the headers are
  # merged into one include/boost, as `b2 headers` would.
  fetch_src boost1.74 --wildcards '*/include/boost/*' '*/libs/program_options/src/*'
  rm -rf "$prefix/include/boost" && mkdir -p "$prefix/include/boost"
  find "$work/boost1.74/libs" -type d -path '*/include/boost' -prune -exec cp -r {}/. "$prefix/include/boost/" \;
  mkdir -p "$work/boost1.74/o"
  for f in "$work/boost1.74/libs/program_options/src/"*.cpp; do
    "$CXX" $CXXFLAGS -std=c++17 -DNDEBUG -I"$prefix/include" -c "$f" -o "$work/boost1.74/o/$(basename "$f" .cpp).o"
  done
  rm -f "$prefix/lib/libboost_program_options.a"
  "$AR" rcs "$prefix/lib/libboost_program_options.a" "$work/boost1.74/o/"*.o
  mark boost_po
fi
if ! done_ vectorscan; then
  vs=${TPT_VECTORSCAN_SRC:-}
  [ -n "$vs" ] || { echo "oldglibc: set TPT_VECTORSCAN_SRC to a Vectorscan source tree or git dir (github.com/VectorCamp/vectorscan)" >&2; exit 3; }
  rm -rf "$work/vectorscan" && mkdir -p "$work/vectorscan"
  if [ -f "$vs/CMakeLists.txt" ]; then cp -r "$vs/." "$work/vectorscan/"
  else git --git-dir="$vs" archive HEAD | tar -x -C "$work/vectorscan"; fi
  if [ "$arch" = aarch64 ]; then
    # Vectorscan 5.4.2's NEON helpers pass a variable where clang (zig's)
    # wants a constant (lane, shift, vext): its own switch fallbacks are used
    # instead of the HS_OPTIMIZE one-liners, and the four shifts by a
    # variable become NEON's shift-by-register (the same result; GCC only
    # accepted them after inlining). Later Vectorscan releases did the same.
    sed -i -e 's|#if defined(HS_OPTIMIZE)|#if 0 /* clang: needs constants */|' \
      -e 's|vshlq_n_s32((int64x2_t)a, b)|vshlq_s32((int32x4_t)a, vdupq_n_s32((int)b))|' \
      -e 's|vshrq_n_s32((int64x2_t)a, b)|vshlq_s32((int32x4_t)a, vdupq_n_s32(-(int)b))|' \
      -e 's|vshlq_n_s64((int64x2_t)a, b)|vshlq_s64((int64x2_t)a, vdupq_n_s64((int64_t)b))|' \
      -e 's|vshrq_n_s64((int64x2_t)a, b)|vshlq_s64((int64x2_t)a, vdupq_n_s64(-(int64_t)b))|' \
      "$work/vectorscan/src/util/arch/arm/simd_utils.h"
  fi
  cmake -S "$work/vectorscan" -B "$work/vectorscan/b" "${cmake_dep[@]}" -DBOOST_ROOT="$prefix" \
    -DFAT_RUNTIME=OFF -DBUILD_STATIC_AND_SHARED=OFF -DBUILD_EXAMPLES=OFF -DBUILD_UNIT=OFF -DBUILD_TOOLS=OFF \
    -DBUILD_BENCHMARKS=OFF -DBUILD_DOC=OFF -DUSE_CPU_NATIVE=OFF -DCMAKE_C_FLAGS="$CFLAGS -w" \
    -DCMAKE_CXX_FLAGS="$CXXFLAGS -w" >/dev/null
  cmake --build "$work/vectorscan/b" -j"$jobs" --target hs >/dev/null
  cp "$work/vectorscan/b/lib/libhs.a" "$prefix/lib/"
  mkdir -p "$prefix/include/hs" && cp "$work/vectorscan/src/hs.h" "$work/vectorscan/src/hs_common.h" \
    "$work/vectorscan/src/hs_compile.h" "$work/vectorscan/src/hs_runtime.h" "$prefix/include/hs/"
  printf 'prefix=%s\nName: libhs\nDescription: Vectorscan\nVersion: 5.4.2\nLibs: -L${prefix}/lib -lhs\nCflags: -I${prefix}/include/hs\n' \
    "$prefix" > "$prefix/lib/pkgconfig/libhs.pc"
  mark vectorscan
fi
# nlohmann/json: header-only, Debian's headers (no code of glibc's in them).
if [ ! -d "$prefix/include/nlohmann" ]; then
  [ -d /usr/share/cmake/nlohmann_json ] || { echo "oldglibc: needs Debian's nlohmann-json3-dev (.ci/setup)" >&2; exit 3; }
  cp -r /usr/include/nlohmann "$prefix/include/nlohmann"
  mkdir -p "$prefix/share/cmake" && cp -r /usr/share/cmake/nlohmann_json "$prefix/share/cmake/"
fi

# --- tptriage itself, with the GPU parts where the CUDA toolkit is here (x86_64):
# nvcc compiles the one .cu file (kernels/ipc_allreduce.cu, a C-like interface)
# with the system's g++ as its host compiler (it cannot drive zig); everything
# else, cudart_static included, is linked by zig for glibc 2.28 (cudart_static
# itself targets RHEL 8's glibc 2.28); NCCL stays dlopen'ed at run time. The
# toolchain file roots every search at the prefix, so the toolkit's paths are
# given outright. TPT_OLDGLIBC_CUDA=0 builds without them.
cuda_opts=(-DTPT_WITH_CUDA=OFF)
cudadir=${CUDA_HOME:-/usr/local/cuda}
nccl_h=$(ls "$cudadir/include/nccl.h" /usr/include/nccl.h 2>/dev/null | head -1 || true)
if [ "${TPT_OLDGLIBC_CUDA:-1}" != 0 ] && [ "$arch" = "$(uname -m)" ] && [ -x "$cudadir/bin/nvcc" ] && [ -n "$nccl_h" ]; then
  cuda_opts=(-DTPT_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER="$cudadir/bin/nvcc" -DCMAKE_CUDA_HOST_COMPILER="${TPT_CUDA_HOST_CXX:-g++}"
             -DCUDAToolkit_ROOT="$cudadir" "-DCMAKE_FIND_ROOT_PATH=$prefix;$cudadir"
             -DCUDA_CUDART="$cudadir/lib64/libcudart.so" -DCUDA_cudart_static_LIBRARY="$cudadir/lib64/libcudart_static.a"
             -DCUDAToolkit_rt_LIBRARY=rt -DNCCL_INCLUDE_DIR="$(dirname "$nccl_h")")
  log "GPU parts: CUDA from $cudadir (nvcc host compiler ${TPT_CUDA_HOST_CXX:-g++}), NCCL header $nccl_h"
else
  log "GPU parts: none (no CUDA toolkit with nccl.h at $cudadir for $arch; repro then plans and simulates only)"
fi
out="$root/build-oldglibc-$arch"
TPT_OLDGLIBC_PREFIX="$prefix" cmake -S "$root" -B "$out" -DCMAKE_TOOLCHAIN_FILE="$root/packaging/oldglibc/zig.cmake" \
  -DTPT_OLDGLIBC_PREFIX="$prefix" -DTPT_OLDGLIBC_BIN="$bin" -DCMAKE_BUILD_TYPE=Release -DTPT_STATIC=ON \
  "${cuda_opts[@]}" -DTPT_BUILD_TESTS=OFF >/dev/null
cmake --build "$out" -j"$jobs" --target tptriage
log "$out/tptriage: newest GLIBC symbol $(objdump -T "$out/tptriage" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)"
