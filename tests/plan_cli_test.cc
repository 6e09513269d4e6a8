// plan_cli_test.cc: the built `tptriage plan`: JSON ledger and prediction, exit codes
// (0 fits, 1 predicted failure, 2 usage error) and messages that name the flag.
#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct PlanRun {
  int rc = -1;
  std::string out;
};

// Runs `tptriage plan ARGS`; stderr joins stdout when `with_stderr`.
PlanRun Plan(const std::string& args, bool with_stderr = false) {
  std::string cmd = std::string("'") + TPTRIAGE_BIN + "' plan " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  PlanRun run;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> chunk;
  for (size_t n; (n = fread(chunk.data(), 1, chunk.size(), pipe)) > 0;) run.out.append(chunk.data(), n);
  int status = pclose(pipe);
  run.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

const std::string kFounding =
    "--framework sglang --version 0.5.3 --gpu-mem 95GiB --free-at-init 94GiB --avail-after-weights 21.7GiB "
    "--cell-bytes 65536 --format json ";

TEST(PlanCliTest, FoundingCasePredictsNoRoomAndExitsOne) {
  PlanRun r = Plan(kFounding + "--mem-fraction-static 0.50");
  ASSERT_EQ(r.rc, 1) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["fits"], false);
  EXPECT_EQ(j["failure"], "kv_pool_no_room");
  EXPECT_NEAR(j["ledger"][0]["reserved_bytes"].get<double>() / kGiB, 47.0, 1e-6);
  EXPECT_NEAR(j["ledger"][0]["left_bytes"].get<double>() / kGiB, -25.3, 1e-6);
  EXPECT_DOUBLE_EQ(j["figures"]["min_viable_mem_fraction_static"].get<double>(), 0.77);
  EXPECT_EQ(j["remedy"][0]["flag"], "--mem-fraction-static");
  EXPECT_EQ(j["remedy"][0]["value"], "0.77");
  EXPECT_NE(j["error"].get<std::string>().find("Not enough memory"), std::string::npos);
}

TEST(PlanCliTest, FoundingCaseAt055StillFails) {
  PlanRun r = Plan(kFounding + "--mem-fraction-static 0.55");
  ASSERT_EQ(r.rc, 1) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["figures"]["reserved_bytes"].get<double>() / kGiB, 42.3, 1e-6);
  EXPECT_NEAR(j["figures"]["rest_bytes"].get<double>() / kGiB, -20.6, 1e-6);
}

TEST(PlanCliTest, FitsAtTheRemedyAndExitsZero) {
  PlanRun r = Plan(kFounding + "--mem-fraction-static 0.77");
  ASSERT_EQ(r.rc, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["fits"], true);
  EXPECT_GT(j["kv_tokens"].get<int64_t>(), 0);
}

// QwQ-32B on 4xL4 (v0.4.3.post4): the knowledge notes' check, 46,611 tokens in the log.
TEST(PlanCliTest, ModelDimsAndCatalogGpu) {
  PlanRun r = Plan(
      "--framework sglang --version 0.4.3.post4 --gpu L4 --tp 4 --free-at-init 21.63GiB --avail-after-weights "
      "6.09GiB --layers 64 --kv-heads 8 --head-dim 128 --mem-fraction-static 0.85 --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpu"]["name"], "L4 24GB");
  EXPECT_EQ(j["cell_bytes"], 65536);
  EXPECT_NEAR(j["kv_tokens"].get<double>(), 46611, 466);
}

TEST(PlanCliTest, VllmStartupCheckFromParams) {
  PlanRun r = Plan(
      "--framework vllm --version 0.10.1 --gpu-mem 47.38GiB --free-at-init 31.44GiB --gpu-memory-utilization 0.95 "
      "--params 7B --dtype bf16 --layers 32 --kv-heads 8 --head-dim 128 --format json");
  ASSERT_EQ(r.rc, 1) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["failure"], "startup_free_memory_short");
  EXPECT_EQ(j["remedy"][0]["flag"], "--gpu-memory-utilization");
  EXPECT_EQ(j["remedy"][0]["value"], "0.66");
  EXPECT_NE(j["error"].get<std::string>().find("Free memory on device (31.44/47.38 GiB)"), std::string::npos);
}

TEST(PlanCliTest, TextOutputShowsTheLedger) {
  PlanRun r = Plan(
      "--framework sglang --version 0.5.3 --gpu-mem 95GiB --free-at-init 94GiB --avail-after-weights 21.7GiB "
      "--cell-bytes 65536 --mem-fraction-static 0.5");
  ASSERT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("-25.30   (shortfall)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("remedy: --mem-fraction-static 0.77 (increase)"), std::string::npos) << r.out;
}

TEST(PlanCliTest, UsageErrorsNameTheFlagAndExitTwo) {
  struct Case {
    std::string args;
    std::string expect;
  } cases[] = {
      {"--framework sglang --version 0.5.3 --gpu-mem 12parsecs", "--gpu-mem"},
      {"--framework sglang --version 0.5.3 --gpu voodoo", "--gpu"},
      {"--framework tgi --version 1.0 --gpu H100", "--framework"},
      {"--version 0.5.3 --gpu H100", "--framework is required"},
      {"--framework vllm --version 0.10.1 --gpu H100 --tp 0", "--tp"},
      {"--framework vllm --version 0.10.1 --gpu H100 --tp abc", "--tp"},
      {"--framework vllm --version 0.10.1 --gpu H100 --gpu-memory-utilization 1.5", "--gpu-memory-utilization"},
      {"--framework vllm --version 0.10.1 --gpu H100 --mem-fraction-static 0.8", "--mem-fraction-static"},
      {"--framework sglang --version 0.5.3 --gpu H100 --weights-per-rank 9GiB", "--cell-bytes"},
      {"--framework sglang --version 0.5.3 --gpu H100 --cell-bytes 1024", "--weights-per-rank"},
      {"--framework sglang --version 0.5.3 --gpu H100 --format yaml", "--format"},
      {"--framework sglang --version main --gpu H100", "--version"},
      {"--framework sglang --version 0.5.3 --gpu H100 stray.log", "positional"},
      {"--frame sglang", "--frame"},
  };
  for (const auto& c : cases) {
    PlanRun r = Plan(c.args, /*with_stderr=*/true);
    EXPECT_EQ(r.rc, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.args << "\n" << r.out;
  }
}

TEST(PlanCliTest, HelpExitsZero) {
  PlanRun r = Plan("--help");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("--mem-fraction-static"), std::string::npos);
}

}  // namespace
