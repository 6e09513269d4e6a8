// stack_dump_test.cc: py-spy and faulthandler thread dumps as stack_thread events.
#include "parser/stack_dump.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "parser/test_files.h"

#include "parser/format_set.h"
#include "parser/parser.h"

namespace tpt {
namespace {

// Real: faulthandler.dump_traceback(all_threads=True) in the hung rank (samples/hangs/README.md).
const char* kFault = "samples/rules/fr_hang_wavefront/pos_hang_8ranks/stacks_rank_3.txt";
const char* kPySpy = "samples/rules/fr_hang_wavefront/pos_hang_2ranks_pickle/pyspy_rank_1.txt";

TEST(StackDump, DetectedByItsFirstLines) {
  EXPECT_TRUE(LooksLikeStackDump(SourceFile(kFault)));
  EXPECT_TRUE(LooksLikeStackDump(SourceFile(kPySpy)));
  EXPECT_FALSE(LooksLikeStackDump("Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n"));
  EXPECT_FALSE(LooksLikeStackDump("INFO 12-05 10:00:00 Thread 0x7f (most recent call first): quoted in a log line\n"));
  // A crash log that holds faulthandler's block stays a log (redteam process_crashed--fatal-python-segfault-thread-dump).
  EXPECT_FALSE(LooksLikeStackDump("Fatal Python error: Segmentation fault\n\nThread 0x00007f0e (most recent call first):\n"
                                  "  File \"/x/model.py\", line 3 in forward\n"));
  EXPECT_FALSE(LooksLikeStackDump("Thread 0x00007f0e (most recent call first):\n  File \"/x/m.py\", line 3 in f\n\n"
                                  "INFO 12-05 10:00:01 server restarted\n"));
}

TEST(StackDump, FaulthandlerThreadsWithTheirFramesAndTheMainThread) {
  auto events = StackDumpEvents(SourceFile(kFault), "x/stacks_rank_3.txt", 5);
  ASSERT_EQ(events.size(), 2u);
  const Event& dumper = events[0];
  const Event& main = events[1];
  EXPECT_EQ(dumper.Get("state").string(), "current");
  EXPECT_FALSE(dumper.Get("main").boolean());  // a threading.py thread
  EXPECT_TRUE(main.Get("main").boolean());
  EXPECT_EQ(main.rank, 3);
  EXPECT_EQ(main.source, 5);
  EXPECT_EQ(main.line, 8u);  // its header line
  EXPECT_EQ(main.Get("where").string(), "load_next_batch (/tmp/m.py:16)");
  EXPECT_EQ(main.Get("program_frames").json(), nlohmann::json::array({"load_next_batch (/tmp/m.py:16)", "worker (/tmp/m.py:38)"}));
  EXPECT_EQ(main.Get("frames").json().size(), 8u);
  EXPECT_EQ(main.extra_lines.size(), 8u);
}

TEST(StackDump, PySpyThreadsNamesStatesAndNativeFrames) {
  auto events = StackDumpEvents(SourceFile(kPySpy), "pyspy_rank_1.txt", 0);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].Get("name").string(), "MainThread");
  EXPECT_TRUE(events[0].Get("main").boolean());
  EXPECT_EQ(events[0].Get("state").string(), "idle");
  EXPECT_EQ(events[0].Get("where").string(), "load_next_batch (/tmp/m.py:16)");
  EXPECT_FALSE(events[1].Get("where").present()) << "threading.py only";
  // Versions without a thread id, --native frames (no line) and --locals lines.
  const std::string text =
      "Process 7: python serve.py\nPython v3.10.12 (/usr/bin/python3)\n\n"
      "Thread (active+gil): \"MainThread\"\n"
      "    pthread_cond_wait (libc.so.6)\n"
      "    all_gather_into_tensor (torch/distributed/distributed_c10d.py:4193)\n"
      "        Arguments:\n            tensor: <Tensor>\n"
      "    forward (vllm/model_executor/layers/linear.py:420)\n";
  events = StackDumpEvents(text, "pyspy_rank_12.txt", 0);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].rank, 12);
  EXPECT_EQ(events[0].Get("state").string(), "active+gil");
  EXPECT_EQ(events[0].Get("frames").json().size(), 3u);
  EXPECT_EQ(events[0].Get("where").string(), "forward (vllm/model_executor/layers/linear.py:420)");
}

// gdb's `thread apply all bt` after `gdb -p PID -batch` (WRITTEN BY US in
// gdb's layout, samples/hangs/README.md): its attach banner, then each thread
// and its frames; thread 1 is the process's first, "where" skips libc's waits.
TEST(StackDump, GdbThreadApplyAllBt) {
  const char* path = "samples/hangs/stacks/gdb/gdb_rank_1.txt";
  EXPECT_TRUE(LooksLikeStackDump(SourceFile(path)));
  EXPECT_FALSE(LooksLikeStackDump("INFO 12-05 Thread 1 (Thread 0x7f (LWP 1) \"python3\"):\nserver up\n"));
  auto events = StackDumpEvents(SourceFile(path), "gdb_rank_1.txt", 0);
  ASSERT_EQ(events.size(), 3u);
  const Event& main = events[2];
  EXPECT_EQ(main.Get("tool").string(), "gdb");
  EXPECT_EQ(main.Get("thread").string(), "1");
  EXPECT_EQ(main.Get("name").string(), "python3");
  EXPECT_TRUE(main.Get("main").boolean());
  EXPECT_FALSE(events[0].Get("main").boolean());
  EXPECT_EQ(main.rank, 1);
  EXPECT_EQ(main.Get("frames").json().size(), 11u);
  EXPECT_EQ(main.Get("frames").json()[0], "clock_nanosleep (/lib/x86_64-linux-gnu/libc.so.6)");
  EXPECT_EQ(main.Get("where").string(), "pysleep (../Modules/timemodule.c:2159)");
  EXPECT_EQ(events[1].Get("where").string(), "gloo::transport::tcp::Loop::run() (/opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so)");
}

// Real ones, from the hung rank 1 of a torchrun gloo job on the GPU box
// (samples/hangs/make_real_hang.sh): cuda-gdb 13's 'thread apply all bt',
// attach banner first and the debugger's own fatal error at detach last, and
// py-spy 0.4.3's --native dump (C frames between the Python ones).
TEST(StackDump, RealCudaGdbAndPySpyNativeDumps) {
  const char* gdb = "samples/hangs/stacks/real_h100/cuda_gdb_rank_1.txt";
  ASSERT_TRUE(LooksLikeStackDump(SourceFile(gdb)));
  auto g = StackDumpEvents(SourceFile(gdb), "cuda_gdb_rank_1.txt", 0);
  ASSERT_EQ(g.size(), 6u);
  const Event& main = g.back();
  EXPECT_EQ(main.Get("tool").string(), "gdb");
  EXPECT_EQ(main.Get("thread").string(), "1");
  EXPECT_TRUE(main.Get("main").boolean());
  EXPECT_EQ(main.rank, 1);
  EXPECT_EQ(main.Get("frames").json().size(), 15u);
  EXPECT_EQ(main.Get("where").string(), "PyObject_Vectorcall ()");  // the innermost frame outside libc's sleep
  EXPECT_EQ(g[2].Get("name").string(), "pt_gloo_runloop");
  const char* native = "samples/hangs/stacks/real_h100/pyspy_native_rank_1.txt";
  ASSERT_TRUE(LooksLikeStackDump(SourceFile(native)));
  auto n = StackDumpEvents(SourceFile(native), "pyspy_native_rank_1.txt", 0);
  ASSERT_EQ(n.size(), 2u);
  EXPECT_EQ(n[0].Get("tool").string(), "py-spy");
  EXPECT_EQ(n[0].Get("name").string(), "MainThread");
  EXPECT_EQ(n[0].Get("where").string(), "load_next_batch (train.py:3)");
}

// SGLang's watchdog logs py-spy's dump of its scheduler (python/sglang/srt/
// utils/watchdog.py): each thread becomes a stack_thread of the line's TP
// rank, at its header's line of the log (a log WRITTEN BY US in SGLang's
// layout, samples/hangs/README.md).
TEST(StackDump, SGLangWatchdogPySpyDumpInTheLog) {
  auto formats = FormatSet::LoadBuiltin();
  ASSERT_TRUE(formats.ok()) << formats.status().message();
  auto run = ParseRunToMemory({std::string(TPT_SOURCE_DIR) + "/samples/hangs/stacks/sglang_watchdog_tp1.log"}, *formats,
                              ParseOptions());
  ASSERT_TRUE(run.ok()) << run.status().message();
  std::vector<const Event*> threads;
  for (const Event& e : run->events)
    if (e.kind == "stack_thread") threads.push_back(&e);
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0]->rank, 1);
  EXPECT_EQ(threads[0]->line, 7u);
  EXPECT_EQ(threads[0]->Get("via").string(), "sglang_watchdog");
  EXPECT_EQ(threads[0]->Get("tool").string(), "py-spy");
  EXPECT_TRUE(threads[0]->Get("main").boolean());
  EXPECT_EQ(threads[0]->Get("where").string(), "load_next_batch (/tmp/m.py:16)");
  EXPECT_EQ(threads[1]->Get("name").string(), "Thread-1");
  // The watchdog's own line after the dump is still read.
  bool watchdog = false;
  for (const Event& e : run->events) watchdog |= e.text.find("Scheduler watchdog timeout") != std::string::npos;
  EXPECT_TRUE(watchdog);
}

}  // namespace
}  // namespace tpt
