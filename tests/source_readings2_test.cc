// source_readings2_test.cc: log lines whose meaning was read in the
// frameworks' source (holdout64's misses), and that each reading holds only
// where the source says it does.
//   - NCCL's 'NCCL cannot be captured in a graph ... CUDA driver < R465'
//     (src/misc/strongstream.cc ncclCudaGetCapturingGraph -> ncclInvalidUsage)
//   - the cut-traceback guesses of CUDA graph capture stepping aside when the
//     exception's text is in the log (a worker record's header line, a named
//     NCCL error on the same rank)
//   - TensorRT-LLM's 'Tensor ... has invalid shape ..., expected ...'
//     (cpp/tensorrt_llm/runtime/tllmRuntime.cpp TllmRuntime::setInputTensors)
//   - vLLM's DeepGEMM kernel warm-up cut at an allocation
//     (model_executor/warmup/kernel_warmup.py, deep_gemm_warmup.py)
//   - NCCL's channel set-up INFO lines (src/init.cc initTransportsRank)
#include <string>

#include <gtest/gtest.h>

#include "tests/readings_util.h"

namespace tpt {
namespace {

using namespace readings;  // Read, AnalyzeText, RunSample, Without, HasRemedy

TEST(SourceReadings2, NcclCaptureRefusedIsAnNcclBuildOrDriverBelowCuda113) {
  const std::string rel = "rules/cuda_driver_mismatch/pos_vllm_v0_nccl_capture_old_cuda_runtime.log";
  Analysis a = RunSample(rel);
  ASSERT_EQ(a.root_cause, "cuda_driver_mismatch") << a.verdict;
  const Diagnosis& d = a.diagnoses.front();
  EXPECT_EQ(d.rule, "cuda_driver_mismatch");
  EXPECT_DOUBLE_EQ(d.confidence, 0.9);  // the WARN says why, in NCCL's own words
  EXPECT_NE(d.explanation.find("ncclInvalidUsage"), std::string::npos) << d.explanation;
  EXPECT_NE(d.explanation.find("R465"), std::string::npos) << d.explanation;
  EXPECT_TRUE(HasRemedy(d, "NCCL library"));
  EXPECT_TRUE(HasRemedy(d, "--enforce-eager", "next_step"));
  EXPECT_FALSE(HasRemedy(d, "--disable-cuda-graph"));  // SGLang's flag, not vLLM's
  // Without NCCL's WARN the 'invalid usage' is an NCCL error with no reason
  // given: named, so neither a driver verdict nor a capture-OOM guess.
  Analysis bare = AnalyzeText("no_warn.log", Without(Read(rel), "strongstream.cc"));
  EXPECT_EQ(bare.root_cause, "nccl_error") << bare.verdict;
}

TEST(SourceReadings2, CaptureCutGuessStepsAsideWhenTheExceptionIsNamedElsewhere) {
  // The worker's header line carries the exception's text; its frames are cut.
  const std::string header = "rules/capture_cut_oom/neg_vllm_worker_header_names_nccl_error.log";
  Analysis a = RunSample(header);
  EXPECT_EQ(a.root_cause, "nccl_error") << a.verdict;
  for (const Diagnosis& d : a.diagnoses) EXPECT_NE(d.rule, "capture_cut_oom") << a.verdict;
  // A paste from the middle of the worker's frames, then the same rank's
  // '[rank0]: RuntimeError: NCCL error: invalid usage'.
  const std::string frames = "rules/capture_cut_oom/neg_vllm_cut_worker_frames_then_rank_nccl_error.log";
  Analysis b = RunSample(frames);
  EXPECT_EQ(b.root_cause, "nccl_error") << b.verdict;
  // The same frames with nothing naming the error: the guess stands.
  Analysis cut = AnalyzeText("cut_only.log", Without(Read(frames), "[rank0]"));
  EXPECT_EQ(cut.root_cause, "cuda_graph_capture_oom") << cut.verdict;
  // Another rank's death (NCCL's 'remote process exited') names no error of this rank.
  std::string remote = Read(frames);
  const std::string usage = "NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)";
  remote.replace(remote.find(usage), usage.size(), "NCCL error: remote process exited or there was a network error");
  Analysis r = AnalyzeText("remote.log", remote);
  EXPECT_EQ(r.root_cause, "cuda_graph_capture_oom") << r.verdict;
}

TEST(SourceReadings2, TrtllmInputShapeIsTheEngineBuildAgainstTheRun) {
  Analysis a = RunSample("rules/config_error/pos_trtllm_prompt_table_width_tp2.log");
  ASSERT_EQ(a.root_cause, "config_error") << a.verdict;
  const Diagnosis& d = a.diagnoses.front();
  EXPECT_EQ(d.rule, "config_error");
  EXPECT_DOUBLE_EQ(d.confidence, 0.65);  // the message names the input, not which side is wrong
  EXPECT_NE(d.explanation.find("'prompt_embedding_table' has shape (1, 2560)"), std::string::npos) << d.explanation;
  EXPECT_NE(d.explanation.find("(-1, 5120)"), std::string::npos) << d.explanation;
  ASSERT_TRUE(HasRemedy(d, "trtllm-build"));
  EXPECT_NE(d.remedy.front().why.find("--max_multimodal_len"), std::string::npos) << d.remedy.front().why;
  // The current runtime's form: a shape outside the optimization profile's range.
  Analysis range = AnalyzeText(
      "range.log",
      "[TensorRT-LLM][INFO] MPI size: 1, MPI local size: 1, rank: 0\n"
      "[TensorRT-LLM][ERROR] Encountered an error in forwardAsync function: Tensor 'input_ids' has invalid shape "
      "(12288), expected in range min (1), max (8192)\n");
  ASSERT_EQ(range.root_cause, "config_error") << range.verdict;
  EXPECT_NE(range.diagnoses.front().explanation.find("max (8192)"), std::string::npos);
  EXPECT_TRUE(HasRemedy(range.diagnoses.front(), "trtllm-build limits"));
}

TEST(SourceReadings2, DeepGemmWarmupCutAtAnAllocationIsAPossibleWarmupOom) {
  Analysis a = RunSample("rules/warmup_cut_oom/pos_vllm_v1_deepgemm_grouped_warmup_cut_at_alloc.log");
  ASSERT_EQ(a.root_cause, "warmup_oom") << a.verdict;
  const Diagnosis& d = a.diagnoses.front();
  EXPECT_EQ(d.rule, "warmup_cut_oom");
  EXPECT_LE(d.confidence, 0.45);  // the exception line is missing
  EXPECT_NE(d.explanation.find("cut before the exception"), std::string::npos) << d.explanation;
  EXPECT_TRUE(HasRemedy(d, "--max-num-batched-tokens"));
  EXPECT_TRUE(HasRemedy(d, "VLLM_DEEP_GEMM_WARMUP"));
  // Cut at the kernel call: DeepGEMM's JIT or backend may be what failed.
  EXPECT_EQ(RunSample("rules/warmup_cut_oom/neg_vllm_v1_deepgemm_warmup_cut_at_kernel_call.log").root_cause, "unknown");
  // The OOM line itself: the OOM rules speak, surer.
  Analysis oom = RunSample("rules/warmup_cut_oom/neg_vllm_v1_deepgemm_warmup_oom_line_present.log");
  ASSERT_EQ(oom.root_cause, "warmup_oom") << oom.verdict;
  EXPECT_NE(oom.diagnoses.front().rule, "warmup_cut_oom");
}

TEST(SourceReadings2, NcclChannelSetupLinesAreReadBetweenBlankLines) {
  // An NCCL job pasted with a blank line after each line, cut inside
  // initTransportsRank (rings, trees, tuning): no rank said Init COMPLETE.
  std::string text;
  for (const char* l : {"n1:77:77 [0] NCCL INFO Channel 15/16 : 0 1 2 3",
                        "n1:77:77 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1",
                        "n1:77:77 [0] NCCL INFO P2P Chunksize set to 524288",
                        "n1:77:91 [0] NCCL INFO [Proxy Service] Device 0 CPU core 12",
                        "n1:77:77 [0] NCCL INFO threadThresholds 8/8/64 | 32/8/64 | 512 | 512",
                        "n1:77:77 [0] NCCL INFO 16 coll channels, 16 collnet channels, 0 nvls channels, 16 p2p channels"})
    text += std::string(l) + "\n\n";
  Analysis a = AnalyzeText("blank_lines.log", text);
  EXPECT_EQ(a.root_cause, "unknown") << a.verdict;
  EXPECT_NE(a.verdict.find("ends while NCCL was setting up its communicator"), std::string::npos) << a.verdict;
  // The same lines and then the communicator's Init COMPLETE: set-up ended.
  text += "n1:77:77 [0] NCCL INFO comm 0x55d0c1a0 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 18000 commId 0x1f2e3d4c "
          "- Init COMPLETE\n";
  EXPECT_EQ(AnalyzeText("complete.log", text).root_cause, "none");
}

}  // namespace
}  // namespace tpt
