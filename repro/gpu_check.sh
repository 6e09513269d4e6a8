#!/usr/bin/env bash
# gpu_check.sh: every GPU check of repro/ and kernels/ in one go, for a lent
# GPU machine (or any box with a GPU). Logs go to OUT_DIR/logs.tgz, a short
# summary to OUT_DIR/summary.log (and stdout).
#
#   repro/gpu_check.sh BIN_DIR OUT_DIR
#   GPU_CHECK_QUICK=1 repro/gpu_check.sh BIN_DIR OUT_DIR   # tests, box checks, founding case
#
# BIN_DIR holds tptriage, tpt_kernels_tests, tpt_repro_gpu_tests,
# tpt_repro_box_gpu_tests, tpt_repro_tests and lib/ (shared libraries the target lacks: libre2,
# libboost_program_options, libhs). Runs:
#  - the GPU unit tests (custom all-reduce exact for 2/4/8 co-located ranks,
#    eager and in graphs; the CUDA backend);
#  - the box checks and memory replays on the rule samples, one or more per
#    class a box can check (bootstrap, shm, duplicate GPU, IPC and custom
#    all-reduce, P2P, the log's collective, driver, arch, NVML, port; the
#    memory of SGLang, vLLM, TGI, LMDeploy, TensorRT-LLM, torchrun), GPU
#    memory and /dev/shm segments left after each;
#  - the founding case (SGLang TP=8, emulated 96 GB card, mem_fraction_static
#    0.50 and 0.55, fix 0.84, the value that serves): one process per GPU when there are 8 GPUs,
#    else co-located;
#  - the one-process-per-rank path with N = min(GPUs, 8) ranks, or 2 and 4
#    ranks sharing one GPU (scaled plan): under tptriage's own launcher,
#    torchrun, and Open MPI's variables (mpirun when installed), and a rank
#    SIGKILLed mid-run;
#  - the all-reduce benchmark co-located and one process per rank.
# GPU memory in use is read after each multi-process run. Never changes GPU
# settings; NCCL_NVLS_ENABLE=0.
set -uo pipefail
BIN=$(cd "${1:?usage: gpu_check.sh BIN_DIR OUT_DIR}" && pwd)
OUT=${2:?usage: gpu_check.sh BIN_DIR OUT_DIR}
L="$OUT/logs"
mkdir -p "$L"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH="$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# NCCL: the system's, else the one in the PyTorch wheel.
if ! ldconfig -p | grep -q 'libnccl.so.2 '; then
  for d in /opt/torch/.venv/lib/python3*/site-packages/nvidia/nccl/lib /usr/local/lib/python3*/dist-packages/nvidia/nccl/lib \
           $(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__) + "/lib")' 2>/dev/null); do
    [ -e "$d/libnccl.so.2" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d" && break
  done
fi
T="$BIN/tptriage"
SAMPLE=samples/repro/sglang_tp8_rtxpro6000.json
S="$OUT/summary.log"
say() { echo "$*" | tee -a "$S"; }
gpu_used() { nvidia-smi --query-gpu=index,memory.used --format=csv,noheader | tr '\n' ' '; }
apps() { nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | wc -l; }
NGPU=$(nvidia-smi -L | wc -l)
rc=0
{
  date -u; uname -r; nvidia-smi; nvidia-smi topo -m
  ldd "$T" | grep -E 'nccl|re2|boost|hs|not found'
  echo "torchrun: $(command -v torchrun) mpirun: $(command -v mpirun)"; mpirun --version 2>&1 | head -1
  python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())' 2>&1
} > "$L/env.log" 2>&1
say "== $(date -u +%FT%TZ) $NGPU GPU(s): $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sort | uniq -c | tr -s ' ')"
say "torchrun: $(command -v torchrun || echo none); mpirun: $(command -v mpirun || echo none)"
for t in tpt_kernels_tests tpt_repro_gpu_tests tpt_repro_box_gpu_tests; do  # (tpt_repro_tests read samples by the build's path: CPU CTest)
  echo "== $t" >> "$L/tests.log"
  timeout 300 "$BIN/$t" --gtest_brief=1 >> "$L/tests.log" 2>&1 || { rc=1; say "FAILED: $t"; }
done
say "unit tests: $(grep -h 'PASSED\|FAILED' "$L/tests.log" | tr '\n' ' ')"

# run NAME TIMEOUT CMD...: runs a repro, records exit, wall, verdict and GPU use after.
run() {
  local name=$1 to=$2; shift 2
  local s=$(date +%s%N)
  timeout "$to" "$@" > "$L/$name.txt" 2>&1
  local code=$? e=$(date +%s%N)
  sleep 0.5
  say "-- $name: exit $code, wall $(( (e - s) / 1000000 )) ms, GPU used after: $(gpu_used), compute apps left: $(apps)"
  grep -E '^(verdict|fix check|time to verdict)|tptriage repro:|^killing|ms after the kill|mode:|"outcome"' "$L/$name.txt" | head -14 | sed 's/^/     /' | tee -a "$S"
}

# Box checks and memory replays on the rule samples: REPRODUCED where the box
# shows the log's failure, NOT REPRODUCED where it does not, INCONCLUSIVE with
# what is missing (more GPUs, a figure the log does not give).
shm_left() { ls /dev/shm 2>/dev/null | grep -c -i -E 'nccl|tpt' ; }
box() {
  local name=$1; shift
  run box-$name 120 "$T" repro "$@"
  say "     /dev/shm segments left: $(shm_left)"
}
R=samples/rules
BUS=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i 0)
box bootstrap-ifname samples/logs/redteam/nccl_network_config--no-socket-interface.log
box bootstrap-connect $R/nccl_network_config/pos_socket_connect.log
box shm $R/shm_too_small/pos_devshm_extend.log --tp 8
box shm-fallocate $R/shm_too_small/pos_nccl_posix_fallocate_only.log
box duplicate-gpu $R/duplicate_gpu/pos_nccl_duplicate.log
box custom-ar $R/custom_allreduce_failure/pos_sglang_rtx4090_peer.log
box p2p $R/p2p_topology_problem/pos_peer_error_custom_ar_off.log
box collective $R/nccl_timeout_hang/pos_two_ranks_seq_behind.log
box driver-log $R/cuda_driver_mismatch/pos_driver_insufficient.log
box driver-12.8 $R/cuda_driver_mismatch/pos_driver_insufficient.log --required-cuda 12.8
box driver-13.9 $R/cuda_driver_mismatch/pos_driver_insufficient.log --required-cuda 13.9
box arch-sm120 $R/unsupported_gpu_arch/pos_rtx5090_sm120.log
box arch-sm90 $R/unsupported_gpu_arch/pos_rtx5090_sm120.log --built-archs 80,90
box nvml-log $R/hardware_fault/pos_xid79.log
box nvml-this $R/hardware_fault/pos_xid79.log --bus-id "$BUS"
box port $R/port_in_use/pos_uvicorn_bind.log
box nvls-fabric $R/nvls_fabric_manager/pos_nvls_invalid_argument.log
box disk $R/disk_full/pos_inductor_cache.log
box sglang-tp2 samples/repro/analysis_kv_no_room.json
box vllm-kv $R/kv_pool_no_room_vllm/pos_v066_negative_kv.log
box tgi-warmup-plan samples/repro/tgi_warmup_oom.json
box tgi-warmup-log $R/warmup_oom_tgi/pos_tgi_warmup.log
box lmdeploy-kv samples/repro/lmdeploy_turbomind_buffers.json
box trtllm-kv samples/repro/trtllm_kv_cache_creation.json
box trtllm-kv-log $R/trtllm_component_oom/pos_kv_cache.log
box tgi-weights $R/oom_weights/pos_tgi_shard_get_sharded.log
box lmdeploy-weights $R/oom_weights/pos_lmdeploy_turbomind_memory_utils.log --weights 30GiB --target-gpu-mem 24GiB
box torchrun-weights $R/oom_weights/pos_torchrun_load_state_dict.log
box vllm-weights $R/oom_weights/pos_vllm_executor_init.log

# The founding case: one process per GPU when there are 8, else co-located.
for f in 0.50 0.55; do run founding-$f 120 "$T" repro "$SAMPLE" --mem-fraction-static $f; done
run founding-0.50-json 120 "$T" repro "$SAMPLE" --format json
# On a card with less than the log's 94 GiB free: the same figures scaled (plan_scale.h).
run founding-log-scaled 120 "$T" repro samples/founding/sglang-tp8-rtxpro6000-mfs055.log --scale-to-fit
box sglang-tp2-scaled samples/repro/analysis_kv_no_room.json --scale-to-fit

# GPU_CHECK_QUICK=1: the unit tests, the box checks and the founding case only
# (the launcher, kill and benchmark runs below take minutes).
if [ -n "${GPU_CHECK_QUICK:-}" ]; then
  say "== end (quick) $(date -u +%T), GPU used: $(gpu_used)"
  tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$L"
  exit $rc
fi
# One process per rank: N real GPUs (founding plan at tp=N), or ranks sharing GPU 0 (scaled plan).
if [ "$NGPU" -ge 2 ]; then
  N=$(( NGPU >= 8 ? 8 : (NGPU >= 4 ? 4 : 2) ))
  PLAN=("$SAMPLE" --tp $N); export -n TPT_REPRO_SAME_GPU
else
  N=2
  PLAN=("$SAMPLE" --tp 2 --free-at-init 60GiB --weights 40GiB --cuda-graph-bs 1,8,32,160 --layers 8)
  export TPT_REPRO_SAME_GPU=1
fi
for f in 0.50 0.55; do run spawn-$N-$f 120 "$T" repro "${PLAN[@]}" --mem-fraction-static $f; done
if [ "$NGPU" -lt 2 ]; then
  run spawn-4-0.50 120 "$T" repro "$SAMPLE" --tp 4 --free-at-init 30GiB --weights 20GiB --cuda-graph-bs 1,8,32,160 --layers 8
  # The founding case's 8 ranks as 8 processes on the one GPU (share 16.4 GiB each; scaled plan).
  P8=("$SAMPLE" --tp 8 --free-at-init 14GiB --weights 10GiB --cuda-graph-bs 1,8,32,160 --layers 8)
  for f in 0.50 0.55; do run spawn-8-$f 120 "$T" repro "${P8[@]}" --mem-fraction-static $f; done
  run torchrun-8 120 python3 -m torch.distributed.run --standalone --nproc-per-node 8 --no-python "$T" repro "${P8[@]}"
  command -v mpirun > /dev/null && run mpirun-8 120 mpirun --allow-run-as-root --oversubscribe -np 8 -x NCCL_NVLS_ENABLE -x TPT_REPRO_SAME_GPU -x LD_LIBRARY_PATH "$T" repro "${P8[@]}"
fi
# torchrun.
if python3 -c 'import torch.distributed.run' 2>/dev/null; then
  run torchrun-$N 120 python3 -m torch.distributed.run --standalone --nproc-per-node $N --no-python "$T" repro "${PLAN[@]}"
fi
# Open MPI: mpirun when there, else its variables set by hand (no MASTER_*: the port comes from the job id).
if command -v mpirun > /dev/null; then
  run mpirun-$N 120 mpirun --allow-run-as-root -np $N -x NCCL_NVLS_ENABLE -x TPT_REPRO_SAME_GPU -x LD_LIBRARY_PATH "$T" repro "${PLAN[@]}"
fi
ompi() {
  local pids=()
  for r in $(seq 0 $((N - 1))); do
    OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=$N OMPI_COMM_WORLD_LOCAL_RANK=$r OMPI_COMM_WORLD_LOCAL_SIZE=$N \
      PMIX_NAMESPACE=tpt-check-$$ "$T" repro "${PLAN[@]}" > "$L/ompi-vars-rank$r.txt" 2>&1 &
    pids+=($!)
  done
  local code=0
  for p in "${pids[@]}"; do wait $p || code=$?; done
  cat "$L/ompi-vars-rank0.txt"; for r in $(seq 1 $((N - 1))); do cat "$L/ompi-vars-rank$r.txt"; done
  return $code
}
run ompi-vars-$N 120 bash -c "$(declare -f ompi); T='$T' N=$N L='$L'; PLAN=($(printf '%q ' "${PLAN[@]}")); ompi"

# A rank SIGKILLed mid-run: the others stop, the verdict names it.
# kill_when ENV_MATCH MIB CMD...: runs CMD, finds the tptriage process whose
# environment has ENV_MATCH, waits until it holds more than MIB of GPU memory
# (0: 0.3 s after it appears), SIGKILLs it, and waits for CMD.
kill_when() {
  local match=$1 mib=$2; shift 2
  "$@" & local parent=$!
  local victim="" p
  for i in $(seq 1 500); do
    for p in /proc/[0-9]*; do
      grep -q tptriage $p/cmdline 2>/dev/null && tr '\0' '\n' 2>/dev/null < $p/environ | grep -qx "$match" && victim=${p#/proc/}
    done
    [ -n "$victim" ] && break; sleep 0.02
  done
  if [ "$mib" = 0 ]; then sleep 0.3; else
    for i in $(seq 1 300); do
      used=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits | awk -F', ' -v p="$victim" '$1==p{print $2}')
      [ -n "$used" ] && [ "$used" -gt "$mib" ] && break; sleep 0.05
    done
  fi
  local t0=$(date +%s%N)
  echo "killing $match: pid $victim (GPU memory ${used:-?} MiB) at $(date +%T.%N)"; kill -9 "$victim"
  wait $parent; local code=$?
  echo "exit $code, $(( ($(date +%s%N) - t0) / 1000000 )) ms after the kill"
  return $code
}
K="$(declare -f kill_when); PLAN=($(printf '%q ' "${PLAN[@]}"))"
run kill-rank1 60 bash -c "$K; kill_when TPT_REPRO_RANK=1 20000 '$T' repro \"\${PLAN[@]}\" --deadline 20"
run kill-rank1-early 60 bash -c "$K; kill_when TPT_REPRO_RANK=1 0 '$T' repro \"\${PLAN[@]}\" --deadline 20"
run kill-rank0 60 bash -c "$K; kill_when TPT_REPRO_RANK=0 20000 '$T' repro \"\${PLAN[@]}\" --deadline 20"
if [ "$NGPU" -lt 2 ]; then
  K8="$(declare -f kill_when); PLAN=($(printf '%q ' "${P8[@]}"))"
  run kill8-rank5 60 bash -c "$K8; kill_when TPT_REPRO_RANK=5 8000 '$T' repro \"\${PLAN[@]}\" --deadline 20"
fi
if python3 -c 'import torch.distributed.run' 2>/dev/null; then
  run torchrun-kill-rank1 60 bash -c "$K; kill_when RANK=1 20000 python3 -m torch.distributed.run --standalone --nproc-per-node $N --no-python '$T' repro \"\${PLAN[@]}\" --deadline 20"
fi
if command -v mpirun > /dev/null; then
  run mpirun-kill-rank1 60 bash -c "$K; kill_when OMPI_COMM_WORLD_RANK=1 20000 mpirun --allow-run-as-root -np $N -x NCCL_NVLS_ENABLE -x TPT_REPRO_SAME_GPU -x LD_LIBRARY_PATH '$T' repro \"\${PLAN[@]}\" --deadline 20"
fi
export -n TPT_REPRO_SAME_GPU

# All-reduce benchmark: co-located, then one process per rank.
timeout 120 "$T" repro --bench-allreduce --bench-mode colocated > "$L/bench-colocated.txt" 2>&1 || rc=1
say "-- bench colocated: exit $?; $(grep -c '^ ' "$L/bench-colocated.txt") rows"
if [ "$NGPU" -ge 2 ]; then
  R=$( [ "$NGPU" -ge 8 ] && echo 2,4,8 || { [ "$NGPU" -ge 4 ] && echo 2,4 || echo 2; } )
  timeout 200 "$T" repro --bench-allreduce --bench-mode processes --bench-ranks $R > "$L/bench-processes.txt" 2>&1 || rc=1
else
  timeout 200 "$T" repro --bench-allreduce --bench-mode processes --bench-ranks 2,4,8 --bench-iters 2 > "$L/bench-processes.txt" 2>&1 || rc=1
fi
say "-- bench processes: GPU used after: $(gpu_used)"
grep '^#' "$L/bench-processes.txt" | tail -5 | tee -a "$S"
cp "$L/bench-processes.txt" "$L/bench-colocated.txt" "$OUT/" 2>/dev/null
say "== end $(date -u +%T), GPU used: $(gpu_used)"
tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$L"
exit $rc
