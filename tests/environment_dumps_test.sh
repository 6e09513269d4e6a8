#!/usr/bin/env bash
# environment_dumps_test.sh TPTRIAGE SOURCE_DIR: environment dumps given next
# to a log (samples/env/: vllm collect-env, sglang check_env, nvidia-smi -q,
# nvidia-smi topo -m) fill the run's facts the log lacks and show on the
# report's Run line; they are never evidence: alone, no_evidence (exit 4);
# beside a healthy log, still healthy; beside a failing log, the log's
# diagnosis, unchanged.
set -uo pipefail
bin=$(realpath "$1"); src=$(realpath "$2")
cd "$src" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
field() {  # field EXPR ARGS...: a Python expression on the analyze JSON `d`, and the exit code
  local expr=$1; shift
  local out code
  out=$("$bin" analyze --format json "$@" 2>/dev/null); code=$?
  printf '%s exit=%s' "$(printf '%s' "$out" | python3 -c "import json,sys; d=json.load(sys.stdin); print(($expr))")" "$code"
}
env=samples/env
for dump in "$env"/*.txt; do
  got=$(field 'd["root_cause"], d["run"]["environment"]' "$dump")
  [ "$got" = "('no_evidence', ['$dump']) exit=4" ] || fail "$dump alone: $got"
  text=$("$bin" analyze "$dump" 2>&1)
  grep -q "is an environment dump" <<< "$text" || fail "$dump alone: the verdict does not say it is a dump: $text"
  for log in samples/logs/sglang-tp4-healthy.log samples/logs/vllm-v1-tp2-healthy.log; do
    got=$(field 'd["root_cause"]' "$log" "$dump")
    [ "$got" = "none exit=0" ] || fail "$log + $dump: $got (a dump must never make a healthy run unhealthy)"
  done
  for log in samples/logs/sglang-tp2-not-enough-memory.log samples/logs/nccl-warn-hang-tp4.log samples/founding/sglang-tp8-rtxpro6000-mfs050.log; do
    want=$(field 'd["root_cause"], d["diagnoses"][0]["rank"] if d["diagnoses"] else None' "$log")
    got=$(field 'd["root_cause"], d["diagnoses"][0]["rank"] if d["diagnoses"] else None' "$log" "$dump")
    [ "$got" = "$want" ] || fail "$log + $dump: $got, the log alone: $want"
  done
done

# The facts each dump brings, where the log lacks them (the NCCL hang log
# names no framework version, GPU, driver or topology).
hang=samples/logs/nccl-warn-hang-tp4.log
facts='d["run"]["gpu"], d["run"]["driver"], d["run"]["cuda"], d["run"]["topology"], d["run"]["gpu_memory_bytes"]'
got=$(field "$facts" $hang $env/vllm-collect-env.txt)
[ "$got" = "('NVIDIA H100 80GB HBM3', '570.148.08', '12.8.93', 'NVLink (NV18)', 0) exit=1" ] || fail "collect-env facts: $got"
got=$(field "$facts" $hang $env/sglang-check-env.txt)
[ "$got" = "('NVIDIA RTX PRO 6000 Blackwell Server Edition', '575.57.08', '12.8', 'PCIe only, no NVLink (PIX, SYS)', 0) exit=1" ] \
  || fail "check_env facts: $got"
got=$(field "$facts" $hang $env/nvidia-smi-q.txt)
[ "$got" = "('NVIDIA H200', '570.172.08', '12.8', '', 150754820096) exit=1" ] || fail "nvidia-smi -q facts: $got"
got=$(field "$facts" $hang $env/nvidia-smi-topo-m.txt)
[ "$got" = "('', '', '', 'NVLink (NV18)', 0) exit=1" ] || fail "topo -m facts: $got"
# The framework and version fill only what the log lacks: the hang log is
# torch/NCCL only; the collect-env says vLLM 0.10.1.1.
got=$(field 'd["run"]["framework"], d["run"]["version"]' samples/logs/xid-79-fallen-off-bus.log $env/vllm-collect-env.txt)
[ "$got" = "('vllm', '0.10.1.1') exit=1" ] || fail "collect-env version: $got"
got=$(field 'd["run"]["framework"], d["run"]["version"]' samples/logs/vllm-v1-tp2-healthy.log $env/sglang-check-env.txt)
case "$got" in "('vllm', "*) ;; *) fail "a dump's framework replaced the log's: $got" ;; esac
# Shown on the report's Run line.
text=$("$bin" analyze $hang $env/nvidia-smi-q.txt $env/nvidia-smi-topo-m.txt 2>&1)
grep -q 'NVIDIA H200 (143771 MiB), driver 570.172.08, CUDA 12.8, NVLink (NV18)' <<< "$text" || fail "the report does not show the facts: $text"
echo "environment dumps: ok"
