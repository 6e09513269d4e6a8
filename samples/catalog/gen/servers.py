"""TGI (launcher + shards), TensorRT-LLM, LMDeploy, Ray and uvicorn messages
(knowledge/other-log-formats.md sections 4.1-4.4; huggingface/text-generation-inference launcher/src/main.rs,
server/text_generation_server; NVIDIA/TensorRT-LLM cpp/tensorrt_llm, tensorrt_llm/_torch; InternLM/lmdeploy
src/turbomind; ray python/ray/exceptions.py, _private; encode/uvicorn uvicorn/server.py)."""
from common import E, tb, write


def tgi(level, msg, t="2024-06-01T10:00:01.000000Z", target="text_generation_launcher", span=""):
    return f"{t} {level:>5} {span}{target}: {msg}"


TGI_START = [tgi("INFO", 'Args { model_id: "meta-llama/Llama-2-70b-chat-hf", num_shard: Some(2), max_batch_prefill_tokens: Some(32768) }'),
             tgi("INFO", "Starting shard rank=0", span="shard-manager: "), tgi("INFO", "Starting shard rank=1", span="shard-manager: "),
             tgi("INFO", "Shard ready in 42.1s rank=0", span="shard-manager: "), tgi("INFO", "Shard ready in 42.3s rank=1", span="shard-manager: ")]
TGI_READY = TGI_START + [tgi("INFO", "Setting max batch total tokens to 123456", target="text_generation_router"),
                         tgi("INFO", "Connected", target="text_generation_router")]
TGI_SERVE = TGI_READY + [tgi("INFO", 'generate{parameters=GenerateParameters { max_new_tokens: Some(20) }}: text_generation_router::server: '
                             'router/src/server.rs:300: Success', target="text_generation_router")]

TRT = ["[TensorRT-LLM] TensorRT-LLM version: 0.12.0", "[TensorRT-LLM][INFO] MPI size: 2, MPI local size: 2, rank: 0",
       "[TensorRT-LLM][INFO] Rank 0 is using GPU 0", "[TensorRT-LLM][INFO] Loaded engine size: 65432 MiB"]
TRT_READY = TRT + ["[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: 79.11 GiB, available: 10.20 GiB",
                   "[TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: 1304",
                   "I1201 10:01:00.000000 1 server.cc:674] Started GRPCInferenceService at 0.0.0.0:8001"]

LMD = ["2024-06-01 10:00:01,000 - lmdeploy - INFO - input backend=turbomind, backend_config=TurbomindEngineConfig(tp=2, session_len=32768, "
       "cache_max_entry_count=0.8)", "[TM][INFO] [LlamaTritonModel] max_context_token_num = 32768.", "[WARNING] gemm_config.in is not found; using default GEMM algo"]
LMD_READY = LMD + ["[TM][INFO] [BlockManager] block_size = 64 MB", "[TM][INFO] [BlockManager] max_block_count = 5120",
                   "HINT:    Please open http://0.0.0.0:23333 in a browser for detailed api usage!!!",
                   "INFO:     Application startup complete."]

RAY_START = ["2024-07-14 08:10:30,100\tINFO worker.py:1740 -- Started a local Ray instance.",
             "(RayWorkerWrapper pid=3487, ip=10.0.0.2) INFO 07-14 08:10:40 model_runner.py:680] Starting to load model meta-llama/Llama-3-70B..."]

entries = [
    # ---- TGI
    E("tgi.warmup_not_enough_memory",
      tgi("ERROR", "Method Warmup encountered an error.\nTraceback (most recent call last):\n  File \"/opt/conda/lib/python3.10/site-packages/"
          "text_generation_server/models/flash_causal_lm.py\", line 1150, in warmup\n    _, batch, _ = self.generate_token(batch)\n"
          "RuntimeError: Not enough memory to handle 32768 prefill tokens. You need to decrease `--max-batch-prefill-tokens`",
          span="warmup{max_input_length=4095 max_prefill_tokens=32768 max_total_tokens=4096}:warmup: text_generation_client: "
               "router/client/src/lib.rs:33: ", target="text_generation_launcher"),
      "warmup_oom", "warmup_oom", "server/text_generation_server/models/flash_causal_lm.py", "FlashCausalLM.warmup", "TGI 1.0-2.x",
      context=TGI_START, after=[tgi("ERROR", "Webserver Crashed"), tgi("INFO", "Shutting down shards")]),
    E("tgi.shard_sigbus",
      tgi("ERROR", "Shard process was signaled to shutdown with signal 7 rank=1", span="shard-manager: "),
      "signal", "shm_too_small", "launcher/src/main.rs", "shard_manager", "TGI 0.9-2.x", level="tracing::error",
      context=TGI_START[:3], after=[tgi("ERROR", "Shard 1 failed to start"), "Error: ShardCannotStart"]),
    E("tgi.shard_cannot_start",
      "Error: ShardCannotStart", "worker_died", "process_crashed", "launcher/src/main.rs", "main", "TGI 0.9-2.x", level="Result::Err",
      context=TGI_START[:3] + [tgi("ERROR", "Shard 0 failed to start")]),
    E("tgi.argument_validation",
      'Error: ArgumentValidation("`max_input_tokens` must be < `max_total_tokens`")',
      "config_error", "config_error", "launcher/src/main.rs", "main (argument checks)", "TGI 2.x", level="Result::Err",
      context=[TGI_START[0]]),
    E("tgi.address_in_use",
      'Error: WebServer(Axum(Os { code: 98, kind: AddrInUse, message: "Address already in use" }))',
      "address_in_use", "port_in_use", "router/src/server.rs (axum bind)", "run", "TGI 1.x-2.x", level="Result::Err",
      context=TGI_READY),
    E("tgi.router_shard_socket_gone",
      tgi("ERROR", "Request failed during generation: Server error: error trying to connect: No such file or directory (os error 2)",
          span="chat_completions:generate:generate_stream:schedule:infer:send_error: ", target="text_generation_router_v3::backend"),
      "worker_died", "process_crashed", "backends/v3/src/client/grpc_client.rs (connect_uds)", "ShardedClient", "TGI 3.x",
      level="tracing::error", context=TGI_SERVE,
      note="the router cannot open the shard's Unix socket ({shard_uds_path}-{rank}): the shard's server is gone"),
    E("tgi.serving_cuda_oom",
      tgi("ERROR", "Server error: CUDA out of memory. Tried to allocate 1.20 GiB. GPU 0 has a total capacity of 79.15 GiB of which "
          "512.00 MiB is free.", span="batch{batch_size=16}:decode:decode{size=16}:decode{size=16}: text_generation_client: "
          "router/client/src/lib.rs:33: ", target="text_generation_router"),
      "cuda_oom", "runtime_oom", "server/text_generation_server/models/flash_causal_lm.py", "generate_token", "TGI 1.x-2.x",
      context=TGI_SERVE),
    E("tgi.router_panic_warmup",
      "thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Warmup(Generation(\"CUDA out of memory. Tried to "
      "allocate 2.00 GiB (GPU 0; 22.19 GiB total capacity; 20.10 GiB already allocated; 1.01 GiB free; 20.50 GiB reserved in total by "
      "PyTorch)\"))', router/src/main.rs:216:18",
      "cuda_oom", "warmup_oom", "router/src/main.rs", "main (warmup unwrap)", "TGI 0.9-1.0", level="panic!", context=TGI_START),
    E("tgi.flash_attention_import_harmless",
      tgi("WARN", "Could not import Flash Attention enabled models: Flash Attention V2 is not installed.", span="shard-manager: "),
      None, "none", "server/text_generation_server/models/__init__.py", "module import", "TGI 1.x", level="logger.warning",
      context=TGI_START[:2], after=TGI_SERVE[2:]),
    # ---- TensorRT-LLM
    E("trtllm.kv_too_small",
      "[TensorRT-LLM][ERROR] Assertion failed: maxTokensInPagedKvCache (4096) must be large enough to process at least 1 sequence to "
      "completion (i.e. must be larger than beam_width (1) * tokensPerBlock (64) * maxBlocksPerSeq (128))",
      "kv_too_small", "kv_pool_too_small", "cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp", "KVCacheManager (TLLM_CHECK)",
      "TRT-LLM 0.7-0.12", level="TLLM_CHECK", context=TRT),
    E("trtllm.executor_insufficient_kv",
      "[12/01/2026-10:01:00] [TRT-LLM] [RANK 1] [E] Failed to initialize executor on rank 1: Executor creation failed due to "
      "insufficient GPU memory.\nThe following component could not be created: KV cache\nTotal GPU memory (GiB): 140.06\nFree GPU "
      "memory before component creation attempt (GiB): 108.86",
      "component_oom", "warmup_oom", "tensorrt_llm/_torch/pyexecutor/py_executor_creator.py", "create_py_executor", "TRT-LLM 1.0+ (PyTorch backend)",
      level="logger.error", context=TRT[:1]),
    E("trtllm.load_single_module_oom",
      "[12/01/2026-10:00:40] [TRT-LLM] [RANK 0] [E] Error executing load_single_module with args ('model.layers.30.mlp.experts', "
      "<tensorrt_llm._torch.models.modeling_deepseekv3.DeepseekV3MoE object at 0x7f>): CUDA out of memory. Tried to allocate 3.50 GiB. "
      "GPU 0 has a total capacity of 79.11 GiB of which 1.02 GiB is free.",
      "weights_oom", "weights_oom", "tensorrt_llm/_torch/models/modeling_utils.py", "load_single_module", "TRT-LLM 0.20+",
      level="logger.error", context=TRT[:1]),
    E("trtllm.cuda_runtime_oom_serving",
      "[TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory "
      "(/src/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)",
      "cuda_oom", "runtime_oom", "cpp/tensorrt_llm/runtime/tllmBuffers.h", "CudaAllocatorAsync::allocate", "TRT-LLM 0.9+",
      level="TLLM_CUDA_CHECK", context=TRT_READY + ["I1201 10:02:00.000000 1 model_instance_state.cc:900] request 17 done"]),
    E("trtllm.no_free_blocks",
      "[TensorRT-LLM][ERROR] Assertion failed: Can't allocate new blocks. No free blocks left. "
      "(/src/tensorrt_llm/cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp:650)",
      "kv_pool_exhausted", "kv_pool_exhausted", "cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp", "BlockManager::getFreeBlock",
      "TRT-LLM 0.8+", level="TLLM_CHECK", context=TRT_READY),
    E("trtllm.peer_access",
      "[TensorRT-LLM][ERROR] tensorrt_llm::common::TllmException: [TensorRT-LLM][ERROR] CUDA runtime error in "
      "cudaDeviceCanAccessPeer(&canAccessPeer, deviceId, peerDeviceId): peer access is not supported between these two devices "
      "(/src/tensorrt_llm/cpp/tensorrt_llm/runtime/ipcUtils.cpp:60)",
      "p2p_error", "custom_allreduce_failure", "cpp/tensorrt_llm/runtime/ipcUtils.cpp", "canAccessPeer", "TRT-LLM 0.7+",
      level="TLLM_CUDA_CHECK", context=TRT),
    E("trtllm.engine_world_size",
      "[TensorRT-LLM][ERROR] Assertion failed: Number of GPUs (2) in engine does not match the world size (4) "
      "(/src/tensorrt_llm/cpp/tensorrt_llm/runtime/worldConfig.cpp:90)",
      "config_error", "config_error", "cpp/tensorrt_llm/runtime/worldConfig.cpp", "WorldConfig::validMpiConfig", "TRT-LLM 0.7+",
      level="TLLM_CHECK", context=TRT[:2]),
    E("trtllm.peer_access_warning_harmless",
      "[TensorRT-LLM][WARNING] Device 0 peer access Device 1 is not available.",
      None, "none", "cpp/tensorrt_llm/runtime/utils/multiDeviceUtils (warning)", "canAccessPeer", "TRT-LLM 0.9+", level="TLLM_LOG_WARNING",
      context=TRT, after=TRT_READY[len(TRT):]),
    # ---- LMDeploy
    E("lmdeploy.turbomind_weights_oom",
      "[TM][ERROR] CUDA runtime error: out of memory /lmdeploy/src/turbomind/utils/memory_utils.cu:32",
      "cuda_oom", "weights_oom", "src/turbomind/utils/memory_utils.cu", "deviceMalloc", "LMDeploy 0.1-0.6", level="check_cuda_error",
      context=LMD),
    E("lmdeploy.turbomind_runtime_oom",
      "[TM][ERROR] CUDA runtime error: out of memory /lmdeploy/src/turbomind/utils/allocator.h:231",
      "cuda_oom", "runtime_oom", "src/turbomind/utils/allocator.h", "Allocator::malloc", "LMDeploy 0.1-0.6", level="check_cuda_error",
      context=LMD_READY + ['INFO:     127.0.0.1:50000 - "POST /v1/chat/completions HTTP/1.1" 200 OK']),
    E("lmdeploy.no_enough_blocks",
      "[TM][FATAL] No enough blocks. Assertion fail: /lmdeploy/src/turbomind/models/llama/LlamaBatch.cc:358",
      "kv_pool_exhausted", "kv_pool_exhausted", "src/turbomind/models/llama/LlamaBatch.cc", "LlamaBatch::Initialize (FT_CHECK)",
      "LMDeploy 0.2-0.6", level="FT_CHECK", context=LMD_READY),
    E("lmdeploy.gemm_config_harmless",
      "[WARNING] gemm_config.in is not found; using default GEMM algo",
      None, "none", "src/turbomind/utils/gemm.cc", "Gemm::loadGemmConfig", "LMDeploy 0.1+", level="TM_LOG_WARNING",
      context=LMD[:2], after=LMD_READY[3:]),
    # ---- Ray
    E("ray.worker_died_unexpected",
      "(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check "
      "the logs for the dead worker. RayTask ID: ffffffffffffffff8f1e3b0e01000000 Worker ID: 5c1e Node ID: 2a9f Worker IP address: "
      "10.0.0.2 Worker port: 43021 Worker PID: 3487 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with "
      "a connection error code 2. End of file. There are some potential root causes.",
      "worker_died", "process_crashed", "src/ray/raylet (python/ray/_private/worker.py message)", "task failure report", "Ray 2.x",
      level="logger.error", context=RAY_START),
    E("ray.memory_pressure_kill",
      "(raylet) [2024-07-14 08:20:00,000 E 2101 2101] (raylet) node_manager.cc:3069: 1 Workers (tasks / actors) killed due to memory "
      "pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 2a9f, IP: 10.0.0.2) over the last time period.",
      "signal", "host_oom", "src/ray/raylet/node_manager.cc", "NodeManager memory monitor", "Ray 2.2+", level="RAY_LOG(ERROR)",
      context=RAY_START),
    E("ray.actor_died_alone",
      "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n\tclass_name: RayWorkerWrapper\n"
      "\tactor_id: 7c8a31f2bd0a6e8a1e5d1c9f01000000\n\tpid: 3487\n\tip: 10.0.0.2",
      "worker_died", "process_crashed", "python/ray/exceptions.py", "ActorDiedError", "Ray 2.9+", context=RAY_START),
    E("ray.shm_fallback_harmless",
      "2024-07-14 08:10:33,156\tWARNING services.py:1996 -- WARNING: The object store is using /tmp instead of /dev/shm because /dev/shm "
      "has only 67108864 bytes available. This will harm performance! You may be able to free up space by deleting files in /dev/shm.",
      None, "none", "python/ray/_private/services.py", "determine_plasma_store_config", "Ray 1.x-2.x", level="logger.warning",
      context=RAY_START[:1], after=RAY_START[1:] + ["(RayWorkerWrapper pid=3487, ip=10.0.0.2) INFO 07-14 08:11:40 model_runner.py:692] "
                                                    "Loading model weights took 32.8892 GB", "INFO:     Application startup complete."]),
    # ---- uvicorn
    E("uvicorn.bind_address_in_use",
      "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use",
      "address_in_use", "port_in_use", "uvicorn/server.py", "Server.startup", "uvicorn 0.x", level="logger.error",
      context=["INFO:     Started server process [1]", "INFO:     Waiting for application startup.", "INFO:     Application startup complete."],
      after=["INFO:     Waiting for application shutdown.", "INFO:     Application shutdown complete."]),
    E("uvicorn.invalid_http_harmless",
      "WARNING:  Invalid HTTP request received.",
      None, "none", "uvicorn/protocols/http/h11_impl.py", "H11Protocol.handle_events", "uvicorn 0.x", level="logger.warning",
      context=["INFO:     Started server process [1]", "INFO:     Application startup complete."],
      after=['INFO:     127.0.0.1:40000 - "GET /health HTTP/1.1" 200 OK']),
]


