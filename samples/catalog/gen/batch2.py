"""Second batch: messages written after the first round of format and rule changes, to
measure the catalogue on wordings the rules were not fitted to (samples/catalog/README.md)."""
from common import E, tb, write
import sglang as S
import vllm as V
import torch_family as T
import nccl as N
import cuda as C

SRT = S.SRT
VP = V.V

entries = [
    # ---- SGLang
    E("sglang.capture_failed.empty_torch_compile",
      S.sched(S.CAPTURE_FR[:2] + [(f"{SRT}/model_executor/cuda_graph_runner.py", 330, "__init__", "raise Exception(")],
              "Exception: Capture cuda graph failed: \nPossible solutions:\n1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
              "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\n3. disable torch compile by not using --enable-torch-compile\n"
              "4. disable CUDA graph by --disable-cuda-graph. (Not recommonded. Huge perf loss)", t="10:01:20"),
      "graph_capture_failed", "cuda_graph_capture_failure", "python/sglang/srt/model_executor/cuda_graph_runner.py", "CudaGraphRunner.__init__",
      "v0.2-v0.4 (2024-2025; 'recommonded' typo)", context=S.CAPTURE, after=S.SIGQUIT, batch=2),
    E("sglang.not_enough_memory.dp_attention_prefix",
      "[2025-07-02 07:41:59 DP3 TP3] RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: "
      "self.server_args.mem_fraction_static=0.95",
      "not_enough_memory", "kv_pool_no_room", "python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py", "init_memory_pool",
      "v0.4.8-v0.5.x with --enable-dp-attention", context=S.NOROOM, batch=2),
    E("sglang.pool_leak.2026",
      S.sched([(f"{SRT}/managers/scheduler.py", 2970, "run_scheduler_process", "scheduler.event_loop_overlap()"),
               (f"{SRT}/managers/scheduler_runtime_checker_mixin.py", 210, "check_memory", "raise ValueError(msg)")],
              "ValueError: pool memory leak detected! [full] total=443744, available=443600, evictable=0", t="10:04:00"),
      "exception", "other", "python/sglang/srt/managers/scheduler_runtime_checker_mixin.py", "check_memory", "2026",
      context=S.READY, after=S.SIGQUIT, batch=2),
    E("sglang.no_kernel_image_sgl_kernel",
      S.sched(S.EVENT_LOOP, "RuntimeError: CUDA error: no kernel image is available for execution on the device", t="10:01:30"),
      "no_kernel_image", "unsupported_gpu_arch", "sgl-kernel (under the scheduler)", "Scheduler.run_batch", "all", context=S.CAPTURE,
      after=S.SIGQUIT, batch=2),
    E("sglang.host_oom_killed_loading",
      "Killed", "signal", "host_oom", "shell (SIGKILL of the server process)", "-", "all", level="shell",
      context=S.LOAD_BEGIN, note="the kernel's OOM killer or a container limit; no rank printed an error", batch=2),
    E("sglang.watchdog_with_pyspy",
      S.P("10:10:00") + "Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)\n" + S.P("10:10:00") +
      "self.cur_batch.batch_size()=12, self.cur_batch.reqs=[Req(rid=5)], self.token_to_kv_pool_allocator.available_size()=401234\n" +
      S.P("10:10:01") + "Pyspy failed to dump PID 4121. Error: /bin/sh: 1: py-spy: not found",
      "watchdog_timeout", "nccl_timeout_hang", "python/sglang/srt/utils/watchdog.py", "Watchdog._watchdog_once", "late 2025-2026",
      level="logger.error", context=S.READY, batch=2),
    # ---- vLLM
    E("vllm.no_cache_blocks.cuda_blocks_2025",
      V.v0("INFO", "10:01:20", "executor_base.py:113", "# cuda blocks: 0, # CPU blocks: 2048") + "\n" +
      "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
      "no_cache_blocks", "kv_pool_no_room", "vllm/executor/executor_base.py + vllm/worker/worker.py", "initialize_cache",
      "2025-02..V0 removal", context=V.V0_LOADED, batch=2),
    E("vllm.no_cache_blocks.2026_suffix",
      "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine "
      "(this flag also controls CPU memory reservation on the CPU backend, despite its name). See "
      "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
      "no_cache_blocks", "kv_pool_no_room", "vllm/v1/core/kv_cache_utils.py", "_check_enough_kv_cache_memory", "2026",
      context=V.V1_LOADED, batch=2),
    E("vllm.gpu_kv_cache_zero_tokens_cut",
      V.v1("INFO", "10:01:51", "kv_cache_utils.py:1087", "GPU KV cache size: 0 tokens") + "\n" +
      V.v1("ERROR", "10:01:51", "core.py:708", "EngineCore failed to start.") + "\n" +
      V.v1("ERROR", "10:01:51", "core.py:708", "Traceback (most recent call last):") + "\n" +
      V.v1("ERROR", "10:01:51", "core.py:708", f'  File "{VP}/v1/engine/core.py", line 699, in run_engine_core'),
      "kv_pool_alloc", "kv_pool_no_room", "vllm/v1/core/kv_cache_utils.py", "_report_kv_cache_config", "V1 2025-02+",
      context=V.V1_LOADED, note="the log stops inside the traceback: the zero pool says why", batch=2),
    E("vllm.max_concurrency_below_one",
      V.v1("INFO", "10:01:51", "kv_cache_utils.py:1091", "Maximum concurrency for 131,072 tokens per request: 0.23x") + "\n" +
      "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger "
      "than the available KV cache memory (3.72 GiB). Based on the available memory, the estimated maximum model length is 30464. Try "
      "increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
      "kv_too_small", "kv_pool_too_small", "vllm/v1/core/kv_cache_utils.py", "check_enough_kv_cache_memory", "V1 2025",
      context=V.V1_LOADED, batch=2),
    E("vllm.worker_failed_with_error_oom_profile",
      "(EngineCore_DP0 pid=311) RuntimeError: Worker failed with error 'CUDA out of memory. Tried to allocate 3.50 GiB. GPU 0 has a "
      "total capacity of 79.19 GiB of which 1.27 GiB is free. Of the allocated memory 75.12 GiB is allocated by PyTorch, and 1.02 GiB "
      "is reserved by PyTorch but unallocated.', please check the stack trace above for the root cause",
      "cuda_oom", "warmup_oom", "vllm/v1/executor/multiproc_executor.py", "MultiprocExecutor.collective_rpc", "V1 2025-2026",
      context=V.V1_LOADED + [V.v1("INFO", "10:01:49", "gpu_worker.py:260", "Memory profiling takes 3.21 seconds", proc="Worker_TP0 pid=420")],
      batch=2),
    E("vllm.engine_core_failed_procs_named",
      "(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_DP0': 1}",
      "engine_dead", "process_crashed", "vllm/v1/engine/utils.py", "wait_for_engine_startup", "V1 2025-09+", context=V.V1_LOAD, batch=2),
    E("vllm.architecture_not_supported",
      "ValueError: Model architectures ['Qwen3MoeForCausalLM'] are not supported for now. Supported architectures: "
      "dict_keys(['AquilaModel', 'AquilaForCausalLM', 'LlamaForCausalLM'])",
      "config_error", "config_error", "vllm/model_executor/models/registry.py", "_ModelRegistry._raise_for_unsupported", "2024-2025",
      context=[V.V0_ARGS], batch=2),
    E("vllm.kv_cache_alloc_oom_v1",
      V.wproc([V.WORKER_BUSY, (f"{VP}/v1/worker/gpu_worker.py", 330, "initialize_from_config", "self.model_runner.initialize_kv_cache(kv_cache_config)"),
               (f"{VP}/v1/worker/gpu_model_runner.py", 4100, "initialize_kv_cache", "kv_caches = self.initialize_kv_cache_tensors(kv_cache_config)"),
               (f"{VP}/v1/worker/gpu_model_runner.py", 3980, "_allocate_kv_cache_tensors", "tensor = torch.zeros(kv_cache_tensor.size, dtype=torch.int8, device=self.device)")],
              V.OOM),
      "cuda_oom", "warmup_oom", "vllm/v1/worker/gpu_model_runner.py", "GPUModelRunner._allocate_kv_cache_tensors", "V1 2025-2026",
      context=V.V1_KV, after=V.V1_DEAD, batch=2),
    # ---- torch
    E("torch.communicator_aborted_after_timeout",
      T.rank(3, "RuntimeError: NCCL communicator was aborted on rank 3. Original reason for failure was: [Rank 3] Watchdog caught "
             "collective operation timeout: WorkNCCL(SeqNum=77, OpType=ALLREDUCE, NumelIn=4096, NumelOut=4096, Timeout(ms)=600000) ran "
             "for 600144 milliseconds before timing out."),
      "watchdog_timeout", "nccl_timeout_hang", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "WorkNCCL::checkAndSetException",
      "torch 1.13-2.1", context=T.TRAIN[:2], batch=2),
    E("torch.client_connect_errno99_retry",
      "[W1201 10:00:05.000000000 socket.cpp:697] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99 - "
      "Cannot assign requested address).",
      "nccl_net", "none", "torch/csrc/distributed/c10d/socket.cpp", "SocketConnectOp::tryConnect", "torch 2.1+", level="C10D_WARNING",
      context=["W1201 10:00:04.000000 4000 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process"],
      after=T.TRAIN, note="a retried connect while the store comes up; the job then trains", batch=2),
    E("torch.elastic_rendezvous_reset",
      "torch.distributed.DistNetworkError: Connection reset by peer",
      "nccl_net", "process_crashed", "torch/csrc/distributed/c10d/Utils.hpp (elastic rendezvous store)", "recvBytes", "torch 2.1+",
      context=T.TRAIN, note="the rendezvous store's host went away", batch=2),
    E("torch.oom_in_optimizer_step",
      T.rank(0, tb(("/workspace/train.py", 190, "main", "optimizer.step()"),
                   (f"{T.T}/optim/optimizer.py", 484, "wrapper", "out = func(*args, **kwargs)"),
                   (f"{T.T}/optim/adamw.py", 204, "step", "self._init_group("),
                   exc=T.OOM_NEW.replace("GPU 1", "GPU 0"))),
      "cuda_oom", "runtime_oom", "c10/cuda/CUDACachingAllocator.cpp (under AdamW state init)", "DeviceCachingAllocator::malloc",
      "torch 2.1+", context=T.TRAIN, batch=2),
    # ---- NCCL
    E("nccl.net_connect_refused_old",
      "gpu-node-1:4102:4190 [1] include/socket.h:409 NCCL WARN Net : Connect to 10.0.0.2<43345> failed : Connection refused",
      "network_error", "nccl_network_config", "src/include/socket.h", "connectAddress", "NCCL 2.4-2.11", level="WARN",
      context=N.INIT[:2], batch=2),
    E("nccl.ibv_create_cq_failed",
      "gpu-node-1:4102:4190 [1] misc/ibvwrap.cc:252 NCCL WARN Call to ibv_create_cq failed with error Cannot allocate memory\n"
      "gpu-node-1:4102:4190 [1] NCCL INFO transport/net_ib.cc:705 -> 2",
      "nccl_warn", "nccl_network_config", "src/misc/ibvwrap.cc", "wrap_ibv_create_cq", "NCCL 2.x", level="WARN", context=N.INIT,
      note="IB verbs could not allocate (locked-memory limit): a network setup problem", batch=2),
    E("nccl.libibverbs_missing_harmless",
      "gpu-node-1:4102:4102 [1] NCCL INFO Failed to open libibverbs.so[.1]\ngpu-node-1:4102:4102 [1] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.11<0>",
      None, "none", "src/misc/ibvwrap.cc", "wrap_ibv_symbols", "NCCL 2.x", level="INFO", context=N.INIT[:2],
      after=N.INIT[2:] + N.TRAINING[len(N.INIT):], batch=2),
    # ---- CUDA / Xid
    E("cuda.error_804_forward_compat",
      f"{C.T}/cuda/__init__.py:129: UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some "
      "cuda functions before calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility was "
      "attempted on non supported HW (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)",
      "driver_mismatch", "cuda_driver_mismatch", "c10/cuda/CUDAFunctions.cpp", "device_count_impl", "torch 2.x", level="warnings.warn",
      after=["RuntimeError: No CUDA GPUs are available"], batch=2),
    E("cuda.libcudart_missing",
      "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory",
      "driver_mismatch", "cuda_driver_mismatch", "dynamic loader (import of a CUDA extension)", "dlopen", "all", batch=2),
    E("cuda.no_space_left",
      tb(("/usr/local/lib/python3.10/dist-packages/huggingface_hub/file_download.py", 1500, "_download_to_tmp_and_move", "http_get("),
         exc="OSError: [Errno 28] No space left on device"),
      "disk_full", "disk_full", "OS (ENOSPC while downloading weights)", "write", "all", batch=2),
    E("xid.31_mmu_fault_app",
      C.kern("Xid (PCI:0000:3b:00): 31, pid=2231, name=python, Ch 00000010, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 "
             "faulted @ 0x7f_12340000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ"),
      "xid", "illegal_memory_access", "NVIDIA kernel driver (NVRM)", "Xid 31", "all drivers", level="kernel",
      note="an MMU fault raised by an application's kernel: a software access error, not a hardware fault", batch=2),
    E("xid.13_sm_exception",
      C.kern("Xid (PCI:0000:3b:00): 13, pid=2231, name=python, Graphics SM Warp Exception on (GPC 1, TPC 2, SM 0): Out Of Range Address"),
      "xid", "illegal_memory_access", "NVIDIA kernel driver (NVRM)", "Xid 13", "all drivers", level="kernel", batch=2),
    # ---- servers
    E("tgi.shard_signal_9",
      "2024-06-01T10:00:50.000000Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown with signal 9 rank=0",
      "signal", "process_crashed", "launcher/src/main.rs", "shard_manager", "TGI 0.9-2.x", level="tracing::error", batch=2),
    E("ray.task_oom_error_host",
      "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\nMemory on the node (IP: 10.0.0.2, ID: "
      "2a9f) where the task (actor ID: 7c8a, name=RayWorkerWrapper.__init__, pid=3487) was running was 240.12GB / 251.50GB (0.954724), "
      "which exceeds the memory usage threshold of 0.95.",
      None, "host_oom", "python/ray/exceptions.py", "OutOfMemoryError (host memory monitor)", "Ray 2.2+",
      note="host RAM, not GPU memory", batch=2),
    E("uvicorn.shutdown_after_engine_death",
      "INFO:     Shutting down\nINFO:     Waiting for application shutdown.\nINFO:     Application shutdown complete.\nINFO:     Finished server process [1]",
      None, "process_crashed", "uvicorn/server.py", "Server.shutdown", "uvicorn 0.x", level="logger.info",
      context=V.V1_READY + ["(APIServer pid=1) vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause."],
      batch=2),
    E("trtllm.executor_insufficient_model",
      "[12/01/2026-10:01:00] [TRT-LLM] [RANK 0] [E] Failed to initialize executor on rank 0: Executor creation failed due to "
      "insufficient GPU memory.\nThe following component could not be created: model\nTotal GPU memory (GiB): 79.11\nFree GPU memory "
      "before component creation attempt (GiB): 60.02",
      "component_oom", "weights_oom", "tensorrt_llm/_torch/pyexecutor/py_executor_creator.py", "create_py_executor", "TRT-LLM 1.0+",
      level="logger.error", batch=2),
]

