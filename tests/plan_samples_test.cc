// plan_samples_test.cc: `tptriage plan --model` against what real launches logged
// (samples/models/evidence.json): weights per rank within 2%, the KV pool within 5% on
// at least 80% of the runs that logged it, the start/fail outcome right on every run,
// vLLM never more optimistic than 5% over the logged pool, and every logged pool inside
// the range the plan states, and every range line holding the plan's own point. Prints the
// predicted-vs-logged table that memory/README.md carries.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
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

PlanRun Plan(const std::string& args) {
  std::string cmd = std::string("'") + TPTRIAGE_BIN + "' plan " + args + " --format json 2>&1";
  PlanRun run;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> chunk;
  for (size_t n; (n = fread(chunk.data(), 1, chunk.size(), pipe)) > 0;) run.out.append(chunk.data(), n);
  int status = pclose(pipe);
  run.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

nlohmann::json Evidence() {
  std::ifstream in(std::string(TPT_SOURCE_DIR) + "/samples/models/evidence.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

std::string Pct(double predicted, double logged) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%+.1f%%", (predicted / logged - 1) * 100);
  return buf;
}

TEST(PlanSamplesTest, PredictedAgainstLogged) {
  nlohmann::json ev = Evidence();
  ASSERT_TRUE(ev.contains("runs"));
  int kv_runs = 0, kv_within = 0, known_misses = 0, logged_pools = 0, in_range = 0;
  std::ostringstream table;
  table << "| run | weights/rank predicted | logged | error | KV tokens predicted | logged | error | outcome "
           "predicted | logged |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : ev["runs"]) {
    const std::string id = r["id"];
    const std::string args =
        "--model '" + std::string(TPT_SOURCE_DIR) + "/samples/models/" + r["model"].get<std::string>() + "' " +
        r["args"].get<std::string>();
    const auto& logged = r["logged"];
    const std::string outcome = logged["outcome"];
    PlanRun run = Plan(args);
    SCOPED_TRACE(id + ": tptriage plan " + args + "\n" + run.out);
    if (outcome == "refused") {
      EXPECT_EQ(run.rc, 2) << "the launch was refused by the server's own check; plan must refuse it too";
      table << "| " << id << " | - | - | - | - | - | - | refused | refused |\n";
      continue;
    }
    ASSERT_TRUE(run.rc == 0 || run.rc == 1) << "plan did not answer";
    auto j = nlohmann::json::parse(run.out);
    const double w = j["ledger"][0]["weights_bytes"].get<double>() / kGiB;
    const bool fits = j["fits"].get<bool>();
    const std::string failure = j["failure"];
    std::string pred_outcome = fits ? "starts" : "fails (" + failure + ")";
    if (outcome == "starts") {
      EXPECT_TRUE(fits) << "the server started";
    } else if (outcome == "fails") {
      EXPECT_FALSE(fits) << "the server failed";
    } else if (outcome == "loads") {
      EXPECT_NE(failure, "weights_oom") << "the weights loaded";
      pred_outcome = failure == "weights_oom" ? "weights_oom" : "loads";
    }
    std::string wl = "-", we = "-";
    if (logged.contains("weights_per_rank_gib")) {
      const double lw = logged["weights_per_rank_gib"].get<double>();
      EXPECT_NEAR(w / lw, 1.0, 0.02) << "weights per rank " << w << " GiB vs logged " << lw;
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.2f GiB", lw);
      wl = buf;
      we = Pct(w, lw);
    }
    std::string kl = "-", ke = "-", kp = "-";
    const int64_t kv = j["kv_tokens"].get<int64_t>();
    if (kv > 0) kp = std::to_string(kv);
    // Multimodal runs count like the others: the plan models their encoder's profiling
    // (V0's dummy prompt, V1's encoder batch for Qwen2-VL/Qwen2.5-VL: vllm_mm_profile.cc).
    // A launch of a tower or version it does not model belongs among the known misses.
    const bool known_miss = r.contains("known_miss");
    if (!known_miss) {
      for (const auto& u : j["unknowns"]) {
        EXPECT_NE(u.get<std::string>().rfind("encoder profiling not modelled", 0), 0u)
            << "a multimodal launch whose encoder profiling the plan does not model: " << u;
      }
    }
    // A miss whose kind the model does not cover is named in the evidence (known_miss) and
    // shown in the table; it is not counted among the runs the model answers.
    if (known_miss) ++known_misses;
    if (logged.contains("kv_tokens")) {
      const double lk = logged["kv_tokens"].get<double>();
      // Every logged pool, known misses included, lies inside the
      // range the plan states (its `range:` lines together): where the point is off, the
      // stated uncertainty holds the truth.
      int64_t lo = kv, hi = kv;
      for (const auto& sv : j["sensitivity"]) {
        lo = std::min(lo, sv["kv_tokens_low"].get<int64_t>());
        hi = std::max(hi, sv["kv_tokens_high"].get<int64_t>());
      }
      ++logged_pools;
      if (lo <= lk && lk <= hi) ++in_range;
      EXPECT_LE(static_cast<double>(lo), lk) << "the logged pool is below the plan's stated range";
      EXPECT_GE(static_cast<double>(hi), lk) << "the logged pool is above the plan's stated range";
      if (!known_miss) {
        ++kv_runs;
        if (std::abs(kv / lk - 1) <= 0.05) ++kv_within;
        // Never confidently wrong (issue #31): no server's point more than 5% optimistic.
        EXPECT_LE(kv, lk * 1.05) << j["framework"].get<std::string>() << " prediction more than 5% optimistic";
      }
      kl = std::to_string(static_cast<int64_t>(lk));
      ke = Pct(static_cast<double>(kv), lk);
    }
    char wbuf[32];
    std::snprintf(wbuf, sizeof(wbuf), "%.2f GiB", w);
    table << "| " << id << " | " << wbuf << " | " << wl << " | " << we << " | " << kp << " | " << kl << " | " << ke
          << " | " << pred_outcome << " | " << outcome
          << (logged.contains("failure") ? " (" + logged["failure"].get<std::string>() + ")" : "") << " |"
          << (known_miss ? " known miss" : "") << "\n";
  }
  std::cout << table.str();
  ASSERT_GT(kv_runs, 0);
  EXPECT_GE(kv_within * 5, kv_runs * 4) << kv_within << " of " << kv_runs << " KV pools within 5%";
  std::cout << kv_within << " of " << kv_runs << " KV pools within 5%; " << known_misses
            << " known misses (evidence.json says which kind); " << in_range << " of " << logged_pools
            << " logged pools inside the plan's stated range\n";
  EXPECT_LE(known_misses * 5, static_cast<int>(ev["runs"].size())) << "more than a fifth of the launches are known misses";
}

// Each `range:` line varies one input about the plan's value, so it holds the plan's own
// point: on every launch of evidence.json, and on every model folder of samples/models
// planned for SGLang and vLLM (before and after vLLM's hybrid KV groups, and in 2026) at
// the smallest TP of an H200 node the plan answers. A variant planned without what the
// model gives besides the weights (SGLang's mamba state, vLLM's hybrid KV groups) once
// priced a hybrid model's pool as all full attention and missed its point by 2x.
void ExpectRangesHoldPoint(const std::string& what, const std::string& args, int* checked) {
  PlanRun run = Plan(args);
  SCOPED_TRACE(what + ": tptriage plan " + args + "\n" + run.out);
  if (run.rc != 0 && run.rc != 1) return;
  auto j = nlohmann::json::parse(run.out);
  const int64_t kv = j["kv_tokens"].get<int64_t>();
  for (const auto& sv : j["sensitivity"]) {
    EXPECT_LE(sv["kv_tokens_low"].get<int64_t>(), kv) << "range line above its point: " << sv["assumption"];
    EXPECT_GE(sv["kv_tokens_high"].get<int64_t>(), kv) << "range line below its point: " << sv["assumption"];
  }
  ++*checked;
}

TEST(PlanSamplesTest, EveryRangeLineHoldsItsPoint) {
  int checked = 0;
  const nlohmann::json ev = Evidence();
  for (const auto& r : ev["runs"]) {
    ExpectRangesHoldPoint(r["id"], "--model '" + std::string(TPT_SOURCE_DIR) + "/samples/models/" +
                                       r["model"].get<std::string>() + "' " + r["args"].get<std::string>(),
                          &checked);
  }
  const int launches = checked;
  int models = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(TPT_SOURCE_DIR) + "/samples/models")) {
    if (!e.is_directory()) continue;
    ++models;
    for (const char* server : {"--framework sglang --server-version 0.5.9", "--framework vllm --server-version 0.9.2",
                               "--framework vllm --server-version 0.19.0", "--framework vllm --server-version 0.26.0"}) {
      for (int tp : {1, 2, 4, 8}) {
        const int before = checked;
        ExpectRangesHoldPoint(e.path().filename().string(),
                              "--model '" + e.path().string() + "' " + server + " --gpu h200 --tp " +
                                  std::to_string(tp) + " --max-model-len 32768",
                              &checked);
        if (checked > before) break;
      }
    }
  }
  std::cout << launches << " launches and " << checked - launches << " plans of " << models
            << " sample models checked: each range line must hold its point\n";
  EXPECT_GT(launches, 20);
  EXPECT_GE(checked - launches, models * 3) << "most sample models planned on each server";
}

}  // namespace
