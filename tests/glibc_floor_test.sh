#!/usr/bin/env bash
# glibc_floor_test.sh BINARY FLOOR [SAMPLE]: the newest GLIBC_x.y symbol
# version BINARY needs (objdump -T, the dynamic symbol table) is at most
# FLOOR, it needs no shared library but glibc's, and, with SAMPLE (the
# founding log), it diagnoses SAMPLE. Skips (77) when BINARY does not exist
# (packaging/oldglibc/build.sh makes it; .ci/test does not, it takes an hour).
# A binary of another architecture (the aarch64 release on an x86_64 host) is
# read the same way and run under qemu-user (tests/elf_arch.sh).
set -uo pipefail
. "$(dirname "$0")/elf_arch.sh"
binary=$1; floor=$2; sample=${3:-}
[ -e "$binary" ] || { echo "SKIP: $binary not built (run packaging/oldglibc/build.sh; not part of .ci/test)"; exit 77; }
command -v objdump >/dev/null || { echo "SKIP: objdump not found (binutils)"; exit 77; }
newest=$(objdump -T "$binary" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
[ -n "$newest" ] || { echo "FAIL: no GLIBC_ symbol versions in $binary (not a dynamic glibc binary?)"; exit 1; }
echo "$binary: newest GLIBC symbol version $newest (floor $floor)"
top=$(printf '%s\n%s\n' "$newest" "$floor" | sort -V | tail -1)
[ "$top" = "$floor" ] || {
  echo "FAIL: $binary needs GLIBC_$newest, above the floor $floor; the symbols that need more:"
  objdump -T "$binary" | awk -v f="$floor" '/GLIBC_[0-9]/ {for (i = 1; i <= NF; i++) if ($i ~ /GLIBC_/) print $i, $NF}' \
    | sed 's/(GLIBC_/GLIBC_/; s/)//' | sort -V | awk -v f="$floor" '{split($1, a, "_"); if (a[2] != f) print "  " $0}' | tail -5
  exit 1; }
needed=$(objdump -p "$binary" | awk '/NEEDED/ {print $2}' | tr '\n' ' ')
for lib in $needed; do
  case "$lib" in
    libc.so.6|libm.so.6|libpthread.so.0|libdl.so.2|librt.so.1|ld-linux-*.so.*) ;;
    *) echo "FAIL: $binary needs $lib, which is not glibc's (needed: $needed)"; exit 1 ;;
  esac
done
echo "needs: $needed"
if [ -n "$sample" ]; then
  runner=$(elf_runner "$binary") || { echo "SKIP: $binary is $(elf_arch "$binary"): no qemu-$(elf_arch "$binary") to run it"; exit 77; }
  out=$($runner "$binary" analyze "$sample" --format json 2>&1); code=$?
  [ $code = 1 ] || { echo "FAIL: analyze $sample exited $code, not 1 (diagnosed): $(echo "$out" | head -5)"; exit 1; }
  grep -q kv_pool_no_room <<< "$out" || { echo "FAIL: analyze $sample did not find kv_pool_no_room"; exit 1; }
  echo "analyze $(basename "$sample"): kv_pool_no_room${runner:+ (under $runner)}"
fi
echo "glibc floor: ok"
