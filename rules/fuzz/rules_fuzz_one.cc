// rules_fuzz_one.cc: see rules_fuzz_one.h.
#include "rules/fuzz/rules_fuzz_one.h"

#include <string>
#include <vector>

#include "rules/engine.h"
#include "rules/findings.h"
#include "rules/rule.h"
#include "rules/run_index.h"

namespace tpt::fuzz {
namespace {

constexpr double kGiB = 1073741824.0;

Event Ev(const std::string& kind, int rank, nlohmann::json fields) {
  static uint64_t line = 0;
  Event e;
  e.kind = kind;
  e.family = "sglang";
  e.rank = rank;
  e.file = "fuzz.log";
  e.line = ++line;
  e.SetFields(std::move(fields));
  e.text = kind + " line";
  return e;
}

// Two ranks of the founding case, with a traceback: enough for most functions to have work.
const std::vector<Event>& Run() {
  static const std::vector<Event>* run = [] {
    auto* ev = new std::vector<Event>;
    ev->push_back(Ev("server_args", -1, {{"framework", "sglang"}, {"tp_size", 2}, {"mem_fraction_static", 0.5}}));
    ev->push_back(Ev("env_var", -1, {{"name", "SGLANG_FORCE_CUSTOM_AR_PCIE"}, {"value", "1"}}));
    for (int r = 0; r < 2; ++r) ev->push_back(Ev("weights_load_begin", r, {{"avail_bytes", 94.0 * kGiB}}));
    for (int r = 0; r < 2; ++r)
      ev->push_back(Ev("weights_load_end", r, {{"avail_bytes", 21.7 * kGiB}, {"weights_bytes", 72.3 * kGiB}}));
    Event ex = Ev("exception", 0, {{"type", "RuntimeError"}});
    ex.extra_lines = {"Traceback (most recent call last):", "  File \"/x/scheduler.py\", line 3, in run",
                      "    self.init_memory_pool()", "RuntimeError: Not enough memory."};
    ev->push_back(std::move(ex));
    for (int r = 0; r < 2; ++r) ev->push_back(Ev("not_enough_memory", r, nlohmann::json::object()));
    ev->push_back(Ev("watchdog_timeout", 1, {{"seq", 7}, {"timeout_s", 600}}));
    for (Event& e : *ev) e.Decoded();
    return ev;
  }();
  return *run;
}

}  // namespace

void FuzzRulesOne(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const int mode = data[0] % 3;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::vector<Event>& events = Run();
  if (mode == 0) {
    auto rules = RuleSet::LoadTexts({{"fuzz.json", text}});
    if (!rules.ok()) return;
    Analysis a = Analyze(events, *rules);
    (void)nlohmann::json(a).dump();  // throws (aborts) on invalid UTF-8
  } else if (mode == 1) {
    auto findings = FindingSet::LoadTexts({{"fuzz.json", text}});
    if (!findings.ok()) return;
    Analysis a;
    AddFindings(RunIndex(events), *findings, &a);
    (void)nlohmann::json(a).dump();
  } else {
    RunIndex run(events);
    for (size_t anchor : {RunScope::kNoAnchor, size_t{6}}) {
      FindingScope scope(run, anchor);
      (void)FillTemplate(text, scope);
      auto e = ParseExpr(text);
      if (e.ok()) (void)(*e)->Eval(scope).ToString();
    }
  }
}

}  // namespace tpt::fuzz
