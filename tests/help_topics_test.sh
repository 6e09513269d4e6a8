#!/usr/bin/env bash
# help_topics_test.sh TPTRIAGE: what a user of the binary alone (no
# repository) needs is in the binary: `tptriage help kinds|root-causes|
# formats|format-files|rule-files|finding-files`, and the messages about a
# bad --formats/--rules/--findings file point there, never at repository files.
set -uo pipefail
bin=$(realpath "$1")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$work" || exit 1   # no repository around
for topic in kinds root-causes formats format-files rule-files finding-files; do
  out=$("$bin" help "$topic" 2>&1); code=$?
  [ "$code" -eq 0 ] && [ "$(wc -l <<< "$out")" -ge 5 ] || fail "help $topic: exit $code: $out"
done
has() { local out; out=$("$bin" help "$1" 2>&1); grep -q -- "$2" <<< "$out"; }
has kinds 'gpu_info' || fail "help kinds lacks gpu_info"
has root-causes 'kv_pool_no_room' || fail "help root-causes lacks kv_pool_no_room"
has formats '^  sglang.json$' || fail "help formats does not name the files as a --formats folder holds them"
has formats 'parser/' && fail "help formats names repository paths"
has format-files '"literals"' || fail "help format-files is not the format file reference"
has rule-files 'root_cause' || fail "help rule-files is not the rule file reference"
has finding-files 'severity' || fail "help finding-files is not the finding file reference"
out=$("$bin" help nosuch 2>&1); [ $? -eq 2 ] || fail "help nosuch: not a usage error"
out=$("$bin" --help 2>&1); grep -q 'format-files|rule-files|finding-files' <<< "$out" || fail "--help does not list the topics: $out"

# Bad user files: the message names the file and the in-binary reference.
mkdir fmt rules
echo '{"schema": 2, "family": "mine", "patterns": []}' > fmt/mine.json
echo 'x' > x.log
out=$("$bin" analyze --formats fmt x.log 2>&1)
grep -q 'mine.json' <<< "$out" && grep -q 'tptriage help format-files' <<< "$out" || fail "bad format file: $out"
echo '{"schema": 1, "family": "mine", "patterns": [{"id": "a", "literals": ["a"], "regex": "a", "fields": {}, "samples": [{"line": "a", "fields": {}}]}]}' > fmt/mine.json
out=$("$bin" analyze --formats fmt x.log 2>&1)
grep -q 'tptriage help kinds' <<< "$out" || fail "format file without a kind: $out"
echo '{"id": "mine", "root_cause": "not_an_id"}' > rules/mine.json
out=$("$bin" analyze --rules rules x.log 2>&1)
grep -q 'mine.json' <<< "$out" && grep -q 'tptriage help' <<< "$out" || fail "bad rule file: $out"
for o in "$out"; do grep -qE '(README|EVENTS)\.md|samples/' <<< "$o" && fail "a message points at repository files: $o"; done
echo "help topics: ok"
