"""vLLM messages, V0 and V1 (knowledge/vllm-source.md sections 1-3; vllm-project/vllm vllm/)."""
from common import E, tb, write

V = "/usr/local/lib/python3.12/dist-packages/vllm"


def v0(level, t, f, msg):
    return f"{level} 08-01 {t} {f}] {msg}"


def v1(level, t, f, msg, proc="EngineCore_DP0 pid=311"):
    return f"({proc}) {level} 10-01 {t} [{f}] {msg}"


# V0 (2024) startup
V0_ARGS = v0("INFO", "10:00:01", "api_server.py:212",
             "args: Namespace(host=None, port=8000, model='meta-llama/Meta-Llama-3-70B-Instruct', tensor_parallel_size=4, "
             "gpu_memory_utilization=0.9, max_model_len=8192, enforce_eager=False)")
V0_ENGINE = v0("INFO", "10:00:02", "llm_engine.py:176",
               "Initializing an LLM engine (v0.5.3.post1) with config: model='meta-llama/Meta-Llama-3-70B-Instruct', "
               "tensor_parallel_size=4, max_seq_len=8192, enforce_eager=False")
V0_LOAD = [V0_ARGS, V0_ENGINE, v0("INFO", "10:00:10", "model_runner.py:680", "Starting to load model meta-llama/Meta-Llama-3-70B-Instruct...")]
V0_LOADED = V0_LOAD + [v0("INFO", "10:01:10", "model_runner.py:692", "Loading model weights took 32.8892 GB")]
V0_BLOCKS = V0_LOADED + [v0("INFO", "10:01:20", "distributed_gpu_executor.py:56", "# GPU blocks: 12123, # CPU blocks: 3276")]
V0_CAPTURE = V0_BLOCKS + [v0("INFO", "10:01:25", "model_runner.py:980",
                             "Capturing the model for CUDA graphs. This may lead to unexpected consequences if the model is not static. "
                             "To run the model in eager mode, set 'enforce_eager=True' or use '--enforce-eager' in the CLI.")]
V0_READY = V0_CAPTURE + [v0("INFO", "10:01:50", "model_runner.py:1181", "Graph capturing finished in 25 secs."),
                         "INFO:     Started server process [1]", "INFO:     Application startup complete.",
                         "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)",
                         v0("INFO", "10:02:00", "metrics.py:396", "Avg prompt throughput: 120.3 tokens/s, Avg generation throughput: 310.2 tokens/s, "
                            "Running: 8 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 3.1%, CPU KV cache usage: 0.0%.")]
V0_HEALTHY_END = [v0("INFO", "10:03:00", "metrics.py:396", "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 95.1 tokens/s, "
                     "Running: 2 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.8%, CPU KV cache usage: 0.0%."),
                  'INFO:     127.0.0.1:40000 - "POST /v1/completions HTTP/1.1" 200 OK']

# V1 (2025-09+)
V1_ARGS = v1("INFO", "10:00:01", "utils.py:233",
             "non-default args: {'model': 'Qwen/Qwen2.5-72B-Instruct', 'tensor_parallel_size': 4, 'gpu_memory_utilization': 0.92, "
             "'max_model_len': 32768}", proc="APIServer pid=1")
V1_ENGINE = v1("INFO", "10:00:05", "core.py:77", "Initializing a V1 LLM engine (v0.11.0) with config: model='Qwen/Qwen2.5-72B-Instruct', "
               "tensor_parallel_size=4, max_seq_len=32768, enforce_eager=False")
V1_LOAD = [V1_ARGS, V1_ENGINE,
           v1("INFO", "10:00:20", "gpu_model_runner.py:2602", "Starting to load model Qwen/Qwen2.5-72B-Instruct...", proc="Worker_TP0 pid=420")]
V1_LOADED = V1_LOAD + [v1("INFO", "10:01:30", "gpu_model_runner.py:2653", "Model loading took 33.9412 GiB and 68.112345 seconds",
                          proc="Worker_TP0 pid=420")]
V1_KV = V1_LOADED + [v1("INFO", "10:01:50", "gpu_worker.py:298", "Available KV cache memory: 31.20 GiB", proc="Worker_TP0 pid=420"),
                     v1("INFO", "10:01:51", "kv_cache_utils.py:1087", "GPU KV cache size: 408,944 tokens"),
                     v1("INFO", "10:01:51", "kv_cache_utils.py:1091", "Maximum concurrency for 32,768 tokens per request: 12.48x")]
V1_CAPTURE = V1_KV
V1_READY = V1_KV + [v1("INFO", "10:02:20", "gpu_model_runner.py:3480", "Graph capturing finished in 29 secs, took 1.12 GiB", proc="Worker_TP0 pid=420"),
                    v1("INFO", "10:02:21", "core.py:210", "init engine (profile, create kv cache, warmup model) took 51.20 seconds"),
                    v1("INFO", "10:02:25", "api_server.py:1900", "Starting vLLM API server 0 on http://0.0.0.0:8000", proc="APIServer pid=1"),
                    "(APIServer pid=1) INFO:     Application startup complete.",
                    v1("INFO", "10:03:00", "loggers.py:123", "Engine 000: Avg prompt throughput: 310.2 tokens/s, Avg generation throughput: "
                       "220.1 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.2%, Prefix cache hit rate: 0.0%",
                       proc="APIServer pid=1")]
V1_HEALTHY_END = [v1("INFO", "10:04:00", "loggers.py:123", "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
                     "80.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.2%, Prefix cache hit rate: 0.0%",
                     proc="APIServer pid=1"),
                  '(APIServer pid=1) INFO:     127.0.0.1:40000 - "POST /v1/chat/completions HTTP/1.1" 200 OK']
V1_DEAD = [v1("ERROR", "10:01:55", "core.py:708", "EngineCore failed to start."),
           "(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"]


def wproc(frames, exc, t="10:01:50", proc="Worker_TP0 pid=420"):
    lines = tb(*frames, exc=exc).split("\n")
    first = v1("ERROR", t, "multiproc_executor.py:671", "WorkerProc hit an exception.", proc=proc)
    return "\n".join([first] + [v1("ERROR", t, "multiproc_executor.py:671", l, proc=proc) for l in lines])


OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. GPU 0 has a total capacity of 79.19 GiB of which "
       "1.27 GiB is free. Process 420 has 77.91 GiB memory in use. Of the allocated memory 75.12 GiB is allocated by PyTorch, and "
       "1.02 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  "
       "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
OOM_V0 = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 896.00 MiB. GPU  has a total capacity of 23.64 GiB of "
          "which 512.44 MiB is free. Including non-PyTorch memory, this process has 23.12 GiB memory in use. Of the allocated memory "
          "22.60 GiB is allocated by PyTorch, and 118.23 MiB is reserved by PyTorch but unallocated.")

WORKER_MAIN = (f"{V}/v1/executor/multiproc_executor.py", 646, "worker_main", "worker = WorkerProc(*args, **kwargs)")
WORKER_BUSY = (f"{V}/v1/executor/multiproc_executor.py", 701, "worker_busy_loop", "output = func(*args, **kwargs)")
V1_LOAD_FR = [WORKER_MAIN, (f"{V}/v1/executor/multiproc_executor.py", 497, "__init__", "self.worker.load_model()"),
              (f"{V}/v1/worker/gpu_worker.py", 234, "load_model", "self.model_runner.load_model(eep_scale_up=eep_scale_up)"),
              (f"{V}/v1/worker/gpu_model_runner.py", 2610, "load_model", "self.model = model_loader.load_model("),
              (f"{V}/model_executor/model_loader/base_loader.py", 49, "load_model", "model = initialize_model(vllm_config=vllm_config,")]
V1_PROFILE_FR = [WORKER_BUSY, (f"{V}/v1/worker/gpu_worker.py", 276, "determine_available_memory", "self.model_runner.profile_run()"),
                 (f"{V}/v1/worker/gpu_model_runner.py", 3320, "profile_run", "hidden_states, last_hidden_states = self._dummy_run(")]
V1_CAPTURE_FR = [WORKER_BUSY, (f"{V}/v1/worker/gpu_worker.py", 380, "compile_or_warm_up_model", "cuda_graph_memory_bytes = self.model_runner.capture_model()"),
                 (f"{V}/v1/worker/gpu_model_runner.py", 3450, "capture_model", "self._capture_cudagraphs("),
                 (f"{V}/compilation/cuda_graph.py", 180, "__call__", "with torch.cuda.graph(cudagraph, pool=self.graph_pool):")]
V1_SERVE_FR = [WORKER_BUSY, (f"{V}/v1/worker/gpu_worker.py", 447, "execute_model", "output = self.model_runner.execute_model(scheduler_output,"),
               (f"{V}/v1/worker/gpu_model_runner.py", 2210, "execute_model", "model_output = self.model(")]

entries = [
    E("vllm.no_cache_blocks.v0_2024",
      tb((f"{V}/engine/llm_engine.py", 300, "__init__", "self._initialize_kv_caches()"),
         (f"{V}/engine/llm_engine.py", 422, "_initialize_kv_caches", "self.model_executor.initialize_cache(num_gpu_blocks, num_cpu_blocks)"),
         (f"{V}/worker/worker.py", 233, "initialize_cache", "raise_if_cache_size_invalid(num_gpu_blocks,"),
         (f"{V}/worker/worker.py", 460, "raise_if_cache_size_invalid", "raise ValueError(\"No available memory for the cache blocks. \""),
         exc="ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."),
      "no_cache_blocks", "kv_pool_no_room", "vllm/worker/worker.py", "raise_if_cache_size_invalid", "v0.4.0-V0 removal (2024-03..2025-09)",
      context=V0_LOADED + [v0("INFO", "10:01:20", "distributed_gpu_executor.py:56", "# GPU blocks: 0, # CPU blocks: 3276")]),
    E("vllm.no_cache_blocks.v1",
      wproc([WORKER_BUSY, (f"{V}/v1/engine/core.py", 150, "_initialize_kv_caches", "kv_cache_configs = get_kv_cache_configs(vllm_config, kv_cache_specs,"),
             (f"{V}/v1/core/kv_cache_utils.py", 1180, "check_enough_kv_cache_memory", "raise ValueError(")],
            "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."),
      "no_cache_blocks", "kv_pool_no_room", "vllm/v1/core/kv_cache_utils.py", "check_enough_kv_cache_memory", "V1 2024-10+",
      context=V1_LOADED + [v1("INFO", "10:01:50", "gpu_worker.py:298", "Available KV cache memory: -2.31 GiB", proc="Worker_TP0 pid=420")],
      after=V1_DEAD),
    E("vllm.negative_rest_v0",
      v0("INFO", "10:01:19", "worker.py:262", "Memory profiling takes 4.10 seconds\nthe current vLLM instance can use total_gpu_memory "
         "(23.64GiB) x gpu_memory_utilization (0.90) = 21.28GiB\nmodel weights take 20.11GiB; non_torch_memory takes 0.21GiB; PyTorch "
         "activation peak memory takes 1.90GiB; the rest of the memory reserved for KV Cache is -0.94GiB."),
      "memory_profile", "kv_pool_no_room", "vllm/worker/worker.py", "determine_num_available_blocks", "2024-12..V0 removal",
      level="logger.info", context=V0_LOADED,
      after=[v0("INFO", "10:01:20", "distributed_gpu_executor.py:56", "# GPU blocks: 0, # CPU blocks: 2048"),
             "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."]),
    E("vllm.max_seq_len_v0",
      "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (17984). "
      "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
      "kv_too_small", "kv_pool_too_small", "vllm/worker/worker.py", "raise_if_cache_size_invalid", "2023-12..V0 removal",
      context=V0_LOADED + [v0("INFO", "10:01:20", "distributed_gpu_executor.py:56", "# GPU blocks: 1124, # CPU blocks: 2048")]),
    E("vllm.max_seq_len_v1",
      wproc([WORKER_BUSY, (f"{V}/v1/core/kv_cache_utils.py", 700, "check_enough_kv_cache_memory", "raise ValueError(")],
            "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is "
            "larger than the available KV cache memory (3.72 GiB). Based on the available memory, the estimated maximum model length is "
            "30464. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."),
      "kv_too_small", "kv_pool_too_small", "vllm/v1/core/kv_cache_utils.py", "check_enough_kv_cache_memory", "V1 2025-01+",
      context=V1_LOADED + [v1("INFO", "10:01:50", "gpu_worker.py:298", "Available KV cache memory: 3.72 GiB", proc="Worker_TP0 pid=420")],
      after=V1_DEAD),
    E("vllm.free_memory_below_util.2025",
      wproc([WORKER_MAIN, (f"{V}/v1/executor/multiproc_executor.py", 490, "__init__", "self.worker.init_device()"),
             (f"{V}/v1/worker/gpu_worker.py", 190, "init_device", "raise ValueError(")],
            "ValueError: Free memory on device (70.12/79.19 GiB) on startup is less than desired GPU memory utilization (0.92, 72.85 GiB). "
            "Decrease GPU memory utilization or reduce GPU memory used by other processes.", t="10:00:15"),
      "free_memory_below_util", "startup_free_memory_short", "vllm/v1/worker/gpu_worker.py", "Worker.init_device", "v0.9.1-2025",
      context=V1_LOAD[:2], after=V1_DEAD),
    E("vllm.free_memory_below_util.2026_device",
      "ValueError: Free memory on device cuda:1 (70.12/79.19 GiB) on startup is less than desired GPU memory utilization (0.92, 72.86 "
      "GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
      "free_memory_below_util", "startup_free_memory_short", "vllm/v1/worker/utils.py", "request_memory", "2026 (v0.20+)",
      context=V1_LOAD[:2]),
    E("vllm.memory_profiling_error",
      "AssertionError: Error in memory profiling. Initial free memory 70.4 GiB, current free memory 73.9 GiB. This happens when other "
      "processes sharing the same container release GPU memory while vLLM is profiling during initialization. To fix this, ensure "
      "consistent GPU memory allocation or isolate vLLM in its own container.",
      "free_memory_changed", "startup_free_memory_short", "vllm/v1/worker/gpu_worker.py", "Worker.determine_available_memory", "V1 2025",
      context=V1_LOADED),
    E("vllm.failed_to_load_model_oom",
      "ValueError: Failed to load model - not enough GPU memory. Try lowering --gpu-memory-utilization to free memory for weights, "
      "increasing --tensor-parallel-size, or using --quantization. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ "
      "for more tips. (original error: CUDA out of memory. Tried to allocate 1.75 GiB. GPU 0 has a total capacity of 23.52 GiB of "
      "which 1.20 GiB is free.)",
      "weights_oom", "weights_oom", "vllm/v1/worker/gpu_model_runner.py", "GPUModelRunner.load_model", "v0.13+ (2025-12, #28051)",
      context=V1_LOAD),
    E("vllm.weights_oom_v1_frames",
      wproc(V1_LOAD_FR + [(f"{V}/model_executor/models/qwen2.py", 440, "__init__", "self.model = Qwen2Model(vllm_config=vllm_config,"),
                          ("/usr/local/lib/python3.12/dist-packages/torch/utils/_device.py", 104, "__torch_function__", "return func(*args, **kwargs)")],
            OOM, t="10:00:40"),
      "cuda_oom", "weights_oom", "vllm/model_executor/model_loader/base_loader.py", "BaseModelLoader.load_model", "V1 2025",
      context=V1_LOAD, after=V1_DEAD),
    E("vllm.weights_oom_v0_frames",
      tb((f"{V}/worker/worker.py", 183, "load_model", "self.model_runner.load_model()"),
         (f"{V}/worker/model_runner.py", 999, "load_model", "self.model = get_model(model_config=self.model_config,"),
         (f"{V}/model_executor/model_loader/__init__.py", 19, "get_model", "return loader.load_model(model_config=model_config,"),
         (f"{V}/model_executor/model_loader/loader.py", 341, "load_model", "model.load_weights("),
         exc=OOM_V0, prefix="(VllmWorkerProcess pid=2042) ERROR 08-01 10:00:40 multiproc_worker_utils.py:226] Exception in worker "
         "VllmWorkerProcess while processing method load_model.\n"),
      "cuda_oom", "weights_oom", "vllm/model_executor/model_loader/loader.py", "DefaultModelLoader.load_model", "V0 2024",
      context=V0_LOAD),
    E("vllm.profile_run_oom_v1",
      wproc(V1_PROFILE_FR + [(f"{V}/model_executor/layers/activation.py", 90, "forward_cuda", "out = torch.empty(output_shape, dtype=x.dtype, device=x.device)")],
            OOM),
      "cuda_oom", "warmup_oom", "vllm/v1/worker/gpu_model_runner.py", "GPUModelRunner.profile_run", "V1 2025-2026",
      context=V1_LOADED, after=V1_DEAD),
    E("vllm.profile_run_oom_no_phase_lines",
      tb((f"{V}/v1/worker/gpu_worker.py", 276, "determine_available_memory", "self.model_runner.profile_run()"),
         (f"{V}/v1/worker/gpu_model_runner.py", 3320, "profile_run", "hidden_states, last_hidden_states = self._dummy_run("),
         exc=OOM),
      "cuda_oom", "warmup_oom", "vllm/v1/worker/gpu_model_runner.py", "GPUModelRunner.profile_run", "V1 2025-2026",
      note="no phase lines: the profiling frames give the stage"),
    E("vllm.capture_oom_v1",
      wproc(V1_CAPTURE_FR, OOM, t="10:02:10"),
      "cuda_oom", "cuda_graph_capture_oom", "vllm/v1/worker/gpu_model_runner.py", "GPUModelRunner.capture_model", "V1 2025-2026",
      context=V1_KV, after=V1_DEAD),
    E("vllm.capture_oom_v0",
      tb((f"{V}/worker/worker.py", 290, "_warm_up_model", "self.model_runner.capture_model(self.gpu_cache)"),
         (f"{V}/worker/model_runner.py", 1185, "capture_model", "graph_runner.capture(**capture_inputs)"),
         (f"{V}/worker/model_runner.py", 1410, "capture", "with torch.cuda.graph(self._graph, pool=memory_pool, stream=stream):"),
         ("/usr/local/lib/python3.10/dist-packages/torch/cuda/graphs.py", 183, "__exit__", "self.cuda_graph.capture_end()"),
         exc="RuntimeError: CUDA error: out of memory"),
      "cuda_oom", "cuda_graph_capture_oom", "torch/cuda/graphs.py (under vllm worker/model_runner.py)", "CUDAGraphRunner.capture",
      "V0 2024", context=V0_CAPTURE),
    E("vllm.runtime_oom_execute_model",
      wproc(V1_SERVE_FR, OOM, t="10:05:00"),
      "cuda_oom", "runtime_oom", "vllm/v1/worker/gpu_model_runner.py", "GPUModelRunner.execute_model", "V1 2025-2026",
      context=V1_READY, after=[v1("ERROR", "10:05:01", "core.py:710", "EngineCore encountered a fatal error."),
                               "(APIServer pid=1) vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause."]),
    E("vllm.heads_not_divisible",
      "ValueError: Total number of attention heads (64) must be divisible by tensor parallel size (3).",
      "config_error", "config_error", "vllm/config.py", "ModelConfig.verify_with_parallel_config", "2023-2026",
      context=[V1_ARGS.replace("'tensor_parallel_size': 4", "'tensor_parallel_size': 3")]),
    E("vllm.layers_not_divisible_pp",
      "NotImplementedError: Pipeline parallelism is only supported for the following architectures: ['LlamaForCausalLM', "
      "'MistralForCausalLM'].",
      "config_error", "config_error", "vllm/config.py", "ModelConfig.verify_with_parallel_config", "v0.5-v0.6 (2024)",
      context=[V0_ARGS]),
    E("vllm.ensure_divisibility",
      wproc(V1_LOAD_FR + [(f"{V}/model_executor/layers/linear.py", 830, "__init__", "self.num_heads = divide(self.total_num_heads, tp_size)"),
                          (f"{V}/distributed/utils.py", 33, "divide", "ensure_divisibility(numerator, denominator)"),
                          (f"{V}/distributed/utils.py", 26, "ensure_divisibility", 'assert numerator % denominator == 0, "{} is not divisible by {}".format(')],
            "AssertionError: 28 is not divisible by 8", t="10:00:30"),
      "exception", "config_error", "vllm/distributed/utils.py", "ensure_divisibility", "2023-2026",
      context=V1_LOAD, after=V1_DEAD),
    E("vllm.tp_larger_than_gpus",
      "ValueError: Tensor parallel size (4) cannot be larger than the number of available GPUs (2).",
      "config_error", "config_error", "vllm/executor/multiproc_gpu_executor.py", "_check_executor_parameters", "2024-2025",
      context=[V0_ARGS]),
    E("vllm.max_model_len_derived",
      "ValueError: User-specified max_model_len (131072) is greater than the derived max_model_len (max_position_embeddings=32768 or "
      "model_max_length=None in model's config.json). This may lead to incorrect model outputs or CUDA errors. To allow overriding "
      "this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1",
      "config_error", "config_error", "vllm/config.py", "_get_and_verify_max_len", "2024-2026", context=[V1_ARGS]),
    E("vllm.bf16_pre_ampere",
      "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla V100-SXM2-32GB GPU has "
      "compute capability 7.0. You can use float16 instead by explicitly setting the `dtype` flag in CLI, for example: --dtype=half.",
      "unsupported_arch", "config_error", "vllm/worker/worker.py", "_check_if_gpu_supports_dtype", "2024-2026",
      context=V0_LOAD[:2]),
    E("vllm.keyerror_load_weights",
      wproc(V1_LOAD_FR + [(f"{V}/model_executor/models/llama.py", 620, "load_weights", "param = params_dict[name]")],
            "KeyError: 'layers.0.mlp.gate_up_proj.weight_scale_inv'", t="10:00:40"),
      "exception", "config_error", "vllm/model_executor/models/*.py", "load_weights (params_dict[name])", "2024-2026",
      context=V1_LOAD, after=V1_DEAD),
    E("vllm.pynccl_unhandled_system_error",
      wproc([WORKER_MAIN, (f"{V}/distributed/device_communicators/pynccl.py", 99, "__init__", "self.comm: ncclComm_t = self.nccl.ncclCommInitRank("),
             (f"{V}/distributed/device_communicators/pynccl_wrapper.py", 277, "NCCL_CHECK", "raise RuntimeError(f\"NCCL error: {error_str}\")")],
            "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)", t="10:00:12"),
      "nccl_error", "nccl_error", "vllm/distributed/device_communicators/pynccl_wrapper.py", "NCCLLibrary.NCCL_CHECK", "2024-04+",
      context=V1_LOAD[:2], after=V1_DEAD),
    E("vllm.custom_ar_cudacheck",
      "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'",
      "custom_ar_error", "custom_allreduce_failure", "csrc/custom_all_reduce.cuh", "CUDACHECK (printf + exit)", "2024-01..2025",
      level="printf", context=V0_LOAD[:2]),
    E("vllm.custom_ar_disabled_pcie_harmless",
      v1("WARNING", "10:00:16", "custom_all_reduce.py:144", "Custom allreduce is disabled because it's not supported on more than two "
         "PCIe-only GPUs. To silence this warning, specify disable_custom_all_reduce=True explicitly.", proc="Worker_TP0 pid=420"),
      "custom_ar_disabled", "none", "vllm/distributed/device_communicators/custom_all_reduce.py", "CustomAllreduce.__init__",
      "2024-01..2026", level="logger.warning", context=V1_LOAD[:2], after=V1_READY[2:] + V1_HEALTHY_END),
    E("vllm.custom_ar_disabled_library_harmless",
      v1("INFO", "10:00:16", "custom_all_reduce.py:61", "Custom allreduce is disabled because of missing custom allreduce library",
         proc="Worker_TP0 pid=420"),
      "custom_ar_disabled", "none", "vllm/distributed/device_communicators/custom_all_reduce.py", "CustomAllreduce.__init__",
      "2024-2026", level="logger.info", context=V1_LOAD[:2], after=V1_READY[2:] + V1_HEALTHY_END),
    E("vllm.flashinfer_fallback_harmless",
      v0("WARNING", "10:01:21", "topk_topp_sampler.py:46", "FlashInfer is not available. Falling back to the PyTorch-native "
         "implementation of top-p & top-k sampling. For the best performance, please install FlashInfer."),
      None, "none", "vllm/v1/sample/ops/topk_topp_sampler.py", "TopKTopPSampler.__init__", "2025", level="logger.warning",
      context=V0_BLOCKS, after=V0_READY[len(V0_BLOCKS):] + V0_HEALTHY_END),
    E("vllm.default_moe_config_harmless",
      v0("WARNING", "10:01:22", "fused_moe.py:647", "Using default MoE config. Performance might be sub-optimal! Config file not found "
         f"at {V}/model_executor/layers/fused_moe/configs/E=8,N=14336,device_name=NVIDIA_A100-SXM4-80GB.json"),
      None, "none", "vllm/model_executor/layers/fused_moe/fused_moe.py", "get_moe_configs", "2024-2026", level="logger.warning",
      context=V0_BLOCKS, after=V0_READY[len(V0_BLOCKS):] + V0_HEALTHY_END),
    E("vllm.shm_broadcast_once_harmless",
      v1("INFO", "10:02:00", "shm_broadcast.py:466", "No available shared memory broadcast block found in 60 seconds. This typically "
         "happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization)."),
      "hang_warning", "none", "vllm/distributed/device_communicators/shm_broadcast.py", "MessageQueue.acquire_write", "2025-03+",
      level="logger.info", context=V1_KV, after=V1_READY[len(V1_KV):] + V1_HEALTHY_END),
    E("vllm.shm_broadcast_repeated_hang",
      "\n".join(v1("INFO", f"10:0{3 + i}:00", "shm_broadcast.py:466", "No available shared memory broadcast block found in 60 seconds. "
                   "This typically happens when some processes are hanging.") for i in range(4)),
      "hang_warning", "nccl_timeout_hang", "vllm/distributed/device_communicators/shm_broadcast.py", "MessageQueue.acquire_write",
      "2025-03+", level="logger.info", context=V1_LOADED),
    E("vllm.kv_cache_memory_hint_harmless",
      v1("INFO", "10:02:20", "gpu_worker.py:320", "Free memory on device (78.66/79.19 GiB) on startup. Desired GPU memory utilization is "
         "(0.92, 72.85 GiB). Actual usage is 33.94 GiB for weight, 5.61 GiB for peak activation, 2.1 GiB for non-torch memory, and "
         "1.12 GiB for CUDAGraph memory. Replace gpu_memory_utilization config with `--kv-cache-memory=33331683942` to fit into "
         "requested memory, or `--kv-cache-memory=39021548134` to fully utilize gpu memory. Current kv cache memory in use is "
         "33499927142 bytes.", proc="Worker_TP0 pid=420"),
      "memory_profile", "none", "vllm/v1/worker/gpu_worker.py", "Worker.compile_or_warm_up_model", "2025-09+", level="logger.info",
      context=V1_KV, after=V1_READY[len(V1_KV):] + V1_HEALTHY_END),
    E("vllm.cudagraph_profiling_notice_harmless",
      v1("INFO", "10:01:49", "gpu_worker.py:301", "CUDA graph memory profiling is enabled (default since v0.21.0). The current "
         "--gpu-memory-utilization=0.9200 is equivalent to --gpu-memory-utilization=0.9059 without CUDA graph memory profiling. To "
         "maintain the same effective KV cache size as before, increase --gpu-memory-utilization to 0.9341. To disable, set "
         "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.", proc="Worker_TP0 pid=420"),
      None, "none", "vllm/v1/worker/gpu_worker.py", "Worker.determine_available_memory", "2026 (v0.21+)", level="logger.info",
      context=V1_LOADED, after=V1_KV[len(V1_LOADED):] + V1_READY[len(V1_KV):] + V1_HEALTHY_END),
    E("vllm.worker_proc_died",
      v1("ERROR", "10:01:55", "multiproc_executor.py:150", "Worker proc VllmWorker-2 died unexpectedly, shutting down executor."),
      "worker_died", "process_crashed", "vllm/v1/executor/multiproc_executor.py", "MultiprocExecutor.monitor_workers", "V1 2025",
      level="logger.error", context=V1_LOADED),
    E("vllm.engine_dead",
      "(APIServer pid=1) vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the "
      "root cause.",
      "engine_dead", "process_crashed", "vllm/v1/engine/exceptions.py", "EngineDeadError", "V1 2025-2026", context=V1_READY),
    E("vllm.engine_core_init_failed_after_oom",
      "(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
      "engine_dead", "warmup_oom", "vllm/v1/engine/utils.py", "wait_for_engine_startup", "V1 2025-2026",
      context=V1_LOADED + [wproc(V1_PROFILE_FR, OOM)],
      note="the APIServer line is a consequence; the worker's profiling OOM above is the cause"),
    E("vllm.v0_worker_died",
      v0("ERROR", "10:01:55", "multiproc_worker_utils.py:120", "Worker VllmWorkerProcess pid 2043 died, exit code: -9"),
      "worker_died", "process_crashed", "vllm/executor/multiproc_worker_utils.py", "ProcessWatchdog", "V0 2024-05..2025-09",
      level="logger.error", context=V0_LOADED, after=[v0("INFO", "10:01:55", "multiproc_worker_utils.py:123", "Killing local vLLM worker processes")]),
    E("vllm.async_engine_dead",
      "vllm.engine.async_llm_engine.AsyncEngineDeadError: Background loop has errored already.",
      "engine_dead", "process_crashed", "vllm/engine/async_llm_engine.py", "AsyncLLMEngine", "V0 2024", context=V0_READY),
    E("vllm.ray_error_executing_method_oom",
      "(RayWorkerWrapper pid=3487, ip=10.0.0.2) ERROR 08-01 10:01:19 worker_base.py:382] Error executing method "
      "determine_num_available_blocks. This might cause deadlock in distributed execution.\n" +
      tb((f"{V}/worker/worker_base.py", 374, "execute_method", "return executor(*args, **kwargs)"),
         (f"{V}/worker/worker.py", 179, "determine_num_available_blocks", "self.model_runner.profile_run()"),
         exc=OOM_V0, prefix="(RayWorkerWrapper pid=3487, ip=10.0.0.2) ERROR 08-01 10:01:19 worker_base.py:382] "),
      "cuda_oom", "warmup_oom", "vllm/worker/worker_base.py", "WorkerWrapperBase.execute_method", "V0 2024-2025",
      level="logger.error", context=V0_LOADED),
    E("vllm.ray_actor_died_after_peer_oom",
      "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n\tclass_name: RayWorkerWrapper\n"
      "\tactor_id: 7c8a31f2bd0a6e8a1e5d1c9f01000000\n\tpid: 3487\n\tnamespace: 5b1f\n\tip: 10.0.0.2\n"
      "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker "
      "unexpectedly exits with a connection error code 2. End of file.",
      "worker_died", "weights_oom", "ray/exceptions.py (under vllm ray executor)", "ActorDiedError", "ray 2.9+ / vLLM 2024-2025",
      context=V0_LOAD + ["(RayWorkerWrapper pid=3487, ip=10.0.0.2) " + OOM_V0],
      note="the Ray actor loss is a consequence of the worker's own OOM"),
    E("vllm.process_group_not_destroyed_harmless",
      "[rank0]:[W1001 10:06:00.123456789 ProcessGroupNCCL.cpp:1479] Warning: WARNING: process group has NOT been destroyed before we "
      "destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to ensure that any "
      "pending NCCL operations have finished in this process. In rare cases this process can exit before this point and block the "
      "progress of another member of the process group. This constraint has always been present,  but this warning has only been "
      "added since PyTorch 2.4 (function operator())",
      None, "none", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "~ProcessGroupNCCL", "torch 2.4+", level="TORCH_WARN",
      context=V1_READY + V1_HEALTHY_END),
]


