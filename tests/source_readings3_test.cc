// source_readings3_test.cc: log lines whose meaning was read in the
// frameworks' source (holdout66's misses), and that each reading holds only
// where the source says it does.
//   - torch's OOM message names the allocating process's device and lists every
//     process on that card (c10/cuda/CUDACachingAllocator.cpp, torch >= 2.1):
//     two ranks' messages with the same device and the same processes are one
//     card shared by the run's ranks (duplicate_gpu), not a shard too big
//   - SGLang's scheduler watchdog dump ('Scheduler debug info:', utils/watchdog.py
//     ProcessWatchdog) is printed only after no forward step for the timeout
//   - vLLM V1's get_response waiting out mq.dequeue(timeout=...) / 'RPC call to
//     execute_model timed out' (v1/executor/multiproc_executor.py collective_rpc)
//   - vLLM V1's 'Worker failed with error '<msg>'' is a worker's own error
//     answered back (get_response), not a process that died
// and holdout68's:
//   - vLLM V1 warms the sampler up after capture_model (v1/worker/gpu_worker.py
//     compile_or_warm_up_model): an OOM after 'Graph capturing finished' with
//     no ready, request or statistics line is start-up, not serving
//   - NVML's InvalidArgument from nvmlDeviceGetHandleByIndex is an index NVML
//     does not have: vLLM maps CUDA_VISIBLE_DEVICES to NVML indices
//     (platforms/cuda.py), which a container numbers from 0
//   - TurboMind's 'No decoding kernel found' is its per-SM registry without a
//     kernel for the shape (kernels/attention/registry.cu)
//   - Triton's 'mma -> mma layout conversion is only supported on Ampere'
//     (lib/Analysis/Allocation.cpp) and the divisibility assertion's source
//     line (distributed/utils.py ensure_divisibility) quoted without its message
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tests/readings_util.h"

namespace tpt {
namespace {

using namespace readings;  // Read, AnalyzeText, RunSample, Without

// The root cause a bundled sample reads as, its verdict after a colon.
std::string CauseOf(const std::string& rel) {
  Analysis a = RunSample(rel);
  return a.root_cause + ": " + a.verdict;
}

// The same, for the sample without the lines that hold `needle`.
std::string CauseWithout(const std::string& rel, const std::string& needle) {
  Analysis a = AnalyzeText("without_" + std::filesystem::path(rel).filename().string(), Without(Read(rel), needle));
  return a.root_cause + ": " + a.verdict;
}

bool Is(const std::string& cause_verdict, const std::string& cause) {
  return cause_verdict.rfind(cause + ":", 0) == 0;
}

bool HasRemedyFlag(const Diagnosis& d, const std::string& flag) {
  for (const Remedy& r : d.remedy)
    if (r.flag.find(flag) != std::string::npos) return true;
  return false;
}

TEST(SourceReadings3, TwoRanksOomOnOneCardAreDuplicateGpuNotWeights) {
  Analysis a = RunSample("rules/duplicate_gpu_oom_same_card/pos_trtllm_pytorch_four_ranks_on_gpu0.log");
  ASSERT_EQ(a.root_cause, "duplicate_gpu") << a.verdict;
  const Diagnosis& d = a.diagnoses.front();
  EXPECT_EQ(d.rule, "duplicate_gpu_oom_same_card");
  EXPECT_NE(d.explanation.find("GPU 0"), std::string::npos) << d.explanation;
  EXPECT_TRUE(HasRemedyFlag(d, "CUDA_VISIBLE_DEVICES"));
  // Never the advice that piles more ranks on the card.
  for (const Diagnosis& o : a.diagnoses) {
    EXPECT_NE(o.id, "weights_oom") << o.explanation;
    for (const Remedy& r : o.remedy)
      EXPECT_FALSE((r.flag.find("tp_size") != std::string::npos || r.flag.find("tensor-parallel") != std::string::npos) &&
                   r.direction == "increase")
          << r.flag;
  }
}

TEST(SourceReadings3, OneRankMessageWithoutTheOtherIsNotTheSharedCard) {
  // One OOM message alone does not show two ranks on the card.
  const std::string c =
      CauseWithout("rules/duplicate_gpu_oom_same_card/pos_trtllm_pytorch_four_ranks_on_gpu0.log", "[RANK 1] [E]");
  EXPECT_FALSE(Is(c, "duplicate_gpu")) << c;
}

TEST(SourceReadings3, EachRankOnItsOwnCardStaysWeightsOom) {
  // Both ranks say 'GPU 0' (each sees its own card as device 0) but the cards'
  // process lists differ: not one card.
  const std::string c = CauseOf("rules/duplicate_gpu_oom_same_card/neg_trtllm_pytorch_each_rank_own_card.log");
  EXPECT_TRUE(Is(c, "weights_oom")) << c;
}

TEST(SourceReadings3, OneRankTwiceOnACardAnotherJobHoldsIsNotDuplicateGpu) {
  const std::string c = CauseOf("rules/duplicate_gpu_oom_same_card/neg_one_rank_twice_card_shared_with_another_job.log");
  EXPECT_TRUE(Is(c, "startup_free_memory_short")) << c;
}

TEST(SourceReadings3, ContainerPidsAndARankTagBehindAProgressBarStillReadAsOneCard) {
  // In a container one rank's message lists itself as 'Process <pid>'; the
  // other names itself: two processes. The first rank's prefix follows a tqdm
  // bar on the same line.
  const std::string text =
      "Loading weights:  90%|#########| 90/100 [00:01<00:00]"
      "[05/02/2025-14:00:01] [TRT-LLM] [RANK 5] [E] Error executing load_single_module with args "
      "('model.layers.3.mlp.down_proj', Linear()): CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a "
      "total capacity of 23.57 GiB of which 8.00 MiB is free. Process 700 has 6.10 GiB memory in use. Process 701 "
      "has 2.02 GiB memory in use. Process 702 has 2.05 GiB memory in use. Process 703 has 2.11 GiB memory in use.\n"
      "[05/02/2025-14:00:01] [TRT-LLM] [RANK 1] [E] Error executing load_single_module with args "
      "('model.layers.3.mlp.down_proj', Linear()): CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a "
      "total capacity of 23.57 GiB of which 8.00 MiB is free. Process 700 has 6.10 GiB memory in use. Including "
      "non-PyTorch memory, this process has 2.02 GiB memory in use. Process 702 has 2.05 GiB memory in use. "
      "Process 703 has 2.11 GiB memory in use. Of the allocated memory 1.80 GiB is allocated by PyTorch.\n";
  Analysis a = AnalyzeText("container.log", text);
  EXPECT_EQ(a.root_cause, "duplicate_gpu") << a.verdict;
}

TEST(SourceReadings3, SglangWatchdogDumpAfterDecodeLinesIsAHangNotHealthy) {
  Analysis a = RunSample("rules/nccl_timeout_hang/pos_sglang_watchdog_dump_after_decode.log");
  ASSERT_EQ(a.root_cause, "nccl_timeout_hang") << a.verdict;
  EXPECT_NE(a.diagnoses.front().explanation.find("Scheduler debug info"), std::string::npos)
      << a.diagnoses.front().explanation;
  // Without the dump the same decode lines are a serving server.
  const std::string healthy = CauseWithout("rules/nccl_timeout_hang/pos_sglang_watchdog_dump_after_decode.log", "debug info");
  EXPECT_FALSE(Is(healthy, "nccl_timeout_hang")) << healthy;
}

TEST(SourceReadings3, SglangSoftWatchdogDumpFollowedByProgressIsNotAHang) {
  const std::string c = CauseOf("rules/nccl_timeout_hang/neg_sglang_soft_watchdog_dump_then_progress.log");
  // The dump is the soft line's (rules/terminal.cc WarningLine) and decode went
  // on after it: a serving server, neither a hang nor an unexplained failure.
  EXPECT_TRUE(Is(c, "none")) << c;
}

TEST(SourceReadings3, VllmExecuteModelRpcTimeoutIsAHang) {
  Analysis a = RunSample("rules/vllm_execute_rpc_timeout/pos_vllm_v1_rpc_execute_model_timed_out.log");
  ASSERT_EQ(a.root_cause, "nccl_timeout_hang") << a.verdict;
  EXPECT_EQ(a.diagnoses.front().rule, "vllm_execute_rpc_timeout");
  EXPECT_DOUBLE_EQ(a.diagnoses.front().confidence, 0.8);
}

TEST(SourceReadings3, VllmGetResponseDequeueCutIsAHangAtModerateConfidence) {
  Analysis a = RunSample("rules/vllm_execute_rpc_timeout/pos_vllm_v1_get_response_dequeue_cut.log");
  ASSERT_EQ(a.root_cause, "nccl_timeout_hang") << a.verdict;
  EXPECT_LT(a.diagnoses.front().confidence, 0.7);
}

TEST(SourceReadings3, VllmWorkerFailedThroughGetResponseIsTheWorkersError) {
  const std::string c = CauseOf("rules/vllm_execute_rpc_timeout/neg_vllm_v1_worker_failed_through_get_response.log");
  EXPECT_FALSE(Is(c, "nccl_timeout_hang")) << c;
  EXPECT_TRUE(Is(c, "illegal_memory_access")) << c;  // the worker's own error
}

TEST(SourceReadings3, VllmWorkerFailedWithMessageIsNotACrash) {
  const std::string c = CauseOf("rules/process_crashed/neg_vllm_worker_failed_with_message.log");
  EXPECT_FALSE(Is(c, "process_crashed")) << c;
  // Whatever it is read as, the verdict carries the worker's own message.
  EXPECT_NE(c.find("same dtype"), std::string::npos) << c;
}

// `a` reads as `cause` by `rule` at 0.7 or more; `bare`, the same log with the
// line that says why taken out, as the same cause below 0.7.
void ExpectSureThenBareUnsure(const Analysis& a, const Analysis& bare, const std::string& cause, const std::string& rule) {
  ASSERT_EQ(a.root_cause, cause) << a.verdict;
  EXPECT_EQ(a.diagnoses.front().rule, rule);
  EXPECT_GE(a.diagnoses.front().confidence, 0.7);
  ASSERT_EQ(bare.root_cause, cause) << bare.verdict;
  EXPECT_LT(bare.diagnoses.front().confidence, 0.7);
}

TEST(SourceReadings3, VllmV1OomAfterGraphCaptureWithoutReadyIsTheSamplerWarmup) {
  const std::string rel = "rules/oom_warmup/pos_vllm_v1_oom_after_graph_capture_no_ready.log";
  Analysis a = RunSample(rel);
  // Without its sampler frames the reading stays, less sure.
  ExpectSureThenBareUnsure(a, AnalyzeText("bare.log", Without(Without(Read(rel), "sampling"), "sampler")), "warmup_oom",
                           "oom_warmup");
  const Diagnosis& d = a.diagnoses.front();
  EXPECT_NE(d.explanation.find("_dummy_sampler_run"), std::string::npos) << d.explanation;
  EXPECT_TRUE(HasRemedyFlag(d, "--gpu-memory-utilization"));
  EXPECT_TRUE(HasRemedyFlag(d, "--max-num-seqs"));
  // The same lines cut before the engine's 'failed to start' are still start-up.
  const std::string cut = CauseOf("rules/oom_runtime/neg_vllm_v1_oom_after_graph_capture_no_ready.log");
  EXPECT_TRUE(Is(cut, "warmup_oom")) << cut;
  // The same sampler OOM after the server said it was ready and served is runtime.
  const std::string served = CauseOf("rules/oom_runtime/pos_vllm_v1_sampler_oom_after_ready.log");
  EXPECT_TRUE(Is(served, "runtime_oom")) << served;
}

TEST(SourceReadings3, NvmlInvalidArgumentInAContainerGivenHostIdsIsConfig) {
  Analysis a = RunSample("rules/config_error_nvml_index/pos_vllm_docker_host_gpu_ids.log");
  // The exception alone does not say which variable is wrong.
  ExpectSureThenBareUnsure(a, RunSample("rules/config_error_nvml_index/pos_traceback_only.log"), "config_error",
                           "config_error_nvml_index");
  const Diagnosis& d = a.diagnoses.front();
  EXPECT_NE(d.explanation.find("NVIDIA_VISIBLE_DEVICES"), std::string::npos) << d.explanation;
  EXPECT_TRUE(HasRemedyFlag(d, "CUDA_VISIBLE_DEVICES"));
  // Another NVML error is not an index.
  EXPECT_FALSE(Is(CauseOf("rules/config_error_nvml_index/neg_nvml_driver_not_loaded.log"), "config_error"));
}

TEST(SourceReadings3, TurboMindNoDecodingKernelOnAPreAmpereGpuIsTheArch) {
  const std::string rel = "rules/unsupported_gpu_arch_turbomind/pos_t4_decode_head_dim_192.log";
  Analysis a = RunSample(rel);
  // Without the GPU (its check_env line) the message names no architecture.
  ExpectSureThenBareUnsure(a, AnalyzeText("tm.log", Without(Read(rel), "Tesla")), "unsupported_gpu_arch",
                           "unsupported_gpu_arch_turbomind");
  EXPECT_NE(a.diagnoses.front().explanation.find("decode_d192_f16_gs4"), std::string::npos);
  // On an A100 the sm80 set is the widest: not the architecture.
  const std::string a100 = CauseOf("rules/unsupported_gpu_arch_turbomind/neg_a100_decode_kernel_missing.log");
  EXPECT_FALSE(Is(a100, "unsupported_gpu_arch")) << a100;
}

TEST(SourceReadings3, TritonMmaLayoutAssertionIsTheArch) {
  Analysis a = RunSample("rules/unsupported_gpu_arch/pos_triton_mma_cvt_v100_vllm.log");
  ASSERT_EQ(a.root_cause, "unsupported_gpu_arch") << a.verdict;
  EXPECT_TRUE(HasRemedyFlag(a.diagnoses.front(), "--enable-chunked-prefill"));
}

TEST(SourceReadings3, DivisibilityAssertionInACutLoadTracebackIsConfigNotWeightsOom) {
  Analysis a = RunSample("rules/config_error/pos_sglang_divisibility_assert_cut.log");
  ASSERT_EQ(a.root_cause, "config_error") << a.verdict;
  EXPECT_TRUE(HasRemedyFlag(a.diagnoses.front(), "--tp-size"));
  for (const Diagnosis& d : a.diagnoses) EXPECT_NE(d.id, "weights_oom") << d.explanation;
}

}  // namespace
}  // namespace tpt
