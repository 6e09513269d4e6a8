"""NCCL messages (NVIDIA/nccl src/*: debug.cc prefix, WARN texts; knowledge/other-log-formats.md section 1)."""
from common import E, write


def warn(msg, src="transport/p2p.cc:275", host="gpu-node-1", pid=4102, tid=4190, dev=1, ts=None):
    stamp = f"[{ts}] " if ts else ""
    return f"{stamp}{host}:{pid}:{tid} [{dev}] {src} NCCL WARN {msg}"


def info(msg, host="gpu-node-1", pid=4102, tid=4102, dev=1):
    return f"{host}:{pid}:{tid} [{dev}] NCCL INFO {msg}"


INIT = [info("NCCL version 2.21.5+cuda12.4", dev=0, pid=4101, tid=4101),
        info("Bootstrap : Using eth0:10.0.0.11<0>"),
        info("ncclCommInitRank comm 0x55d1a2c0 rank 1 nranks 4 cudaDev 1 nvmlDev 1 busId 1b000 commId 0x7c1ee5c2b8d9a1f3 - Init START")]
INIT_OK = INIT + [info("Channel 00/0 : 1[1] -> 2[2] via P2P/CUMEM/read"), info("Connected all rings"),
                  info("ncclCommInitRank comm 0x55d1a2c0 rank 1 nranks 4 cudaDev 1 nvmlDev 1 busId 1b000 commId 0x7c1ee5c2b8d9a1f3 - Init COMPLETE")]
TRAINING = INIT_OK + ["[rank1]: step 200 loss 1.98", "[rank1]: step 210 loss 1.97"]
# NCCL under a server that is serving (the stage the OOM rules need).
SERVING = INIT_OK + ["(APIServer pid=1) INFO:     Application startup complete.",
                     "(APIServer pid=1) INFO 10-01 10:03:00 [loggers.py:123] Engine 000: Avg prompt throughput: 310.2 tokens/s, Avg generation throughput: 220.1 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.2%, Prefix cache hit rate: 0.0%"]

entries = [
    E("nccl.duplicate_gpu",
      warn("Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1b000", src="init.cc:871"),
      "duplicate_gpu", "duplicate_gpu", "src/init.cc", "initTransportsRank", "NCCL 2.4+", level="WARN", context=INIT),
    E("nccl.cuda_failure_oom_serving",
      warn("Cuda failure 'out of memory'", src="enqueue.cc:1520") + "\n" + info("enqueue.cc:1560 -> 1"),
      "nccl_error", "runtime_oom", "src/enqueue.cc (CUDACHECK)", "ncclLaunchKernel", "NCCL 2.x", level="WARN", context=SERVING,
      note="a CUDA OOM inside NCCL while running: the OOM rules by stage, not nccl_error"),
    E("nccl.cuda_failure_oom_with_ts_2_26",
      warn("Cuda failure 2 'out of memory'", src="transport/p2p.cc:220", ts="2026-12-01 10:05:00") + "\n" + info("transport/p2p.cc:260 -> 1"),
      "nccl_error", "runtime_oom", "src/transport/p2p.cc (CUDACHECK)", "p2pSendSetup", "NCCL 2.26+ (timestamped WARN)", level="WARN",
      context=SERVING),
    E("nccl.cuda_failure_oom_comm_init",
      warn("Cuda failure 'out of memory'", src="include/alloc.h:178") + "\n" + warn("Failed to CUDA calloc 6291456 bytes", src="include/alloc.h:185") +
      "\n" + info("transport/p2p.cc:440 -> 1"),
      "nccl_error", "nccl_error", "src/include/alloc.h", "ncclCudaCalloc (communicator set-up)", "NCCL 2.x", level="WARN", context=INIT,
      note="an OOM while the communicator is set up, before any stage the OOM classes name: an NCCL failure"),
    E("nccl.calloc_failed",
      warn("Failed to CUDA calloc 10485760 bytes", src="include/alloc.h:179"),
      "nccl_error", "runtime_oom", "src/include/alloc.h", "ncclCudaCallocDebug", "NCCL 2.x", level="WARN", context=SERVING),
    E("nccl.shm_extend",
      warn("Error: failed to extend /dev/shm/nccl-hpeT2B to 9637892 bytes", src="misc/shmutils.cc:60") + "\n" +
      warn("Error while creating shared memory segment /dev/shm/nccl-hpeT2B (size 9637888)", src="misc/shmutils.cc:87"),
      "shm_error", "shm_too_small", "src/misc/shmutils.cc", "ncclShmOpen", "NCCL 2.8+", level="WARN", context=INIT),
    E("nccl.shm_fallocate",
      warn("Call to posix_fallocate failed : No space left on device", src="misc/shmutils.cc:57") + "\n" +
      warn("Error while creating shared memory segment /dev/shm/nccl-Xy12 (size 5767504)", src="misc/shmutils.cc:87"),
      "shm_error", "shm_too_small", "src/misc/shmutils.cc", "ncclShmOpen", "NCCL 2.12+", level="WARN", context=INIT),
    E("nccl.socket_connect_failed",
      warn("socketStartConnect: Connect to 172.17.0.2<35413> failed : Software caused connection abort", src="misc/socket.cc:484") +
      "\n" + info("misc/socket.cc:565 -> 2"),
      "network_error", "nccl_network_config", "src/misc/socket.cc", "socketStartConnect", "NCCL 2.18+", level="WARN", context=INIT[:2]),
    E("nccl.socket_connect_retries_exceeded_2_24",
      "\n".join(info(f"socketPollConnect: connect returned No route to host, retrying ({i}/34) after sleep for {i * 100} msec")
                for i in (33, 34)) + "\n" +
      warn("socketPollConnect: connect returned No route to host, exceeded error retry count (35)", src="misc/socket.cc:544",
           ts="2025-05-13 17:49:52") + "\n" + info("bootstrap.cc:605 -> 6"),
      "network_error", "nccl_network_config", "src/misc/socket.cc", "socketConnectCheck", "NCCL 2.24-2.26", level="WARN",
      context=INIT[:2], note="the retries (INFO, one per attempt) are notices; the WARN after NCCL_SOCKET_RETRY_CNT is the failure"),
    E("nccl.socket_connect_retries_exceeded_2_27",
      warn("socketStartConnect: connect to 10.29.224.148<52333> returned Connection refused, exceeded error retry count after 35 attempts",
           src="misc/socket.cc:577"),
      "network_error", "nccl_network_config", "src/misc/socket.cc (2.29: src/os/linux.cc)", "socketConnectCheck", "NCCL 2.27+",
      level="WARN", context=INIT[:2]),
    E("nccl.socket_connect_retry_counted_then_init",
      info("socketPollConnect: connect to 10.0.0.12<46021> returned Connection refused, retrying (2/34) after sleep for 200 msec"),
      "nccl_net", "none", "src/misc/socket.cc", "socketConnectCheck", "NCCL 2.27+", level="INFO", context=INIT[:2],
      after=INIT_OK[2:], note="a peer's listener not up yet: the communicator then comes up"),
    E("nccl.no_socket_interface",
      warn("Bootstrap : no socket interface found", src="bootstrap.cc:45"),
      "network_error", "nccl_network_config", "src/bootstrap.cc", "bootstrapNetInit", "NCCL 2.x", level="WARN", context=INIT[:1]),
    E("nccl.nvls_invalid_argument",
      warn("Cuda failure 1 'invalid argument'", src="transport/nvls.cc:140") + "\n" + info("transport/nvls.cc:172 -> 1"),
      "nvls_error", "nvls_fabric_manager", "src/transport/nvls.cc", "nvlsGroupBindMem", "NCCL 2.17+", level="WARN", context=INIT),
    E("nccl.mismatched_collective",
      warn("Mismatched collective detected, please check your collective calls at and around rank 3. You can use NCCL_DEBUG=INFO "
           "and NCCL_DEBUG_SUBSYS=COLL to see the collective logs", src="enqueue.cc:1090"),
      "collective_mismatch", "collective_desync", "src/enqueue.cc", "checkCollective (old desync detector)", "NCCL 2.4-2.7",
      level="WARN", context=INIT),
    E("nccl.proxy_failure",
      warn("[Proxy Service 1] Failed to execute operation Connect from rank 1, retcode 3", src="proxy.cc:1458") + "\n" +
      info("transport/net.cc:693 -> 3"),
      "nccl_error", "nccl_error", "src/proxy.cc", "proxyServiceInitOp", "NCCL 2.12+", level="WARN", context=INIT),
    E("nccl.peer_closed_after_peer_oom",
      warn("socketProgress: Connection closed by remote peer gpu-node-2<56912>", src="misc/socket.cc:47", host="gpu-node-1") + "\n" +
      info("misc/socket.cc:752 -> 6"),
      "network_error", "runtime_oom", "src/misc/socket.cc", "socketProgress", "NCCL 2.12+", level="WARN",
      context=TRAINING + ["[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 2 has a total capacity "
                          "of 79.19 GiB of which 1.02 GiB is free. Of the allocated memory 75.00 GiB is allocated by PyTorch, and 1.00 "
                          "GiB is reserved by PyTorch but unallocated."],
      note="the peer that closed the connection died of its own OOM"),
    E("nccl.service_thread_closed_alone",
      info("[Service thread] Connection closed by localRank 2", tid=4199),
      "network_error", "process_crashed", "src/proxy.cc", "proxyService", "NCCL 2.19+", level="INFO", context=TRAINING,
      note="a peer process vanished without an error of its own in this excerpt"),
    E("nccl.net_plugin_not_found_harmless",
      info("NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin."),
      None, "none", "src/net.cc", "ncclNetPluginLoad", "NCCL 2.19+", level="INFO", context=INIT, after=INIT_OK[len(INIT):] + TRAINING[len(INIT_OK):]),
    E("nccl.env_override_harmless",
      info("NCCL_P2P_DISABLE set by environment to 1."),
      "env_var", "none", "src/misc/param.cc", "ncclLoadParam", "NCCL 2.x", level="INFO", context=INIT, after=INIT_OK[len(INIT):] + TRAINING[len(INIT_OK):]),
    E("nccl.unhandled_system_error_banner",
      "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
      "nccl_error", "nccl_error", "vllm pynccl / torch (NCCL result 2)", "ncclCommInitRank", "NCCL 2.x", context=INIT[:2]),
    E("nccl.invalid_usage_two_ranks_one_bus",
      "RuntimeError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.21.5",
      "nccl_error", "duplicate_gpu", "src/init.cc", "initTransportsRank (the WARN filtered out)", "NCCL 2.18+ (commId in the Init START line)",
      context=INIT[:2] + [info("ncclCommInitRank comm 0x55d1a2c0 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x7c1ee5c2b8d9a1f3 - Init START", dev=0),
                          info("ncclCommInitRank comm 0x55e3b4d0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x7c1ee5c2b8d9a1f3 - Init START", pid=4101, tid=4101, dev=0)],
      note="two ranks of one communicator on one host with one busId: NCCL's duplicate-GPU check returns ncclInvalidUsage (rules/defs/duplicate_gpu_init_lines.json)", batch=2),
    E("nccl.ib_async_port_error_recovered",
      warn("NET/IB : mlx5_0:1 Got async error event: port error", src="transport/net_ib.cc:199", tid=4180) + "\n" +
      warn("NET/IB : mlx5_0:1 Got async error event: port active", src="transport/net_ib.cc:199", tid=4180),
      "nccl_net", "none", "src/transport/net_ib.cc", "ncclIbAsyncThreadMain", "NCCL 2.19+", level="WARN", context=INIT_OK, after=TRAINING[len(INIT_OK):],
      note="NCCL calls the port events non-fatal: a link that flapped and came back leaves a healthy run healthy", batch=2),
    E("nccl.ib_async_port_error_then_abort",
      warn("NET/IB : mlx5_0:1 Got async error event: port error", src="transport/net_ib.cc:199", tid=4180),
      "nccl_net", "hardware_fault", "src/transport/net_ib.cc", "ncclIbAsyncThreadMain", "NCCL 2.19+", level="WARN", context=TRAINING,
      after=["[rank1]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:328, remote process exited or there was a network error, NCCL version 2.21.5",
             "[rank1]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely."],
      note="the port went down and did not come back before the run failed (rules/defs/hardware_fault_ib_port_down.json)", batch=2),
]


