#!/usr/bin/env bash
# package_test.sh BUILD_DIR: `cmake --install` and CPack's .tar.gz and .deb
# hold the binary, the man page and the bash/zsh/fish completions, and the
# installed binary runs from there. Prints sizes and the glibc the binary needs.
set -uo pipefail
build=$(realpath "$1")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# The README's tool-only build (--target tptriage) installs too: the binary
# writes its man page and completions at install time when they are missing.
cmake --build "$build" --target tptriage >/dev/null || fail "build of tptriage"
rm -rf "$build/generated-docs"
cmake --install "$build" --prefix "$work/prefix" >/dev/null || fail "cmake --install after --target tptriage"
[ -s "$work/prefix/share/man/man1/tptriage.1" ] || fail "install after a tool-only build: no man page"
cmake --build "$build" --target tptriage tptriage_docs >/dev/null || fail "build of tptriage + docs"
cmake --install "$build" --prefix "$work/prefix" >/dev/null || fail "cmake --install"
for f in bin/tptriage share/man/man1/tptriage.1 share/bash-completion/completions/tptriage \
         share/zsh/vendor-completions/_tptriage share/fish/vendor_completions.d/tptriage.fish \
         share/tptriage/schemas/analyze.schema.json share/doc/tptriage/LICENSE share/doc/tptriage/copyright; do
  [ -s "$work/prefix/$f" ] || fail "install: $f missing"
done
"$work/prefix/bin/tptriage" --version | grep -q '^tptriage ' || fail "installed binary does not run"
if command -v man >/dev/null; then
  MANWIDTH=80 man -l "$work/prefix/share/man/man1/tptriage.1" 2>&1 | grep -q 'tptriage analyze' || fail "man page does not render"
fi
bash -n "$work/prefix/share/bash-completion/completions/tptriage" || fail "bash completion syntax"

(cd "$build" && cpack -G "TGZ;DEB" -B "$work/pkg" >/dev/null 2>"$work/cpack.err") || fail "cpack: $(cat "$work/cpack.err")"
tgz=$(ls "$work"/pkg/tptriage-*.tar.gz 2>/dev/null | head -1); deb=$(ls "$work"/pkg/tptriage_*.deb 2>/dev/null | head -1)
[ -n "$tgz" ] || fail "no .tar.gz"; [ -n "$deb" ] || fail "no .deb"
tar -tzf "$tgz" > "$work/tgz.list"
for f in bin/tptriage share/man/man1/tptriage.1 share/bash-completion/completions/tptriage _tptriage tptriage.fish; do
  grep -q "$f\$" "$work/tgz.list" || fail ".tar.gz lacks $f"
done
dpkg-deb -c "$deb" > "$work/deb.list"
for f in ./usr/bin/tptriage ./usr/share/man/man1/tptriage.1 ./usr/share/bash-completion/completions/tptriage \
         ./usr/share/zsh/vendor-completions/_tptriage ./usr/share/fish/vendor_completions.d/tptriage.fish \
         ./usr/share/doc/tptriage/copyright; do
  grep -q " $f\$" "$work/deb.list" || fail ".deb lacks $f"
done
dpkg-deb -x "$deb" "$work/debroot"
"$work/debroot/usr/bin/tptriage" --version >/dev/null || fail "binary from the .deb does not run"
bin="$work/debroot/usr/bin/tptriage"
glibc=$(readelf -V "$bin" | grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2 -n -u | tail -1)
echo "package: .tar.gz $(stat -c %s "$tgz") B, .deb $(stat -c %s "$deb") B, stripped binary $(stat -c %s "$bin") B"
echo "package: needs $(readelf -d "$bin" | grep NEEDED | grep -o '\[.*\]' | tr '\n' ' ') newest symbol $glibc"
echo "package: .deb Depends: $(dpkg-deb -f "$deb" Depends)"
echo "package: ok"
