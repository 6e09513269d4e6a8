#!/usr/bin/env bash
# run.sh: the Action's analysis, one pass: annotations on stdout (github
# format), the step summary (markdown), JUnit, SARIF, HTML and JSON files.
# Inputs come in TPT_RUNS_DIR or TPT_LOGS, TPT_FAIL_ON, TPT_OUTPUT_DIR; the
# paths and the exit code (after fail-on) go to $GITHUB_OUTPUT.
set -uo pipefail
out="${TPT_OUTPUT_DIR:-tptriage-report}"
mkdir -p "$out"
args=()
if [ -n "${TPT_RUNS_DIR:-}" ] && [ -n "${TPT_LOGS:-}" ]; then
  echo "::error::give runs-dir or logs, not both"; exit 2
elif [ -n "${TPT_RUNS_DIR:-}" ]; then
  args+=(--runs "$TPT_RUNS_DIR")
elif [ -n "${TPT_LOGS:-}" ]; then
  # Split into words first (no globbing), then expand each pattern on its own:
  # a pattern that matches nothing is named, never dropped into "no LOG given".
  set -f
  read -r -d '' -a patterns <<< "$TPT_LOGS" || true
  set +f
  shopt -s nullglob
  for pattern in "${patterns[@]}"; do
    matches=($pattern)
    if [ ${#matches[@]} -gt 0 ]; then
      args+=("${matches[@]}")
    elif [ -e "$pattern" ]; then
      args+=("$pattern")
    else
      echo "::error::logs: '$pattern' matches no file (working directory $(pwd))"; exit 2
    fi
  done
else
  echo "::error::give runs-dir (one run per subdirectory) or logs (the files of one run)"; exit 2
fi
summary="${GITHUB_STEP_SUMMARY:-$out/summary.md}"
case "${TPT_FAIL_ON:-failure}" in
  failure|unknown|error|never) ;;
  *) echo "::error::fail-on '${TPT_FAIL_ON}': expected failure, unknown, error or never"; exit 2 ;;
esac
tptriage analyze "${args[@]}" --format github --markdown "$out/summary.md" \
  --junit "$out/junit.xml" --sarif "$out/triage.sarif" --html "$out/triage.html" --json "$out/triage.json" \
  --fail-on "${TPT_FAIL_ON:-failure}"
code=$?
[ "$summary" = "$out/summary.md" ] || cat "$out/summary.md" >> "$summary" 2>/dev/null
{
  echo "exit-code=$code"
  echo "junit=$out/junit.xml"
  echo "sarif=$out/triage.sarif"
  echo "html=$out/triage.html"
  echo "json=$out/triage.json"
} >> "${GITHUB_OUTPUT:-/dev/null}"
exit "$code"
