// test_fixtures.h: hand-made Analysis values for the report tests and for
// tests/report_fixture (which renders them for the schema and browser
// checks). They stand for what rules/ produces; the numbers vary with the
// arguments so grouping tests can make repeats that differ in every number.
//
//   tpt::Analysis a = tpt::report::testing::KvNoRoom({.seed = 3});
#pragma once

#include <string>

#include "report/report.h"

namespace tpt::report::testing {

struct KvNoRoomOptions {
  int seed = 0;                 // changes every number, path, time and the failing rank
  int tp = 4;
  std::string version = "0.4.6.post1";
  std::string log_dir = "logs";  // evidence file paths start here
  bool hostile_text = false;     // evidence holding <script>, control bytes, bad UTF-8
};

// SGLang KV pool sized below zero on one rank (kv_pool_no_room), with a
// ledger, a timeline, evidence, ruled-out suspects, remedy, repro and a finding.
Analysis KvNoRoom(const KvNoRoomOptions& options);

// A vLLM NCCL watchdog timeout (nccl_timeout_hang); `seed` varies the numbers.
Analysis NcclTimeout(int seed);

// A healthy SGLang run.
Analysis Healthy();

// A failure no rule explains (root_cause "unknown").
Analysis Unexplained(int seed);

RunResult AsRun(std::string name, Analysis a);

}  // namespace tpt::report::testing
