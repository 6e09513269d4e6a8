// rule_test.cc: loading rule files; bad files are rejected with file + JSON path + reason.
#include "rules/rule.h"

#include <gtest/gtest.h>

#include "rules/run_index.h"

namespace tpt {
namespace {

const char* kGood = R"json({
  "id": "demo_rule",
  "title": "demo",
  "root_cause": "runtime_oom",
  "anchor": "cuda_oom",
  "let": {"tried_gib": "gib(anchor.tried_bytes)", "double_gib": "tried_gib * 2"},
  "when": "tried_gib > 1",
  "explanation": "tried {tried_gib:.1f} GiB ({double_gib})",
  "remedy": [{"flag": "--x", "value": "{tried_gib:.2f}", "direction": "decrease", "why": "w"}],
  "ruled_out": [{"id": "y", "reason": "r {tried_gib}", "when": "tried_gib < 100"}]
})json";

TEST(RuleTest, ParsesAGoodRule) {
  auto r = ParseRule("good.json", kGood);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->id, "demo_rule");
  EXPECT_EQ(r->anchor_kinds, std::vector<std::string>{"cuda_oom"});
  ASSERT_EQ(r->lets.size(), 2u);
  EXPECT_EQ(r->lets[0].first, "tried_gib");  // file order kept
  EXPECT_EQ(r->remedy.size(), 1u);
  EXPECT_EQ(r->ruled_out.size(), 1u);
}

// One language: functions once only in findings (choose, extract, lower,
// phase, ...) are rules' too, and evidence may name a text it must hold.
TEST(RuleTest, SharesFunctionsAndEvidenceWithFindings) {
  std::string text = kGood;
  const std::string when = "\"when\": \"tried_gib > 1\"";
  text.replace(text.find(when), when.size(),
               "\"when\": \"choose(phase() == 'serving', 1, tried_gib) > 1 and lower(extract(anchor.text, '(out)')) == 'out'\", "
               "\"evidence\": [\"weights_load_end\", \"server_args/--tp\", {\"kind\": \"cuda_oom\", \"contains\": \"Tried\"}]");
  auto r = ParseRule("good.json", text);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->evidence.size(), 3u);
  EXPECT_EQ(r->evidence[0].kind, "weights_load_end");
  EXPECT_EQ(r->evidence[0].contains, "");
  EXPECT_EQ(r->evidence[1].kind, "server_args");
  EXPECT_EQ(r->evidence[1].contains, "--tp");
  EXPECT_EQ(r->evidence[2].contains, "Tried");
}

struct BadCase {
  std::string from, to;  // replace `from` in kGood by `to`
  std::string expect;    // substring of the error
};

TEST(RuleTest, RejectsBadRulesNamingFileAndPath) {
  const BadCase cases[] = {
      {"\"root_cause\": \"runtime_oom\"", "\"root_cause\": \"oom\"", "bad.json: $.root_cause: 'oom' is not a taxonomy id"},
      {"\"anchor\": \"cuda_oom\"", "\"anchor\": \"cuda_oomm\"", "bad.json: $.anchor: unknown event kind 'cuda_oomm'"},
      {"tried_gib > 1", "tried_gib >", "bad.json: $.when: col"},
      {"tried_gib * 2", "tried_gb * 2", "bad.json: $.let.double_gib: unknown name 'tried_gb'"},
      {"gib(anchor.tried_bytes)", "gibi(anchor.tried_bytes)", "$.let.tried_gib: unknown function 'gibi'"},
      {"({double_gib})", "({nope})", "$.explanation: template uses '{nope}'"},
      {"{tried_gib:.2f}", "{tried_gib:2}", "$.remedy[0].value: format"},
      {"\"direction\": \"decrease\"", "\"direction\": \"down\"", "$.remedy[0].direction"},
      {"\"title\": \"demo\",", "", "$: missing required key \"title\""},
      {"\"id\": \"demo_rule\"", "\"id\": \"Demo Rule\"", "$.id: ids are lower_snake_case"},
      {"\"title\": \"demo\"", "\"title\": \"demo\", \"colour\": 1", "$.colour: unknown key"},
      {"r {tried_gib}", "r {tried_gib", "$.ruled_out[0].reason: unclosed"},
      // Argument counts are checked at load, from the one function table.
      {"tried_gib > 1", "tried_gib > 1 and count('cuda_oom', 3) > 0",
       "bad.json: $.when: count() takes 1 argument, not 2"},
      {"tried_gib > 1", "first('cuda_oom') > 1", "$.when: first() takes 2 arguments, not 1"},
      {"tried_gib > 1", "if(tried_gib) > 1", "$.when: if() takes 2 or 3 arguments, not 1"},
      {"\"anchor\": \"cuda_oom\"", "\"anchor\": \"cuda_oom\", \"evidence\": [{\"kind\": \"cuda_oom\", \"text\": \"x\"}]",
       "$.evidence[0].text: unknown key"},
      {"\"anchor\": \"cuda_oom\"", "\"anchor\": \"cuda_oom\", \"severity\": \"info\"", "$.severity: unknown key"},
      // A confidence list: {"when", "value"} entries, the last one the default.
      {"\"anchor\": \"cuda_oom\"", "\"anchor\": \"cuda_oom\", \"confidence\": [{\"when\": \"tried_gib > 2\", \"value\": 0.5}]",
       "$.confidence[0]: the last value is the default: it takes no \"when\""},
      {"\"anchor\": \"cuda_oom\"", "\"anchor\": \"cuda_oom\", \"confidence\": [{\"value\": 0.5}, {\"value\": 0.9}]",
       "$.confidence[0]: missing required key \"when\""},
      {"\"anchor\": \"cuda_oom\"", "\"anchor\": \"cuda_oom\", \"confidence\": [{\"when\": \"tried_gb > 2\", \"value\": 0.5}, {\"value\": 0.9}]",
       "$.confidence[0].when: unknown name 'tried_gb'"},
      {"\"anchor\": \"cuda_oom\"", "\"anchor\": \"cuda_oom\", \"confidence\": [{\"when\": \"true\", \"value\": 1.5}, {\"value\": 0.9}]",
       "$.confidence[0].value: must be in (0, 1]"},
      {"\"anchor\": \"cuda_oom\"", "\"anchor\": \"cuda_oom\", \"confidence\": []", "$.confidence: expected a number or a non-empty array"},
      {"\"anchor\": \"cuda_oom\"", "\"anchor\": \"cuda_oom\", \"confidence\": [{\"value\": 0.9, \"why\": \"x\"}]",
       "$.confidence[0].why: unknown key"},
  };
  for (const auto& c : cases) {
    std::string text = kGood;
    size_t p = text.find(c.from);
    ASSERT_NE(p, std::string::npos) << c.from;
    text.replace(p, c.from.size(), c.to);
    auto r = ParseRule("bad.json", text);
    ASSERT_FALSE(r.ok()) << c.to;
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos) << r.status().message();
  }
}

// How sure a reading is may depend on what the log shows: the first entry
// whose condition holds gives the confidence; the default is the last.
TEST(RuleTest, ConfidenceListKeepsOrderAndDefault) {
  std::string text = kGood;
  text.replace(text.find("\"anchor\""), 0,
               "\"confidence\": [{\"when\": \"tried_gib > 2\", \"value\": 0.5}, {\"value\": 0.9}], ");
  auto r = ParseRule("c.json", text);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->confidences.size(), 2u);
  EXPECT_NE(r->confidences[0].first, nullptr);
  EXPECT_DOUBLE_EQ(r->confidences[0].second, 0.5);
  EXPECT_EQ(r->confidences[1].first, nullptr);
  EXPECT_DOUBLE_EQ(r->confidence, 0.9);
}

TEST(RuleTest, RejectsBrokenJsonAndUnknownModel) {
  auto r = ParseRule("x.json", "{\"id\": ");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("x.json: $: not valid JSON"), std::string::npos);
  std::string text = kGood;
  text.replace(text.find("\"when\""), 0, "\"model\": {\"name\": \"nope\"}, ");
  r = ParseRule("m.json", text);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("m.json: $.model.name: unknown memory model 'nope'"), std::string::npos)
      << r.status().message();
}

TEST(RuleTest, ModelInputsAreChecked) {
  std::string text = kGood;
  text.replace(text.find("\"when\""), 0,
               "\"model\": {\"name\": \"sglang_kv_pool\", \"inputs\": {\"free_bytes\": \"1\"}}, ");
  auto r = ParseRule("m.json", text);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("$.model.inputs.free_bytes: model 'sglang_kv_pool' has no input"),
            std::string::npos)
      << r.status().message();
}

TEST(RuleTest, DuplicateIdsAreRejected) {
  auto set = RuleSet::LoadTexts({{"a.json", kGood}, {"b.json", kGood}});
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.status().message().find("b.json: $.id: id 'demo_rule' is also used by a.json"), std::string::npos);
}

TEST(RuleTest, MissingRulesDirIsAClearError) {
  auto set = RuleSet::LoadDir("/nonexistent/rules");
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.status().message().find("--rules /nonexistent/rules: not a directory"), std::string::npos);
}

TEST(RuleTest, BuiltinRulesLoad) {
  auto set = RuleSet::LoadBuiltin();
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_FALSE(set->rules().empty());
}

TEST(RuleTest, FillTemplateFormatsNumbers) {
  std::vector<Event> none;
  RunIndex run(none);
  RunScope s(run, RunScope::kNoAnchor);
  s.Set("rest_gib", -25.29999);
  s.Set("f", 0.5);
  s.Set("n", 8);
  EXPECT_EQ(FillTemplate("rest {rest_gib:.1f} GiB at f={f}, {n} ranks, {missing}", s),
            "rest -25.3 GiB at f=0.50, 8 ranks, ?");
}

}  // namespace
}  // namespace tpt
