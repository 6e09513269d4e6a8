#!/usr/bin/env python3
# What NCCL communicators take on each GPU the way vLLM before 0.10.2 creates them
# (memory/vllm_nccl_connect.h): NCCL_CUMEM_ENABLE=0, so ncclCommInitRank connects every
# channel's ring and tree at creation. Spawns one process a GPU (not torch.distributed's own
# launcher: the plan's figure is per process), takes a cudaMemGetInfo snapshot before the
# default process group, then creates the world communicator eagerly (device_id) and a second
# one for a new group of the same ranks (vLLM 0.9.2: PyNccl's and the logits all-gather's),
# runs an all-reduce and an all-gather on each, and prints per rank the device memory used by
# each step in MiB with NCCL's channel count (NCCL_DEBUG=INFO's "N coll channels" line is in
# the log it writes). The plan prices, on H100 SXM / H200 / H20 at 4 ranks, 576 MiB a
# communicator of connection buffers beside the one-rank 558 MiB (2 x 1134 MiB in all).
#
#   python3 bench/replays/nccl_connect_memory.py [RANKS [CUMEM]]   (default 4 0)
#   RANKS GPUs of one host; CUMEM 0 (vLLM < 0.10.2) or 1 (NCCL's default: runtime connect)
import json, os, sys, tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

MiB = 1024.0 * 1024.0


def used(dev):
    free, total = torch.cuda.mem_get_info(dev)
    return (total - free) / MiB


def worker(rank, world, port, out_dir):
    dev = torch.device("cuda", rank)
    torch.cuda.set_device(dev)
    torch.zeros(1, device=dev)  # the CUDA context first, outside what is measured
    base = used(dev)
    steps = {}
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            device_id=dev)
    steps["world_comm_created"] = used(dev) - base
    x = torch.ones(64 << 20, dtype=torch.bfloat16, device=dev)  # 128 MiB: above any custom all-reduce
    dist.all_reduce(x)
    torch.cuda.synchronize()
    steps["after_all_reduce"] = used(dev) - base
    group = dist.new_group(list(range(world)))
    y = torch.empty(world * x.numel(), dtype=x.dtype, device=dev)
    dist.all_gather_into_tensor(y, x, group=group)  # the second communicator is created here
    torch.cuda.synchronize()
    steps["second_comm_after_all_gather"] = used(dev) - base
    del x, y
    torch.cuda.empty_cache()
    steps["torch_cache_emptied"] = used(dev) - base
    steps["torch_reserved_mib"] = torch.cuda.memory_reserved(dev) / MiB
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(steps, f)
    dist.barrier()
    dist.destroy_process_group()


def main():
    world = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    cumem = sys.argv[2] if len(sys.argv) > 2 else "0"
    os.environ["NCCL_CUMEM_ENABLE"] = cumem
    os.environ.setdefault("NCCL_DEBUG", "INFO")
    os.environ.setdefault("NCCL_DEBUG_SUBSYS", "INIT,GRAPH")
    out_dir = tempfile.mkdtemp()
    mp.spawn(worker, args=(world, 29571, out_dir), nprocs=world, join=True)
    print(json.dumps({"nccl": ".".join(map(str, torch.cuda.nccl.version())), "torch": torch.__version__,
                      "ranks": world, "NCCL_CUMEM_ENABLE": cumem,
                      "gpu": torch.cuda.get_device_name(0),
                      "per_rank_mib": [json.load(open(os.path.join(out_dir, f"rank{r}.json"))) for r in range(world)]},
                     indent=1))


if __name__ == "__main__":
    main()
