"""PyTorch messages: c10d ProcessGroupNCCL, TCPStore, CUDACachingAllocator, elastic/torchrun
(knowledge/other-log-formats.md sections 2-3; pytorch/pytorch torch/csrc/distributed/c10d, c10/cuda, torch/distributed/elastic)."""
from common import E, tb, write

T = "/opt/conda/lib/python3.11/site-packages/torch"

TRAIN = ["[rank0]:[I1201 10:00:01.000000000 ProcessGroupNCCL.cpp:890] [PG ID 0 PG GUID 0(default_pg) Rank 0] ProcessGroupNCCL initialization options: size: 4, global rank: 0",
         "[rank1]:[I1201 10:00:01.000000000 ProcessGroupNCCL.cpp:890] [PG ID 0 PG GUID 0(default_pg) Rank 1] ProcessGroupNCCL initialization options: size: 4, global rank: 1",
         "[rank0]: step 100 loss 2.113 lr 3.0e-4", "[rank1]: step 100 loss 2.110 lr 3.0e-4"]

OOM_NEW = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 1 has a total capacity of 39.38 GiB of which "
           "1.21 GiB is free. Including non-PyTorch memory, this process has 38.16 GiB memory in use. Of the allocated memory 35.90 GiB "
           "is allocated by PyTorch, and 1.61 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
           "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
           "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
OOM_LEGACY = ("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; 14.56 GiB already "
              "allocated; 3.31 MiB free; 14.73 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting "
              "max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF")
OOM_CAPACTY = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 172.00 MiB. GPU 0 has a total capacty of 23.65 GiB "
               "of which 85.06 MiB is free. Process 7321 has 23.56 GiB memory in use. Of the allocated memory 22.97 GiB is allocated by "
               "PyTorch, and 140.15 MiB is reserved by PyTorch but unallocated.")
TRAIN_FR = [("/workspace/train.py", 210, "<module>", "main()"), ("/workspace/train.py", 180, "main", "loss.backward()"),
            (f"{T}/_tensor.py", 581, "backward", "torch.autograd.backward("),
            (f"{T}/autograd/__init__.py", 347, "backward", "_engine_run_backward(")]


def rank(r, s):
    return "\n".join(f"[rank{r}]: " + l for l in s.split("\n"))


WD = ("[rank{r}]:[E1201 10:30:01.{ns} ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn={n}, NumelOut={n}, Timeout(ms)=600000) ran for 600031 milliseconds before timing out.")
ELASTIC_FAIL = ["W1201 10:05:00.123000 4000 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 4101 closing signal SIGTERM",
                "E1201 10:05:01.456000 4000 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 1 (pid: 4102) of binary: /opt/conda/bin/python"]

entries = [
    E("torch.oom_2_1_backward",
      rank(1, tb(*TRAIN_FR, exc=OOM_NEW)),
      "cuda_oom", "runtime_oom", "c10/cuda/CUDACachingAllocator.cpp", "DeviceCachingAllocator::malloc", "torch 2.1+",
      context=TRAIN, after=ELASTIC_FAIL),
    E("torch.oom_legacy_forward",
      tb(("/workspace/train.py", 120, "train_step", "out = model(batch)"), (f"{T}/nn/modules/module.py", 1501, "_call_impl", "return forward_call(*args, **kwargs)"),
         exc=OOM_LEGACY),
      "cuda_oom", "runtime_oom", "c10/cuda/CUDACachingAllocator.cpp", "DeviceCachingAllocator::malloc", "torch 1.x-2.0",
      context=["epoch 0 step 10 loss 3.2"]),
    E("torch.oom_capacty_typo",
      tb(("/workspace/infer.py", 44, "generate", "out = model.generate(**inputs, max_new_tokens=512)"), exc=OOM_CAPACTY),
      "cuda_oom", "runtime_oom", "c10/cuda/CUDACachingAllocator.cpp", "DeviceCachingAllocator::malloc", "torch 2.1 ('capacty' typo)",
      context=["loaded model in 12.3s", "generating batch 4"]),
    E("torch.oom_memory_fraction",
      tb(("/workspace/serve.py", 88, "forward", "h = self.mlp(x)"),
         exc="torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which "
             "40.00 GiB is free. Of the allocated memory 38.20 GiB is allocated by PyTorch, and 0.50 GiB is reserved by PyTorch but "
             "unallocated. Allocation on device 0 would exceed allowed memory. (out of memory)"),
      "cuda_oom", "runtime_oom", "c10/cuda/CUDACachingAllocator.cpp", "set_per_process_memory_fraction limit", "torch 2.0+",
      context=["serving started", "batch 12 done"]),
    E("torch.graph_capture_end_oom_no_phase",
      tb(("/workspace/bench.py", 60, "capture", "with torch.cuda.graph(g):"),
         (f"{T}/cuda/graphs.py", 186, "__exit__", "self.cuda_graph.capture_end()"),
         (f"{T}/cuda/graphs.py", 84, "capture_end", "super().capture_end()"),
         exc="RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call, so "
             "the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1"),
      "cuda_oom", "cuda_graph_capture_oom", "torch/cuda/graphs.py", "CUDAGraph.capture_end", "torch 2.0+",
      note="no phase lines: torch.cuda.graph / capture_end frames give the stage"),
    E("torch.watchdog_timeout_seq1",
      "\n".join(WD.format(r=r, ns="4446%05d" % r, seq=1, n=1) for r in range(4)),
      "watchdog_timeout", "nccl_timeout_hang", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "ProcessGroupNCCL::WorkNCCL::checkTimeout",
      "torch 2.2+", level="LOG(ERROR)", context=TRAIN[:2]),
    E("torch.watchdog_timeout_old_format",
      "[E ProcessGroupNCCL.cpp:475] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5621, OpType=BROADCAST, "
      "Timeout(ms)=1800000) ran for 1800441 milliseconds before timing out.",
      "watchdog_timeout", "nccl_timeout_hang", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "WorkNCCL::checkTimeout",
      "torch 1.x", level="LOG(ERROR)"),
    E("torch.blocking_wait_timeout",
      "[rank3]:[E1201 10:30:01.000000000 ProcessGroupNCCL.cpp:702] [Rank 3] Work WorkNCCL(SeqNum=88, OpType=ALLGATHER, NumelIn=4096, "
      "NumelOut=16384, Timeout(ms)=600000) timed out in blocking wait (TORCH_NCCL_BLOCKING_WAIT=1).",
      "watchdog_timeout", "nccl_timeout_hang", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "WorkNCCL::synchronizeInternal",
      "torch 2.2+", level="LOG(ERROR)", context=TRAIN[:2]),
    E("torch.watchdog_illegal_access",
      "[rank2]:[E1201 10:20:00.000000000 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank 2] Process group watchdog "
      "thread terminated with exception: CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be "
      "asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
      "watchdog_exception", "illegal_memory_access", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "ProcessGroupNCCL::ncclCommWatchdog",
      "torch 2.2+", level="LOG(ERROR)", context=TRAIN),
    E("torch.watchdog_ecc",
      "[rank5]:[E1201 10:20:00.000000000 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank 5] Process group watchdog "
      "thread terminated with exception: CUDA error: uncorrectable ECC error encountered",
      "watchdog_exception", "hardware_fault", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "ProcessGroupNCCL::ncclCommWatchdog",
      "torch 2.2+", level="LOG(ERROR)", context=TRAIN),
    E("torch.dist_backend_error_unhandled_cuda",
      rank(0, "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled "
           "cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\nncclUnhandledCudaError: Call to CUDA function "
           "failed.\nLast error:\nCuda failure 'invalid argument'"),
      "nccl_error", "nccl_error", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "ProcessGroupNCCL::getNCCLComm", "torch 2.1+",
      context=TRAIN[:2]),
    E("torch.dist_backend_error_internal",
      rank(0, "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, internal "
           "error - please report this issue to the NCCL developers, NCCL version 2.18.1\nncclInternalError: Internal check failed.\n"
           "Last error:\nProxy Call to rank 1 failed (Connect)"),
      "nccl_error", "nccl_error", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "ProcessGroupNCCL::getNCCLComm", "torch 2.0-2.1 / NCCL 2.18",
      context=TRAIN[:2]),
    E("torch.dist_backend_error_cuda_oom_serving",
      rank(1, tb(*TRAIN_FR, (f"{T}/distributed/c10d_logger.py", 83, "wrapper", "return func(*args, **kwargs)"),
                 (f"{T}/distributed/distributed_c10d.py", 2501, "all_reduce", "work = group.allreduce([tensor], opts)"),
                 exc="torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3253, unhandled "
                     "cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\nncclUnhandledCudaError: Call to CUDA function "
                     "failed.\nLast error:\nCuda failure 'out of memory'")),
      "nccl_error", "runtime_oom", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "ProcessGroupNCCL::collective", "torch 2.1+",
      context=TRAIN, note="a CUDA OOM inside NCCL in a training step's backward all-reduce: the OOM rules decide by stage"),
    E("torch.tcpstore_broken_pipe_after_peer_oom",
      "[rank2]:[W1201 10:05:02.000000000 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=62, addr=[localhost]:53458, "
      "remote=[localhost]:29500): failed to recv, got 0 bytes\n[rank2]:[W1201 10:05:02.000000000 ProcessGroupNCCL.cpp:1538] "
      "[PG ID 0 PG GUID 0(default_pg) Rank 2] Failed to check the \"should dump\" flag on TCPStore, (maybe TCPStore server has shut "
      "down too early), with error: Broken pipe",
      "nccl_net", "runtime_oom", "torch/csrc/distributed/c10d/TCPStore.cpp", "TCPClient::receiveValue", "torch 2.3+",
      level="C10D_WARNING", context=TRAIN + [rank(1, tb(*TRAIN_FR, exc=OOM_NEW))],
      note="the store lost its server because rank 1 died: a consequence of that OOM"),
    E("torch.tcpstore_send_broken_pipe_alone",
      "[rank3]:[W1201 10:05:02.000000000 TCPStore.cpp:106] [c10d] sendBytes failed on SocketImpl(fd=40, addr=[node1]:41234, "
      "remote=[node0]:29500): Broken pipe\nException raised from sendBytes at ../torch/csrc/distributed/c10d/Utils.hpp:651 (most "
      "recent call first):",
      "nccl_net", "process_crashed", "torch/csrc/distributed/c10d/Utils.hpp", "sendBytes", "torch 2.3+", level="C10D_WARNING",
      context=TRAIN[:2], note="the peer holding the store died without a visible error: a process loss, not a network fault"),
    E("torch.tcpstore_connection_reset",
      "[rank1]:[W1201 10:05:02.000000000 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=55, addr=[localhost]:44010, "
      "remote=[localhost]:29500): Connection reset by peer",
      "nccl_net", "process_crashed", "torch/csrc/distributed/c10d/TCPStore.cpp", "TCPClient::receiveValue", "torch 2.3+",
      level="C10D_WARNING", context=TRAIN[:2]),
    E("torch.tcpstore_at_exit_harmless",
      "[rank0]: training finished, checkpoint saved\n[rank0]:[W1201 10:10:00.000000000 ProcessGroupNCCL.cpp:1250] Warning: WARNING: "
      "process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call "
      "destroy_process_group to ensure that any pending NCCL operations have finished in this process. (function operator())\n"
      "[W1201 10:10:01.000000000 TCPStore.cpp:113] [c10d] sendBytes failed on SocketImpl(fd=3, addr=[localhost]:51234, "
      "remote=[localhost]:29500): Broken pipe",
      "nccl_net", "none", "torch/csrc/distributed/c10d/TCPStore.cpp", "TCPClient::sendCommand", "torch 2.4+", level="C10D_WARNING",
      context=TRAIN, note="rank 0's store closed first at a normal exit: exit noise"),
    E("torch.store_client_timeout",
      "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 3/4 clients joined.",
      "network_error", "nccl_network_config", "torch/csrc/distributed/c10d/TCPStore.cpp", "TCPStore::waitForWorkers", "torch 2.1+"),
    E("torch.store_connect_timeout",
      "[W1201 10:00:05.000000000 socket.cpp:752] [c10d] The client socket has timed out after 1800000ms while trying to connect to "
      "(10.0.0.1, 29500).",
      "network_error", "nccl_network_config", "torch/csrc/distributed/c10d/socket.cpp", "SocketConnectOp::run", "torch 2.2+",
      level="C10D_ERROR"),
    E("torch.store_listen_eaddrinuse",
      "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 29500, useIpv6: "
      "false, code: -98, name: EADDRINUSE, message: address already in use",
      "address_in_use", "port_in_use", "torch/csrc/distributed/c10d/socket.cpp", "SocketListenOp::run", "torch 2.2+"),
    E("torch.fr_dump_signal",
      "[rank0]:[E1201 10:30:02.000000000 ProcessGroupNCCL.cpp:1484] [PG ID 0 PG GUID 0(default_pg) Rank 0] Observed flight recorder "
      "dump signal from another rank via TCPStore.\n[rank0]:[E1201 10:30:02.000000000 ProcessGroupNCCL.cpp:1523] [PG ID 0 PG GUID "
      "0(default_pg) Rank 0] Received a dump signal due to a collective timeout from  rank 3 and we will try our best to dump the "
      "debug info. Last enqueued NCCL work: 12, last completed NCCL work: 11.",
      "fr_dump_signal", "nccl_timeout_hang", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "ProcessGroupNCCL::heartbeatMonitor",
      "torch 2.4+", level="LOG(ERROR)", context=TRAIN),
    E("torch.desync_detail",
      rank(0, "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: CollectiveFingerPrint("
           "SequenceNumber=23, OpType=ALLREDUCE, TensorShape=[1024], TensorDtypes=Float), but Rank 1 is running collective: "
           "CollectiveFingerPrint(SequenceNumber=23, OpType=BROADCAST, TensorShape=[1024], TensorDtypes=Float)."),
      "collective_mismatch", "collective_desync", "torch/csrc/distributed/c10d/ProcessGroupWrapper.cpp", "ProcessGroupWrapper::runCollectiveChecks",
      "torch 1.10+ (TORCH_DISTRIBUTED_DEBUG=DETAIL)", context=TRAIN[:2]),
    E("torch.heartbeat_stuck",
      "[rank0]:[E1201 10:40:00.000000000 ProcessGroupNCCL.cpp:1423] [PG ID 0 PG GUID 0(default_pg) Rank 0] Heartbeat monitor timed "
      "out! Process will be terminated after dumping debug info. workMetaList_.size()=1\n[rank0]:[F1201 10:40:00.000000000 "
      "ProcessGroupNCCL.cpp:1306] [PG ID 0 PG GUID 0(default_pg) Rank 0] [PG ID 0 PG GUID 0(default_pg) Rank 0] ProcessGroupNCCL's "
      "watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.",
      "watchdog_stuck", "nccl_timeout_hang", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "ProcessGroupNCCL::heartbeatMonitor",
      "torch 2.3+", level="LOG(FATAL)", context=TRAIN),
    E("torch.elastic_failed_sigkill",
      "E1201 10:05:01.456000 4000 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) local_rank: 0 (pid: "
      "4101) of binary: /opt/conda/bin/python",
      "child_failed", "process_crashed", "torch/distributed/elastic/multiprocessing/api.py", "PContext._poll", "torch 2.4+",
      level="logger.error", context=TRAIN),
    E("torch.child_failed_table",
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n============================================================\n"
      "train.py FAILED\n------------------------------------------------------------\nFailures:\n  <NO_OTHER_FAILURES>\n"
      "------------------------------------------------------------\nRoot Cause (first observed failure):\n[0]:\n"
      "  time      : 2026-12-01_10:05:01\n  host      : node0\n  rank      : 2 (local_rank: 2)\n  exitcode  : -6 (pid: 4103)\n"
      "  error_file: <N/A>\n  traceback : Signal 6 (SIGABRT) received by PID 4103\n"
      "============================================================",
      "child_failed", "process_crashed", "torch/distributed/elastic/multiprocessing/errors/__init__.py", "ChildFailedError.format_msg",
      "torch 1.9+", context=TRAIN),
    E("torch.elastic_sigterm_harmless_in_failure",
      "W1201 10:05:00.123000 4000 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 4101 closing signal SIGTERM",
      "signal", "runtime_oom", "torch/distributed/elastic/multiprocessing/api.py", "PContext._close", "torch 2.4+",
      level="logger.warning", context=TRAIN + [rank(1, tb(*TRAIN_FR, exc=OOM_NEW))],
      note="launcher noise after rank 1's OOM: never the cause"),
    E("torch.record_streams_deprecated_harmless",
      "[rank0]:[W1201 10:00:02.000000000 ProcessGroupNCCL.cpp:991] Warning: TORCH_NCCL_AVOID_RECORD_STREAMS is the default now, this "
      "environment variable is thus deprecated. (function operator())",
      None, "none", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "ProcessGroupNCCL::ProcessGroupNCCL", "torch 2.4+",
      level="TORCH_WARN", context=TRAIN[:2], after=TRAIN[2:]),
    E("torch.cuda_ipc_producer_terminated_harmless",
      "[W CudaIPCTypes.cpp:15] Producer process has been terminated before all shared CUDA tensors released. See Note [Sharing CUDA "
      "tensors]",
      None, "none", "torch/csrc/CudaIPCTypes.cpp", "CudaIPCSentDataLimbo::~CudaIPCSentDataLimbo", "torch 1.x-2.x", level="LOG(WARNING)",
      context=TRAIN),
    E("torch.not_destroyed_harmless",
      "[rank0]:[W1201 10:10:00.000000000 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been destroyed before we "
      "destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to ensure that any "
      "pending NCCL operations have finished in this process. (function operator())",
      None, "none", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "ProcessGroupNCCL::~ProcessGroupNCCL", "torch 2.4+",
      level="TORCH_WARN", context=TRAIN),
    E("torch.terminate_dist_backend_error_after_timeout",
      "terminate called after throwing an instance of 'c10::DistBackendError'\n  what():  [PG ID 0 PG GUID 0(default_pg) Rank 1] "
      "Process group watchdog thread terminated with exception: [Rank 1] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600090 milliseconds before timing out.",
      "watchdog_timeout", "nccl_timeout_hang", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "ProcessGroupNCCL::ncclCommWatchdog",
      "torch 2.2+", level="std::terminate", context=TRAIN[:2]),
]


