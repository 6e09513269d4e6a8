// terminal.cc: what ended each process of a run (rules/terminal.h).
#include "rules/terminal.h"

#include <algorithm>

#include <re2/re2.h>

#include "rules/prose.h"
#include "rules/vocabulary.h"

namespace tpt {

namespace {

// The phase a progress line shows (parser/events.json `phase`), -1 for none.
int ProgressPhase(const Event& e) {
  const EventKind* k = FindEventKind(e.kind);
  if (k == nullptr || k->phase.empty()) return -1;
  // A server answering 5xx is failing to serve, not serving (an HTTP access
  // line after the engine died).
  if (FieldValue status = e.Get("status"); status.is_number() && status.number() >= 500) return -1;
  return PhaseIndex(k->phase);
}

// The phase a line belongs to by its kind (its phase, else the phase such an
// error is raised in), -1 when its kind says none.
int OwnPhase(const Event& e) {
  const EventKind* k = FindEventKind(e.kind);
  if (k == nullptr) return -1;
  if (!k->phase.empty()) return PhaseIndex(k->phase);
  return k->phase_intrinsic.empty() ? -1 : PhaseIndex(k->phase_intrinsic);
}

bool IsConsequence(const Event& e) {
  const EventKind* k = FindEventKind(e.kind);
  return k != nullptr && k->failure && (k->consequence || e.consequence);
}

bool IsGeneric(const Event& e) {
  const EventKind* k = FindEventKind(e.kind);
  return k != nullptr && k->generic;
}

bool LeadsTo(const Event& from, const Event& to) {
  const EventKind* k = FindEventKind(from.kind);
  return k != nullptr && std::find(k->leads_to.begin(), k->leads_to.end(), to.kind) != k->leads_to.end();
}

}  // namespace

bool IsOwnFailure(const Event& e) {
  const EventKind* k = FindEventKind(e.kind);
  return !e.consequence && k != nullptr && k->failure && !k->warning;
}

bool WarningLine(const std::vector<Event>& events, size_t i) {
  const Event& e = events[i];
  if (const EventKind* k = FindEventKind(e.kind); k != nullptr && k->warning) return true;  // parser/events.json
  static const re2::RE2 kWarnLevel("^(?:\\S+\\s+){0,3}?(?:\\[?(?:WARNING|WARN)\\b|\\[W\\d{4}\\s)");
  if (re2::RE2::PartialMatch(e.text, kWarnLevel)) return true;
  // A line the server itself reads as "going on without it": a component's
  // fallback, or a custom all-reduce that disabled itself (SGLang's 'Setup
  // Custom allreduce failed with <error>. To silence this warning', whose
  // error is caught in GroupCoordinator.__init__).
  auto goes_on = [](const Event& x) { return x.kind == "fallback" || x.kind == "custom_ar_disabled"; };
  for (size_t j = i; j < events.size() && events[j].source == e.source && events[j].line == e.line; ++j)
    if (goes_on(events[j])) return true;
  for (size_t j = i; j-- > 0 && events[j].source == e.source && events[j].line == e.line;)
    if (goes_on(events[j])) return true;
  // A watchdog's state dump whose own next watchdog line on that producer is a
  // soft one: SGLang's ProcessWatchdog prints 'Scheduler debug info:' and the
  // dump, then 'Scheduler watchdog timeout (..., soft=True)' and goes on (only
  // soft=False kills the server; python/sglang/srt/utils/watchdog.py
  // _watchdog_once): the dump is that warning's, not a timeout.
  if (e.Get("dump").boolean()) {
    for (size_t j = i + 1; j < events.size(); ++j) {
      const Event& x = events[j];
      if (x.source != e.source || x.rank != e.rank) continue;
      if (x.kind == "hang_warning" && x.Get("soft").boolean()) return true;
      if (x.kind == e.kind || x.kind == "hang_warning") break;  // the next watchdog line is not a soft one
    }
  }
  return false;
}

bool SaysError(const std::vector<Event>& events, size_t i) {
  const Event& e = events[i];
  if (e.kind != "error_line") return false;
  if (WarningLine(events, i)) return false;  // 'WARNING ... ValueError: ...': a warning that names an error
  for (size_t j = i; j < events.size() && events[j].source == e.source && events[j].line == e.line; ++j)
    if (events[j].kind == "exception") return false;
  for (size_t j = i; j-- > 0 && events[j].source == e.source && events[j].line == e.line;)
    if (events[j].kind == "exception") return false;
  if (e.pattern_id != "error_level") return true;
  // error_level matched any line holding the word: the text before the
  // message (the stripped prefix) must hold it as the level.
  FieldValue message = e.Get("message");
  if (!message.is_string() || message.json().get_ref<const std::string&>().empty()) return false;
  size_t pos = e.text.find(message.json().get_ref<const std::string&>());
  if (pos == std::string::npos || pos == 0) return false;
  static const re2::RE2 kLevel("(?:^|\\W)(?:ERROR|CRITICAL|FATAL)(?:\\W|$)");
  return re2::RE2::PartialMatch(re2::StringPiece(e.text.data(), pos), kLevel);
}

bool IgnorableException(const RunIndex& run, size_t i) {
  const Event& e = run.events()[i];
  if (e.kind != "exception") return false;
  if (e.Get("type").string() == "KeyboardInterrupt") return true;
  Value frames = RunScope(run, i).Call("frames", {});
  return frames.is_string() && (frames.str() == "__del__" || frames.str().rfind("__del__ > ", 0) == 0);
}

void Terminals::Track::Add(size_t i, int ph) {
  at.push_back(i);
  phase.push_back(ph);
}

void Terminals::Track::Finish() {
  max_before.resize(phase.size());
  max_after.resize(phase.size());
  for (size_t k = 0; k < phase.size(); ++k) max_before[k] = std::max(phase[k], k ? max_before[k - 1] : -1);
  for (size_t k = phase.size(); k-- > 0;) max_after[k] = std::max(phase[k], k + 1 < phase.size() ? max_after[k + 1] : -1);
}

int Terminals::Track::ReachedBefore(size_t i) const {
  size_t k = std::lower_bound(at.begin(), at.end(), i) - at.begin();
  return k == 0 ? -1 : max_before[k - 1];
}

int Terminals::Track::ReachedAfter(size_t i) const {
  size_t k = std::upper_bound(at.begin(), at.end(), i) - at.begin();
  return k == at.size() ? -1 : max_after[k];
}

Terminals::Terminals(const RunIndex& run) : run_(run) {
  const std::vector<Event>& evs = run.events();
  // Progress of a rank counts after a line only where the two are ordered:
  // the same input stream, or both timed (stdout and stderr of one run
  // without timestamps have no order between them).
  for (size_t i = 0; i < evs.size(); ++i) {
    int ph = ProgressPhase(evs[i]);
    if (ph < 0) continue;
    const Event& e = evs[i];
    by_file_[e.file].Add(i, ph);
    if (e.pid >= 0) by_file_pid_[{e.file, e.pid}].Add(i, ph);
    else by_file_no_pid_[e.file].Add(i, ph);
    if (e.rank >= 0) {
      by_rank_source_[{e.rank, e.source}].Add(i, ph);
      if (e.ts) by_rank_timed_[e.rank].Add(i, ph);
    }
  }
  for (auto* tracks : {&by_file_, &by_file_no_pid_}) for (auto& [k, t] : *tracks) t.Finish();
  for (auto& [k, t] : by_file_pid_) t.Finish();
  for (auto& [k, t] : by_rank_source_) t.Finish();
  for (auto& [k, t] : by_rank_timed_) t.Finish();
  is_end_.assign(evs.size(), 0);
  for (size_t i = 0; i < evs.size(); ++i) {
    const Event& e = evs[i];
    bool failure = IsOwnFailure(e) || IsConsequence(e) || SaysError(evs, i);
    if (!failure || Survived(i) || IgnorableException(run, i)) continue;
    is_end_[i] = 1;
    ends_.push_back(i);
  }
}

bool Terminals::IsEnd(size_t i) const { return i < is_end_.size() && is_end_[i]; }

// Health after a line: its producer reached a later phase than the one the
// line belongs to (its kind's, else the one reached before it), or served
// (requests and statistics after a request's error are health too).
std::pair<int, int> Terminals::PhasesAround(size_t i) const {
  const Event& e = run_.events()[i];
  // A message a person wrote inside a sentence (rules/prose.h) was not printed
  // at a point of the run: nothing is before or after it.
  if (e.Get(kProseMention).boolean()) return {-1, -1};
  std::vector<const Track*> tracks;
  auto add = [&](const auto& map, const auto& key) {
    auto it = map.find(key);
    if (it != map.end()) tracks.push_back(&it->second);
  };
  if (e.rank < 0 && e.pid >= 0) {
    // vLLM V1's API server answering /metrics after its EngineCore died is
    // no progress of the engine core.
    add(by_file_pid_, std::make_pair(e.file, e.pid));
    add(by_file_no_pid_, e.file);
  } else if (e.rank < 0) {
    add(by_file_, e.file);
  } else {
    add(by_rank_source_, std::make_pair(e.rank, e.source));
    if (e.ts) add(by_rank_timed_, e.rank);
  }
  int now = OwnPhase(e), later = -1;
  for (const Track* t : tracks) {
    if (OwnPhase(e) < 0) now = std::max(now, t->ReachedBefore(i));
    later = std::max(later, t->ReachedAfter(i));
  }
  return {now, later};
}

bool Terminals::Survived(size_t i) const {
  auto [now, later] = PhasesAround(i);
  static const int kServing = PhaseIndex("serving");
  return later >= 0 && (later > now || later == kServing);
}

bool Terminals::ServedAfterStartup(size_t i) const {
  static const int kServing = PhaseIndex("serving");
  auto [now, later] = PhasesAround(i);
  return now < kServing && later == kServing;
}

bool Terminals::Linked(size_t i) const {
  if (!Survived(i)) return true;
  const std::vector<Event>& evs = run_.events();
  for (size_t j : ends_)
    if (j > i && LeadsTo(evs[i], evs[j])) return true;
  for (size_t j : ends_) {
    if (j <= i) continue;
    // A consequence (a worker that died, the engine dead, the launcher's
    // signal, a peer's broken pipe) is what another process printed when
    // this error took its process down: linked when it is the next end, no
    // other process's own failure ending the run between them. A warning
    // leads to no consequence.
    if (IsConsequence(evs[j]) && IsOwnFailure(evs[i]) && !WarningLine(evs, i)) return true;
    if (IsOwnFailure(evs[j])) return false;
  }
  return false;
}

std::optional<size_t> Terminals::EndOf(size_t i) const {
  const std::vector<Event>& evs = run_.events();
  const Event& e = evs[i];
  auto later = std::lower_bound(ends_.begin(), ends_.end(), i);
  for (auto it = later; it != ends_.end(); ++it) {
    const Event& n = evs[*it];
    if (e.rank >= 0 ? n.rank == e.rank : n.file == e.file) return *it;
  }
  for (auto it = later; it != ends_.end(); ++it)
    if (LeadsTo(e, evs[*it])) return *it;
  if (later != ends_.end()) return *later;
  return std::nullopt;
}

std::optional<size_t> Terminals::Primary() const {
  const std::vector<Event>& evs = run_.events();
  // An exception that names its type and message says what failed; a cut
  // traceback, a process header or a signal only that something did.
  auto names_error = [&](size_t i) {
    const Event& e = evs[i];
    if (IsConsequence(e)) return false;
    if (e.kind == "exception") return !e.Get("type").string().empty();
    return !IsGeneric(e) && e.kind != "error_line";
  };
  for (int pass = 0; pass < 3; ++pass) {
    for (size_t i : ends_) {
      const Event& e = evs[i];
      if (pass == 0 && names_error(i)) return i;
      if (pass == 1 && !IsConsequence(e)) return i;
      if (pass == 2) return i;
    }
  }
  return std::nullopt;
}

}  // namespace tpt
