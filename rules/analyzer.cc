// analyzer.cc: parse + rules for one run.
#include "rules/analyzer.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "memory/server_flags.h"
#include "parser/format_set.h"
#include "rules/engine.h"
#include "rules/environment.h"
#include "rules/hang_wavefront.h"
#include "rules/findings.h"
#include "rules/rule_file.h"
#include "rules/run_index.h"
#include "rules/vocabulary.h"
#include "rules/generated_defs.h"
#include "rules/launches.h"
#include "rules/prose.h"

namespace tpt {

namespace {
std::string BaseName(const std::string& path) { return std::filesystem::path(path).filename().string(); }
}  // namespace

StatusOr<FormatSet> LoadFormats(const std::string& dir, bool builtin, bool skip_bad) {
  if (dir.empty()) return FormatSet::LoadBuiltin();
  auto set = FormatSet::LoadDir(dir, /*strict=*/false, /*with_builtin=*/builtin);
  if (set.ok() && !skip_bad && !set->problems().empty()) {
    return InvalidArgumentError("--formats " + dir + ": " + set->problems().front() +
                                "; fix the file, or pass --skip-bad-formats to read the logs without it");
  }
  return set;
}

StatusOr<RuleSet> LoadRules(const std::string& dir, bool builtin) {
  if (dir.empty()) return RuleSet::LoadBuiltin();
  if (!builtin) return RuleSet::LoadDir(dir);
  auto extra = ReadJsonDir(dir, "--rules " + dir, "rule");
  if (!extra.ok()) return extra.status();
  return RuleSet::LoadTexts(Overlay(EmbeddedFiles(generated::kRuleDefs, generated::kRuleDefsCount), *extra));
}

StatusOr<FindingSet> LoadFindings(const std::string& dir, bool builtin) {
  if (dir.empty()) return FindingSet::LoadBuiltin();
  if (!builtin) return FindingSet::LoadDir(dir);
  auto extra = ReadJsonDir(dir, "--findings " + dir, "finding");
  if (!extra.ok()) return extra.status();
  return FindingSet::LoadTexts(Overlay(EmbeddedFiles(generated::kFindingDefs, generated::kFindingDefsCount), *extra));
}

StatusOr<Analyzer> Analyzer::Create(const AnalyzerOptions& options) {
  Analyzer an;
  an.parse_ = options.parse;
  auto formats = LoadFormats(options.formats_dir, options.builtin_formats, options.skip_bad_formats);
  if (!formats.ok()) return formats.status();
  for (const auto& p : formats->problems()) an.load_warnings_.push_back("format file skipped: " + p);
  an.formats_ = std::make_shared<const FormatSet>(std::move(*formats));
  auto rules = LoadRules(options.rules_dir, options.builtin_rules);
  if (!rules.ok()) return rules.status();
  an.rules_ = std::make_shared<const RuleSet>(std::move(*rules));
  auto findings = LoadFindings(options.findings_dir, options.builtin_findings);
  if (!findings.ok()) return findings.status();
  an.findings_ = std::make_shared<const FindingSet>(std::move(*findings));
  return an;
}

namespace {

// The same file or stdin named twice is read once ("- -" would split one
// stream between two inputs); an error for stdin, a warning for a file.
StatusOr<std::vector<std::string>> DistinctInputs(const std::vector<std::string>& inputs,
                                                  std::vector<std::string>* warnings) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::set<std::string> seen;
  bool stdin_seen = false;
  for (const std::string& in : inputs) {
    if (in == "-") {
      if (stdin_seen)
        return InvalidArgumentError("'-' (stdin) is given twice: stdin is one stream; give it once");
      stdin_seen = true;
      out.push_back(in);
      continue;
    }
    std::error_code ec;
    fs::path canon = fs::weakly_canonical(fs::path(in), ec);
    std::string key = ec ? in : canon.string();
    if (!seen.insert(key).second) {
      warnings->push_back(in + " is given more than once: read once");
      continue;
    }
    out.push_back(in);
  }
  return out;
}

std::string Shorten(const std::string& s, size_t n) { return s.size() > n ? s.substr(0, n) + "..." : s; }

// A healthy verdict needs the whole run: an input that stopped part way (a
// truncated or corrupt .gz, a read error after some lines), or one that gave
// nothing at all beside readable ones (missing, cut before its first block,
// a corrupt member, an archive not read) may have lost the failure. `none`
// becomes `unknown`, naming the input; a diagnosis stands. An input that is
// empty (zero bytes) is warned of but was read whole.
void NotHealthyWhenPartlyRead(const std::vector<InputReport>& inputs, Analysis* a) {
  if (a->root_cause != "none") return;
  for (const InputReport& in : inputs) {
    if (in.error.empty() || in.empty) continue;
    a->root_cause = "unknown";
    const std::string name = in.path == "-" ? std::string("stdin") : in.path;
    a->verdict = "unknown: no failure seen in what was read, but " + name +
                 (in.bytes == 0 ? " could not be read (" : " was read only in part (") + Shorten(in.error, 160) +
                 "): the rest of the run may hold the failure; get the whole log";
    return;
  }
}

// The furthest startup phase any rank reached (init < dist_init < weights <
// kv_pool < graphs < ready < serving): where the run as a whole stops. Not the
// last rank's: ranks that printed only a line or two (SGLang's 'Registering 0
// cuda graph addresses' from every TP rank, the capture lines rank 0's alone)
// are at "init", and reading theirs called a log cut in capture plainly healthy.
std::string FurthestPhase(const std::vector<RankState>& ranks) {
  static const char* kOrder[] = {"init", "dist_init", "weights", "kv_pool", "graphs", "ready", "serving"};
  auto at = [](const std::string& p) {
    for (size_t i = 0; i < std::size(kOrder); ++i)
      if (p == kOrder[i]) return static_cast<int>(i);
    return -1;
  };
  std::string furthest;
  for (const RankState& r : ranks)
    if (!r.last_phase.empty() && (furthest.empty() || at(r.last_phase) > at(furthest))) furthest = r.last_phase;
  return furthest;
}

// Any line of a ready or serving phase, ranked or not (SGLang's rank-less
// "The server is fired up and ready to roll!"), is a server that got there;
// so is a benchmark client's report of requests served (parser/events.json
// bench_result: no phase of its own, the client being another process, and a
// server that failed before it printed is no survivor of that failure).
bool ReachedReadyOrServing(const std::vector<Event>& events) {
  return std::any_of(events.begin(), events.end(), [](const Event& e) {
    const EventKind* k = FindEventKind(e.kind);
    return (k != nullptr && (k->phase == "ready" || k->phase == "serving")) || e.kind == "bench_result";
  });
}

// A log that stops before the server was ready while its own memory ledger
// is SHORT has not shown a healthy run: the failure the ledger predicts is
// likely in the part not captured. `none` becomes `unknown`, naming both.
void NotHealthyWhenShortBeforeServing(const std::vector<Event>& events, Analysis* a) {
  if (a->root_cause != "none") return;
  if (ReachedReadyOrServing(events)) return;
  const LedgerRow* shortest = nullptr;
  for (const LedgerRow& r : a->ledger) {
    if (IsShort(r) && (shortest == nullptr || r.left_bytes < shortest->left_bytes)) shortest = &r;
  }
  if (shortest == nullptr) return;
  for (const RankState& r : a->ranks) {
    for (const std::string& p : r.phases) {
      if (p == "ready" || p == "serving") return;
    }
  }
  const std::string last = FurthestPhase(a->ranks);
  char left[32];
  std::snprintf(left, sizeof left, "%.2f", shortest->left_bytes / double(1u << 30));
  a->root_cause = "unknown";
  a->verdict = "unknown: no failure line was read, but the log stops before the server was ready" +
               (last.empty() ? std::string() : " (last phase: " + last + ")") +
               " and its own memory ledger is SHORT (rank " + std::to_string(shortest->rank) + " left " + left +
               " GiB): the failure is likely in the part not captured; get the whole log";
}

// Whether every producer that entered `phase` printed, after its last line of
// that phase, a line that shows the phase done (parser/events.json
// `phase_completed`: vLLM's "Graph capturing finished", SGLang's "Capture cuda
// graph end", "Load weight end"): a log cut after the capture finished has not
// stopped while capturing.
bool PhaseFinished(const std::vector<Event>& events, const std::string& phase) {
  std::map<int, std::pair<size_t, size_t>> at;  // rank -> (last line in the phase + 1, last completing line + 1)
  for (size_t i = 0; i < events.size(); ++i) {
    const EventKind* k = FindEventKind(events[i].kind);
    if (k == nullptr) continue;
    auto& [in, done] = at[events[i].rank];
    if (k->phase_completed == phase) done = i + 1;
    else if (k->phase == phase) in = i + 1;
  }
  bool any = false;
  for (const auto& [rank, p] : at) {
    if (p.first > p.second) return false;
    any = any || p.second > 0;
  }
  return any;
}

// A capture that closed with nothing captured is a failure the log does not
// show, never health. SGLang's custom all-reduce (and vLLM's) registers the
// graphs' buffer addresses as its capture context exits, in a `finally`, so on
// an error too (sglang srt/distributed/device_communicators/custom_all_reduce.py
// CustomAllreduce.capture -> register_graph_buffers: "Registering %d cuda graph
// addresses"). Registering 0 while the capture bar is still at its first batch
// size, and no "Capture cuda graph end", means the capture body raised before
// its first graph; the error prints after the registration's broadcast, which
// hangs when the ranks are out of step (sglang PR 11275). `none` becomes
// `unknown`, saying so.
void NotHealthyWhenCaptureClosedEmpty(const std::vector<Event>& events, Analysis* a) {
  if (a->root_cause != "none") return;
  bool begun = false;
  double first_bs = -1, at_bs = -1;
  int batches = 0;
  std::vector<int> empty_ranks;
  bool empty_registration = false;
  for (const Event& e : events) {
    if (e.kind == "graph_capture_end") return;  // it finished
    if (e.kind == "graph_capture_begin") begun = true;
    if (e.kind == "graph_capture_sizes") {
      const nlohmann::json& bs = e.Get("bs").json();
      if (bs.is_array() && !bs.empty()) {
        batches = static_cast<int>(bs.size());
        first_bs = 0;
        for (const auto& b : bs)
          if (b.is_number()) first_bs = std::max(first_bs, b.get<double>());
      }
    }
    if (e.kind == "graph_capture_progress" && e.Get("bs").is_number()) at_bs = e.Get("bs").number();
    if (begun && e.kind == "custom_ar_enabled" && e.Get("graph_addresses").is_number() && e.Get("graph_addresses").number() == 0) {
      empty_registration = true;
      if (e.rank >= 0 && std::find(empty_ranks.begin(), empty_ranks.end(), e.rank) == empty_ranks.end()) empty_ranks.push_back(e.rank);
    }
  }
  // Still at the first (largest: SGLang captures in descending order) size.
  if (!empty_registration || at_bs < 0 || (first_bs >= 0 && at_bs != first_bs)) return;
  std::sort(empty_ranks.begin(), empty_ranks.end());
  std::string ranks;
  for (int r : empty_ranks) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  char at[96];
  std::snprintf(at, sizeof at, "bs=%.0f%s", at_bs, batches > 0 ? (", the first of " + std::to_string(batches)).c_str() : "");
  a->root_cause = "unknown";
  a->verdict = "unknown: no error line was read, but CUDA graph capture closed with nothing captured: " +
               (ranks.empty() ? std::string("a rank") : "rank(s) " + ranks) +
               " registered 0 graph addresses with the custom all-reduce (which its capture context does as it exits, on "
               "an error too) while capture was still at its first batch size (" + at +
               ") and no capture end followed: capture failed with an error these lines do not show (with custom "
               "all-reduce on, ranks out of step hang in that registration before printing it); get the rest of the "
               "log, or rerun with --disable-custom-all-reduce to see the error";
}

// An NCCL job's log (no server: torchrun, mpirun, nccl-tests) whose last NCCL
// line is its communicator's set-up (bootstrap, network selection, version,
// 'Init START') and in which no rank printed 'Init COMPLETE'
// (init.cc ncclCommInitRankFunc) nor a result (nccl-tests' closing line or a
// result row: a collective that ran): whether the ranks connected is not in
// the lines (a paste cut before the WARN that followed).
bool NcclSetupUnfinished(const std::vector<Event>& events) {
  const Event* last = nullptr;
  for (const Event& e : events) {
    if (e.kind == "nccl_tests_result" || e.kind == "nccl_tests_row") return false;
    if (e.kind == "nccl_comm_init" && e.Get("state").string() == "COMPLETE") return false;
    if (e.kind != "env_var" && e.kind != "gpu_info") last = &e;
  }
  return last != nullptr && (last->kind == "nccl_net" || last->kind == "nccl_version" || last->kind == "nccl_comm_init" ||
                             last->kind == "nccl_transport");
}

// An NCCL job's log (no server) that ends in its communicator's set-up
// (NcclSetupUnfinished) with nothing after its last such line but, at most,
// one line the parser did not read (the paste cut mid-line): not the job's own
// output, nor an exit. NCCL prints the failures of set-up after these lines
// (a WARN, then the error the caller raises: init.cc ncclCommInitRankFunc;
// v2.25.1's kernel launch failure after its 'ncclMaxSharedMem ... exceeds'
// INFO), so a run cut here has shown neither health nor failure (holdout62
// h62-07: two GPUs cut in ncclCommInitRank read healthy). `none` becomes
// `unknown`, quoting the line it ends on. A job that printed its own lines
// after set-up (a training loop, a smoke test's result) keeps `none` and the
// caveat of SayWhereAHealthyStartupStops.
void NotHealthyWhenCutInNcclSetup(const std::vector<InputReport>& inputs, const std::vector<Event>& events, Analysis* a) {
  if (a->root_cause != "none" || memory::IsKnownServer(a->run.framework) || ReachedReadyOrServing(events)) return;
  if (!NcclSetupUnfinished(events)) return;
  std::map<int, const Event*> last;  // input -> its last event
  for (const Event& e : events)
    if (e.kind != "env_var" && e.kind != "gpu_info") last[e.source] = &e;
  const Event* end = nullptr;
  for (const auto& [source, e] : last) {
    if (source < 0 || static_cast<size_t>(source) >= inputs.size() || inputs[source].path != e->file) return;
    if (e->line + 1 < inputs[source].lines) return;  // lines after it: the job went on
    if (e->family != "nccl") return;  // NCCL's own line, not torch's store (TCPStore's broken pipe at exit)
    if (end == nullptr || e->line > end->line) end = e;
  }
  if (end == nullptr) return;
  a->root_cause = "unknown";
  a->verdict = "unknown: no failure line was read, but the log ends while NCCL was setting up its communicator "
               "(bootstrap, network and transport selection; no rank printed 'Init COMPLETE' nor anything after), on " +
               BaseName(end->file) + ":" + std::to_string(end->line) + ": " + Shorten(end->text, 160) +
               ": NCCL reports a failed set-up after such lines (a WARN, then the caller's error), so whether the "
               "ranks connected is not in this log; get the whole log (NCCL_DEBUG=INFO, to the job's end)";
}

// A healthy verdict on a log that stops while the server was still starting
// (its last phase weights, KV pool or graphs; no ready or serving line): no
// failure was read, but neither was a start. The verdict says where the log
// stops, so "healthy" is never read as "it started" (a paste cut during the
// load, a server killed from outside before it was ready); "after" when the
// phase's end line came (PhaseFinished), "while" otherwise.
void SayWhereAHealthyStartupStops(const std::vector<Event>& events, Analysis* a) {
  if (a->root_cause != "none") return;
  if (ReachedReadyOrServing(events)) return;
  for (const RankState& r : a->ranks) {
    for (const std::string& p : r.phases)
      if (p == "ready" || p == "serving") return;
  }
  if (!memory::IsKnownServer(a->run.framework) && NcclSetupUnfinished(events)) {
    a->verdict += "; but the log stops while NCCL was setting up its communicator (bootstrap and network "
                  "selection; no rank printed 'Init COMPLETE'): whether the ranks connected is not in these lines";
    return;
  }
  const std::string last = FurthestPhase(a->ranks);
  // A server's log that stops before any rank loaded weights (its last lines
  // the ranks' set-up: TensorRT-LLM's 'MPI size: N ... rank: R', 'Rank R is
  // using GPU G', distributed init) never finished its first phase either
  // (fresh set 7, trtllm-9680: a TP 4 start that hung after these lines).
  // Only when no line of the run, ranked or not, is of a later phase or says
  // the engine was up (an offline run's rank-less progress and shutdown).
  const bool setting_up =
      (last.empty() || last == "init" || last == "dist_init") && memory::IsKnownServer(a->run.framework) &&
      std::none_of(events.begin(), events.end(), [](const Event& e) {
        const EventKind* k = FindEventKind(e.kind);
        return e.kind == "engine_ready" ||
               (k != nullptr && !k->phase.empty() && k->phase != "init" && k->phase != "dist_init");
      });
  if (last != "weights" && last != "kv_pool" && last != "graphs" && !setting_up) return;
  // The engine said it was up (vLLM's "init engine ... took", Triton's
  // "successfully loaded '<model>'"): only the server's own ready line is missing.
  if (std::any_of(events.begin(), events.end(), [](const Event& e) { return e.kind == "engine_ready"; })) {
    a->verdict += "; but the log stops after the engine reported ready, before the server said it was serving: "
                  "whether it started is not in these lines";
    return;
  }
  if (setting_up) {
    a->verdict += std::string("; but the log stops ") +
                  (last == "dist_init" && PhaseFinished(events, last) ? "after" : "while") +
                  " setting up its ranks (GPUs, distributed init), before any weights loaded or the server said "
                  "it was ready: whether it started is not in these lines";
    return;
  }
  const std::string what = last == "weights" ? "loading the weights" : last == "kv_pool" ? "sizing the KV pool" : "capturing CUDA graphs";
  a->verdict += std::string("; but the log stops ") + (PhaseFinished(events, last) ? "after " : "while ") + what +
                ", before the server said it was ready: whether it started is not in these lines";
}

}  // namespace

StatusOr<Analysis> Analyzer::Run(const std::vector<std::string>& inputs_in) const {
  std::vector<std::string> dup_warnings;
  auto distinct = DistinctInputs(inputs_in, &dup_warnings);
  if (!distinct.ok()) return distinct.status();
  const std::vector<std::string>& inputs = *distinct;
  auto run = ParseRunToMemory(inputs, *formats_, parse_);
  if (!run.ok()) return run.status();
  // Environment dumps beside the log are facts about the machine, never evidence.
  HostFacts host = TakeEnvironment(&run->events, &run->totals);
  // Flight-recorder dumps beside the logs: where each rank stood (rules/hang_wavefront.h).
  std::vector<CollectiveLanes> lanes;  // the report's lane per rank of a hung group
  AddCollectiveWavefront(&run->events, &run->totals, &lanes);
  auto finish = [&](Analysis a) {
    a.process_ranks = run->process_ranks;
    a.collective_lanes = std::move(lanes);
    for (const std::string& c : host.conflicts) a.warnings.push_back(c);
    if (std::string w = GpuDisagreement(host, a.run.gpu); !w.empty()) {
      a.warnings.push_back(w);
      host.gpu_memory_bytes = 0;  // the other card's
    }
    ApplyHostFacts(host, &a.run);
    if (a.root_cause == "no_evidence" && !host.inputs.empty()) {
      std::string names;
      for (const auto& f : host.inputs) names += (names.empty() ? "" : ", ") + BaseName(f);
      a.verdict = "no evidence: " + names + (host.inputs.size() > 1 ? " are environment dumps" : " is an environment dump") +
                  " (machine facts: versions, GPUs, driver, topology), not a server log, and no log line was understood: "
                  "pass the server's log with it. Without evidence this is not called healthy.";
    }
    return a;
  };
  // A document quoting log lines (a README, a design note) is not a log.
  size_t prose = 0;
  std::vector<std::string> documents = DropProse(*formats_, &run->events, &run->totals, &prose);
  // A message inside a sentence of a log has no place in its time.
  MarkSentenceMentions(*formats_, &run->events);
  // Two runs are never merged into one verdict.
  if (std::string why = DifferentRuns(run->events); !why.empty()) {
    return InvalidArgumentError("these inputs are not one run (" + why +
                                "): analyse each run on its own, or put each run in its own folder and use --runs DIR");
  }
  AnalyzeOptions opts;
  opts.inputs = inputs_in;
  opts.warnings = load_warnings_;
  opts.totals = &run->totals;
  opts.warnings.insert(opts.warnings.end(), dup_warnings.begin(), dup_warnings.end());
  // A folder given as one run whose subfolders each started the server: say
  // so (a CI artifacts tree wants --runs); a run split by node looks alike.
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (in == "-" || !std::filesystem::is_directory(in, ec)) continue;
    std::vector<std::string> folders = FoldersWithOwnStarts(in, run->events);
    if (folders.size() < 2) continue;
    std::string list;
    for (size_t i = 0; i < folders.size() && i < 4; ++i) list += (i ? ", " : "") + folders[i];
    if (folders.size() > 4) list += ", ...";
    opts.warnings.push_back(in + " holds " + std::to_string(folders.size()) + " folders that each started the server (" +
                            list + "): analysed as ONE run; if each folder is a run, use --runs " + in);
  }
  for (const std::string& doc : documents)
    opts.warnings.push_back(doc + " reads as a document, not a log: it quotes log messages in prose; " +
                            std::to_string(prose) + " such line(s) were not taken as evidence");
  for (const auto& in : run->inputs) {
    for (auto& w : InputWarnings(in, parse_)) opts.warnings.push_back(std::move(w));
  }
  std::vector<size_t> starts = SplitLaunches(run->events);
  if (starts.size() <= 1) {
    RunIndex index(run->events, opts.totals);
    index.set_host_gpu(host.gpu);
    Analysis a = Analyze(index, *rules_, opts);
    // Findings beyond the crash (rules/findings.h): never change root_cause.
    AddFindings(index, *findings_, &a);
    NotHealthyWhenPartlyRead(run->inputs, &a);
    NotHealthyWhenShortBeforeServing(run->events, &a);
    NotHealthyWhenCaptureClosedEmpty(run->events, &a);
    NotHealthyWhenCutInNcclSetup(run->inputs, run->events, &a);
    SayWhereAHealthyStartupStops(run->events, &a);
    return finish(std::move(a));
  }
  // The server started several times in this log: each launch on its own,
  // the last one is the answer.
  std::vector<Launch> launches;
  Analysis last;
  // The whole file's totals (counts, events not kept) are not a launch's.
  AnalyzeOptions part_opts = opts;
  part_opts.totals = nullptr;
  std::vector<Event> part;
  for (size_t k = 0; k < starts.size(); ++k) {
    size_t begin = starts[k], end = k + 1 < starts.size() ? starts[k + 1] : run->events.size();
    part.assign(run->events.begin() + begin, run->events.begin() + end);
    RunIndex index(part, part_opts.totals);
    index.set_host_gpu(host.gpu);
    Analysis a = Analyze(index, *rules_, part_opts);
    if (k + 1 == starts.size()) {  // the cut is in the last
      NotHealthyWhenPartlyRead(run->inputs, &a);
      NotHealthyWhenShortBeforeServing(part, &a);
      NotHealthyWhenCaptureClosedEmpty(part, &a);
      NotHealthyWhenCutInNcclSetup(run->inputs, part, &a);
      SayWhereAHealthyStartupStops(part, &a);
    }
    launches.push_back({static_cast<int>(k + 1), part.front().file, part.front().line, a.root_cause, a.verdict});
    if (k + 1 == starts.size()) {
      AddFindings(index, *findings_, &a);
      last = std::move(a);
    }
  }
  size_t same = 0;
  for (auto it = launches.rbegin(); it != launches.rend() && it->root_cause == last.root_cause; ++it) ++same;
  std::string head = "started " + std::to_string(launches.size()) + " times (from line " +
                     std::to_string(launches.front().first_line) + ", " + std::to_string(launches.back().first_line) +
                     " last); ";
  if (same == launches.size())
    head += "every launch ended the same way; the last: ";
  else if (same > 1)
    head += "the last " + std::to_string(same) + " ended the same way (launch " +
            std::to_string(launches.size() - same) + ": " + launches[launches.size() - same - 1].root_cause +
            "); the last: ";
  else
    head += "the launch before ended as " + launches[launches.size() - 2].root_cause + ", the last: ";
  last.verdict = head + Shorten(last.verdict, 400);
  last.launches = std::move(launches);
  return finish(std::move(last));
}

}  // namespace tpt
