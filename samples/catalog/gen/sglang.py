"""SGLang messages (knowledge/sglang-source.md sections 1-3; sgl-project/sglang python/sglang/srt)."""
from common import E, tb, write

SRT = "/sgl-workspace/sglang/python/sglang/srt"


def P(t="10:01:11", tp=0):
    return f"[2025-06-10 {t} TP{tp}] "


ARGS = ("[2025-06-10 10:00:01] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-70B-Instruct', "
        "tokenizer_mode='auto', dtype='auto', kv_cache_dtype='auto', mem_fraction_static=0.85, tp_size=4, "
        "pp_size=1, dp_size=1, cuda_graph_max_bs=160, disable_custom_all_reduce=False)")
INIT = [ARGS, P("10:00:05") + "Init torch distributed begin.", P("10:00:07") + "Init torch distributed ends. mem usage=0.62 GB"]
LOAD_BEGIN = INIT + [P("10:00:08") + "Load weight begin. avail mem=78.50 GB"]
LOAD_END = LOAD_BEGIN + [P("10:01:10") + "Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=45.63 GB, mem usage=32.87 GB."]
# The same model on 24 GB cards: nothing left after the weights.
NOROOM = [ARGS.replace("tp_size=4", "tp_size=8"), P("10:00:05") + "Init torch distributed begin.",
          P("10:00:07") + "Init torch distributed ends. mem usage=0.41 GB",
          P("10:00:08") + "Load weight begin. avail mem=21.60 GB",
          P("10:01:10") + "Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=3.05 GB, mem usage=18.55 GB."]
KV = LOAD_END + [P("10:01:12") + "KV Cache is allocated. #tokens: 443744, K size: 16.93 GB, V size: 16.93 GB",
                 P("10:01:12") + "Memory pool end. avail mem=11.78 GB"]
CAPTURE = KV + [P("10:01:13") + "Capture cuda graph begin. This can take up to several minutes. avail mem=11.60 GB"]
READY = CAPTURE + [
    P("10:01:40") + "Capture cuda graph end. Time elapsed: 27.10 s. mem usage=1.01 GB. avail mem=10.59 GB.",
    P("10:01:41") + "max_total_num_tokens=443744, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4096, context_len=131072, available_gpu_mem=10.59 GB",
    "[2025-06-10 10:01:45] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)",
    "[2025-06-10 10:01:47] The server is fired up and ready to roll!",
    P("10:02:00") + "Decode batch. #running-req: 12, #token: 20480, token usage: 0.05, cuda graph: True, gen throughput (token/s): 512.33, #queue-req: 0",
]
HEALTHY_END = [P("10:05:00") + "Decode batch. #running-req: 3, #token: 4096, token usage: 0.01, cuda graph: True, gen throughput (token/s): 230.10, #queue-req: 0",
               '[2025-06-10 10:05:01] INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK']
SIGQUIT = ["[2025-06-10 10:01:12] Received sigquit from a child process. It usually means the child failed."]


def sched(frames, exc, t="10:01:11", tp=0):
    return tb(*frames, exc=exc, header="Scheduler hit an exception: Traceback (most recent call last):", prefix=P(t, tp))


RUN_SCHED = (f"{SRT}/managers/scheduler.py", 2960, "run_scheduler_process", "scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)")
INIT_SCHED = (f"{SRT}/managers/scheduler.py", 320, "__init__", "self.tp_worker = TpWorkerClass(")
TP_WORKER = (f"{SRT}/managers/tp_worker.py", 84, "__init__", "self.model_runner = ModelRunner(")
MR_INIT = (f"{SRT}/model_executor/model_runner.py", 230, "__init__", "self.initialize(min_per_gpu_memory)")
MR_INITIALIZE = (f"{SRT}/model_executor/model_runner.py", 300, "initialize", "self.init_memory_pool(")
LOAD_MODEL = (f"{SRT}/model_executor/model_runner.py", 712, "load_model", "self.model = get_model(")
LOADER = (f"{SRT}/model_loader/loader.py", 381, "load_model", "self.load_weights_and_postprocess(")
LOAD_WEIGHTS = (f"{SRT}/models/llama.py", 585, "load_weights", "param = params_dict[name]")
CAPTURE_FR = [(f"{SRT}/model_executor/model_runner.py", 1420, "init_cuda_graphs", "self.cuda_graph_runner = CudaGraphRunner(self)"),
              (f"{SRT}/model_executor/cuda_graph_runner.py", 310, "__init__", "self.capture()"),
              (f"{SRT}/model_executor/cuda_graph_runner.py", 420, "capture", ") = self.capture_one_batch_size(bs, forward)"),
              (f"{SRT}/model_executor/cuda_graph_runner.py", 520, "capture_one_batch_size", "with torch.cuda.graph(graph, pool=global_graph_memory_pool, stream=stream):")]
EVENT_LOOP = [(f"{SRT}/managers/scheduler.py", 2970, "run_scheduler_process", "scheduler.event_loop_overlap()"),
              (f"{SRT}/managers/scheduler.py", 780, "event_loop_overlap", "result = self.run_batch(batch)"),
              (f"{SRT}/managers/scheduler.py", 1720, "run_batch", "logits_output, next_token_ids, can_run_cuda_graph = self.tp_worker.forward_batch_generation(")]

OOM_21 = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which "
          "1.12 GiB is free. Including non-PyTorch memory, this process has 78.06 GiB memory in use. Of the allocated memory 74.10 GiB "
          "is allocated by PyTorch, and 1.35 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
          "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  "
          "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")

entries = [
    E("sglang.not_enough_memory.v0_1",
      "Initialization failed. router_init_state: Traceback (most recent call last):\n"
      '  File "/usr/lib/python3/dist-packages/sglang/srt/managers/router/model_runner.py", line 281, in init_memory_pool\n'
      '    raise RuntimeError(\nRuntimeError: Not enought memory. Please try to increase --mem-fraction-static.',
      "not_enough_memory", "kv_pool_no_room", "python/sglang/srt/managers/router/model_runner.py", "ModelRunner.init_memory_pool",
      "v0.1.0-v0.1.16 (2024-01..2024-05)",
      context=["server_args=ServerArgs(model_path='lmsys/vicuna-13b-v1.5', mem_fraction_static=0.9, tp_size=2)"]),
    E("sglang.not_enough_memory.v0_2",
      sched([RUN_SCHED, INIT_SCHED, TP_WORKER, MR_INIT, MR_INITIALIZE,
             (f"{SRT}/model_executor/model_runner.py", 880, "init_memory_pool", "raise RuntimeError(")],
            "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."),
      "not_enough_memory", "kv_pool_no_room", "python/sglang/srt/model_executor/model_runner.py", "ModelRunner.init_memory_pool",
      "v0.1.17-v0.4.x (2024-06..2025-05)", context=NOROOM, after=SIGQUIT),
    E("sglang.not_enough_memory.v0_5_current_value",
      sched([RUN_SCHED, INIT_SCHED, TP_WORKER, MR_INIT, MR_INITIALIZE,
             (f"{SRT}/model_executor/model_runner_kv_cache_mixin.py", 412, "init_memory_pool", "raise RuntimeError(")],
            "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: self.server_args.mem_fraction_static=0.85"),
      "not_enough_memory", "kv_pool_no_room", "python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py", "init_memory_pool",
      "v0.5.0-v0.5.x (2025-08..2026-01)", context=NOROOM, after=SIGQUIT),
    E("sglang.not_enough_memory.2026_pool_configurator",
      sched([RUN_SCHED, INIT_SCHED, TP_WORKER, MR_INIT, MR_INITIALIZE,
             (f"{SRT}/model_executor/pool_configurator.py", 96, "__post_init__", "raise RuntimeError(msg)")],
            "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.85"),
      "not_enough_memory", "kv_pool_no_room", "python/sglang/srt/model_executor/pool_configurator.py", "MemoryPoolConfig.__post_init__",
      "2026 (v0.5.6+)", context=NOROOM, after=SIGQUIT),
    E("sglang.not_enough_memory.bare_after_weights",
      P() + "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
      "not_enough_memory", "kv_pool_no_room", "python/sglang/srt/model_executor/model_runner.py", "init_memory_pool",
      "v0.2-v0.5", context=NOROOM,
      note="the exception line alone, as pasted under the weight lines"),
    E("sglang.min_viable_fraction.2026",
      sched([RUN_SCHED, INIT_SCHED, TP_WORKER, MR_INIT, MR_INITIALIZE,
             (f"{SRT}/model_executor/model_runner_kv_cache_mixin.py", 210, "_profile_available_bytes", "raise ValueError(")],
            "ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.85. Raise "
            "--mem-fraction-static above 0.859 (minimum viable = 1 - available/pre = 0.8588). If using speculative decoding, "
            "draft weights are now counted."),
      "min_viable_fraction_error", "kv_pool_no_room", "python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py",
      "_profile_available_bytes", "2026-06+ (PR #28683)", context=NOROOM, after=SIGQUIT),
    E("sglang.profiled_value_negative",
      P() + "max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead.",
      "not_enough_memory", "kv_pool_no_room", "python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py", "init_memory",
      "v0.4.4-2026", level="logging.warning",
      context=NOROOM, after=[P("10:01:11") + "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."] + SIGQUIT),
    E("sglang.profiled_value_positive_harmless",
      P("10:01:11") + "max_total_tokens=200000 is larger than the profiled value 143744. Use the profiled value instead.",
      "kv_profiled", "none", "python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py", "init_memory",
      "v0.4.4-2026", level="logging.warning", context=LOAD_END, after=READY[len(LOAD_END):] + HEALTHY_END),
    E("sglang.mamba_state_cache_no_room",
      sched([RUN_SCHED, INIT_SCHED, TP_WORKER, MR_INIT, MR_INITIALIZE,
             (f"{SRT}/model_executor/model_runner_kv_cache_mixin.py", 150, "handle_max_mamba_cache", "raise ValueError(")],
            "ValueError: Not enough GPU memory for hybrid (mamba/linear-attention) state cache. Computed max_mamba_cache_size=0. "
            "Please increase --mem-fraction-static or decrease --max-mamba-cache-size."),
      "not_enough_memory", "kv_pool_no_room", "python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py", "handle_max_mamba_cache",
      "v0.5.x-2026", context=NOROOM, after=SIGQUIT),
    E("sglang.memory_imbalance.raise_2024",
      sched([RUN_SCHED, INIT_SCHED, TP_WORKER, MR_INIT,
             (f"{SRT}/model_executor/model_runner.py", 190, "init_torch_distributed", "raise ValueError(")],
            "ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes.", t="10:00:07"),
      "memory_imbalance", "startup_free_memory_short", "python/sglang/srt/model_executor/model_runner.py", "init_torch_distributed",
      "v0.2.14-v0.4.x (PR #1194, 2024-08)", context=INIT[:2], after=SIGQUIT),
    E("sglang.memory_imbalance.raise_2026",
      sched([RUN_SCHED, INIT_SCHED, TP_WORKER, MR_INIT,
             (f"{SRT}/model_executor/model_runner.py", 640, "init_torch_distributed", "raise RuntimeError(msg)")],
            "RuntimeError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes. "
            "pre_model_load_memory=12.31, local_gpu_memory=78.50, local_gpu_memory * 0.9=70.65", t="10:00:07"),
      "memory_imbalance", "startup_free_memory_short", "python/sglang/srt/model_executor/model_runner.py", "init_torch_distributed",
      "2026 with SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK=1", context=INIT[:2], after=SIGQUIT),
    E("sglang.memory_imbalance.warning_2026_harmless",
      P("10:00:07") + "The memory capacity is unbalanced. Some GPUs may be occupied by other processes. "
      "pre_model_load_memory=70.12, local_gpu_memory=78.50, local_gpu_memory * 0.9=70.65",
      "memory_imbalance", "none", "python/sglang/srt/model_executor/model_runner.py", "init_torch_distributed",
      "2026 (default: warning only)", level="logger.warning", context=INIT[:2], after=READY[len(INIT):] + HEALTHY_END,
      note="a warning the server survives: at most a finding"),
    E("sglang.capture_failed.oom",
      sched(CAPTURE_FR[:2] + [(f"{SRT}/model_executor/cuda_graph_runner.py", 330, "__init__", "raise Exception(")],
            "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 1.02 GiB. GPU 0 has a total capacity of 79.19 GiB "
            "of which 612.00 MiB is free.\nPossible solutions:\n1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
            "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\n3. disable torch compile by not using --enable-torch-compile\n"
            "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)\n"
            "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose", t="10:01:20"),
      "cuda_oom", "cuda_graph_capture_oom", "python/sglang/srt/model_executor/cuda_graph_runner.py", "CudaGraphRunner.__init__",
      "v0.2-2026", context=CAPTURE, after=SIGQUIT),
    E("sglang.capture_failed.stream_capturing",
      sched(CAPTURE_FR[:2] + [(f"{SRT}/model_executor/cuda_graph_runner.py", 330, "__init__", "raise Exception(")],
            "Exception: Capture cuda graph failed: CUDA error: operation not permitted when stream is capturing\n"
            "Possible solutions:\n1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
            "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\n3. disable torch compile by not using --enable-torch-compile\n"
            "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)", t="10:01:20"),
      "graph_capture_failed", "cuda_graph_capture_failure", "python/sglang/srt/model_executor/cuda_graph_runner.py",
      "CudaGraphRunner.__init__", "v0.2-2026", context=CAPTURE, after=SIGQUIT),
    E("sglang.capture_oom.no_phase_lines",
      tb((f"{SRT}/model_executor/cuda_graph_runner.py", 420, "capture", ") = self.capture_one_batch_size(bs, forward)"),
         (f"{SRT}/model_executor/cuda_graph_runner.py", 520, "capture_one_batch_size", "with torch.cuda.graph(graph, pool=global_graph_memory_pool, stream=stream):"),
         ("/usr/local/lib/python3.10/dist-packages/torch/cuda/graphs.py", 186, "__exit__", "self.cuda_graph.capture_end()"),
         ("/usr/local/lib/python3.10/dist-packages/torch/cuda/graphs.py", 84, "capture_end", "super().capture_end()"),
         exc="RuntimeError: CUDA error: out of memory"),
      "cuda_oom", "cuda_graph_capture_oom", "torch/cuda/graphs.py (under sglang cuda_graph_runner)", "CUDAGraph.capture_end",
      "torch 2.1-2.9", note="an excerpt with no phase lines: the stage comes from the frames"),
    E("sglang.prefill_out_of_memory",
      sched(EVENT_LOOP[:2] + [(f"{SRT}/managers/scheduler.py", 1490, "get_next_batch_to_run", "new_batch = self.get_new_batch_prefill()"),
                              (f"{SRT}/mem_cache/common.py", 410, "alloc_paged_token_slots_extend", "raise RuntimeError(")],
            "RuntimeError: Prefill out of memory. Try to lower your batch size.\nTry to allocate 8192 tokens.\n"
            "Available tokens: 512 + 0 (evictable)", t="10:03:00"),
      "kv_pool_exhausted", "kv_pool_exhausted", "python/sglang/srt/mem_cache/common.py", "alloc_paged_token_slots_extend", "2026",
      context=READY, after=SIGQUIT),
    E("sglang.alloc_req_slots",
      sched(EVENT_LOOP[:2] + [(f"{SRT}/managers/schedule_batch.py", 1130, "alloc_req_slots", "raise RuntimeError(")],
            "RuntimeError: alloc_req_slots runs out of memory. Please set a smaller number for --max-running-requests. "
            "self.req_to_token_pool.available_size()=1, num_reqs=2, ", t="10:03:00"),
      "kv_pool_exhausted", "kv_pool_exhausted", "python/sglang/srt/managers/schedule_batch.py", "ScheduleBatch.alloc_req_slots",
      "v0.4.x-v0.5.x (2025)", context=READY, after=SIGQUIT),
    E("sglang.token_pool_leak",
      sched([(f"{SRT}/managers/scheduler.py", 2970, "run_scheduler_process", "scheduler.event_loop_overlap()"),
             (f"{SRT}/managers/scheduler.py", 800, "event_loop_overlap", "self.self_check_during_idle()"),
             (f"{SRT}/managers/scheduler.py", 1260, "check_memory", "raise ValueError(msg)")],
            "ValueError: token_to_kv_pool_allocator memory leak detected! available_size=443700, protected_size=0, "
            "self.max_total_num_tokens=443744", t="10:04:00"),
      "exception", "other", "python/sglang/srt/managers/scheduler.py", "Scheduler.check_memory", "v0.4.x-v0.5.x",
      context=READY, after=SIGQUIT),
    E("sglang.scheduler_watchdog_timeout",
      P("10:10:00") + "Watchdog timeout (self.watchdog_timeout=300)",
      "watchdog_timeout", "nccl_timeout_hang", "python/sglang/srt/managers/scheduler.py", "Scheduler.watchdog_thread", "v0.4.x (2025)",
      level="logger.error", context=READY, after=["[2025-06-10 10:10:01] SIGQUIT received."]),
    E("sglang.scheduler_watchdog_timeout.2026",
      P("10:10:00") + "Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)",
      "watchdog_timeout", "nccl_timeout_hang", "python/sglang/srt/utils/watchdog.py", "Watchdog._watchdog_once", "late 2025-2026",
      level="logger.error", context=READY),
    E("sglang.scheduler_watchdog_soft_harmless",
      P("10:01:30") + "Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=True)",
      "hang_warning", "none", "python/sglang/srt/utils/watchdog.py", "Watchdog._watchdog_once", "late 2025-2026",
      level="logger.warning", context=CAPTURE, after=READY[len(CAPTURE):] + HEALTHY_END,
      note="soft mode only logs (long CUDA-graph capture)"),
    E("sglang.retraction_2025_harmless",
      P("10:03:00") + "KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_token_ratio: 0.4112 -> 0.5000",
      "retraction", "none", "python/sglang/srt/managers/scheduler.py", "Scheduler.update_running_batch", "2025-2026",
      level="logger.warning", context=READY, after=HEALTHY_END),
    E("sglang.retraction_2024_harmless",
      P("10:03:00") + "Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.1474 -> 0.1845",
      "retraction", "none", "python/sglang/srt/managers/scheduler.py", "Scheduler.update_running_batch", "2024-early 2025",
      level="logger.info", context=READY, after=HEALTHY_END),
    E("sglang.custom_ar_disabled_pcie_harmless",
      P("10:00:06") + "Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs. To silence this "
      "warning, specify disable_custom_all_reduce=True explicitly.",
      "custom_ar_disabled", "none", "python/sglang/srt/distributed/device_communicators/custom_all_reduce.py", "CustomAllreduce.__init__",
      "v0.3-2026", level="logger.warning", context=INIT[:2], after=READY[2:] + HEALTHY_END),
    E("sglang.custom_ar_disabled_p2p_harmless",
      P("10:00:06") + "Custom allreduce is disabled because your platform lacks GPU P2P capability or P2P test failed. To silence "
      "this warning, specify disable_custom_all_reduce=True explicitly.",
      "custom_ar_disabled", "none", "python/sglang/srt/distributed/device_communicators/custom_all_reduce.py", "CustomAllreduce.__init__",
      "v0.3-2026", level="logger.warning", context=INIT[:2], after=READY[2:] + HEALTHY_END),
    E("sglang.custom_ar_disabled_world_size_harmless",
      P("10:00:06") + "Custom allreduce is disabled due to an unsupported world size: 3. Supported world sizes: [2, 4, 6, 8]. To "
      "silence this warning, specify disable_custom_all_reduce=True explicitly.",
      "custom_ar_disabled", "none", "python/sglang/srt/distributed/device_communicators/custom_all_reduce.py", "CustomAllreduce.__init__",
      "v0.3-2026", level="logger.warning", context=INIT[:2], after=READY[2:] + HEALTHY_END),
    E("sglang.custom_ar_peer_access_2025",
      sched([RUN_SCHED, INIT_SCHED, TP_WORKER, MR_INIT,
             (f"{SRT}/model_executor/model_runner.py", 420, "init_torch_distributed", "initialize_model_parallel("),
             (f"{SRT}/distributed/parallel_state.py", 1200, "initialize_model_parallel", "_TP = init_model_parallel_group("),
             (f"{SRT}/distributed/device_communicators/custom_all_reduce.py", 170, "__init__", "self._ptr = ops.init_custom_ar(")],
            "RuntimeError: CUDART error: peer access is not supported between these two devices", t="10:00:07"),
      "p2p_error", "custom_allreduce_failure", "python/sglang/srt/distributed/device_communicators/custom_all_reduce.py",
      "CustomAllreduce.__init__", "2025 (issue #4814, before PR #4815)", context=INIT[:2], after=SIGQUIT),
    E("sglang.custom_ar_register_graph_buffers",
      sched(CAPTURE_FR[:3] + [(f"{SRT}/distributed/device_communicators/custom_all_reduce.py", 330, "register_graph_buffers",
                                "ops.register_graph_buffers(self._ptr, handles, offsets)")],
            "RuntimeError: invalid argument", t="10:01:25"),
      "custom_ar_error", "custom_allreduce_failure", "python/sglang/srt/distributed/device_communicators/custom_all_reduce.py",
      "CustomAllreduce.register_graph_buffers", "v0.4-2026 (issue #9706)", context=CAPTURE, after=SIGQUIT),
    E("sglang.flashinfer_allreduce_fusion_arch",
      sched([RUN_SCHED, INIT_SCHED, TP_WORKER, MR_INIT,
             (f"{SRT}/layers/flashinfer_comm_fusion.py", 60, "ensure_workspace_initialized", "raise ValueError(")],
            "ValueError: FlashInfer allreduce fusion requires SM90 or SM10X NVIDIA GPUs.", t="10:00:09"),
      "unsupported_arch", "unsupported_gpu_arch", "python/sglang/srt/layers/flashinfer_comm_fusion.py", "ensure_workspace_initialized",
      "2026", context=LOAD_BEGIN, after=SIGQUIT),
    E("sglang.sm75_required",
      "RuntimeError: SGLang only supports sm75 and above.",
      "unsupported_arch", "unsupported_gpu_arch", "python/sglang/srt/server_args.py", "ServerArgs.check_server_args", "v0.4-v0.5",
      context=[ARGS]),
    E("sglang.scheduler_dead",
      "[2025-06-10 10:01:12] Rank 0 scheduler is dead. Please check if there are relevant logs.",
      "worker_died", "process_crashed", "python/sglang/srt/entrypoints/engine.py", "_wait_for_scheduler_ready", "v0.4-2026",
      level="logger.error", context=LOAD_END, after=["Killed"]),
    E("sglang.child_failed_exit_code",
      "[2025-06-10 10:01:12] Child process unexpectedly failed with an exit code 137. pid=4121",
      "worker_died", "process_crashed", "python/sglang/srt/entrypoints/engine.py", "sigchld_handler", "2025-2026",
      level="logger.error", context=LOAD_END),
    E("sglang.sigquit_only",
      "[2025-06-10 10:01:12] Received sigquit from a child process. It usually means the child failed.",
      "sigquit", "process_crashed", "python/sglang/srt/entrypoints/engine.py", "launch_phase_sigquit_handler", "v0.4-2026",
      level="logger.error", context=LOAD_END),
    E("sglang.load_barrier_after_peer_oom",
      P("10:09:10", 0) + "TP rank 0 could finish the model loading, but there are other ranks that didn't finish loading. It is "
      "likely due to unexpected failures (e.g., OOM) or a slow node.",
      "load_barrier_timeout", "weights_oom", "python/sglang/srt/model_executor/model_runner.py", "load_model", "2025-2026",
      level="raise",
      context=LOAD_BEGIN + [sched([RUN_SCHED, INIT_SCHED, TP_WORKER, MR_INIT, MR_INITIALIZE, LOAD_MODEL, LOADER,
                                   (f"{SRT}/model_loader/weight_utils.py", 470, "safetensors_weights_iterator", "result = load_file(st_file, device=str(torch.cuda.current_device()))")],
                                  OOM_21, t="10:01:05", tp=3)],
      note="the barrier message names a peer's failure: the peer's own OOM is the cause"),
    E("sglang.weights_oom_load_model",
      sched([RUN_SCHED, INIT_SCHED, TP_WORKER, MR_INIT, MR_INITIALIZE, LOAD_MODEL, LOADER,
             (f"{SRT}/model_loader/loader.py", 360, "load_weights_and_postprocess", "model.load_weights(weights)"),
             (f"{SRT}/models/llama.py", 600, "load_weights", "weight_loader(param, loaded_weight, shard_id)")], OOM_21, t="10:00:40"),
      "cuda_oom", "weights_oom", "python/sglang/srt/model_loader/loader.py", "DefaultModelLoader.load_model", "v0.3-2026",
      context=LOAD_BEGIN, after=SIGQUIT),
    E("sglang.weights_oom_no_phase_lines",
      tb(LOAD_MODEL, LOADER, (f"{SRT}/models/qwen2.py", 420, "__init__", "self.model = Qwen2Model(config, quant_config=quant_config)"),
         ("/usr/local/lib/python3.10/dist-packages/torch/nn/modules/linear.py", 106, "__init__", "torch.empty((out_features, in_features), **factory_kwargs)"),
         exc=OOM_21),
      "cuda_oom", "weights_oom", "python/sglang/srt/model_loader/loader.py", "DefaultModelLoader.load_model", "v0.3-2026",
      note="no phase lines: the weight-load frames give the stage"),
    E("sglang.runtime_oom_forward",
      sched(EVENT_LOOP + [(f"{SRT}/model_executor/model_runner.py", 1800, "forward", "return self.forward_extend(forward_batch)"),
                          (f"{SRT}/layers/logits_processor.py", 330, "forward", "logits = self._get_logits(pruned_states, lm_head, logits_metadata)")],
            OOM_21, t="10:04:10"),
      "cuda_oom", "runtime_oom", "python/sglang/srt/layers/logits_processor.py", "LogitsProcessor.forward", "v0.3-2026",
      context=READY, after=SIGQUIT),
    E("sglang.kv_buffer_oom_startup",
      sched([RUN_SCHED, INIT_SCHED, TP_WORKER, MR_INIT, MR_INITIALIZE,
             (f"{SRT}/model_executor/model_runner.py", 980, "init_memory_pool", "self.token_to_kv_pool = MHATokenToKVPool("),
             (f"{SRT}/mem_cache/memory_pool.py", 320, "_create_buffers", "torch.zeros((self.size + self.page_size, self.head_num, self.head_dim), dtype=self.store_dtype, device=self.device)")],
            OOM_21, t="10:01:12"),
      "cuda_oom", "warmup_oom", "python/sglang/srt/mem_cache/memory_pool.py", "MHATokenToKVPool._create_buffers", "v0.3-2026",
      context=LOAD_END, after=SIGQUIT),
    E("sglang.keyerror_load_weights",
      sched([RUN_SCHED, INIT_SCHED, TP_WORKER, MR_INIT, MR_INITIALIZE, LOAD_MODEL, LOADER,
             (f"{SRT}/model_loader/loader.py", 360, "load_weights_and_postprocess", "model.load_weights(weights)"), LOAD_WEIGHTS],
            "KeyError: 'model.layers.0.mlp.experts.w2_weight_scale'", t="10:00:30"),
      "exception", "config_error", "python/sglang/srt/models/*.py", "load_weights (params_dict[name])", "v0.2-2026",
      context=LOAD_BEGIN, after=SIGQUIT,
      note="the checkpoint holds a parameter the configured model class does not: config/quantization mismatch"),
    E("sglang.argparse_invalid_choice",
      "launch_server.py: error: argument --quantization: invalid choice: 'nvfp8' (choose from 'awq', 'fp8', 'gptq', 'marlin', "
      "'gptq_marlin', 'awq_marlin', 'bitsandbytes', 'gguf', 'modelopt', 'w8a8_int8', 'w8a8_fp8')",
      "config_error", "config_error", "python/sglang/srt/server_args.py", "ServerArgs.add_cli_args (argparse)", "all",
      context=["usage: launch_server.py [-h] --model-path MODEL_PATH [--tokenizer-path TOKENIZER_PATH]"]),
    E("sglang.illegal_memory_access_decode",
      sched(EVENT_LOOP, "RuntimeError: CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be "
            "asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider "
            "passing CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", t="10:04:00"),
      "illegal_memory_access", "illegal_memory_access", "torch (under sglang scheduler)", "Scheduler.run_batch", "all",
      context=READY, after=SIGQUIT),
    E("sglang.moe_default_config_harmless",
      P("10:01:30") + "Using default MoE kernel config. Performance might be sub-optimal! Config file not found at "
      f"{SRT}/layers/moe/fused_moe_triton/configs/triton_3_3_1/E=128,N=768,device_name=NVIDIA_H200.json, you can create them "
      "with https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton",
      None, "none", "python/sglang/srt/layers/moe/fused_moe_triton/fused_moe.py", "get_moe_configs", "v0.3-2026",
      level="logger.warning", context=CAPTURE, after=READY[len(CAPTURE):] + HEALTHY_END),
    E("sglang.fp8_kv_no_scales_harmless",
      P("10:00:50") + "Using FP8 KV cache but no scaling factors provided. Defaulting to scaling factors of 1.0. This may lead "
      "to less accurate results!",
      None, "none", "python/sglang/srt/model_executor/model_runner.py", "load_model", "v0.3-2026", level="logger.warning",
      context=LOAD_BEGIN, after=READY[len(LOAD_BEGIN):] + HEALTHY_END),
    E("sglang.input_too_long_harmless",
      P("10:03:00") + "Input length (140000 tokens) exceeds the maximum allowed length (131072 tokens). Use a shorter input or "
      "enable --allow-auto-truncate.",
      "request_too_long", "none", "python/sglang/srt/managers/tokenizer_manager.py", "_validate_one_request", "2025-2026",
      level="raise (per request)", context=READY, after=HEALTHY_END,
      note="a request refused while the server keeps serving"),
    E("sglang.heads_not_divisible",
      sched([RUN_SCHED, INIT_SCHED, TP_WORKER, MR_INIT, MR_INITIALIZE, LOAD_MODEL,
             (f"{SRT}/layers/linear.py", 830, "__init__", "self.num_heads = divide(self.total_num_heads, tp_size)"),
             (f"{SRT}/distributed/utils.py", 30, "divide", "ensure_divisibility(numerator, denominator)"),
             (f"{SRT}/distributed/utils.py", 24, "ensure_divisibility", 'assert numerator % denominator == 0, "{} is not divisible by {}".format(')],
            "AssertionError: 40 is not divisible by 3", t="10:00:09"),
      "exception", "config_error", "python/sglang/srt/distributed/utils.py", "ensure_divisibility", "v0.2-2026",
      context=[ARGS.replace("tp_size=4", "tp_size=3")] + LOAD_BEGIN[1:], after=SIGQUIT),
]


