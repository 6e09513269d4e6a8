// batch_test.cc: listing runs and the parallel driver.
#include "report/batch.h"

#include <gtest/gtest.h>

#include "tests/temp_dir_test.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace tpt::report {
namespace {

namespace fs = std::filesystem;

fs::path MakeDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("tpt_batch_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// The folder goes when this process's tests end (hundreds were left in /tmp).
[[maybe_unused]] ::testing::Environment* const kRemoveTempDir = tpt::test::RemoveAtExit(fs::temp_directory_path() / ("tpt_batch_test_" + std::to_string(::getpid())));

TEST(ListRuns, EntriesSortedHiddenSkipped) {
  fs::path d = MakeDir("list");
  fs::create_directories(d / "run-b");
  fs::create_directories(d / "run-a");
  std::ofstream(d / "single.log") << "x\n";
  std::ofstream(d / ".hidden") << "x\n";
  auto runs = ListRuns(d.string());
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 3u);
  EXPECT_EQ((*runs)[0].name, "run-a");
  EXPECT_EQ((*runs)[1].name, "run-b");
  EXPECT_EQ((*runs)[2].name, "single.log");
  EXPECT_EQ((*runs)[2].path, (d / "single.log").string());
}

TEST(ListRuns, ClearErrors) {
  auto missing = ListRuns("/nonexistent/tpt/runs");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/tpt/runs"), std::string::npos);
  fs::path d = MakeDir("empty");
  auto empty = ListRuns(d.string());
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("holds no runs"), std::string::npos);
  std::ofstream(d / "f") << "x";
  auto file = ListRuns((d / "f").string());
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find("not a directory"), std::string::npos);
}

TEST(AnalyzeInParallel, ResultsInInputOrderUsingSeveralThreads) {
  std::vector<RunInput> inputs;
  for (int i = 0; i < 40; ++i) inputs.push_back({"run" + std::to_string(i), "/p/run" + std::to_string(i)});
  std::atomic<int> running{0}, peak{0};
  auto results = AnalyzeInParallel(inputs, {.jobs = 4, .progress = nullptr}, [&](const RunInput& in) {
    int now = ++running;
    for (int p = peak; now > p && !peak.compare_exchange_weak(p, now);) {
    }
    // Until a second run is seen in flight (at most 10 s): with 4 workers one
    // comes, however the scheduler orders them; a serial pool never gets there.
    for (int i = 0; i < 10000 && peak.load() < 2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      now = running.load();
      for (int p = peak; now > p && !peak.compare_exchange_weak(p, now);) {
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2 + (40 - in.name.size()) % 3));
    --running;
    RunResult r;
    r.analysis.verdict = in.path;
    r.exit_code = kExitDiagnosed;
    return r;
  });
  ASSERT_EQ(results.size(), 40u);
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(results[i].name, "run" + std::to_string(i));
    EXPECT_EQ(results[i].analysis.verdict, "/p/run" + std::to_string(i));
  }
  EXPECT_GT(peak.load(), 1) << "work never overlapped";
  EXPECT_LE(peak.load(), 4);
}

TEST(AnalyzeInParallel, AThrowingRunBecomesAnErrorOthersGoOn) {
  std::vector<RunInput> inputs = {{"a", "/a"}, {"b", "/b"}, {"c", "/c"}};
  auto results = AnalyzeInParallel(inputs, {.jobs = 2, .progress = nullptr}, [](const RunInput& in) {
    if (in.name == "b") throw std::runtime_error("boom");
    RunResult r;
    r.exit_code = kExitHealthy;
    return r;
  });
  EXPECT_TRUE(results[0].error.empty());
  EXPECT_EQ(results[1].exit_code, kExitUsage);
  EXPECT_NE(results[1].error.find("/b: analysis failed (boom)"), std::string::npos);
  EXPECT_TRUE(results[2].error.empty());
}

TEST(AnalyzeInParallel, NoProgressBarWhenNotATerminal) {
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  std::vector<RunInput> inputs = {{"a", "/a"}};
  AnalyzeInParallel(inputs, {.jobs = 1, .progress = f, .progress_after_s = 0}, [](const RunInput&) {
    return RunResult{};
  });
  EXPECT_EQ(std::ftell(f), 0L);
  std::fclose(f);
}

}  // namespace
}  // namespace tpt::report
