// findings_samples_test.cc: every finding rule against its own sample logs.
//
// samples/findings/<id>/pos*.log must give finding <id>, neg*.log must not;
// every finding file has at least one of each and every sample folder names a
// finding. The logs go through the built-in formats and parser like
// `tptriage analyze` does, so a format change that loses an event a finding
// needs fails here.
#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "parser/format_set.h"
#include "parser/parser.h"
#include "rules/findings.h"

namespace tpt {
namespace {

namespace fs = std::filesystem;

const fs::path kSamples = fs::path(TPT_SOURCE_DIR) / "samples" / "findings";

const FindingSet& Findings() {
  static const FindingSet set = [] {
    auto s = FindingSet::LoadBuiltin();
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(*s) : FindingSet();
  }();
  return set;
}

const FormatSet& Formats() {
  static const FormatSet set = [] {
    auto s = FormatSet::LoadBuiltin();
    EXPECT_TRUE(s.ok()) << s.status().message();
    return std::move(*s);
  }();
  return set;
}

std::vector<Finding> FindingsOf(const fs::path& log) {
  auto run = ParseRunToMemory({log.string()}, Formats(), ParseOptions{});
  EXPECT_TRUE(run.ok()) << log << ": " << run.status().message();
  if (!run.ok()) return {};
  RunIndex index(run->events);
  return EvaluateFindings(index, Findings());
}

std::vector<fs::path> Logs(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& ent : fs::directory_iterator(dir, ec)) {
    std::string name = ent.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && ent.path().extension() == ".log") out.push_back(ent.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(FindingSamples, EveryFindingHasPositiveAndNegativeSamples) {
  ASSERT_FALSE(Findings().rules().empty());
  std::set<std::string> ids;
  for (const auto& r : Findings().rules()) {
    ids.insert(r.id);
    fs::path dir = kSamples / r.id;
    EXPECT_FALSE(Logs(dir, "pos").empty()) << dir << ": no pos*.log for finding " << r.id;
    EXPECT_FALSE(Logs(dir, "neg").empty()) << dir << ": no neg*.log for finding " << r.id;
  }
  for (const auto& ent : fs::directory_iterator(kSamples)) {
    if (ent.is_directory()) {
      EXPECT_TRUE(ids.count(ent.path().filename().string())) << ent.path() << " names no finding";
    }
  }
}

TEST(FindingSamples, PositivesGiveTheFindingWithEvidenceAndAdvice) {
  for (const auto& r : Findings().rules()) {
    for (const auto& log : Logs(kSamples / r.id, "pos")) {
      auto fs = FindingsOf(log);
      auto it = std::find_if(fs.begin(), fs.end(), [&](const Finding& f) { return f.id == r.id; });
      ASSERT_NE(it, fs.end()) << log << " should give finding " << r.id;
      EXPECT_FALSE(it->evidence.empty()) << log;
      EXPECT_FALSE(it->advice.empty()) << log;
      EXPECT_EQ(it->title.find('?'), std::string::npos) << log << ": title has an unfilled figure: " << it->title;
      EXPECT_EQ(it->advice.find("{"), std::string::npos) << log << ": " << it->advice;
    }
  }
}

TEST(FindingSamples, NegativesDoNotGiveTheFinding) {
  for (const auto& r : Findings().rules()) {
    for (const auto& log : Logs(kSamples / r.id, "neg")) {
      for (const auto& f : FindingsOf(log)) EXPECT_NE(f.id, r.id) << log << " should not give " << r.id << ": " << f.title;
    }
  }
}

// The figures the samples were written to show.
nlohmann::json FiguresOf(const std::string& id, const std::string& sample) {
  for (const auto& f : FindingsOf(kSamples / id / sample))
    if (f.id == id) return f.figures;
  ADD_FAILURE() << sample << " gave no " << id;
  return nlohmann::json::object();
}

TEST(FindingSamples, FiguresOfTheSamples) {
  auto ar = FiguresOf("custom_ar_forced_pcie", "pos_env_tp8_serving.log");
  EXPECT_EQ(ar.value("tp_size", 0), 8);
  EXPECT_EQ(ar.value("forced_by", ""), "SGLANG_FORCE_CUSTOM_AR_PCIE=1");
  EXPECT_NEAR(ar.value("decode_tok_s", 0.0), 37.95, 0.01);

  auto cg = FiguresOf("cuda_graph_memory", "pos_bs512_peak40.log");
  EXPECT_EQ(cg.value("max_bs", 0), 512);
  EXPECT_EQ(cg.value("peak_running", 0), 40);
  EXPECT_EQ(cg.value("smaller_bs", 0), 64);
  EXPECT_NEAR(cg.value("graph_gib", 0.0), 3.92, 1e-6);
  EXPECT_NEAR(cg.value("give_back_gib", 0.0), 3.43, 1e-6);  // 3.92 x (1 - 64/512)
  auto cg2 = FiguresOf("cuda_graph_memory", "pos_bs512_no_stats.log");
  EXPECT_EQ(cg2.value("smaller_bs", 0), 128);

  auto st = FiguresOf("serving_stats", "pos_sglang_decode_retract.log");
  EXPECT_EQ(st.value("peak_running", 0), 180);
  EXPECT_EQ(st.value("retracted_requests", 0), 5);
  EXPECT_NEAR(st.value("decode_tok_s", 0.0), (2120.5 + 3480.0 + 3910.2 + 3850.7 + 3602.1) / 5, 0.5);  // whole above 1000
  auto vl = FiguresOf("serving_stats", "pos_vllm_v1_stats.log");
  EXPECT_NEAR(vl.value("decode_tok_s", 0.0), (88.1 + 412.9 + 398.6) / 3, 0.01);
  EXPECT_EQ(vl.value("peak_running", 0), 16);

  auto ep = FiguresOf("ep_a2a_backend_failure", "pos_deepep_oom_capture.log");
  EXPECT_EQ(ep.value("backend", ""), "DeepEP");
  EXPECT_EQ(ep.value("rank", -1), 3);
  EXPECT_EQ(ep.value("phase", ""), "CUDA graph capture");
  auto ep2 = FiguresOf("ep_a2a_backend_failure", "pos_deepep_assert_decode.log");
  EXPECT_EQ(ep2.value("failure", ""), "assertion");
  EXPECT_EQ(ep2.value("rank", -1), 5);
  EXPECT_EQ(ep2.value("phase", ""), "serving");

  auto ua = FiguresOf("unsupported_arch_component", "pos_no_kernel_image_sm120.log");
  EXPECT_EQ(ua.value("sm_label", ""), "SM120");
  auto sym = FiguresOf("unsupported_arch_component", "pos_symm_mem_sm120_warning.log");
  EXPECT_EQ(sym.value("sm_label", ""), "SM120");

  auto dr = FiguresOf("spec_decode_draft_memory", "pos_eagle3_tp2.log");
  EXPECT_NEAR(dr.value("draft_weights_gib", 0.0), 0.82, 1e-6);
  EXPECT_NEAR(dr.value("target_weights_gib", 0.0), 7.12, 1e-6);
  auto sh = FiguresOf("spec_decode_draft_shortage", "pos_draft_pool_no_room.log");
  EXPECT_NEAR(sh.value("draft_free_at_init_gib", 0.0), 1.61, 1e-6);
}

}  // namespace
}  // namespace tpt
