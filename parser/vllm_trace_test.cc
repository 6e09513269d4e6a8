// vllm_trace_test.cc: vLLM's VLLM_TRACE_FUNCTION trace replayed into the
// traced thread's stack (samples/hangs/stacks/vllm_trace, written in the
// layout of vllm/logger.py _trace_calls).
#include "parser/vllm_trace.h"

#include <string>

#include <gtest/gtest.h>

#include "parser/test_files.h"

namespace tpt {
namespace {

const char* kSample = "samples/hangs/stacks/vllm_trace/vllm_trace_rank_1.log";
const std::string kV = "/usr/local/lib/python3.12/site-packages/vllm";

TEST(VllmTrace, TheCallsNeverReturnedAreTheStackInnermostFirst) {
  const std::string text = SourceFile(kSample);
  ASSERT_FALSE(text.empty());
  auto events = VllmTraceEvents(text, kSample, 0);
  ASSERT_EQ(events.size(), 1u);
  const Event& e = events[0];
  EXPECT_EQ(e.kind, "stack_thread");
  EXPECT_EQ(e.Get("tool").string(), "vllm_trace");
  EXPECT_EQ(e.rank, 1) << "from the renamed file, as stacks_rank_N";
  EXPECT_EQ(e.line, 13u) << "placed at the trace's last line";
  ASSERT_TRUE(e.ts.has_value());
  EXPECT_FALSE(e.ts_is_time_of_day);
  EXPECT_EQ(e.Get("open_calls").number(), 10);
  const auto frames = e.Get("frames").json();
  ASSERT_EQ(frames.size(), 10u);
  EXPECT_EQ(frames[0], "all_reduce (" + kV + "/distributed/device_communicators/pynccl.py:120)");
  EXPECT_EQ(frames[1], "all_reduce (" + kV + "/distributed/device_communicators/cuda_communicator.py:135)")
      << "a caller stands where it made the call";
  EXPECT_EQ(frames[6], "execute_model (" + kV + "/v1/worker/gpu_model_runner.py:1870)")
      << "_prepare_inputs returned; torch's module call between them was not traced";
  EXPECT_EQ(frames[8], "worker_busy_loop (" + kV + "/v1/executor/multiproc_executor.py:575)") << "dequeue returned";
  EXPECT_EQ(frames[9], "worker_main (" + kV + "/v1/executor/multiproc_executor.py:520)")
      << "the first call's caller is the outermost frame known";
  EXPECT_EQ(e.Get("where").string(), frames[0].get<std::string>());
  EXPECT_EQ(e.Get("program_frames").json().size(), 4u);
}

TEST(VllmTrace, DetectedByItsFirstLine) {
  EXPECT_TRUE(LooksLikeVllmTrace(SourceFile(kSample).substr(0, 4096)));
  EXPECT_TRUE(LooksLikeVllmTrace("2025-05-12 10:00:31.815101 Return from f in /v/a.py:20 to g in /v/b.py:40\n"));
  EXPECT_FALSE(LooksLikeVllmTrace("INFO 05-12 10:00:31 logger.py:206] Trace frame log is saved to /tmp/x.log\n"));
  EXPECT_FALSE(LooksLikeVllmTrace("2025-05-12 10:00:31.815101 Call to f in a.py from g\n")) << "no line numbers";
  EXPECT_FALSE(LooksLikeVllmTrace("Process 1: python3 m.py\nPython v3.12.3 (/usr/bin/python3.12)\n"));
}

// vLLM's own file name gives the process and thread, not the rank (its time
// ends in digits that are no rank).
TEST(VllmTrace, VllmsOwnNameGivesThePidNotARank) {
  const std::string path = "/tmp/root/vllm/vllm-instance-22a34/"
                           "VLLM_TRACE_FUNCTION_for_process_2757_thread_281473419130944_at_2025-05-12_10:00:31.815092.log";
  auto events = VllmTraceEvents("2025-05-12 10:00:31.900000 Call to f in /v/a.py:3 from g in /v/b.py:9\n", path, 0);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].rank, -1);
  EXPECT_EQ(events[0].pid, 2757);
  EXPECT_EQ(events[0].Get("thread").string(), "281473419130944");
  EXPECT_EQ(events[0].Get("frames").json().size(), 2u);
  EXPECT_TRUE(VllmTraceEvents("no trace here\n", path, 0).empty());
}

// Read as it streams, keeping only the open calls: 200,000 calls that return,
// then a chain deeper than kMaxTraceDepth, of which the innermost are kept.
TEST(VllmTrace, ALongTraceKeepsOnlyTheOpenCalls) {
  std::string text;
  for (int i = 0; i < 100000; ++i)
    text += "2025-05-12 10:00:31.000001 Call to step in /v/a.py:1 from loop in /v/b.py:2\n"
            "2025-05-12 10:00:31.000002 Return from step in /v/a.py:5 to loop in /v/b.py:2\n";
  for (size_t d = 0; d < kMaxTraceDepth + 50; ++d)
    text += "2025-05-12 10:00:32.000000 Call to f" + std::to_string(d + 1) + " in /v/c.py:" + std::to_string(d + 1) +
            " from f" + std::to_string(d) + " in /v/c.py:" + std::to_string(d) + "\n";
  auto stream = ReadVllmTrace(std::make_unique<StringSource>(text), "vllm_trace_rank_0.log", 0);
  const Event* e = stream->NextRef();
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(stream->error().empty()) << stream->error();
  EXPECT_EQ(stream->NextRef(), nullptr);
  EXPECT_EQ(e->Get("open_calls").number(), kMaxTraceDepth);
  EXPECT_EQ(e->Get("frames").json()[0], "f" + std::to_string(kMaxTraceDepth + 50) + " (/v/c.py:" +
                                            std::to_string(kMaxTraceDepth + 50) + ")");
  EXPECT_EQ(e->rank, 0);
  // The same bytes in memory give the same event.
  auto same = VllmTraceEvents(text, "vllm_trace_rank_0.log", 0);
  ASSERT_EQ(same.size(), 1u);
  EXPECT_EQ(same[0].Get("frames").json(), e->Get("frames").json());
}

// Streamed in 64 KiB reads: a line longer than that is skipped whole, and
// the last line counts without its newline.
TEST(VllmTrace, StreamingSkipsAnOverlongLineAndReadsTheLastOne) {
  std::string text = "2025-05-12 10:00:31.000001 Call to outer in /v/a.py:1 from main in /v/m.py:9\n";
  text += "2025-05-12 10:00:31.000002 Call to junk in /v/" + std::string(200000, 'x') + ".py:1 from outer in /v/a.py:2\n";
  text += "2025-05-12 10:00:31.000003 Call to inner in /v/b.py:7 from outer in /v/a.py:3";  // no newline
  auto stream = ReadVllmTrace(std::make_unique<StringSource>(text), "vllm_trace_rank_2.log", 0);
  const Event* e = stream->NextRef();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->Get("frames").json(), nlohmann::json({"inner (/v/b.py:7)", "outer (/v/a.py:3)", "main (/v/m.py:9)"}));
  EXPECT_EQ(e->line, 3u);
  EXPECT_EQ(stream->bytes(), text.size());
}

}  // namespace
}  // namespace tpt
