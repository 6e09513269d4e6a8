#!/usr/bin/env bash
# action_test.sh TPTRIAGE SOURCE_DIR: the composite Action's two steps
# (packaging/action/install.sh, run.sh) as GitHub runs them, on samples/runs/ci:
# binary on PATH, annotations on stdout, step summary, JUnit, SARIF, HTML and
# JSON in one pass, outputs, and fail-on.
set -uo pipefail
bin=$(realpath "$1"); src=$(realpath "$2")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export GITHUB_STEP_SUMMARY="$work/summary" GITHUB_OUTPUT="$work/output" GITHUB_PATH="$work/path" RUNNER_TEMP="$work"
export GITHUB_ACTION_PATH="$src"
: > "$GITHUB_STEP_SUMMARY"; : > "$GITHUB_OUTPUT"; : > "$GITHUB_PATH"
grep -q 'packaging/action/install.sh' "$src/action.yml" || fail "action.yml does not call install.sh"
grep -q 'packaging/action/run.sh' "$src/action.yml" || fail "action.yml does not call run.sh"

# Step 1: the given binary goes on PATH (through GITHUB_PATH, as the runner does).
PATH=/usr/bin:/bin TPT_BINARY="$bin" bash "$src/packaging/action/install.sh" > "$work/install.out" 2>&1 \
  || fail "install.sh: $(cat "$work/install.out")"
grep -q '^tptriage ' "$work/install.out" || fail "install.sh did not run tptriage --version"
new_path="$(cat "$GITHUB_PATH"):/usr/bin:/bin"
PATH="$new_path" command -v tptriage >/dev/null || fail "tptriage not on PATH after install.sh"

# Step 2: one pass over the bundled CI runs.
cd "$work"
PATH="$new_path" TPT_RUNS_DIR="$src/samples/runs/ci" TPT_FAIL_ON=failure TPT_OUTPUT_DIR=report \
  bash "$src/packaging/action/run.sh" > "$work/run.out" 2>&1
code=$?
[ "$code" -ne 0 ] || fail "samples/runs/ci holds failed runs, yet the step passed"
grep -q '^::error' "$work/run.out" || fail "no annotations on stdout: $(head -5 "$work/run.out")"
grep -q '^#' "$GITHUB_STEP_SUMMARY" || fail "step summary has no markdown heading"
for f in junit.xml triage.sarif triage.html triage.json; do
  [ -s "report/$f" ] || fail "report/$f missing or empty"
done
grep -q '<testsuite' report/junit.xml || fail "junit.xml is not JUnit"
grep -q '"version": "2.1.0"' report/triage.sarif || fail "triage.sarif is not SARIF 2.1.0"
grep -q "^exit-code=$code$" "$GITHUB_OUTPUT" || fail "exit-code output missing: $(cat "$GITHUB_OUTPUT")"
grep -q '^sarif=report/triage.sarif$' "$GITHUB_OUTPUT" || fail "sarif output missing"

# fail-on never passes, a bad fail-on and no input are errors (2).
PATH="$new_path" TPT_RUNS_DIR="$src/samples/runs/ci" TPT_FAIL_ON=never bash "$src/packaging/action/run.sh" >/dev/null 2>&1 \
  || fail "fail-on never did not pass"
PATH="$new_path" TPT_RUNS_DIR="$src/samples/runs/ci" TPT_FAIL_ON=sometimes bash "$src/packaging/action/run.sh" >/dev/null 2>&1
[ $? -eq 2 ] || fail "a bad fail-on is not exit 2"
PATH="$new_path" bash "$src/packaging/action/run.sh" > "$work/none.out" 2>&1
[ $? -eq 2 ] || fail "no input is not exit 2"
grep -q '::error::give runs-dir' "$work/none.out" || fail "no input gives no annotation"
# logs: globs of one run.
PATH="$new_path" TPT_LOGS="$src/samples/founding/*mfs050.log" TPT_OUTPUT_DIR=one bash "$src/packaging/action/run.sh" >/dev/null 2>&1
[ $? -eq 1 ] || fail "logs input: the founding case is not diagnosed (1)"
grep -q kv_pool_no_room one/triage.json || fail "logs input: no kv_pool_no_room in the JSON"
# A glob that matches nothing is named in the error (it was dropped, and the
# step said "no LOG given").
PATH="$new_path" TPT_LOGS="$src/samples/founding/*mfs050.log $work/nothing-*.log" TPT_OUTPUT_DIR=two \
  bash "$src/packaging/action/run.sh" > "$work/glob.out" 2>&1
[ $? -eq 2 ] || fail "a glob that matches nothing is not exit 2"
grep -q "::error::logs: '$work/nothing-\*.log' matches no file" "$work/glob.out" || fail "the glob is not named: $(cat "$work/glob.out")"
echo "action: ok"
