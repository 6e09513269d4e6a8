// source_readings4_test.cc: log lines whose meaning was read in the
// frameworks' source (holdout74's misses), and that each reading holds only
// where the source says it does.
//   - PyTorch's numbered NCCL result 'NCCL Error <n>: <ncclGetErrorString>'
//     (torch/csrc/cuda/nccl.cpp throw_nccl_error): n is NCCL's ncclResult_t,
//     the same result vLLM's pynccl prints as 'NCCL error: <reason>'
//   - GPUStack's refusal of a vLLM multi-node TP size that does not divide a
//     worker's GPUs (gpustack/utils/vllm_topology.py, read at v2.2.0; removed in v2.2.2)
//   - TensorRT-LLM's 'Engine version ... found in the config file'
//     (cpp/tensorrt_llm/runtime/gptJsonConfig.cpp parseJson): a run that read
//     its engine's configuration, as vLLM's 'Initializing an LLM engine ...
//     with config' is
#include <string>

#include <gtest/gtest.h>

#include "tests/readings_util.h"

namespace tpt {
namespace {

using namespace readings;  // Read, AnalyzeText, RunSample, Without, HasRemedy

TEST(SourceReadings4, TorchNumberedNcclResultIsTheNcclResultItNumbers) {
  Analysis a = RunSample("rules/nccl_error/pos_torch_numbered_result_dataparallel.log");
  ASSERT_EQ(a.root_cause, "nccl_error") << a.verdict;
  ASSERT_FALSE(a.diagnoses.empty());
  // 2 is ncclSystemError: the system-error reading, with its usual suspects.
  EXPECT_NE(a.diagnoses.front().explanation.find("ncclSystemError"), std::string::npos) << a.verdict;
  // Each result reads as the string form of the same result does
  // (ncclGetErrorString's text, NVIDIA/nccl src/init.cc).
  const char* reasons[] = {"unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
                           "unhandled system error (run with NCCL_DEBUG=INFO for details)",
                           "internal error - please report this issue to the NCCL developers",
                           "invalid argument (run with NCCL_DEBUG=WARN for details)",
                           "invalid usage (run with NCCL_DEBUG=WARN for details)",
                           "remote process exited or there was a network error"};
  for (int n = 1; n <= 6; ++n) {
    const std::string reason = reasons[n - 1];
    Analysis numbered = AnalyzeText("numbered.log", "RuntimeError: NCCL Error " + std::to_string(n) + ": " + reason + "\n");
    Analysis named = AnalyzeText("named.log", "RuntimeError: NCCL error: " + reason + "\n");
    EXPECT_EQ(numbered.root_cause, named.root_cause) << n << ": " << numbered.verdict << " | " << named.verdict;
    EXPECT_NE(numbered.root_cause, "unknown") << n << ": " << numbered.verdict;
  }
  // The number decides where the paste cut the text after it.
  Analysis cut = AnalyzeText("cut.log", "RuntimeError: NCCL Error 2:\n");
  ASSERT_EQ(cut.root_cause, "nccl_error") << cut.verdict;
  EXPECT_NE(cut.diagnoses.front().explanation.find("ncclSystemError"), std::string::npos) << cut.verdict;
  // Not a result: another number, or the words without one.
  EXPECT_NE(AnalyzeText("other.log", "RuntimeError: NCCL Error 35: whatever\n").root_cause, "nccl_error");
  EXPECT_NE(RunSample("rules/nccl_error/neg_torch_nccl_error_number_in_prose.log").root_cause, "nccl_error");
}

TEST(SourceReadings4, GpustackMultinodeTpThatDoesNotDivideAWorkerIsConfiguration) {
  Analysis a = RunSample("rules/config_error/pos_gpustack_multinode_tp_issue_form.log");
  ASSERT_EQ(a.root_cause, "config_error") << a.verdict;
  const Diagnosis& d = a.diagnoses.front();
  EXPECT_EQ(d.rule, "config_error");
  // GPUStack's own check, with the worker and its GPU count it names.
  for (const char* said : {"GPUStack", "worker[1] has 2", "No engine started"})
    EXPECT_NE(d.explanation.find(said), std::string::npos) << said << ": " << d.explanation;
  // A TP size that divides every worker, or the GPUStack without the check.
  for (const char* flag : {"--tensor-parallel-size", "GPUStack version"}) EXPECT_TRUE(HasRemedy(d, flag)) << flag;
  // Narrow: the file's other refusals are not read as this one.
  EXPECT_NE(RunSample("rules/config_error/neg_gpustack_multinode_other_refusal.log").root_cause, "config_error");
}

TEST(SourceReadings4, TrtllmEngineConfigReadIsAStartAsVllmsEngineConfigIs) {
  const std::string banners = "[TensorRT-LLM] TensorRT-LLM version: 0.16.0\n"
                              "[TensorRT-LLM] TensorRT-LLM version: 0.16.0\n";
  // The banners alone: TensorRT-LLM was imported, nothing more.
  EXPECT_EQ(AnalyzeText("banners.log", banners).root_cause, "no_evidence");
  for (const char* line : {"[TensorRT-LLM][INFO] Engine version 0.16.0 found in the config file, assuming engine(s) "
                           "built by new builder API.",
                           "[TensorRT-LLM][INFO] No engine version found in the config file, assuming engine(s) built "
                           "by old builder API."}) {
    Analysis trt = AnalyzeText("trt_cut.log", banners + line + "\n[01/05/2025-10:00:00] [TRT-LLM] [I] Using C++ session\n");
    EXPECT_EQ(trt.root_cause, "none") << trt.verdict;
    EXPECT_NE(trt.verdict.find("stops while setting up its ranks"), std::string::npos) << trt.verdict;
  }
  // vLLM's engine configuration line, cut at the same stage: the same answer.
  Analysis vllm = AnalyzeText("vllm_cut.log",
                              "INFO 01-05 10:00:00 llm_engine.py:232] Initializing an LLM engine (v0.7.3) with config: "
                              "model='/models/m', tensor_parallel_size=2, pipeline_parallel_size=1\n");
  EXPECT_EQ(vllm.root_cause, "none") << vllm.verdict;
  EXPECT_NE(vllm.verdict.find("stops while setting up its ranks"), std::string::npos) << vllm.verdict;
}

}  // namespace
}  // namespace tpt
