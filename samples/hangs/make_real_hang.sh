#!/usr/bin/env bash
# make_real_hang.sh: a real 2-rank hang under torchrun, and what our Next step
# asks users to collect from it, all written by the tools themselves:
#   torchrun.log          torchrun's own output (gloo's timeout on rank 0, the
#                         ChildFailedError block), stdout and stderr together
#   nccl_trace_rank_N     each rank's flight-recorder pickle (_dump_fr_trace)
#   pyspy_rank_N.txt      `py-spy dump --pid PID` of each rank while it hangs
#   pyspy_native_rank_1.txt  `py-spy dump --native --pid PID` of the missing rank
#   gdb_rank_1.txt        `cuda-gdb -p PID -batch -ex 'thread apply all bt'`
#
#   samples/hangs/make_real_hang.sh OUTDIR [PY_SPY]
#
# Run on the GPU box (PyTorch in python3; no GPU used: gloo), as root (py-spy
# and the debugger attach with ptrace). Every rank runs three all_reduces, then
# rank 1 loads data for 60 s instead of calling all_reduce 4; rank 0 waits in
# it until gloo's 20 s timeout; at 6 s both ranks are dumped and, at 8 s, each
# writes its flight-recorder pickle. NCCL_NVLS_ENABLE=0 is kept though no
# NCCL runs.
set -uo pipefail
out=$(mkdir -p "${1:?usage: make_real_hang.sh OUTDIR [PY_SPY]}" && cd "$1" && pwd)
spy=${2:-py-spy}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
work=$(mktemp -d)
cat > "$work/train.py" <<'PY'
import datetime, os, threading, time, torch, torch.distributed as dist
def load_next_batch(seconds):
    time.sleep(seconds)
def dump_flight_recorder(rank, out):
    with open(os.path.join(out, f"nccl_trace_rank_{rank}"), "wb") as f:
        f.write(torch._C._distributed_c10d._dump_fr_trace())
def main():
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=20))
    rank = dist.get_rank()
    threading.Timer(8.0, dump_flight_recorder, (rank, os.environ["HANG_OUT"])).start()
    t = torch.ones(4096)
    for _ in range(3):
        dist.all_reduce(t)
    if rank == 1:
        load_next_batch(60)
    dist.all_reduce(t)
    dist.destroy_process_group()
if __name__ == "__main__":
    main()
PY
cd "$work"
HANG_OUT="$out" TORCH_FR_BUFFER_SIZE=2000 python3 -m torch.distributed.run --standalone --nproc-per-node 2 \
  train.py > "$out/torchrun.log" 2>&1 &
launcher=$!
sleep 6
for p in $(pgrep -f 'train.py' | grep -vx "$launcher"); do
  r=$(tr '\0' '\n' < /proc/$p/environ 2>/dev/null | sed -n 's/^RANK=//p')
  [ -n "$r" ] || continue
  timeout 30 "$spy" dump --pid "$p" > "$out/pyspy_rank_$r.txt" 2>&1
  echo "py-spy rank $r pid $p: exit $?"
  if [ "$r" = 1 ]; then
    timeout 30 "$spy" dump --native --pid "$p" > "$out/pyspy_native_rank_1.txt" 2>&1
    echo "py-spy --native rank 1: exit $?"
    if command -v cuda-gdb > /dev/null; then
      timeout 60 cuda-gdb -q -p "$p" -batch -ex 'thread apply all bt' > "$out/gdb_rank_1.txt" 2>&1
      echo "cuda-gdb rank 1: exit $?"
    fi
  fi
done
wait "$launcher"; echo "torchrun exit $?"
rm -rf "$work"
ls -la "$out"
