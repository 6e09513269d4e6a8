#!/usr/bin/env bash
# install.sh: the Action's first step: put a tptriage on PATH.
#   TPT_BINARY set      -> that file;
#   tptriage on PATH    -> kept;
#   else                -> the release archive of the Action's ref (gh release download),
#   else                -> built from the Action's own source (Release, the tool only).
set -euo pipefail
bin_dir="${RUNNER_TEMP:-/tmp}/tptriage-bin"
mkdir -p "$bin_dir"
add_path() { echo "$1" >> "${GITHUB_PATH:-/dev/null}"; export PATH="$1:$PATH"; }

if [ -n "${TPT_BINARY:-}" ]; then
  [ -x "$TPT_BINARY" ] || { echo "::error::tptriage input '$TPT_BINARY' is not an executable file"; exit 2; }
  ln -sf "$(realpath "$TPT_BINARY")" "$bin_dir/tptriage"
  add_path "$bin_dir"
elif command -v tptriage >/dev/null 2>&1; then
  :
else
  arch=$(uname -m)
  got=""
  if [ -n "${TPT_ACTION_REPO:-}" ] && [ -n "${TPT_ACTION_REF:-}" ] && command -v gh >/dev/null 2>&1; then
    tmp=$(mktemp -d)
    if gh release download "$TPT_ACTION_REF" --repo "$TPT_ACTION_REPO" --pattern "tptriage-*-linux-$arch.tar.gz" \
         --dir "$tmp" 2>/dev/null; then
      tar -xzf "$tmp"/tptriage-*-linux-"$arch".tar.gz -C "$tmp"
      cp "$tmp"/tptriage-*/bin/tptriage "$bin_dir/tptriage"
      got=yes
    fi
  fi
  if [ -z "$got" ]; then
    echo "tptriage: no release binary for ${TPT_ACTION_REF:-this ref} ($arch); building from the Action's source"
    src="${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/../.." && pwd)}"
    "$src/.ci/setup"
    cmake -S "$src" -B "$bin_dir/build" -DCMAKE_BUILD_TYPE=Release -DTPT_WITH_CUDA=OFF >/dev/null
    cmake --build "$bin_dir/build" -j"$(nproc)" --target tptriage >/dev/null
    cp "$bin_dir/build/tptriage" "$bin_dir/tptriage"
  fi
  add_path "$bin_dir"
fi
tptriage --version
