// evidence_read_test.cc: evidence lines are whole (up to a cap that keeps a
// 1 MB line out of every output) and carry the keys the diagnosis read.
#include "rules/evidence_read.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "rules/test_rules.h"

#include "rules/engine.h"

namespace tpt {
namespace {

constexpr double kGiB = 1073741824.0;

Event Ev(const std::string& kind, int rank, nlohmann::json fields, std::string text, uint64_t line) {
  Event e;
  e.kind = kind;
  e.family = "sglang";
  e.rank = rank;
  e.file = "run.log";
  e.line = line;
  e.SetFields(std::move(fields));
  e.text = std::move(text);
  return e;
}

const RuleSet& Builtin() { return testing::BuiltinRules(); }

// The founding case (8 ranks, 94 GiB free at init, 21.7 GiB after weights,
// --mem-fraction-static 0.5) with a server_args line of `args_text`.
std::vector<Event> Founding(const std::string& args_text, const nlohmann::json& args) {
  std::vector<Event> ev;
  uint64_t line = 0;
  nlohmann::json fields = {{"framework", "sglang"}, {"tp_size", 8}, {"mem_fraction_static", 0.5}, {"args", args}};
  ev.push_back(Ev("server_args", -1, fields, args_text, ++line));
  for (int r = 0; r < 8; ++r) ev.push_back(Ev("weights_load_begin", r, {{"avail_bytes", 94.0 * kGiB}}, "begin", ++line));
  for (int r = 0; r < 8; ++r)
    ev.push_back(Ev("weights_load_end", r, {{"avail_bytes", 21.7 * kGiB}, {"weights_bytes", 72.3 * kGiB}}, "end", ++line));
  for (int r = 0; r < 8; ++r)
    ev.push_back(Ev("not_enough_memory", r, nlohmann::json::object(), "RuntimeError: Not enough memory.", ++line));
  return ev;
}

const Evidence* ServerArgsEvidence(const Analysis& a) {
  if (a.diagnoses.empty()) return nullptr;
  for (const Evidence& e : a.diagnoses.front().evidence)
    if (e.line == 1) return &e;
  return nullptr;
}

TEST(EvidenceRead, TextIsWholeUpToTheCapAndCutOnACharacter) {
  std::string line = "torch.OutOfMemoryError: CUDA out of memory. " + std::string(600, 'x') +
                     " PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.";
  EXPECT_EQ(EvidenceText(line), line) << "a long line stays whole";
  std::string huge;
  while (huge.size() < (1u << 20)) huge += "é mem_fraction_static=0.5, ";  // 2-byte characters
  std::string cut = EvidenceText(huge);
  EXPECT_LE(cut.size(), kMaxEvidenceBytes + 3);
  EXPECT_GE(cut.size(), kMaxEvidenceBytes - 4);
  EXPECT_EQ(cut.substr(cut.size() - 3), "...");
  EXPECT_NE(static_cast<unsigned char>(cut[cut.size() - 4]), 0xC3) << "no character cut in half";
}

TEST(EvidenceRead, ServerArgsEvidenceIsWholeAndNamesTheValuesRead) {
  std::string text = "server_args=ServerArgs(model_path='/models/ckpt-580b', ";
  nlohmann::json args = {{"model_path", "/models/ckpt-580b"}, {"mem_fraction_static", 0.5}, {"tp_size", 8}};
  for (int i = 0; i < 40; ++i) {
    text += "unused_option_" + std::to_string(i) + "=None, ";
    args["unused_option_" + std::to_string(i)] = nullptr;
  }
  text += "mem_fraction_static=0.5, tp_size=8)";
  ASSERT_GT(text.size(), 600u);
  Analysis a = Analyze(Founding(text, args), Builtin());
  ASSERT_EQ(a.root_cause, "kv_pool_no_room") << a.verdict;
  const Evidence* e = ServerArgsEvidence(a);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->text, text) << "whole, never cut at 400 bytes";
  auto has = [&](const std::string& k) { return std::count(e->read.begin(), e->read.end(), k) == 1; };
  EXPECT_TRUE(has("mem_fraction_static"));
  EXPECT_TRUE(has("tp_size"));
  EXPECT_FALSE(has("unused_option_3"));
  EXPECT_FALSE(has("model_path"));
}

TEST(EvidenceRead, AHugeLineIsCappedNotCarriedWhole) {
  std::string text = "server_args=ServerArgs(";
  while (text.size() < (1u << 20)) text += "x=1, ";
  text += "mem_fraction_static=0.5)";
  Analysis a = Analyze(Founding(text, {{"mem_fraction_static", 0.5}}), Builtin());
  const Evidence* e = ServerArgsEvidence(a);
  ASSERT_NE(e, nullptr);
  EXPECT_LE(e->text.size(), kMaxEvidenceBytes + 3);
}

TEST(EvidenceRead, PrintedNamesResolveThroughTheParsersAliases) {
  Event e = Ev("server_args", -1,
               {{"tp_size", 2},
                {"args", {{"tensor_parallel_size", 2}, {"gpu_memory_utilization", 0.5}, {"seed", 0}}}},
               "x", 1);
  std::vector<std::string> read = FieldsRead(e, {"tp_size", "gpu_memory_utilization"});
  EXPECT_EQ(read, (std::vector<std::string>{"gpu_memory_utilization", "tensor_parallel_size"}));
}

}  // namespace
}  // namespace tpt
