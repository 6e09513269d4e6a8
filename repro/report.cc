// report.cc: renderings of a ReproReport: a text report for a person (banner,
// per-step table with measured and logged figures side by side, verdict) and
// JSON (schema_version) for machines.
#include <cstdio>
#include <sstream>

#include "repro/runner.h"

namespace tpt::repro {
namespace {

std::string Fmt(const char* fmt, double a) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, a);
  return b;
}

std::string Signed(int64_t b) { return (b > 0 ? "+" : "") + FormatBytes(b); }

void RenderRun(const RunResult& run, bool show_ranks, const char* measured, std::ostringstream& o) {
  o << "\n== run: " << run.label << " ==\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-13s %-7s %-9s %12s %12s %12s %12s %8s\n", "step", "rank", "source", "free after",
                "delta", "logged", "diff", "time");
  o << line;
  for (const auto& s : run.steps) {
    const std::string when = Fmt("%.2f s", s.seconds);
    if (!show_ranks || s.ranks.empty()) {
      std::snprintf(line, sizeof line, "%-13s %-7s %-9s %12s %12s %12s %12s %8s\n", s.step.c_str(), "this",
                    measured, FormatBytes(s.free_bytes).c_str(), Signed(s.delta_bytes).c_str(), "-", "-", when.c_str());
      o << line;
    } else {
      // Group consecutive emulated ranks with equal figures into one row.
      size_t i = 0;
      bool first = true;
      while (i < s.ranks.size()) {
        size_t j = i + 1;
        const RankFigure& f = s.ranks[i];
        while (j < s.ranks.size() && !f.measured && !s.ranks[j].measured && s.ranks[j].free_bytes == f.free_bytes &&
               s.ranks[j].logged_free_bytes == f.logged_free_bytes) {
          ++j;
        }
        const std::string ranks = j - i == 1 ? std::to_string(f.rank)
                                             : std::to_string(f.rank) + "-" + std::to_string(s.ranks[j - 1].rank);
        const std::string logged = f.logged_free_bytes ? FormatBytes(*f.logged_free_bytes) : "-";
        const std::string diff =
            f.logged_free_bytes ? Fmt("%+.1f MiB", double(f.free_bytes - *f.logged_free_bytes) / kMiB) : "-";
        std::snprintf(line, sizeof line, "%-13s %-7s %-9s %12s %12s %12s %12s %8s\n", first ? s.step.c_str() : "",
                      ranks.c_str(), f.measured ? measured : "emul", FormatBytes(f.free_bytes).c_str(),
                      f.measured ? Signed(s.delta_bytes).c_str() : "", logged.c_str(), diff.c_str(),
                      first ? when.c_str() : "");
        o << line;
        first = false;
        i = j;
      }
    }
    if (!s.note.empty()) o << "              " << s.note << "\n";
    if (!s.ok) o << "              FAILED: " << s.error << "\n";
  }
  if (run.kv.computed) {
    o << "  formula: " << run.kv.formula << "\n";
    o << "    free_at_init " << FormatBytes(int64_t(run.kv.free_at_init_bytes)) << ", available after weights "
      << FormatBytes(int64_t(run.kv.available_bytes)) << ", reserved " << FormatBytes(int64_t(run.kv.reserved_bytes))
      << ", rest " << FormatBytes(int64_t(run.kv.rest_bytes)) << ", tokens " << run.kv.tokens
      << (run.kv.min_viable > 0 ? Fmt(", smallest passing value %.2f", run.kv.min_viable) : std::string()) << "\n";
  }
  o << "  result: "
    << (run.failed_step.empty() ? std::string("every step passed") : "stopped at " + run.failed_step + ": " + run.failure)
    << Fmt(" (%.2f s)", run.seconds) << "\n";
}

nlohmann::json RunJson(const RunResult& run) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : run.steps) {
    nlohmann::json ranks = nlohmann::json::array();
    for (const auto& f : s.ranks) {
      nlohmann::json r = {{"rank", f.rank}, {"source", f.measured ? "measured" : "emulated"}, {"free_bytes", f.free_bytes}};
      if (f.logged_free_bytes) r["logged_free_bytes"] = *f.logged_free_bytes;
      ranks.push_back(r);
    }
    steps.push_back({{"step", s.step},
                     {"ok", s.ok},
                     {"error", s.error},
                     {"start_s", s.start_s},
                     {"seconds", s.seconds},
                     {"free_bytes", s.free_bytes},
                     {"delta_bytes", s.delta_bytes},
                     {"ranks", ranks},
                     {"note", s.note}});
  }
  nlohmann::json j = {{"label", run.label},
                      {"plan", PlanToJson(run.plan)},
                      {"steps", steps},
                      {"failed_step", run.failed_step},
                      {"failure", run.failure},
                      {"tool_error", run.tool_error},
                      {"seconds", run.seconds}};
  if (run.kv.computed) {
    j["kv"] = {{"formula", run.kv.formula},         {"free_at_init_bytes", run.kv.free_at_init_bytes},
               {"available_bytes", run.kv.available_bytes}, {"reserved_bytes", run.kv.reserved_bytes},
               {"rest_bytes", run.kv.rest_bytes},   {"tokens", run.kv.tokens},
               {"pool_bytes", run.kv.pool_bytes},   {"min_viable", run.kv.min_viable},
               {"fails", run.kv.fails},             {"error", run.kv.error}};
  }
  if (run.graphs) {
    j["graphs"] = {{"graphs", run.graphs->graphs},
                   {"allreduces_per_step", run.graphs->allreduces_per_step},
                   {"custom_ar_calls", run.graphs->custom_ar_calls},
                   {"nccl_calls", run.graphs->nccl_calls},
                   {"capture_s", run.graphs->capture_s},
                   {"replay_us", run.graphs->replay_us},
                   {"note", run.graphs->note}};
  }
  return j;
}

}  // namespace

std::string RenderText(const ReproReport& r) {
  std::ostringstream o;
  o << "tptriage repro " << TPT_REPRO_VERSION << " (backend: " << r.backend << ", mode: "
    << (r.layout.colocated ? "co-located"
        : r.layout.shared_gpu ? "one process per rank, " + std::to_string(r.layout.world) + " ranks sharing GPUs"
                              : "one process per rank")
    << ", launcher: " << r.layout.launcher << ")\n";
  for (const auto& b : r.banner) o << "  " << b << "\n";
  o << "\n" << DescribePlan(r.original.plan);
  const char* measured = r.backend == "simulated" ? "sim" : "measured";
  RenderRun(r.original, true, measured, o);
  if (r.fix) RenderRun(*r.fix, true, measured, o);
  o << "\n";
  for (const auto& n : r.notes) o << "note: " << n << "\n";
  std::string outcome = r.verdict.outcome;
  for (char& c : outcome) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  o << "\nverdict: " << outcome << ": " << r.verdict.reason << "\n";
  o << "fix check: " << r.verdict.fix_outcome << ": " << r.verdict.fix_reason << "\n";
  o << Fmt("time to verdict: %.2f s", r.time_to_verdict_s) << "\n";
  return o.str();
}

nlohmann::json RenderJson(const ReproReport& r) {
  nlohmann::json j = {{"schema_version", kReproSchemaVersion},
                      {"tool_version", TPT_REPRO_VERSION},
                      {"backend", r.backend},
                      {"mode", r.layout.colocated ? "colocated" : r.layout.shared_gpu ? "per_process_shared_gpu" : "per_gpu"},
                      {"launcher", r.layout.launcher},
                      {"world", r.layout.world},
                      {"representative_rank", r.layout.rank},
                      {"banner", r.banner},
                      {"original", RunJson(r.original)},
                      {"verdict", {{"outcome", r.verdict.outcome}, {"reason", r.verdict.reason},
                                   {"fix_outcome", r.verdict.fix_outcome}, {"fix_reason", r.verdict.fix_reason}}},
                      {"time_to_verdict_s", r.time_to_verdict_s},
                      {"scale", r.scale},
                      {"notes", r.notes}};
  if (r.fix) j["fix"] = RunJson(*r.fix);
  return j;
}

}  // namespace tpt::repro
