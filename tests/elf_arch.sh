# elf_arch.sh: sourced by the packaging tests. `elf_arch BINARY` prints the
# binary's architecture (x86_64, aarch64) from its ELF header (readelf reads
# any machine's); `elf_runner BINARY` prints the command prefix that runs it
# here: nothing for this machine's architecture, else qemu-user
# (`qemu-ARCH`), or fails when qemu-user is not installed.
elf_arch() {
  case "$(readelf -h "$1" 2>/dev/null | sed -n 's/^ *Machine: *//p')" in
    *X86-64*) echo x86_64 ;;
    *AArch64*) echo aarch64 ;;
    *) echo unknown ;;
  esac
}
elf_runner() {
  local arch; arch=$(elf_arch "$1")
  [ "$arch" = "$(uname -m)" ] && return 0
  command -v "qemu-$arch" >/dev/null || return 1
  echo "qemu-$arch"
}
