#!/usr/bin/env bash
# html_check.sh PAGE.html [SHOT.png]: open a tptriage HTML report in headless
# Chromium and check it works as a person would see it:
#   - the page's own script ran (it sets data-tpt-rendered="N" on <html>, N =
#     pictures drawn) and drew at least one SVG;
#   - no console error or uncaught exception was logged;
#   - injected log text did not run (no data-pwned attribute in the DOM);
#   - a screenshot is written (default: PAGE.png) for a person to look at;
#   - with TPT_FIX_TOP_MAX=PX: the first fix call-out starts within PX pixels of
#     the top at a 1400x900 window (the answer is on the first screen);
#   - with TPT_LANES=N: the first time axis has N rank lanes (launcher not counted).
# Exit 0 ok, 1 failed, 77 when no Chromium is installed (CTest skip).
set -uo pipefail
page=${1:?usage: html_check.sh PAGE.html [SHOT.png]}
shot=${2:-${page%.html}.png}
if [ ! -s "$page" ]; then
  echo "html_check: $page is missing or empty" >&2
  exit 1
fi
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
if [ -z "$browser" ]; then
  echo "html_check: no chromium installed (apt-get install chromium); skipping" >&2
  exit 77
fi
url="file://$(cd "$(dirname "$page")" && pwd)/$(basename "$page")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Root needs --no-sandbox; a private profile keeps runs independent.
flags=(--headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/profile"
       --enable-logging=stderr --v=0 --virtual-time-budget=3000)
timeout 90 "$browser" "${flags[@]}" --window-size=1400,900 --dump-dom "$url" >"$work/dom.html" 2>"$work/dom.err"
rc=$?
if [ $rc -ne 0 ]; then
  echo "html_check: $browser --dump-dom failed ($rc):" >&2
  tail -20 "$work/dom.err" >&2
  exit 1
fi
fail=0
if ! grep -Eq 'data-tpt-rendered="[1-9][0-9]*"' "$work/dom.html"; then
  echo "html_check: the page's script did not run or drew no SVG (no data-tpt-rendered marker)" >&2
  fail=1
fi
# The hostile fixture line sets data-pwned on <html> if it ever runs; as
# escaped text it only appears inside the evidence block.
if grep -Eq '<html[^>]*data-pwned' "$work/dom.html"; then
  echo "html_check: log text ran as script (data-pwned set): escaping is broken" >&2
  fail=1
fi
if [ -n "${TPT_FIX_TOP_MAX:-}" ]; then
  top=$(grep -Eo 'data-tpt-fix-top="[0-9]+"' "$work/dom.html" | head -1 | grep -Eo '[0-9]+')
  if [ -z "$top" ]; then
    echo "html_check: no fix call-out on the page (no data-tpt-fix-top)" >&2
    fail=1
  elif [ "$top" -gt "$TPT_FIX_TOP_MAX" ]; then
    echo "html_check: the fix call-out starts at ${top} px, below the first ${TPT_FIX_TOP_MAX} px at 1400x900" >&2
    fail=1
  else
    echo "html_check: fix call-out at ${top} px (<= ${TPT_FIX_TOP_MAX})"
  fi
fi
if [ -n "${TPT_LANES:-}" ]; then
  lanes=$(grep -Eo 'data-tpt-lanes="[0-9]+"' "$work/dom.html" | head -1 | grep -Eo '[0-9]+')
  if [ "${lanes:-none}" != "$TPT_LANES" ]; then
    echo "html_check: the time axis has ${lanes:-no} rank lanes, expected $TPT_LANES" >&2
    fail=1
  else
    echo "html_check: $lanes rank lanes"
  fi
fi
if grep -Eiq 'Uncaught|CONSOLE\([0-9]+\).*(error|exception)|Refused to (load|execute)' "$work/dom.err"; then
  echo "html_check: console errors:" >&2
  grep -Ei 'Uncaught|CONSOLE|Refused' "$work/dom.err" >&2
  fail=1
fi
timeout 90 "$browser" "${flags[@]}" --hide-scrollbars --window-size=1400,900 --screenshot="$shot" "$url" \
  >/dev/null 2>"$work/shot.err"
if [ ! -s "$shot" ] || [ "$(head -c 4 "$shot" | od -An -tx1 | tr -d ' ')" != "89504e47" ]; then
  echo "html_check: no PNG screenshot written to $shot" >&2
  tail -5 "$work/shot.err" >&2
  fail=1
fi
[ $fail -eq 0 ] && echo "html_check: ok: $page (screenshot $shot)"
exit $fail
