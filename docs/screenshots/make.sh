#!/usr/bin/env bash
# make.sh BUILD/tptriage [OUTDIR]: the HTML page of every bundled sample
# (samples/logs/*.log, samples/founding/*.log, the failing side of each
# samples/diff case and the samples/runs/ci page),
# each opened in headless Chromium and shot twice: the first screen
# (1400x900, what an engineer on call sees without scrolling) and the whole
# page (1400 wide, cut at 4000 px). Look at every PNG after a change to
# report/html.cc; the checks a machine can do are tests/html_check.sh.
# Needs chromium (apt-get install chromium). Writes OUTDIR (default
# build/screenshots): NAME.html, NAME.png (first screen), NAME-full.png.
set -euo pipefail
bin=${1:?usage: make.sh BUILD/tptriage [OUTDIR]}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${2:-build/screenshots}
mkdir -p "$out"
out=$(cd "$out" && pwd)
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
[ -n "$browser" ] || { echo "make.sh: no chromium installed (apt-get install chromium)" >&2; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
shoot() {  # PAGE.html PNG HEIGHT
  timeout 90 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/profile" \
    --hide-scrollbars --virtual-time-budget=3000 --window-size=1400,"$3" --screenshot="$2" "file://$1" \
    >/dev/null 2>&1
}
pages=()
for log in "$root"/samples/logs/*.log "$root"/samples/founding/*.log; do
  name=$(basename "$log" .log)
  (cd "$root" && "$bin" analyze "samples/${log#"$root"/samples/}" --format html -o "$out/$name.html") || true
  pages+=("$name")
done
# The failing side of each samples/diff case (diff itself prints text or JSON).
for bad in "$root"/samples/diff/*/bad; do
  name=diff-$(basename "$(dirname "$bad")")
  (cd "$root" && "$bin" analyze "samples/${bad#"$root"/samples/}" --format html -o "$out/$name.html") || true
  pages+=("$name")
done
"$bin" analyze --runs "$root/samples/runs/ci" --format html -o "$out/runs-ci.html" || true
pages+=(runs-ci)
for name in "${pages[@]}"; do
  shoot "$out/$name.html" "$out/$name.png" 900
  # The whole page: as tall as the document (at most 4000 px).
  h=$(timeout 90 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/profile" \
        --virtual-time-budget=3000 --window-size=1400,900 --dump-dom "file://$out/$name.html" 2>/dev/null |
      grep -Eo 'data-tpt-height="[0-9]+"' | grep -Eo '[0-9]+' || echo 3000)
  [ "${h:-0}" -gt 4000 ] && h=4000
  shoot "$out/$name.html" "$out/$name-full.png" "$((h + 40))"
  echo "$out/$name.png $out/$name-full.png"
done
