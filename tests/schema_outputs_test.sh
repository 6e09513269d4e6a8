#!/usr/bin/env bash
# schema_outputs_test.sh TPTRIAGE SOURCE_DIR: every JSON output validates
# against its schema (schemas/*.schema.json), the schemas compiled into the
# binary (`tptriage schema NAME`) are the repository's files, and each schema
# is itself a valid JSON Schema. Exits 77 without python3-jsonschema.
set -uo pipefail
bin=$(realpath "$1"); src=$(realpath "$2")
v="$src/tests/schemas/validate_json.py"
python3 -c 'import jsonschema' 2>/dev/null || { echo "SKIP: python3-jsonschema missing"; exit 77; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
s="$src/samples"

# The binary's copies are the repository's files, and the list is complete.
[ "$("$bin" schema --list | tr '\n' ' ')" = "analyze analyze-runs diff events plan repro " ] \
  || fail "schema --list: $("$bin" schema --list | tr '\n' ' ')"
for name in analyze analyze-runs diff events plan repro; do
  "$bin" schema "$name" > "$work/$name.schema.json" || fail "tptriage schema $name"
  cmp -s "$work/$name.schema.json" "$src/schemas/$name.schema.json" || fail "embedded $name schema differs from schemas/"
done

check() {  # check SCHEMA FILE WHAT
  python3 "$v" "$src/schemas/$1.schema.json" "$2" || fail "$3 does not match the $1 schema"
}
# analyze: a failure, a healthy run, an unclassified one (whatever the samples give).
"$bin" analyze "$s/founding/sglang-tp8-rtxpro6000-mfs050.log" --format json > "$work/a1.json"; check analyze "$work/a1.json" "analyze (founding)"
for f in "$s"/logs/redteam/none--*.log; do
  "$bin" analyze "$f" --format json > "$work/a2.json"; check analyze "$work/a2.json" "analyze ($(basename "$f"))"; break
done
for f in "$s"/logs/redteam/unknown--*.log "$s"/logs/redteam/nccl_timeout_hang--*.log; do
  "$bin" analyze "$f" --format json > "$work/a3.json"; check analyze "$work/a3.json" "analyze ($(basename "$f"))"; break
done
# analyze of flight-recorder dumps: the lanes of a hung group (collective_lanes).
"$bin" analyze "$s/rules/fr_hang_wavefront/pos_hang_8ranks" --format json > "$work/a4.json"
check analyze "$work/a4.json" "analyze (flight-recorder dumps)"
python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["collective_lanes"]; sys.exit(0 if l and l[0]["rows"] else 1)' "$work/a4.json" \
  || fail "analyze of the 8-rank hang's dumps gave no collective_lanes"
# analyze --runs, and one run that cannot be read (the runs document too).
"$bin" analyze --runs "$s/runs/ci" --format json > "$work/runs.json"; check analyze-runs "$work/runs.json" "analyze --runs"
"$bin" analyze /nonexistent/x.log --format json > "$work/err.json" 2>/dev/null; check analyze-runs "$work/err.json" "analyze of a missing file"
# events: every line.
"$bin" events "$s/founding/sglang-tp8-rtxpro6000-mfs050.log" 2>/dev/null > "$work/events.jsonl"
[ -s "$work/events.jsonl" ] || fail "events printed nothing"
head -200 "$work/events.jsonl" > "$work/events.head.jsonl"
python3 - "$src/schemas/events.schema.json" "$work/events.head.jsonl" <<'PY' || fail "events lines do not match the events schema"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
cls = jsonschema.validators.validator_for(schema); cls.check_schema(schema)
bad = 0
for n, line in enumerate(open(sys.argv[2]), 1):
    for e in cls(schema).iter_errors(json.loads(line)):
        print(f"line {n}: /{'/'.join(map(str, e.absolute_path))}: {e.message}"); bad += 1
sys.exit(1 if bad else 0)
PY
# plan: SGLang that fails and vLLM that fits.
"$bin" plan --framework sglang --version 0.5.3 --gpu "RTX PRO 6000" --tp 8 --free-at-init 94GiB \
  --avail-after-weights 21.7GiB --cell-bytes 65536 --mem-fraction-static 0.5 --format json > "$work/p1.json"
check plan "$work/p1.json" "plan (sglang)"
"$bin" plan --framework vllm --version 0.11.0 --gpu H100 --tp 4 --params 70B --dtype bf16 --layers 80 \
  --kv-heads 8 --head-dim 128 --max-model-len 131072 --format json > "$work/p2.json"
check plan "$work/p2.json" "plan (vllm)"
for server in tgi trtllm lmdeploy; do
  "$bin" plan --server $server --model "$s/models/qwen3-32b" --gpu H100 --tp 2 --context-length 32768 \
    --format json > "$work/p-$server.json"
  check plan "$work/p-$server.json" "plan ($server)"
done
# diff: every sample pair.
n=0
for d in "$s"/diff/*/; do
  [ -d "$d/good" ] && [ -d "$d/bad" ] || continue
  "$bin" diff "$d/good" "$d/bad" --format json > "$work/d.json"; check diff "$work/d.json" "diff ($(basename "$d"))"; n=$((n+1))
done
[ "$n" -gt 0 ] || fail "no diff sample pairs found"
# repro: simulated run and dry run, JSON.
"$bin" repro "$s/repro/sglang_tp8_rtxpro6000.json" --backend simulated --format json > "$work/r1.json"
check repro "$work/r1.json" "repro (simulated)"
"$bin" repro "$s/repro/sglang_tp8_rtxpro6000.json" --dry-run --format json > "$work/r2.json"
check repro "$work/r2.json" "repro (dry run)"
# repro: a root cause checked on the box (repro/box_check.h), run on a simulated box and as a dry run.
"$bin" repro "$s/rules/shm_too_small/pos_devshm_extend.log" --backend simulated --format json > "$work/r3.json"
check repro "$work/r3.json" "repro (box check, simulated)"
"$bin" repro "$s/rules/hardware_fault/pos_xid79.log" --dry-run --format json > "$work/r4.json"
check repro "$work/r4.json" "repro (box check, dry run)"
echo "schemas: ok"
