#!/usr/bin/env bash
# oldglibc_rootfs_test.sh BINARY ROOTFS SAMPLE: BINARY runs inside ROOTFS, the
# root file system of an older distribution (Debian 11 from debootstrap:
# packaging/README.md "The glibc 2.28 build"), and diagnoses SAMPLE there
# (exit 1, kv_pool_no_room). Skips (77) without the binary, without the root
# file system, or when not root (chroot needs it). A binary of another
# architecture runs under qemu-user with ROOTFS as its library root
# (`qemu-aarch64 -L ROOTFS`: the old distribution's loader and glibc; an arm64
# ROOTFS from `debootstrap --arch=arm64 --foreign`, whose first stage is enough).
set -uo pipefail
. "$(dirname "$0")/elf_arch.sh"
binary=$1; rootfs=$2; sample=$3
[ -e "$binary" ] || { echo "SKIP: $binary not built (packaging/oldglibc/build.sh)"; exit 77; }
[ -e "$rootfs/bin/sh" ] || { echo "SKIP: no root file system at $rootfs (debootstrap, packaging/README.md)"; exit 77; }
arch=$(elf_arch "$binary")
if [ "$arch" != "$(uname -m)" ]; then
  command -v "qemu-$arch" >/dev/null || { echo "SKIP: $binary is $arch: no qemu-$arch to run it"; exit 77; }
  libc=$(ls "$rootfs"/lib/"$arch"-linux-gnu/libc-*.so 2>/dev/null | head -1)
  glibc=$(basename "${libc:-libc-?.so}" .so | sed 's/^libc-//')
  echo "root file system: $(. "$rootfs/etc/os-release"; echo "$PRETTY_NAME") ($arch), glibc $glibc, under qemu-$arch -L"
  "qemu-$arch" -L "$rootfs" "$binary" --version > /tmp/tpt-rootfs-$$.out 2>&1 || {
    echo "FAIL: tptriage --version with $rootfs's glibc: $(cat /tmp/tpt-rootfs-$$.out)"; rm -f /tmp/tpt-rootfs-$$.out; exit 1; }
  head -1 /tmp/tpt-rootfs-$$.out
  "qemu-$arch" -L "$rootfs" "$binary" analyze "$sample" --format json > /tmp/tpt-rootfs-$$.out 2>&1; code=$?
  grep -q '"root_cause": "kv_pool_no_room"' /tmp/tpt-rootfs-$$.out; found=$?
  rm -f /tmp/tpt-rootfs-$$.out
  [ $code = 1 ] || { echo "FAIL: analyze with $rootfs's glibc exited $code, not 1"; exit 1; }
  [ $found = 0 ] || { echo "FAIL: analyze with $rootfs's glibc: no kv_pool_no_room"; exit 1; }
  echo "analyze $(basename "$sample") under glibc $glibc ($arch): kv_pool_no_room (exit 1)"
  exit 0
fi
[ -x "$rootfs/bin/sh" ] || { echo "SKIP: no root file system at $rootfs (debootstrap, packaging/README.md)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: chroot needs root"; exit 77; }
dir=$(mktemp -d "$rootfs/tmp/tpt.XXXXXX"); trap 'rm -rf "$dir"' EXIT
cp "$binary" "$dir/tptriage"; cp "$sample" "$dir/sample.log"
in=/tmp/$(basename "$dir")
glibc=$(chroot "$rootfs" /usr/bin/ldd --version 2>/dev/null | head -1 | grep -o '[0-9.]*$')
echo "root file system: $(. "$rootfs/etc/os-release"; echo "$PRETTY_NAME"), glibc $glibc"
chroot "$rootfs" "$in/tptriage" --version > "$dir/version.out" 2>&1 || { echo "FAIL: tptriage --version in $rootfs: $(cat "$dir/version.out")"; exit 1; }
head -1 "$dir/version.out"
chroot "$rootfs" "$in/tptriage" analyze "$in/sample.log" --format json > "$dir/out.json" 2> "$dir/err"; code=$?
[ $code = 1 ] || { echo "FAIL: analyze in $rootfs exited $code, not 1: $(head -3 "$dir/err")"; exit 1; }
grep -q '"root_cause": "kv_pool_no_room"' "$dir/out.json" || { echo "FAIL: analyze in $rootfs: no kv_pool_no_room"; exit 1; }
echo "analyze $(basename "$sample") under glibc $glibc: kv_pool_no_room (exit 1)"
