#!/usr/bin/env bash
# gpu_check.sh: every GPU check of repro/ and kernels/ in one go, for a lent
# GPU machine (or any box with a GPU). Writes logs under $OUT.
#
#   repro/gpu_check.sh BIN_DIR OUT_DIR
#
# BIN_DIR holds tptriage, tpt_kernels_tests, tpt_repro_gpu_tests,
# tpt_repro_tests and lib/ (shared libraries the target lacks: libre2,
# libboost_program_options, libhs). Runs: the GPU unit tests (custom
# all-reduce exact for 2/4/8 co-located ranks, eager and in graphs; the CUDA
# backend), the founding case (SGLang TP=8 on an emulated 96 GB card at
# mem_fraction_static 0.50 and 0.55, fix 0.77) with time to verdict, and the
# all-reduce benchmark. Never changes GPU settings; NCCL_NVLS_ENABLE=0.
set -uo pipefail
BIN=${1:?usage: gpu_check.sh BIN_DIR OUT_DIR}
OUT=${2:?usage: gpu_check.sh BIN_DIR OUT_DIR}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH="$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# NCCL: the system's, else the one in the PyTorch wheel.
if ! ldconfig -p | grep -q 'libnccl.so.2 '; then
  for d in /opt/torch/.venv/lib/python3*/site-packages/nvidia/nccl/lib /usr/local/lib/python3*/dist-packages/nvidia/nccl/lib; do
    [ -e "$d/libnccl.so.2" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d" && break
  done
fi
SAMPLE=samples/repro/sglang_tp8_rtxpro6000.json
rc=0
{
  date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,compute_mode --format=csv
  ldd "$BIN/tptriage" | grep -E 'nccl|re2|boost|hs|not found'
} > "$OUT/env.log" 2>&1
for t in tpt_kernels_tests tpt_repro_gpu_tests tpt_repro_tests; do
  echo "== $t" >> "$OUT/tests.log"
  "$BIN/$t" --gtest_brief=1 >> "$OUT/tests.log" 2>&1 || { rc=1; echo "FAILED: $t" >> "$OUT/tests.log"; }
done
tail -3 "$OUT/tests.log"
for f in 0.50 0.55; do
  s=$(date +%s%N)
  "$BIN/tptriage" repro "$SAMPLE" --mem-fraction-static $f > "$OUT/founding-$f.txt" 2>&1
  code=$?
  e=$(date +%s%N)
  echo "founding case f=$f: exit $code, process wall $(( (e - s) / 1000000 )) ms" | tee -a "$OUT/summary.log"
  grep -E '^(verdict|fix check|time to verdict)' "$OUT/founding-$f.txt" | tee -a "$OUT/summary.log"
done
"$BIN/tptriage" repro "$SAMPLE" --format json > "$OUT/founding-0.50.json" 2>&1
# The one-process-per-rank path (spawn, NCCL id file, IPC custom all-reduce,
# graph buffers registered over IPC, per-rank all-gathers) with 2 ranks on the
# one GPU: functional only (shared memory, time-sliced barriers).
TPT_REPRO_SAME_GPU=1 timeout 300 "$BIN/tptriage" repro "$SAMPLE" --tp 2 --free-at-init 60GiB --weights 16GiB \
  --cuda-graph-bs 1,8 --layers 4 --fix 0.6 --force > "$OUT/per-gpu-2ranks.txt" 2>&1
echo "per-GPU path, 2 ranks on one GPU: exit $?" | tee -a "$OUT/summary.log"
grep -E '^(verdict|fix check)|FAILED|rank [01]' "$OUT/per-gpu-2ranks.txt" | head -12 | tee -a "$OUT/summary.log"
"$BIN/tptriage" repro --bench-allreduce > "$OUT/bench.txt" 2>&1 || rc=1
cat "$OUT/bench.txt"
# Nothing of ours may stay on the GPU.
nvidia-smi --query-gpu=memory.used --format=csv >> "$OUT/env.log" 2>&1
exit $rc
