// source_readings5_test.cc: log lines whose meaning was read in the
// frameworks' source (holdout75's misses), and that each reading holds only
// where the source says it does.
//   - NCCL's error back-trace 'file.cc:NNN -> N' (NCCLCHECK, src/include/checks.h,
//     v2.18.3-1 l.107-114; master's INFO_LOC form 'file.cc:NNN (fn) -> N'):
//     N is the ncclResult_t of a failed NCCL call (src/nccl.h.in), so a run
//     that printed it is not healthy; the WARN before it says why.
//   - Ray's advice after a memory-monitor kill ('Refer to the documentation on
//     how to address the out of memory issue: ...ray-oom-prevention',
//     src/ray/raylet/node_manager.cc CreateOomKillMessageSuggestions, built
//     only on the kill path and the N > 0 kill summary): host memory ran out.
#include <string>

#include <gtest/gtest.h>

#include "tests/readings_util.h"

namespace tpt {
namespace {

using namespace readings;  // Read, AnalyzeText, RunSample, Without, HasRemedy

TEST(SourceReadings5, NcclReturnTraceIsAFailedCallNotAHealthyRun) {
  const std::string text = Read("rules/nccl_return_trace/pos_no_algorithm_after_init_complete.log");
  // Without the back-trace the same log is read as a run that completed its set-up.
  EXPECT_NE(AnalyzeText("no_trace.log", Without(text, " -> 3")).root_cause, "nccl_error");
  Analysis with_trace = AnalyzeText("trace.log", text);
  ASSERT_EQ(with_trace.root_cause, "nccl_error") << with_trace.verdict;
  const Diagnosis& d = with_trace.diagnoses.front();
  EXPECT_EQ(d.rule, "nccl_return_trace");
  EXPECT_LT(d.confidence, 0.7);  // the trace names the result, not the cause
  // 3 is ncclInternalError; the WARN before the trace (src/enqueue.cc) is named.
  EXPECT_NE(d.explanation.find("ncclInternalError"), std::string::npos) << d.explanation;
  EXPECT_NE(d.explanation.find("no algorithm/protocol available"), std::string::npos) << d.explanation;
  EXPECT_TRUE(HasRemedy(d, "NCCL_ALGO"));
}

TEST(SourceReadings5, EachResultCodeIsNamedAsNcclHeaderNamesIt) {
  const char* names[] = {"ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
                         "ncclInvalidArgument",    "ncclInvalidUsage", "ncclRemoteError"};
  for (int n = 1; n <= 6; ++n) {
    Analysis a = AnalyzeText("code.log", "h:11:11 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\nh:11:11 [0] NCCL INFO init.cc:1400 -> " +
                                             std::to_string(n) + "\n");
    ASSERT_EQ(a.root_cause, "nccl_error") << n << ": " << a.verdict;
    EXPECT_NE(a.diagnoses.front().explanation.find(names[n - 1]), std::string::npos) << n << ": " << a.verdict;
  }
  // ncclSuccess (0) and ncclInProgress (7) are never printed as errors (NCCLCHECK skips them);
  // a channel's 'a -> b' and the tuner's 'Bytes -> Algo' are not results.
  for (const std::string line : {"init.cc:1400 -> 0", "init.cc:1400 -> 7", "init.cc:1400 -> 30"})
    EXPECT_NE(AnalyzeText("other.log", "h:11:11 [0] NCCL INFO " + line + "\n").root_cause, "nccl_error") << line;
  EXPECT_EQ(RunSample("rules/nccl_return_trace/neg_healthy_arrows_and_tuning.log").root_cause, "none");
}

TEST(SourceReadings5, NcclReturnTraceAfterNvlsSetupPointsAtMulticast) {
  Analysis a = RunSample("rules/nccl_return_trace/pos_nvls_setup_unhandled_cuda.log");
  ASSERT_EQ(a.root_cause, "nccl_error") << a.verdict;
  EXPECT_NE(a.diagnoses.front().explanation.find("NVLS"), std::string::npos) << a.verdict;
  EXPECT_TRUE(HasRemedy(a.diagnoses.front(), "NCCL_NVLS_ENABLE"));
  // master's form with the function, SYSCHECK's strerror and the async thread's tag
  Analysis f = RunSample("rules/nccl_return_trace/pos_function_form_system_error.log");
  ASSERT_EQ(f.root_cause, "nccl_error") << f.verdict;
  EXPECT_NE(f.diagnoses.front().explanation.find("ncclSystemError"), std::string::npos) << f.verdict;
}

TEST(SourceReadings5, TheWarnThatNamesTheCauseKeepsItsRule) {
  // A 'Cuda failure' WARN before the trace is NCCL's own cause: its rule leads, the trace only follows it.
  Analysis a = RunSample("rules/nccl_return_trace/neg_cuda_failure_warn_is_the_cause.log");
  ASSERT_FALSE(a.diagnoses.empty()) << a.verdict;
  EXPECT_NE(a.diagnoses.front().rule, "nccl_return_trace") << a.verdict;
  // The proxy service thread's WARN at teardown (src/proxy.cc: a peer closed after a run that
  // finished) and the back-trace under it do not make a finished run a failure.
  EXPECT_EQ(RunSample("logs/redteam/none--nccl-proxy-close-teardown-after-test.log").root_cause, "none");
}

TEST(SourceReadings5, RayOomAdviceIsTheMemoryMonitorsKill) {
  const std::string rel = "rules/host_oom/pos_ray_oom_advice_after_cut_kill.log";
  Analysis a = RunSample(rel);
  ASSERT_EQ(a.root_cause, "host_oom") << a.verdict;
  EXPECT_NE(a.diagnoses.front().explanation.find("Ray's memory monitor"), std::string::npos) << a.verdict;
  // The top-memory rows and the job's exit alone say nothing of memory.
  EXPECT_NE(AnalyzeText("no_advice.log", Without(Read(rel), "how to address the out of memory issue")).root_cause,
            "host_oom");
  // The documentation's address in another sentence is no kill.
  EXPECT_NE(RunSample("rules/host_oom/neg_ray_oom_docs_link_in_startup.log").root_cause, "host_oom");
}

}  // namespace
}  // namespace tpt
