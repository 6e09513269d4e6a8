// findings_founding_test.cc: the tptriage binary shows the findings beyond the
// crash in its JSON and text output, on the founding case and on a
// healthy run.
//
// The founding box (samples/founding/, 8x RTX PRO 6000 Blackwell on PCIe with
// SGLANG_FORCE_CUSTOM_AR_PCIE=1) dies of a KV pool with no room; beside that
// diagnosis it must report custom all-reduce forced on 8 PCIe GPUs. A healthy
// run with the same setting keeps root_cause "none" and exit code 0 while its
// findings say what slows it down.
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

struct Result {
  int exit_code = -1;
  std::string out;
};

Result RunTool(const std::string& args) {
  std::string cmd = std::string(TPTRIAGE_BIN) + " " + args + " 2>/dev/null";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string Sample(const std::string& rel) { return std::string(TPT_SOURCE_DIR) + "/samples/" + rel; }

const nlohmann::json* FindingOf(const nlohmann::json& a, const std::string& id) {
  for (const auto& f : a["findings"])
    if (f.value("id", "") == id) return &f;
  return nullptr;
}

TEST(FindingsFounding, CustomAllReduceForcedBesideTheKvDiagnosis) {
  for (const char* log : {"founding/sglang-tp8-rtxpro6000-mfs050.log", "founding/sglang-tp8-rtxpro6000-mfs055.log"}) {
    Result r = RunTool("analyze --format json " + Sample(log));
    auto a = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(a.is_discarded()) << log << ": not JSON: " << r.out.substr(0, 500);
    EXPECT_EQ(r.exit_code, 1) << log << ": a diagnosed failure";
    EXPECT_EQ(a.value("root_cause", ""), "kv_pool_no_room") << log << ": findings do not change the diagnosis";
    const nlohmann::json* f = FindingOf(a, "custom_ar_forced_pcie");
    ASSERT_NE(f, nullptr) << log << ": findings: " << a["findings"].dump();
    EXPECT_EQ(f->value("severity", ""), "warning");
    EXPECT_EQ((*f)["figures"].value("tp_size", 0), 8);
    EXPECT_EQ((*f)["figures"].value("forced_by", ""), "SGLANG_FORCE_CUSTOM_AR_PCIE=1");
    EXPECT_NE(f->value("title", "").find("8 PCIe-only GPUs"), std::string::npos);
    EXPECT_NE(f->value("advice", "").find("tptriage repro --bench-allreduce"), std::string::npos);
    ASSERT_FALSE((*f)["evidence"].empty());
    EXPECT_NE((*f)["evidence"][0].value("text", "").find("SGLANG_FORCE_CUSTOM_AR_PCIE=1"), std::string::npos);
    EXPECT_GT((*f)["evidence"][0].value("line", 0), 0);
    // It died before capturing graphs or serving: nothing to say about either.
    EXPECT_EQ(FindingOf(a, "cuda_graph_memory"), nullptr) << log;
    EXPECT_EQ(FindingOf(a, "serving_stats"), nullptr) << log;
  }
}

TEST(FindingsFounding, HealthyRunKeepsRootCauseNoneAndExitZero) {
  std::string log = Sample("findings/custom_ar_forced_pcie/pos_env_tp8_serving.log");
  Result r = RunTool("analyze --format json " + log);
  auto a = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(a.is_discarded()) << r.out.substr(0, 500);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(a.value("root_cause", ""), "none");
  ASSERT_NE(FindingOf(a, "custom_ar_forced_pcie"), nullptr) << a["findings"].dump();
  const nlohmann::json* g = FindingOf(a, "cuda_graph_memory");
  ASSERT_NE(g, nullptr) << a["findings"].dump();
  EXPECT_EQ((*g)["figures"].value("max_bs", 0), 160);
  const nlohmann::json* s = FindingOf(a, "serving_stats");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->value("severity", ""), "info");
  EXPECT_NEAR((*s)["figures"].value("decode_tok_s", 0.0), 37.95, 0.01);

  // The person-facing text shows them too.
  Result t = RunTool("analyze " + log);
  EXPECT_EQ(t.exit_code, 0);
  EXPECT_NE(t.out.find("Custom all-reduce forced on 8 PCIe-only GPUs"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("Serving: 38.0 tok/s decode"), std::string::npos) << t.out;
}

TEST(FindingsFounding, SpeculativeDraftGetsItsOwnLedgerRows) {
  Result r = RunTool("analyze --format json " + Sample("findings/spec_decode_draft_memory/pos_eagle3_tp2.log"));
  auto a = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(a.is_discarded()) << r.out.substr(0, 500);
  EXPECT_EQ(a.value("root_cause", ""), "none");
  int target = 0, draft = 0;
  for (const auto& row : a["ledger"]) {
    if (row.value("role", "") == "draft") {
      ++draft;
      EXPECT_NEAR(row.value("weights_bytes", 0.0) / (1 << 30), 0.82, 1e-6);
    } else {
      ++target;
      EXPECT_NEAR(row.value("weights_bytes", 0.0) / (1 << 30), 7.12, 1e-6) << "the target row keeps the target's weights";
    }
  }
  EXPECT_EQ(target, 2);
  EXPECT_EQ(draft, 2);
}

}  // namespace
