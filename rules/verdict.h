// verdict.h: from the diagnoses the rules made to the run's verdict.
//
// In Analyze's order: a diagnosis whose line the run went on after, with no
// link to what ended it, is set aside as a finding; of two adjacent root
// causes the cause leads its surface (rules/taxonomy.json `outranks`); a cause
// the leading diagnosis rules out with its own figures is dropped; then the
// verdict is written: the leading diagnosis (a possibility below kSureEnough,
// with the runner-up), else "unknown" quoting the failure no rule explains,
// else "no evidence" for a log that shows no run that got somewhere, else
// healthy.
//
//   tpt::SetAsideSurvived(run, term, anchor_of, &a);
//   tpt::OrderCauseBeforeSurface(&a.diagnoses);
//   tpt::DropRefutedByPrimary(&a.diagnoses);
//   tpt::WriteVerdict(run, term, &a);
#pragma once

#include <map>
#include <string>
#include <vector>

#include "rules/analysis.h"
#include "rules/run_index.h"
#include "rules/terminal.h"

namespace tpt {

// Moves to a->findings each diagnosis whose anchor (anchor_of: diagnosis id ->
// anchor event) the run outlived with no link to what ended it; the others get
// `explains`, the line that ended the run.
void SetAsideSurvived(const RunIndex& run, const Terminals& term, const std::map<std::string, size_t>& anchor_of,
                      Analysis* a);

// Of two adjacent root causes, the one that outranks the other leads.
void OrderCauseBeforeSurface(std::vector<Diagnosis>* diagnoses);

// Drops the diagnoses the first one rules out with its own figures.
void DropRefutedByPrimary(std::vector<Diagnosis>* diagnoses);

// Sets a->root_cause and a->verdict (and, for "unknown", each rank's first
// unexplained error line).
void WriteVerdict(const RunIndex& run, const Terminals& term, Analysis* a);

}  // namespace tpt
