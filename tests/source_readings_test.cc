// source_readings_test.cc: log lines whose meaning was read in the
// frameworks' source (holdout62's misses): what each line says, and that the
// reading holds only where the source says it does.
//   - NCCL 2.25's 'ncclMaxSharedMem X exceeds device/fn maxSharedMem Y' and
//     2.26+'s WARN form (src/enqueue.cc ncclInitKernelsForDevice)
//   - an NCCL job's log that ends inside communicator set-up
//   - CuPy's NcclError (cupy_backends/cuda/libs/nccl.pyx) and NCCL's
//     'unknown result code' (src/init.cc ncclGetErrorString)
//   - SGLang's /health_generate failures (entrypoints/http_server.py)
//   - LMDeploy 0.2.6's negative KV block count (pytorch/engine/model_agent.py)
#include <string>

#include <gtest/gtest.h>

#include "tests/readings_util.h"

namespace tpt {
namespace {

using readings::AnalyzeText;
using readings::Read;
using readings::RunSample;
using readings::Without;

TEST(SourceReadings, Nccl225SharedMemoryAboveTheDeviceIsTooOldAnNcclForTheGpu) {
  Analysis a = RunSample("rules/unsupported_gpu_arch_nccl/pos_nccl_2_25_rtx5090_cut_in_init.log");
  ASSERT_EQ(a.root_cause, "unsupported_gpu_arch") << a.verdict;
  const Diagnosis& d = a.diagnoses.front();
  EXPECT_EQ(d.rule, "unsupported_gpu_arch_nccl");
  EXPECT_DOUBLE_EQ(d.confidence, 0.85);  // the launch failure itself is past the cut
  EXPECT_EQ(d.figures["required_bytes"], 82240);
  EXPECT_EQ(d.figures["limit_bytes"], 79856);
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().value, "2.26.2");
  // The launch failure in the log: surer, and the NCCL error is its echo.
  Analysis launched = RunSample("rules/unsupported_gpu_arch_nccl/pos_nccl_2_25_launch_invalid_argument.log");
  ASSERT_EQ(launched.root_cause, "unsupported_gpu_arch") << launched.verdict;
  EXPECT_DOUBLE_EQ(launched.diagnoses.front().confidence, 0.9);
  // 2.26+ refuses the communicator with a WARN naming the arch.
  Analysis warn = RunSample("rules/unsupported_gpu_arch_nccl/pos_nccl_2_26_warn_names_arch.log");
  ASSERT_EQ(warn.root_cause, "unsupported_gpu_arch") << warn.verdict;
  EXPECT_EQ(warn.diagnoses.front().figures["cuda_arch"], 1210);
}

TEST(SourceReadings, AnNcclLogThatEndsInCommunicatorSetUpIsNotHealthy) {
  // The same log without its shared-memory line: nothing says the ranks
  // connected, and NCCL's failures come after these lines.
  Analysis a = AnalyzeText("cut_in_setup.log", Without(Read("rules/unsupported_gpu_arch_nccl/pos_nccl_2_25_rtx5090_cut_in_init.log"),
                                               "ncclMaxSharedMem"));
  EXPECT_EQ(a.root_cause, "unknown") << a.verdict;
  EXPECT_NE(a.verdict.find("ends while NCCL was setting up its communicator"), std::string::npos) << a.verdict;
  EXPECT_NE(a.verdict.find("NCCL INFO Using network Socket"), std::string::npos) << a.verdict;  // the line it ends on
  Analysis sample = RunSample("logs/redteam/unknown--nccl-two-gpu-log-ends-in-comm-init.log");
  EXPECT_EQ(sample.root_cause, "unknown") << sample.verdict;
  // The job's own lines after NCCL's: it went on; healthy, with the caveat.
  Analysis went_on = RunSample("logs/redteam/none--nccl-setup-lines-then-script-output.log");
  EXPECT_EQ(went_on.root_cause, "none") << went_on.verdict;
  EXPECT_NE(went_on.verdict.find("stops while NCCL was setting up"), std::string::npos) << went_on.verdict;
}

TEST(SourceReadings, CupyNcclErrorIsAnNcclResultAndUnknownResultCodeNamesTwoLibraries) {
  Analysis cupy = RunSample("logs/redteam/nccl_error--ray-compiled-dag-cupy-nccl-system-error.log");
  ASSERT_EQ(cupy.root_cause, "nccl_error") << cupy.verdict;
  EXPECT_NE(cupy.diagnoses.front().explanation.find("ncclSystemError"), std::string::npos);
  EXPECT_NE(cupy.diagnoses.front().explanation.find("NCCL_BUFFSIZE"), std::string::npos);
  Analysis trt = RunSample("logs/redteam/nccl_error--trtllm-allreduce-plugin-unknown-result-code.log");
  ASSERT_EQ(trt.root_cause, "nccl_error") << trt.verdict;
  EXPECT_LT(trt.diagnoses.front().confidence, 0.7);
  EXPECT_NE(trt.verdict.find("two NCCL libraries"), std::string::npos) << trt.verdict;
  bool names_lib = false;
  for (const Remedy& r : trt.diagnoses.front().remedy) names_lib = names_lib || r.flag == "libnccl.so.2";
  EXPECT_TRUE(names_lib);
}

TEST(SourceReadings, SglangHealthChecksWithOneLastHeartbeatAreAStandingServerLoop) {
  const std::string rel = "rules/sglang_detokenizer_stall/pos_same_heartbeat_over_two_checks.log";
  Analysis a = RunSample(rel);
  ASSERT_EQ(a.root_cause, "nccl_timeout_hang") << a.verdict;
  EXPECT_DOUBLE_EQ(a.diagnoses.front().confidence, 0.6);  // moderate: where it waits is not in the log
  EXPECT_EQ(a.diagnoses.front().figures["failed_checks"], 3);
  // One failed check, then nothing: a slow moment for all the log shows.
  std::string text = Read(rel);
  size_t second = text.find("[2026-02-10 11:42:05] Health check failed");
  ASSERT_NE(second, std::string::npos);
  EXPECT_EQ(AnalyzeText("one_check.log", text.substr(0, second)).root_cause, "none");
  EXPECT_EQ(RunSample("rules/sglang_detokenizer_stall/pos_one_failure_then_sigterm_no_batch.log").root_cause,
            "nccl_timeout_hang");
  for (const char* neg : {"rules/sglang_detokenizer_stall/neg_same_heartbeat_twice_then_batches.log",
                          "rules/sglang_detokenizer_stall/neg_one_failure_then_serving_goes_on.log",
                          "logs/redteam/none--sglang-health-check-detokenizer-slow-then-recovers.log"})
    EXPECT_EQ(RunSample(neg).root_cause, "none") << neg;
}

TEST(SourceReadings, LmdeployNegativeKvBlockCountIsNoRoomAfterTheWeights) {
  Analysis a = RunSample("rules/kv_pool_no_room_lmdeploy/pos_pytorch_engine_tp2_negative_blocks.log");
  ASSERT_EQ(a.root_cause, "kv_pool_no_room") << a.verdict;
  const Diagnosis& d = a.diagnoses.front();
  EXPECT_DOUBLE_EQ(d.confidence, 0.65);
  EXPECT_EQ(d.figures["blocks"], -27);
  EXPECT_EQ(d.figures["kv_heads_per_rank"], 20);
  EXPECT_EQ(d.figures["block_kib_per_layer"], 640);  // 2 x 64 x 20 x 128 x 2 B
  EXPECT_NE(d.explanation.find("another process"), std::string::npos);  // the other suspect
  ASSERT_FALSE(d.ruled_out.empty());
  EXPECT_EQ(d.ruled_out.front().id, "cache_max_entry_count");
  // The same torch message from a program of its own says nothing of a KV pool.
  EXPECT_EQ(RunSample("rules/kv_pool_no_room_lmdeploy/neg_user_script_negative_shape.log").root_cause, "unknown");
}

}  // namespace
}  // namespace tpt
