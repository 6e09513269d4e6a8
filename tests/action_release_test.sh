#!/usr/bin/env bash
# action_release_test.sh TPTRIAGE SOURCE_DIR: the Action's install step
# (packaging/action/install.sh) against a fake release site served on
# 127.0.0.1 (python3 -m http.server) in GitHub's layout
# (releases/download/vX/ASSET, releases/latest/download/ASSET), with a fake
# GITHUB_* / RUNNER_* environment, then its run step on a green and a red run:
#   SHA pin of the Action + version: -> the named release; SHA pin alone -> latest;
#   a second run -> the tool cache, with the release site gone;
#   checksum mismatch -> error, nothing run, nothing cached, no fallback;
#   missing release / a binary that does not run -> named, then the source
#   build (a fake Action source tree whose "build" is one script), or an error
#   with source-build false.
set -uo pipefail
bin=$(realpath "$1"); src=$(realpath "$2")
work=$(mktemp -d)
server_pid=""
cleanup() { [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
arch=$(uname -m)
for t in curl sha256sum python3 cmake; do command -v $t >/dev/null || { echo "SKIP: $t not found"; exit 77; }; done

# --- the release site: what release.yml uploads (tarball + SHA256SUMS).
www="$work/www/releases"
release() {  # release VERSION BINARY [corrupt]
  local v=$1 d="$work/pkg/tptriage-$1-linux-$arch"
  mkdir -p "$d/bin" "$www/download/v$v"
  cp "$2" "$d/bin/tptriage"
  tar -czf "$www/download/v$v/tptriage-$v-linux-$arch.tar.gz" -C "$work/pkg" "tptriage-$v-linux-$arch"
  (cd "$www/download/v$v" && sha256sum -- *.tar.gz > SHA256SUMS)
  # A corrupted (or replaced) archive after the sums were written.
  [ "${3:-}" != corrupt ] || echo "tampered" >> "$www/download/v$v/tptriage-$v-linux-$arch.tar.gz"
}
strip -o "$work/tptriage" "$bin" 2>/dev/null || cp "$bin" "$work/tptriage"
release 0.1.0 "$work/tptriage"
release 0.2.0 "$work/tptriage"
mkdir -p "$www/latest" && cp -r "$www/download/v0.2.0" "$www/latest/download"
release 0.3.0 "$work/tptriage" corrupt
# A binary that cannot run here, as the glibc 2.36 build on an older system.
printf '#!/bin/sh\necho "tptriage: /lib/%s-linux-gnu/libc.so.6: version '"'"'GLIBC_2.99'"'"' not found (required by tptriage)" >&2\nexit 127\n' \
  "$arch" > "$work/oldglibc-victim"
chmod +x "$work/oldglibc-victim"
release 0.4.0 "$work/oldglibc-victim"

python3 - "$work/www" "$work/port" > "$work/server.log" 2>&1 <<'EOF' &
import functools, http.server, sys
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
open(sys.argv[2], "w").write(str(srv.server_address[1]))
srv.serve_forever()
EOF
server_pid=$!
for _ in $(seq 300); do [ -s "$work/port" ] && break; sleep 0.1; done  # up to 30 s on a loaded machine
[ -s "$work/port" ] || fail "the local release server did not start: $(cat "$work/server.log")"
site="http://127.0.0.1:$(cat "$work/port")/releases"

# --- a fake Action source tree for the last resort: .ci/setup installs
# nothing and the "build" writes one script that says where it came from.
fake="$work/action-src"
mkdir -p "$fake/.ci"
printf '#!/bin/sh\nexit 0\n' > "$fake/.ci/setup"; chmod +x "$fake/.ci/setup"
cat > "$fake/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.19)
project(fake_tptriage NONE)
file(WRITE ${CMAKE_BINARY_DIR}/tptriage "#!/bin/sh\necho 'tptriage 0.0.0 built from source'\n")
file(CHMOD ${CMAKE_BINARY_DIR}/tptriage PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
add_custom_target(tptriage)
EOF

export RUNNER_TOOL_CACHE="$work/toolcache" GITHUB_ACTION_PATH="$fake" TPT_ACTION_REPO=owner/tptriage
sha=0123456789abcdef0123456789abcdef01234567
install_step() {  # install_step NAME [VAR=VALUE...]: one fresh runner job's install step
  local name=$1; shift
  mkdir -p "$work/$name"
  : > "$work/$name/path"
  env RUNNER_TEMP="$work/$name" GITHUB_PATH="$work/$name/path" PATH=/usr/bin:/bin TPT_RELEASE_URL="$site" "$@" \
    bash "$src/packaging/action/install.sh" > "$work/$name/out" 2>&1
  echo $? > "$work/$name/rc"
}
rc() { cat "$work/$1/rc"; }
out() { cat "$work/$1/out"; }
on_path() { PATH="$(tr '\n' : < "$work/$1/path")/usr/bin:/bin" tptriage --version 2>&1 | sed -n 1p; }

# 1. Pinned by commit SHA, version: 0.1.0 -> that release, checked, cached.
install_step sha_pin TPT_ACTION_REF=$sha TPT_VERSION=0.1.0
[ "$(rc sha_pin)" = 0 ] || fail "SHA pin + version 0.1.0: exit $(rc sha_pin): $(out sha_pin)"
out sha_pin | grep -q "SHA-256 [0-9a-f]\{64\} matches SHA256SUMS" || fail "SHA pin: no checksum check said: $(out sha_pin)"
grep -qx "$RUNNER_TOOL_CACHE/tptriage/0.1.0/$arch" "$work/sha_pin/path" || fail "SHA pin: not put on PATH from the tool cache: $(cat "$work/sha_pin/path")"
[ -f "$RUNNER_TOOL_CACHE/tptriage/0.1.0/$arch.complete" ] || fail "SHA pin: the tool cache entry is not marked complete"
on_path sha_pin | grep -q '^tptriage ' || fail "SHA pin: tptriage on PATH does not run"
out sha_pin | grep -q 'building' && fail "SHA pin: built from source although the release exists"

# 2. The next job on the same runner: the tool cache, no network at all.
install_step cache_hit TPT_ACTION_REF=$sha TPT_VERSION=v0.1.0 TPT_RELEASE_URL=http://127.0.0.1:9/nothing
[ "$(rc cache_hit)" = 0 ] || fail "second run: exit $(rc cache_hit): $(out cache_hit)"
out cache_hit | grep -q "0.1.0 ($arch) from the tool cache" || fail "second run did not use the tool cache: $(out cache_hit)"

# 3. Pinned by SHA without version: -> latest (0.2.0), named by its asset.
install_step latest TPT_ACTION_REF=$sha
[ "$(rc latest)" = 0 ] || fail "SHA pin alone: exit $(rc latest): $(out latest)"
grep -qx "$RUNNER_TOOL_CACHE/tptriage/0.2.0/$arch" "$work/latest/path" || fail "SHA pin alone did not get the latest release (0.2.0): $(out latest)"

# 4. Pinned by tag, no version: -> the Action's own release.
install_step tag_ref TPT_ACTION_REF=v0.1.0
grep -qx "$RUNNER_TOOL_CACHE/tptriage/0.1.0/$arch" "$work/tag_ref/path" || fail "tag v0.1.0 did not get release 0.1.0: $(out tag_ref)"

# 5. A file:// release site works the same (a mirror on disk).
install_step file_url RUNNER_TOOL_CACHE="$work/toolcache2" TPT_VERSION=0.2.0 TPT_RELEASE_URL="file://$www"
[ "$(rc file_url)" = 0 ] && [ -f "$work/toolcache2/tptriage/0.2.0/$arch.complete" ] || fail "file:// release: $(out file_url)"

# 6. Checksum mismatch: an error naming both sums; nothing runs or is cached,
#    and no source build hides it.
install_step mismatch TPT_VERSION=0.3.0
[ "$(rc mismatch)" = 2 ] || fail "checksum mismatch: exit $(rc mismatch), not 2: $(out mismatch)"
out mismatch | grep -q "^::error::checksum mismatch for tptriage-0.3.0-linux-$arch.tar.gz of release 0.3.0: SHA256SUMS says [0-9a-f]\{64\}, the download is [0-9a-f]\{64\}" \
  || fail "checksum mismatch not said: $(out mismatch)"
[ ! -e "$RUNNER_TOOL_CACHE/tptriage/0.3.0" ] || fail "a mismatching archive was cached"
[ ! -s "$work/mismatch/path" ] || fail "a mismatching archive was put on PATH"
out mismatch | grep -q 'building' && fail "checksum mismatch fell back to a source build"

# 7. A release binary that does not run here (old glibc): named with the
#    reason, not cached, then the source build as the last resort.
install_step norun TPT_VERSION=0.4.0
[ "$(rc norun)" = 0 ] || fail "binary that does not run: exit $(rc norun): $(out norun)"
out norun | grep -q "^::warning::the release binary tptriage 0.4.0 ($arch) does not run here: exit code 127: .*GLIBC_2.99' not found" \
  || fail "binary that does not run: not said why: $(out norun)"
out norun | grep -q "^::warning::the release binary .*(this system's glibc: [0-9][0-9.]*; the release needs" \
  || fail "binary that does not run: this system's glibc not named on the warning's line: $(out norun)"
on_path norun | grep -q 'built from source' || fail "binary that does not run: the source build is not on PATH: $(on_path norun)"
[ ! -e "$RUNNER_TOOL_CACHE/tptriage/0.4.0" ] || fail "a binary that does not run was cached"
install_step norun_strict TPT_VERSION=0.4.0 TPT_SOURCE_BUILD=false
[ "$(rc norun_strict)" = 2 ] && out norun_strict | grep -q "^::error::the release binary tptriage 0.4.0 .*source-build is false" \
  || fail "binary that does not run, source-build false: $(out norun_strict)"

# 8. Missing release: named with its URL, then the source build; with
#    source-build false an error.
install_step missing TPT_VERSION=9.9.9
[ "$(rc missing)" = 0 ] || fail "missing release: exit $(rc missing): $(out missing)"
out missing | grep -q "^::warning::no release '9.9.9' with a SHA256SUMS at $site/download/v9.9.9" || fail "missing release not named: $(out missing)"
on_path missing | grep -q 'built from source' || fail "missing release: no source build on PATH"
install_step missing_strict TPT_VERSION=9.9.9 TPT_SOURCE_BUILD=false
[ "$(rc missing_strict)" = 2 ] && out missing_strict | grep -q "^::error::no release '9.9.9'.*source-build is false" \
  || fail "missing release, source-build false: $(out missing_strict)"
install_step bad_version TPT_VERSION=main
[ "$(rc bad_version)" = 2 ] && out bad_version | grep -q "^::error::version 'main': expected a release" || fail "version main: $(out bad_version)"

# 9. The run step with the release binary: a green run passes, a red one fails.
path_ok="$(tr '\n' : < "$work/sha_pin/path")/usr/bin:/bin"
cd "$work"
: > "$work/green.summary"; : > "$work/green.output"
PATH="$path_ok" GITHUB_STEP_SUMMARY="$work/green.summary" GITHUB_OUTPUT="$work/green.output" \
  TPT_LOGS="$src/samples/runs/ci/job-1195/*" TPT_OUTPUT_DIR=green bash "$src/packaging/action/run.sh" > "$work/green.out" 2>&1
code=$?
[ $code = 0 ] || fail "green run (samples/runs/ci/job-1195, healthy): exit $code: $(head -5 "$work/green.out")"
grep -qx 'exit-code=0' "$work/green.output" || fail "green run: exit-code output is not 0"
grep -q '^::error' "$work/green.out" && fail "green run: error annotations on a healthy run"
grep -q '^#' "$work/green.summary" || fail "green run: no step summary"
: > "$work/red.summary"; : > "$work/red.output"
PATH="$path_ok" GITHUB_STEP_SUMMARY="$work/red.summary" GITHUB_OUTPUT="$work/red.output" \
  TPT_LOGS="$src/samples/founding/*mfs050.log" TPT_OUTPUT_DIR=red bash "$src/packaging/action/run.sh" > "$work/red.out" 2>&1
code=$?
[ $code = 1 ] || fail "red run (founding case): exit $code, not 1"
grep -qx 'exit-code=1' "$work/red.output" || fail "red run: exit-code output is not 1"
grep -q '^::error' "$work/red.out" || fail "red run: no error annotation"
grep -q kv_pool_no_room red/triage.json || fail "red run: no kv_pool_no_room in the JSON"
echo "action release: ok (SHA pin, latest, tag, tool cache, file://, checksum mismatch, binary that does not run, missing release, green, red)"
