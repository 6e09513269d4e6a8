#!/usr/bin/env bash
# install.sh: the Action's first step: put a tptriage that runs on PATH.
#   TPT_BINARY set             -> that file;
#   TPT_VERSION empty and a tptriage on PATH -> kept;
#   else the release named by TPT_VERSION ("0.1.0", "v0.1.0" or "latest";
#   empty: the Action's own ref when it is a release tag, else "latest"),
#   never the Action's ref itself, so a commit-SHA or branch pin of the Action
#   still gets a release binary:
#     1. the tool cache, $RUNNER_TOOL_CACHE/tptriage/VERSION/ARCH/ (a second
#        run on the same runner downloads nothing but, for "latest", SHA256SUMS);
#     2. the release's SHA256SUMS and tptriage-VERSION-linux-ARCH.tar.gz from
#        $TPT_RELEASE_URL (default https://github.com/REPO/releases); the
#        archive's SHA-256 must match (a mismatch stops the step: nothing runs);
#     3. the binary must run (`tptriage --version`) before it is cached or used;
#   and only when no release binary exists or it cannot run here: a build from
#   the Action's own source (TPT_SOURCE_BUILD=false turns that off).
# Exit 2 with an ::error:: line naming what failed and what to do.
set -euo pipefail
bin_dir="${RUNNER_TEMP:-/tmp}/tptriage-bin"
mkdir -p "$bin_dir"
add_path() { echo "$1" >> "${GITHUB_PATH:-/dev/null}"; export PATH="$1:$PATH"; }
die() { echo "::error::$*"; exit 2; }
use() { add_path "$1"; tptriage --version; exit 0; }  # use DIR: its tptriage, and done
note() { echo "tptriage: $*"; }

# A binary runs when `--version` exits 0; its first error line says why not
# (exec format error, GLIBC_2.xx not found, ...).
runs() {  # runs BINARY -> 0, or 1 with the reason in $why
  local out rc=0
  out=$("$1" --version 2>&1) || rc=$?
  [ "$rc" -ne 0 ] || return 0
  why="exit code $rc: $(printf '%s\n' "$out" | head -3 | tr '\n' ' ')"
  return 1
}

source_build() {  # source_build REASON: the last resort
  [ "${TPT_SOURCE_BUILD:-true}" != false ] || die "$1; source-build is false, so there is no tptriage to run. Give version: of a release that has a binary for $(uname -m), or tptriage: a binary."
  echo "::warning::$1; building tptriage from the Action's source (Release, the tool only: several minutes)"
  local src="${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/../.." && pwd)}"
  "$src/.ci/setup" || die "building from source: $src/.ci/setup could not install the build dependencies"
  cmake -S "$src" -B "$bin_dir/build" -DCMAKE_BUILD_TYPE=Release -DTPT_WITH_CUDA=OFF -DTPT_BUILD_TESTS=OFF >/dev/null \
    && cmake --build "$bin_dir/build" -j"$(nproc)" --target tptriage >/dev/null \
    || die "building from source failed in $bin_dir/build (run the same cmake commands locally to see why)"
  cp "$bin_dir/build/tptriage" "$bin_dir/tptriage"
}

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

if [ -n "${TPT_BINARY:-}" ]; then
  [ -x "$TPT_BINARY" ] || die "tptriage input '$TPT_BINARY' is not an executable file"
  ln -sf "$(realpath "$TPT_BINARY")" "$bin_dir/tptriage"
  use "$bin_dir"
fi
if [ -z "${TPT_VERSION:-}" ] && command -v tptriage >/dev/null 2>&1; then
  tptriage --version
  exit 0
fi

arch=$(uname -m)
version="${TPT_VERSION:-}"
if [ -z "$version" ]; then
  # The Action's own ref, when it is a release tag (v0.1.0); a SHA or a branch
  # names no release, so those get the latest one.
  case "${TPT_ACTION_REF:-}" in
    v[0-9]*) version="${TPT_ACTION_REF}" ;;
    *) version=latest ;;
  esac
fi
version="${version#v}"
case "$version" in
  latest|[0-9]*) ;;
  *) die "version '$TPT_VERSION': expected a release such as 0.1.0 (or v0.1.0) or latest" ;;
esac
base="${TPT_RELEASE_URL:-}"
if [ -z "$base" ]; then
  [ -n "${TPT_ACTION_REPO:-}" ] || die "cannot tell which repository's releases to use (github.action_repository is empty); give tptriage: a binary"
  base="https://github.com/$TPT_ACTION_REPO/releases"
fi
if [ "$version" = latest ]; then url="$base/latest/download"; else url="$base/download/v$version"; fi

# The tool cache, for a version named in full: no download at all.
cache_root="${RUNNER_TOOL_CACHE:-}"
cached() { [ -n "$cache_root" ] && [ -x "$cache_root/tptriage/$1/$arch/tptriage" ] && [ -f "$cache_root/tptriage/$1/$arch.complete" ]; }
if [ "$version" != latest ] && cached "$version"; then
  note "$version ($arch) from the tool cache"
  use "$cache_root/tptriage/$version/$arch"
fi

tmp=$(mktemp -d "${RUNNER_TEMP:-/tmp}/tptriage-dl.XXXXXX")
fetch() { curl -fsSL --retry 2 --proto '=https,http,file' -o "$2" "$1" 2>"$tmp/curl.err"; }
if ! fetch "$url/SHA256SUMS" "$tmp/SHA256SUMS"; then
  source_build "no release '$version' with a SHA256SUMS at $url ($(head -1 "$tmp/curl.err"))"
  use "$bin_dir"
fi
# The asset's name carries the version, also for "latest".
asset=$(awk '{print $2}' "$tmp/SHA256SUMS" | sed 's/^\*//' | grep -E "^tptriage-[0-9][^/]*-linux-$arch\.tar\.gz$" | head -1 || true)
if [ -z "$asset" ]; then
  source_build "release '$version' has no tptriage-VERSION-linux-$arch.tar.gz in its SHA256SUMS"
  use "$bin_dir"
fi
[ "$version" != latest ] || { version=${asset#tptriage-}; version=${version%-linux-$arch.tar.gz}; }
if cached "$version"; then
  note "$version ($arch) from the tool cache"
  use "$cache_root/tptriage/$version/$arch"
fi
fetch "$url/$asset" "$tmp/$asset" || die "release '$version': $asset is listed in SHA256SUMS but could not be downloaded from $url ($(head -1 "$tmp/curl.err"))"
want=$(awk -v a="$asset" '{f=$2; sub(/^\*/, "", f); if (f == a) {print $1; exit}}' "$tmp/SHA256SUMS")
got=$(sha256_of "$tmp/$asset")
[ "$want" = "$got" ] || die "checksum mismatch for $asset of release $version: SHA256SUMS says $want, the download is $got. Nothing was run; download it again, or report it to the release's maintainers."
note "$asset: SHA-256 $got matches SHA256SUMS"
mkdir -p "$tmp/x" && tar -xzf "$tmp/$asset" -C "$tmp/x" || die "release '$version': $asset is not a readable .tar.gz"
got_bin=$(find "$tmp/x" -path '*/bin/tptriage' -type f | head -1)
[ -n "$got_bin" ] || die "release '$version': $asset holds no bin/tptriage"
chmod +x "$got_bin"
why=""
if ! runs "$got_bin"; then
  glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')  # no pipe cut short: one line
  source_build "the release binary tptriage $version ($arch) does not run here: $why(this system's glibc: ${glibc:-unknown}; the release needs the glibc in packaging/README.md)"
  use "$bin_dir"
fi
if [ -n "$cache_root" ]; then
  dest="$cache_root/tptriage/$version/$arch"
  mkdir -p "$dest" && cp "$got_bin" "$dest/tptriage" && touch "$cache_root/tptriage/$version/$arch.complete"
  note "$version ($arch) downloaded, checked and cached in $dest"
else
  dest="$bin_dir"
  cp "$got_bin" "$dest/tptriage"
fi
rm -rf "$tmp"
use "$dest"
