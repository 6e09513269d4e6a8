// verdict.cc: from the rules' diagnoses to the run's verdict (verdict.h).
#include "rules/verdict.h"

#include <algorithm>
#include <optional>
#include <set>

#include "rules/evidence_read.h"
#include "rules/rank_marks.h"
#include "rules/vocabulary.h"

namespace tpt {

namespace {

// Positive evidence of a run that got somewhere: a startup phase reached
// (rank_marks.h PhaseOf), or a line that only a running job prints (its
// configuration, an NCCL communicator set up, a rank assigned, a clean exit).
// A warning, an environment variable or a GPU name alone is not a run. Without
// it "no failure seen" is no evidence, not health (README.md, /etc/services,
// a metadata.json, random text, a results table naming an NCCL WARN).
bool GotSomewhere(const RunIndex& run) {
  for (const Event& e : run.events()) {
    const EventKind* k = FindEventKind(e.kind);  // parser/events.json phase / running
    if (PhaseOf(e.kind) != nullptr || (k != nullptr && k->running)) return true;
  }
  return false;
}

// A healthy run whose server stopped in order (parser/events.json
// server_stopped: uvicorn's "Shutting down" after SIGTERM or SIGINT) was
// stopped from outside: said with the line, since "why did it stop" is the
// question a user brings such a log with and the log cannot answer it.
std::string StoppedInOrder(const RunIndex& run) {
  const auto& stops = run.OfKind("server_stopped");
  if (stops.empty()) return "";
  const Event& e = run.events()[stops.front()];
  // SGLang's own SIGTERM handler names the signal (tokenizer_manager.py
  // SignalHandler: "SIGTERM received ... Draining requests and shutting down").
  const bool sglang = e.Get("server").string() == "sglang";
  return "; the server stopped in order at " + e.file + ":" + std::to_string(e.line) +
         (sglang ? " (SGLang's SIGTERM handler: it was asked to stop by SIGTERM: an orchestrator, `docker stop`, "
                   "systemd, or its parent exiting)"
                 : " (uvicorn's shutdown: it was asked to stop by SIGTERM or SIGINT: an orchestrator, `docker stop`, "
                   "systemd, Ctrl-C, or its parent exiting)") +
         ". The log does not say who: if it was not you, look there "
         "(kubectl describe pod: Killing, liveness probe failed, OOMKilled; docker inspect .State; journalctl)";
}

}  // namespace

void SetAsideSurvived(const RunIndex& run, const Terminals& term, const std::map<std::string, size_t>& anchor_of,
                      Analysis* out) {
  Analysis& a = *out;
  const std::vector<Event>& events = run.events();
  // A line its producer went on after is no cause of a later failure without
  // a link the vocabulary names: a finding. With nothing ended (a hang, a cut
  // log) a warning the run went on after is one, and so is a start-up error
  // (a failure line, not a figure such as the pool's size) after which its
  // producer went on to serve (answered requests, printed statistics): the
  // run outlived it. An error after which the run only
  // reached a later start-up phase stands (a hang or a cut log may follow
  // from it), and so does a request's error while serving (the server keeps
  // failing such requests: a pool too small for the context length).
  for (auto it = a.diagnoses.begin(); it != a.diagnoses.end();) {
    auto at = anchor_of.find(it->id);
    size_t anchor = at == anchor_of.end() ? 0 : at->second;
    bool survived = at != anchor_of.end() && term.Survived(anchor);
    bool unlinked = term.any() ? at != anchor_of.end() && !term.Linked(anchor)
                               : survived && (WarningLine(events, anchor) ||
                                             (term.ServedAfterStartup(anchor) &&
                                              (IsOwnFailure(events[anchor]) || SaysError(events, anchor))));
    if (!unlinked) {
      if (auto end = at == anchor_of.end() ? std::nullopt : term.EndOf(anchor)) it->explains = ToEvidence(events[*end]);
      ++it;
      continue;
    }
    Finding f;
    f.id = it->rule;
    f.severity = "warning";
    f.title = it->title + (WarningLine(events, anchor) ? " (a warning: the run went on after it, so not the cause of anything)"
                                                       : " (its process went on after it, so it is not what ended the run)");
    f.evidence = it->evidence;
    f.figures = it->figures;
    f.advice = it->explanation;
    a.findings.push_back(std::move(f));
    it = a.diagnoses.erase(it);
  }
}

void OrderCauseBeforeSurface(std::vector<Diagnosis>* diagnoses) {
  std::vector<Diagnosis>& ds = *diagnoses;
  // Cause before surface (rules/taxonomy.json `outranks`): of two adjacent
  // root causes read from one run, the cause leads (an illegal address before
  // the graph capture it broke, a platform without P2P before the custom
  // all-reduce that needed it). A surface read by the rule written
  // for its being the cause (taxonomy `unless_rule`) keeps its place.
  auto outranks = [](const Diagnosis& x, const Diagnosis& y) {
    const RootCause* rc = FindRootCause(x.id);
    return rc != nullptr && std::any_of(rc->outranks.begin(), rc->outranks.end(), [&](const Outranks& o) {
             return o.id == y.id && (o.unless_rule.empty() || o.unless_rule != y.rule);
           });
  };
  for (size_t i = 0; i < ds.size(); ++i) {
    for (size_t j = i + 1; j < ds.size(); ++j) {
      if (!outranks(ds[j], ds[i]) || outranks(ds[i], ds[j])) continue;
      Diagnosis moved = std::move(ds[j]);
      ds.erase(ds.begin() + j);
      ds.insert(ds.begin() + i, std::move(moved));
      j = i;  // look again from the new leader
    }
  }
}

void DropRefutedByPrimary(std::vector<Diagnosis>* diagnoses) {
  std::vector<Diagnosis>& ds = *diagnoses;
  // A cause the primary diagnosis rules out with its own figures is not shown
  // beside it (startup_free_memory_short: "not kv_pool_no_room, the pool fits").
  if (!ds.empty()) {
    std::set<std::string> refuted;
    for (const RuledOut& r : ds.front().ruled_out) refuted.insert(r.id);
    ds.erase(std::remove_if(ds.begin() + 1, ds.end(), [&](const Diagnosis& d) { return refuted.count(d.id) > 0; }),
             ds.end());
  }
}

void WriteVerdict(const RunIndex& run, const Terminals& term, Analysis* out) {
  Analysis& a = *out;
  const std::vector<Event>& events = run.events();
  // A failure seen, for "unknown" rather than healthy: an own failure that is
  // no request's error the server answered and went on after, no Ctrl-C, no
  // warning the run survived and no start-up error it went on to serve after;
  // else a line that says ERROR after which its producer made no progress;
  // else a launcher's consequence line.
  std::optional<size_t> first_failure;
  for (size_t i = 0; i < events.size(); ++i) {
    bool survived_exception = events[i].kind == "exception" && term.Survived(i);
    if (IsOwnFailure(events[i]) && !survived_exception && !IgnorableException(run, i) &&
        !(WarningLine(events, i) && term.Survived(i)) && !term.ServedAfterStartup(i)) {
      first_failure = i;
      break;
    }
  }
  // Lines that say "error" which no rule reads and after which their
  // producer made no progress: quoted when nothing else explains the run.
  std::vector<size_t> error_lines;
  for (size_t i = 0; i < events.size() && error_lines.size() < 8; ++i) {
    if (!SaysError(events, i) || term.Survived(i)) continue;
    if (!error_lines.empty() && events[error_lines.back()].source == events[i].source &&
        events[error_lines.back()].line == events[i].line)
      continue;  // one line, two patterns
    error_lines.push_back(i);
  }
  if (!first_failure && !error_lines.empty()) first_failure = error_lines.front();
  if (!first_failure) {
    for (size_t i = 0; i < events.size(); ++i)
      if (events[i].consequence) {
        first_failure = i;
        break;
      }
  }
  // No rule explains it: quote what ended the run (its first terminal failure
  // that names an error), never another line.
  if (auto primary = term.Primary(); primary && a.diagnoses.empty()) first_failure = primary;

  if (!a.diagnoses.empty()) {
    const Diagnosis& d = a.diagnoses.front();
    a.root_cause = d.id;
    std::string where;
    if (d.rank >= 0) {
      // Ranks only: the launcher's lines (rank -1) are not a rank.
      where = " (rank " + std::to_string(d.rank);
      size_t failed = 0, ranks = 0;
      for (const auto& rs : a.ranks) {
        if (rs.rank < 0) continue;
        ++ranks;
        if (!rs.first_error.empty()) ++failed;
      }
      size_t world = std::max(ranks, static_cast<size_t>(run.WorldSize()));
      if (failed > 1) where += ", " + std::to_string(failed) + " of " + std::to_string(world) + " ranks failed";
      where += ")";
    }
    a.verdict = d.id + where + ": " + d.explanation;
    // Below kSureEnough the reading is a possibility, and the next reading is named.
    if (d.confidence < kSureEnough) {
      a.verdict = "Possible: " + a.verdict;
      if (a.diagnoses.size() > 1) a.verdict += " (runner-up: " + a.diagnoses[1].id + ")";
    }
  } else if (first_failure) {
    const Event& e = events[*first_failure];
    a.root_cause = "unknown";
    a.verdict = "unknown: a failure was seen but no rule explains it: " + e.kind +
                (e.rank >= 0 ? " on rank " + std::to_string(e.rank) : std::string()) + " at " + e.file + ":" +
                std::to_string(e.line) + ": " + e.text.substr(0, 200);
    if (error_lines.size() > 1 && e.kind == "error_line")
      a.verdict += " (" + std::to_string(error_lines.size() - 1) + " more error line(s): ranks[].first_error_evidence)";
    // Each producer's first unexplained error line is its first error, quoted.
    for (size_t i : error_lines) {
      const Event& x = events[i];
      for (RankState& rs : a.ranks) {
        if (rs.rank != x.rank || !rs.first_error.empty()) continue;
        rs.first_error = x.kind;
        rs.first_error_evidence = ToEvidence(x);
        if (x.ts && !x.ts_is_time_of_day) rs.first_error_ts = *x.ts;
      }
    }
  } else if (!GotSomewhere(run)) {
    a.root_cause = "no_evidence";
    a.verdict = run.events().empty()
                    ? "no evidence: no line of the input was understood (0 events: no server, engine, NCCL or torch "
                      "line): was the right file given? Without evidence this is not called healthy."
                    : "no evidence: " + std::to_string(run.total_events()) +
                          " line(s) understood, but none shows a run that got somewhere (no startup phase, no NCCL "
                          "communicator, no server configuration): was the whole log given? Without evidence this "
                          "is not called healthy.";
  } else {
    a.root_cause = "none";
    a.verdict = "healthy: no failure seen in " + std::to_string(run.total_events()) + " events" +
                (run.rank_count() == 0 ? std::string() : " from " + std::to_string(run.rank_count()) + " ranks") +
                StoppedInOrder(run);
  }
}

}  // namespace tpt
