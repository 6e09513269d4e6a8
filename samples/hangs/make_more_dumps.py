#!/usr/bin/env python3
"""Writes the real gloo dumps of the 64-rank hang and of a rank that left no dump.

    python3 make_more_dumps.py OUTDIR

Run on the GPU box (PyTorch 2.11.0+cu130, Python 3.12, 2026-12-05; no GPU
used), as /tmp/g.py without this docstring, so the frames' line numbers are
those of that copy (worker's all_reduce at line 13, load_next_batch at 4).
Like make_dumps.py: every rank runs 3 all_reduces, then the case diverges,
and after 3 s each rank writes `_dump_fr_trace()` and faulthandler's threads.
- hang-64ranks: ranks 17 and 42 load data instead of calling all_reduce 4.
- nodump-4ranks: rank 2 loads data and exits without a dump (as a rank killed
  by the OOM killer or a node loss would), the others wait in all_reduce 4.
- p2p-4ranks: pairs 0->1 and 2->3 send/recv; gloo records no send/recv in the
  flight recorder (only the all_reduces came back), so the p2p sample
  (make_p2p_sample.py) is written by us in NCCL's record shape.
"""
# The script as run (the lines above were added after the run).
import datetime,faulthandler,os,sys,threading,time,pickle,torch,torch.distributed as dist,torch.multiprocessing as mp
C={"hang-64ranks":64,"p2p-4ranks":4,"nodump-4ranks":4}
def load_next_batch(s):
    time.sleep(s)
def dump(rank,d,skip):
    if skip: return
    with open(os.path.join(d,f"nccl_trace_rank_{rank}"),"wb") as f: f.write(torch._C._distributed_c10d._dump_fr_trace())
    with open(os.path.join(d,f"stacks_rank_{rank}.txt"),"w") as f: faulthandler.dump_traceback(file=f,all_threads=True)
def worker(rank,world,case,d,port):
    os.environ["MASTER_ADDR"]="127.0.0.1";os.environ["MASTER_PORT"]=str(port)
    dist.init_process_group("gloo",rank=rank,world_size=world,timeout=datetime.timedelta(seconds=60))
    t=torch.ones(4096)
    for _ in range(3): dist.all_reduce(t)
    if case=="p2p-4ranks":
        peer=rank^1
        (dist.send if rank%2==0 else dist.recv)(t,peer)
    skip=case=="nodump-4ranks" and rank==2
    threading.Timer(3.0,lambda:(dump(rank,d,skip),os._exit(0))).start()
    if case=="hang-64ranks" and rank in (17,42): load_next_batch(30)
    elif case=="nodump-4ranks" and rank==2: load_next_batch(30)
    elif case=="p2p-4ranks":
        if rank==3: load_next_batch(30)
        elif rank%2==0: dist.isend(t,rank^1)
        else: dist.irecv(t,rank^1)
        time.sleep(30)
    else:
        dist.all_reduce(t,async_op=True); time.sleep(30)
if __name__=="__main__":
    port=29700
    for case,world in C.items():
        d=os.path.join(sys.argv[1],case);os.makedirs(d,exist_ok=True);port+=1
        mp.start_processes(worker,args=(world,case,d,port),nprocs=world,join=True,start_method="spawn")
        print(case,len(os.listdir(d)),flush=True)
    for r in range(4):
        p=os.path.join(sys.argv[1],"p2p-4ranks",f"nccl_trace_rank_{r}")
        e=pickle.load(open(p,"rb"))
        print(r,e["pg_status"],[(x["profiling_name"],x["collective_seq_id"],x["p2p_seq_id"],x["is_p2p"],x["state"],x["input_sizes"]) for x in e["entries"]])
