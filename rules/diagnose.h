// diagnose.h: the rules tried on a run's events, and a diagnosis built from
// each rule that held.
//
// FireRules tries every rule on its anchor events, earliest first, keeping per
// rule the first anchor that holds and is linked to what ended the run (else
// the first that holds), and orders them: tier, then anchor, then priority.
// Diagnose fills one Diagnosis from a fired rule: its confidence and
// explanation as the log decides them, the evidence lines (the anchor, each
// rule-named line, the same error on other ranks, a suspect's last line), its
// figures, what it rules out, the remedies that point past the value in use
// worded for the run's server, and the repro plan's parameters.
//
//   for (const tpt::Fired& f : tpt::FireRules(run, rules, term, 256)) ds.push_back(tpt::Diagnose(run, f));
#pragma once

#include <map>
#include <string>
#include <vector>

#include "rules/analysis.h"
#include "rules/rule.h"
#include "rules/run_index.h"
#include "rules/terminal.h"

namespace tpt {

// A rule that held at `anchor`, with the names it computed.
struct Fired {
  const Rule* rule = nullptr;
  size_t rule_order = 0;
  size_t anchor = 0;
  std::map<std::string, Value> vars;  // lets, model outputs, after-lets
};

// Every rule that holds on `run`, most telling first (engine.h's order). At
// most `max_anchors` anchors are tried a rule: past that, the first ones and
// the run's last.
std::vector<Fired> FireRules(const RunIndex& run, const RuleSet& rules, const Terminals& term, size_t max_anchors);

// The diagnosis rule `f` makes of `run`.
Diagnosis Diagnose(const RunIndex& run, const Fired& f);

}  // namespace tpt
