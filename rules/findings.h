// findings.h: findings beyond the crash, as data.
//
// A finding is something the on-call engineer should know about a run whether
// or not it crashed: custom all-reduce forced on PCIe, a kernel without an
// image for the GPU, an all-to-all backend that failed, the speculative draft's
// memory, what CUDA graphs cost, the serving throughput. Each is a rule file in
// rules/findings/<id>.json (language: rules/findings/README.md) evaluated after
// the diagnosis; a finding never changes root_cause or the exit code.
//
// The expression language is the rules' (rules/expr.h, rules/run_index.h) with a
// few functions findings need on top (FindingScope below).
//
//   auto findings = tpt::FindingSet::LoadBuiltin();
//   tpt::Analysis a = tpt::Analyze(events, rules);
//   tpt::AddFindings(events, *findings, &a);   // fills a.findings (+ draft ledger rows)
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "parser/event.h"
#include "base/status.h"
#include "rules/analysis.h"
#include "rules/expr.h"
#include "rules/run_index.h"

namespace tpt {

struct AdviceDef {
  std::string text;  // template: {name} / {name:.1f}
  ExprPtr when;      // null: always
};

// An evidence line to quote: the first event of `kind` (on the anchor's rank
// first), optionally only one whose text holds `contains` (caseless).
struct EvidenceDef {
  std::string kind, contains;
};

struct FindingRule {
  std::string id, severity, title, source;  // source: the file it came from
  ExprPtr warning_when;                     // raises an "info" finding to "warning"
  std::vector<std::string> anchor_kinds;    // empty: evaluated once for the run
  std::vector<std::pair<std::string, ExprPtr>> lets;  // figures, in file order
  ExprPtr when;                             // null: always
  std::vector<EvidenceDef> evidence;
  std::vector<AdviceDef> advice;            // the texts whose `when` holds, joined by a space
};

class FindingSet {
 public:
  // rules/findings/*.json compiled into the binary.
  static StatusOr<FindingSet> LoadBuiltin();
  // Every *.json in `dir`.
  static StatusOr<FindingSet> LoadDir(const std::string& dir);
  static StatusOr<FindingSet> LoadTexts(const std::vector<std::pair<std::string, std::string>>& files);

  const std::vector<FindingRule>& rules() const { return rules_; }

 private:
  std::vector<FindingRule> rules_;
};

// Parses one finding file; errors name `file`, the JSON path and the reason.
StatusOr<FindingRule> ParseFindingRule(const std::string& file, const std::string& text);

// Every finding whose condition holds, in rule-file order (one per rule: the
// first anchor that satisfies it; `matched_ranks` names all ranks that did).
std::vector<Finding> EvaluateFindings(const RunIndex& run, const FindingSet& set);

// EvaluateFindings into a->findings, plus "draft" ledger rows for a
// speculative draft model when the ledger has none.
void AddFindings(const std::vector<Event>& events, const FindingSet& set, Analysis* a);

// The scope finding expressions run in: RunScope plus
//   choose(c, a, b)            a when c holds, else b
//   extract(text, 're')        first capture group (or the match), caseless; null if none
//   lower(s)                   lower-case string
//   num(s)                     a number from a string ("120"), null if it is not one
//   concat(a, b, ...)          the values as one string; null if any is null
//   find_text('re')            extract() over every event's text, first hit
//   meanof(kind, field)        mean of the numeric field over events of kind
//   meanof_nonzero(kind, f)    the same, ignoring zeros (idle intervals)
//   sumof(kind, field)         sum
//   env_match('re')            "NAME=value" of the first env var whose name matches and
//                              whose value is set and not 0/false/no/off; null if none
//   rank_count_before(kind)    events of kind on the anchor's rank before the anchor
//   rank_nth(kind, field, n)   field of the n-th (1-based) event of kind on the anchor's rank
//   phase()                    startup phase of the anchor's rank when the anchor was printed
//   ceil_pow2(x)               smallest power of two >= x
//   gpu_interconnect()         "pcie" / "nvlink" from the GPU catalog (memory/), null if unknown
//   gpu_sm()                   the GPU's SM (90, 120, ...) from the catalog, null if unknown
// and the variables matched_ranks ("3, 5") and matched_count (filled for templates).
// anchor.rank of a rank-less traceback line is the rank of the "... hit an
// exception" header that opened it.
class FindingScope : public Scope {
 public:
  FindingScope(const RunIndex& run, size_t anchor) : run_(run), anchor_(anchor), base_(run, anchor) {}

  void Set(const std::string& name, Value v) { base_.Set(name, std::move(v)); }
  Value Lookup(std::string_view name) const override;
  Value Call(std::string_view name, const std::vector<Value>& args) const override;

  static bool IsFunction(std::string_view name);
  static bool IsVariable(std::string_view name);

 private:
  // The anchor's rank, or for a rank-less last line of a traceback the rank of
  // the header that opened it; -1 when neither.
  int TracebackRank() const;
  int AnchorRank() const;  // TracebackRank(), else the lowest rank seen, else -1
  const RunIndex& run_;
  size_t anchor_;
  RunScope base_;
};

}  // namespace tpt
