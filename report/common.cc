// common.cc: escaping, units and selection helpers shared by the renderers.
#include "report/common.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <optional>
#include <regex>
#include <set>

#include "repro/repro_plan.h"

#include "base/strings.h"
#include "report/exit_codes.h"
#include "report/report.h"

namespace tpt::report {


// The exit code of many runs: the most severe one (report.h).
int WorstExitCode(const std::vector<RunResult>& runs) {
  int worst = kExitHealthy;
  for (const RunResult& r : runs) {
    if (ExitSeverity(r.exit_code) > ExitSeverity(worst)) worst = r.exit_code;
  }
  return worst;
}


namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD


}  // namespace

std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string XmlEscape(std::string_view s) {
  std::string valid = ValidUtf8(s);
  std::string out;
  out.reserve(valid.size() + 16);
  for (size_t i = 0; i < valid.size(); ++i) {
    const char ch = valid[i];
    unsigned char c = static_cast<unsigned char>(ch);
    // U+FFFE and U+FFFF (EF BF BE/BF): valid UTF-8, not XML 1.0 characters.
    if (c == 0xEF && i + 2 < valid.size() && static_cast<unsigned char>(valid[i + 1]) == 0xBF &&
        (static_cast<unsigned char>(valid[i + 2]) & 0xFE) == 0xBE) {
      out += kReplacement;
      i += 2;
      continue;
    }
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (c < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') {
          out += kReplacement;
        } else if (c == 0x7F) {
          out += kReplacement;
        } else {
          out += ch;
        }
    }
  }
  return out;
}

// XmlEscape, with every command-line flag ("--mem-fraction-static", "--tp=8") kept on
// one line: a browser may break a line after any hyphen, which splits a flag
// one copies. The text copied stays the same characters.
std::string XmlEscapeKeepFlags(std::string_view s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const bool starts = s.compare(i, 2, "--") == 0 && i + 2 < s.size() &&
                        std::isalnum(static_cast<unsigned char>(s[i + 2])) &&
                        (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\n' || s[i - 1] == '(' || s[i - 1] == '`');
    if (!starts) {
      size_t j = s.find("--", i + 1);
      if (j == std::string_view::npos) j = s.size();
      out += XmlEscape(s.substr(i, j - i));
      i = j;
      continue;
    }
    size_t j = i + 2;
    while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '-' || s[j] == '_' ||
                            s[j] == '=' || s[j] == '.'))
      ++j;
    out += "<span class=\"nw\">" + XmlEscape(s.substr(i, j - i)) + "</span>";
    i = j;
  }
  return out;
}

std::string StripControls(std::string_view s, bool keep_newlines) {
  std::string valid = ValidUtf8(s);
  std::string out;
  out.reserve(valid.size());
  for (size_t i = 0; i < valid.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(valid[i]);
    const unsigned char c1 = i + 1 < valid.size() ? static_cast<unsigned char>(valid[i + 1]) : 0;
    const unsigned char c2 = i + 2 < valid.size() ? static_cast<unsigned char>(valid[i + 2]) : 0;
    if (c < 0x20 || c == 0x7F) {
      const bool keep = c == '\t' || (keep_newlines && (c == '\n' || c == '\r'));
      out += keep ? static_cast<char>(c) : ' ';
    } else if (c == 0xC2 && c1 >= 0x80 && c1 <= 0x9F) {  // C1 control
      out += ' ';
      i += 1;
    } else if (c == 0xE2 && c1 == 0x80 && (c2 == 0xA8 || c2 == 0xA9)) {  // U+2028, U+2029
      out += ' ';
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

bool LooksLikeWorkflowCommand(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  line.remove_prefix(i);
  return line.rfind("::", 0) == 0 || line.rfind("##[", 0) == 0;
}

std::string InertWorkflowCommands(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    if (LooksLikeWorkflowCommand(line)) {
      const size_t blanks = line.find_first_not_of(" \t");
      out.append(line.substr(0, blanks));
      out += '\\';
      out.append(line.substr(blanks));
    } else {
      out.append(line);
    }
    if (end < text.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

std::vector<WarningLine> CollectWarnings(const Report& report) {
  std::vector<WarningLine> out;
  for (const RunResult& run : report.runs) {
    for (const std::string& w : run.analysis.warnings) {
      auto it = std::find_if(out.begin(), out.end(), [&](const WarningLine& l) { return l.text == w; });
      if (it == out.end()) {
        out.push_back({w, {}});
        it = out.end() - 1;
      }
      it->runs.push_back(run.name);
    }
  }
  return out;
}

std::string Truncate(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  size_t cut = max_bytes;
  // Step back over UTF-8 continuation bytes so no sequence is split.
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "...";
}

std::string FormatBytes(double bytes) {
  if (!KnownBytes(bytes)) return "?";
  char buf[64];
  double gib = bytes / (1024.0 * 1024 * 1024);
  if (std::fabs(gib) >= 1.0 || bytes == 0) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", gib);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024));
  }
  return buf;
}

std::string FormatLeft(double left_bytes) {
  if (KnownBytes(left_bytes) && std::fabs(left_bytes) <= kLedgerToleranceBytes) return "0 GiB";
  return FormatBytes(left_bytes);
}

std::string FormatGiB(double bytes) {
  if (!KnownBytes(bytes)) return "?";
  char buf[64];
  double gib = bytes / (1024.0 * 1024 * 1024);
  std::snprintf(buf, sizeof buf, "%.2f", std::fabs(gib) < 0.005 ? 0.0 : gib);  // never "-0.00"
  return buf;
}

const Diagnosis* PrimaryDiagnosis(const Analysis& a) {
  for (const Diagnosis& d : a.diagnoses) {
    if (!d.consequence) return &d;
  }
  return a.diagnoses.empty() ? nullptr : &a.diagnoses.front();
}

std::string StoppedAt(const RankState& r) {
  int at = PhaseIndex(r.last_phase);
  for (const RankMark& m : r.marks) {
    const EventKind* k = m.type == "error" ? FindEventKind(m.label) : nullptr;
    if (k != nullptr) at = std::max(at, PhaseIndex(k->phase_intrinsic));
  }
  return at < 0 ? r.last_phase : Phases()[at];
}

std::vector<const Diagnosis*> AlsoSeen(const Analysis& a) {
  const Diagnosis* primary = PrimaryDiagnosis(a);
  std::vector<const Diagnosis*> out;
  for (const Diagnosis& d : a.diagnoses) {
    if (&d == primary) continue;
    bool same_anchor = primary != nullptr && !d.consequence && !d.evidence.empty() && !primary->evidence.empty() &&
                       d.evidence[0].file == primary->evidence[0].file && d.evidence[0].line == primary->evidence[0].line;
    if (!same_anchor) out.push_back(&d);
  }
  return out;
}

const RankState* FirstFailingRank(const Analysis& a) {
  // The rank the primary diagnosis points at, when it has an error of its own.
  if (const Diagnosis* d = PrimaryDiagnosis(a); d != nullptr) {
    int blamed = d->rank >= 0 ? d->rank : (!d->evidence.empty() ? d->evidence[0].rank : -1);
    for (const RankState& r : a.ranks) {
      if (blamed >= 0 && r.rank == blamed && !r.first_error.empty()) return &r;
    }
  }
  // Else the earliest error among numbered ranks; lines without a rank last.
  const RankState* best = nullptr;
  for (const RankState& r : a.ranks) {
    if (r.first_error.empty()) continue;
    if (best != nullptr && (best->rank >= 0) != (r.rank >= 0)) {
      if (r.rank >= 0) best = &r;
      continue;
    }
    if (best == nullptr) {
      best = &r;
      continue;
    }
    bool r_timed = r.first_error_ts > 0, best_timed = best->first_error_ts > 0;
    if (r_timed && (!best_timed || r.first_error_ts < best->first_error_ts)) best = &r;
  }
  return best;
}

namespace {

// The rank the primary diagnosis blames when that rank has no error of its
// own (or no line at all); -1 otherwise. *seen: it logged something.
int SilentBlamedRank(const Analysis& a, bool* seen) {
  const Diagnosis* d = PrimaryDiagnosis(a);
  *seen = false;
  if (d == nullptr || d->rank < 0) return -1;
  for (const RankState& r : a.ranks) {
    if (r.rank != d->rank) continue;
    if (!r.first_error.empty()) return -1;
    *seen = true;
  }
  return d->rank;
}

}  // namespace

const RankState* ShownFirstRank(const Analysis& a) {
  bool seen = false;
  if (a.root_cause == "none") return nullptr;  // healthy: an error line the run went on after failed nothing
  return SilentBlamedRank(a, &seen) >= 0 ? nullptr : FirstFailingRank(a);
}

std::string RankNote(const Analysis& a) {
  bool seen = false;
  if (a.root_cause == "none") return "";
  if (int blamed = SilentBlamedRank(a, &seen); blamed >= 0) {
    return "rank " + std::to_string(blamed) + " blamed (" +
           (seen ? "it logged no error" : "no line of it in the log") + ")";
  }
  const RankState* first = FirstFailingRank(a);
  return first != nullptr && first->rank >= 0 ? "rank " + std::to_string(first->rank) + " failed first" : "";
}

std::string RankLabel(int rank) { return rank < 0 ? "?" : std::to_string(rank); }

std::string EvidenceLocation(const Evidence& e) {
  std::string loc = e.file.empty() ? "(input)" : e.file;
  if (e.line > 0) loc += ":" + std::to_string(e.line);
  return loc;
}

std::string Advice(const Remedy& r) {
  if (r.value.empty()) {
    if (r.direction == "increase") return "raise " + r.flag;
    if (r.direction == "decrease") return "lower " + r.flag;
    if (r.direction == "unset" && r.flag.rfind("--", 0) == 0 && r.flag.find_first_of(" /") == std::string::npos)
      return "remove " + r.flag;
    return r.flag;
  }
  if (r.direction == "increase") return r.flag + " >= " + r.value;
  if (r.direction == "decrease") return r.flag + " <= " + r.value;
  return r.flag + " " + r.value;
}

std::string RemedyLine(const Remedy& r) {
  std::string line = RemedyCommand(r);
  if (line.empty()) line = Advice(r);
  line = std::string(RemedyLabel(r)) + ": " + line;
  if (!r.why.empty()) line += ": " + r.why;
  return line;
}

std::string ShellQuote(std::string_view s) {
  if (s.empty()) return "''";
  bool plain = true;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.' || c == '/' || c == ':' || c == '=' || c == ',' ||
              c == '+' || c == '@';
    if (!ok) {
      plain = false;
      break;
    }
  }
  if (plain) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string ReproCommand(const Analysis& a, const Diagnosis& d) {
  if (!d.repro.is_object() || d.repro.empty()) return "";
  if (auto it = d.repro.find("command"); it != d.repro.end() && it->is_string()) {
    return it->get<std::string>();
  }
  // `tptriage repro LOG...` re-analyses the same logs and replays the plan.
  std::string cmd = "tptriage repro";
  for (const std::string& in : a.run.inputs) cmd += " " + ShellQuote(in);
  if (a.run.inputs.empty()) cmd += " DIAGNOSIS.json  # from: tptriage analyze --format json LOG... > DIAGNOSIS.json";
  return cmd;
}

std::string RunSummary(const RunInfo& run) {
  std::string s = run.framework.empty() ? "framework unknown" : run.framework;
  if (!run.version.empty()) s += " " + run.version;
  auto par = [&](const char* name, int v) {
    if (v > 0) s += std::string(", ") + name + " " + std::to_string(v);
  };
  par("TP", run.tp);
  par("PP", run.pp);
  par("DP", run.dp);
  par("EP", run.ep);
  if (!run.gpu.empty()) s += ", " + run.gpu;
  // What an environment dump given with the log adds (rules/environment.h).
  if (run.gpu_memory_bytes > 0) s += " (" + std::to_string(run.gpu_memory_bytes >> 20) + " MiB)";
  if (!run.driver.empty()) s += ", driver " + run.driver;
  if (!run.cuda.empty()) s += ", CUDA " + run.cuda;
  if (!run.topology.empty()) s += ", " + run.topology;
  return s;
}

}  // namespace tpt::report

// ---- The answer first. ----

namespace tpt::report {

std::vector<std::string> Wrap(std::string_view text, size_t width, size_t first_width) {
  std::vector<std::string> lines;
  std::string line;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    size_t j = text.find(' ', i);
    if (j == std::string_view::npos) j = text.size();
    std::string_view word = text.substr(i, j - i);
    i = j;
    if (word.empty()) continue;
    size_t cap = lines.empty() && first_width > 0 ? first_width : width;
    if (!line.empty() && line.size() + 1 + word.size() > cap) {
      lines.push_back(std::move(line));
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += word;
  }
  if (!line.empty() || lines.empty()) lines.push_back(std::move(line));
  // A first line that could not take even one word is left empty.
  return lines;
}

namespace {

bool IsEnvName(std::string_view s) {
  if (s.empty() || !(s[0] >= 'A' && s[0] <= 'Z')) return false;
  for (char c : s) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

bool IsOneFlag(std::string_view s) {
  return s.size() > 2 && s.substr(0, 2) == "--" && s.find_first_of(" /") == std::string_view::npos;
}

}  // namespace

std::string RemedyCommand(const Remedy& r) {
  if (!r.command.empty()) return r.command;
  if (IsOneFlag(r.flag)) {
    if (!r.value.empty()) return r.flag + " " + ShellQuote(r.value);
    // A switch is copyable as is; a size with no value is advice, not a line.
    return r.direction == "set" ? r.flag : "";
  }
  if (IsEnvName(r.flag)) {
    if (r.direction == "unset") return "unset " + r.flag;
    // "increase NCCL to 2.19.3" is an upgrade, not a variable to export.
    if (!r.value.empty() && (r.direction.empty() || r.direction == "set"))
      return "export " + r.flag + "=" + ShellQuote(r.value);
  }
  return "";
}

namespace {

// The value the diagnosis' figures give for a flag ("--mem-fraction-static" ->
// figures.mem_fraction_static), or nullopt.
std::optional<double> ValueInUse(const Diagnosis& d, const std::string& flag) {
  if (!IsOneFlag(flag)) return std::nullopt;
  std::string key = flag.substr(2);
  for (char& c : key) c = c == '-' ? '_' : c;
  auto it = d.figures.find(key);
  if (it == d.figures.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// A remedy that "increases" a flag to a value at or below the one in use (or
// "decreases" it to one at or above) contradicts its own figures: never led with.
bool Contradicts(const Diagnosis& d, const Remedy& r) {
  auto now = ValueInUse(d, r.flag);
  if (!now || r.value.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(r.value.c_str(), &end);
  if (end == r.value.c_str()) return false;
  return (r.direction == "increase" && v <= *now) || (r.direction == "decrease" && v >= *now);
}

}  // namespace

Fix FixOf(const Diagnosis& d) {
  Fix fix;
  for (const Remedy& r : d.remedy) {
    if (Contradicts(d, r)) {
      fix.refuted = true;
      continue;
    }
    if (fix.advice == nullptr) fix.advice = &r;
    // A diagnostic (a next step: CUDA_LAUNCH_BLOCKING=1) never jumps ahead
    // of a fix the rule put first that has no line to paste ("remove
    // --speculative-config"): the fix leads, the diagnostic follows it.
    if (r.kind == "next_step" && fix.advice != &r && fix.advice->kind != "next_step") {
      fix.next_step = &r;
      break;
    }
    if (!r.value.empty() || !RemedyCommand(r).empty()) {
      fix.recommended = &r;
      break;
    }
  }
  if (fix.recommended == nullptr) return fix;
  const Remedy& rec = *fix.recommended;
  for (const Remedy& r : d.remedy) {
    if (&r != &rec && r.flag == rec.flag && !r.value.empty() && r.value != rec.value) {
      fix.floor = &r;
      break;
    }
  }
  if (IsOneFlag(rec.flag)) {
    std::string key = rec.flag.substr(2);
    for (char& c : key) c = c == '-' ? '_' : c;
    if (auto it = d.figures.find(key); it != d.figures.end() && it->is_number()) {
      char buf[32];
      double now = it->get<double>();  // a count (--max-num-seqs 1024) prints whole, a fraction to 2 places
      std::snprintf(buf, sizeof buf, now == std::floor(now) && std::fabs(now) >= 2 ? "%.0f" : "%.2f", now);
      fix.now = buf;
    }
  }
  return fix;
}

std::string RankRanges(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += RankLabel(ranks[i]);
    if (j > i) out += (j == i + 1 ? "," : "-") + RankLabel(ranks[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int> MissingRanks(const Analysis& a) {
  std::set<int> seen;
  for (const RankState& r : a.ranks) {
    if (r.rank >= 0) seen.insert(r.rank);
  }
  int expected = std::max(1, a.run.tp) * std::max(1, a.run.pp);
  if (a.run.tp <= 0) expected = seen.empty() ? 0 : *seen.rbegin() + 1;
  // A log that shows only some ranks' lines (rank 0's file, a driver's
  // output) says nothing of the others: only name gaps among ranks seen.
  if (seen.size() <= 1) return {};
  std::vector<int> missing;
  for (int r = 0; r < expected && r < 4096; ++r) {
    if (!seen.count(r)) missing.push_back(r);
  }
  return missing;
}

bool MemoryExplains(const Analysis& a) {
  if (a.ledger.empty()) return false;
  if (a.root_cause == "none") return true;
  for (const LedgerRow& r : a.ledger) {
    if (IsShort(r)) return true;
  }
  static const char* kMemoryCauses[] = {"kv_pool_no_room",        "kv_pool_too_small", "startup_free_memory_short",
                                        "weights_oom",            "warmup_oom",        "cuda_graph_capture_oom",
                                        "runtime_oom",            "kv_pool_exhausted"};
  for (const char* c : kMemoryCauses) {
    if (a.root_cause == c) return true;
  }
  return false;
}

bool PhasesExplain(const Analysis& a) {
  static const char* kRuntimeCauses[] = {"nccl_timeout_hang", "collective_desync",     "runtime_oom",
                                         "kv_pool_exhausted", "illegal_memory_access", "hardware_fault",
                                         "nccl_error"};
  for (const char* c : kRuntimeCauses) {
    if (a.root_cause == c) return false;
  }
  const RankState* first = FirstFailingRank(a);
  if (first == nullptr) return a.root_cause != "none" || !a.ranks.empty();
  int phase = PhaseIndex(first->last_phase);
  return phase >= 0 && phase < PhaseIndex("ready");
}

double TimeAxis::At(double ts, bool tod) const {
  double t = (time_of_day && !tod) ? std::fmod(ts, 86400.0) : ts;
  return t - t0;
}

double TimeAxis::OfLine(const Evidence& e, double ts, bool tod) const {
  if (!ok) return -1;
  if (ts > 0) return At(ts, tod);
  auto it = timed_lines.find(e.file);
  if (it == timed_lines.end() || e.line == 0) return -1;
  auto after = std::upper_bound(it->second.begin(), it->second.end(), std::make_pair(e.line, 1e300));
  if (after == it->second.begin()) return -1;
  return std::prev(after)->second;
}

TimeAxis MakeTimeAxis(const Analysis& a) {
  TimeAxis ax;
  for (const RankState& r : a.ranks) {
    for (const RankMark& m : r.marks) ax.time_of_day |= (m.ts > 0 && m.time_of_day);
    ax.time_of_day |= (r.last_line_ts > 0 && r.last_line_time_of_day);
  }
  bool any = false;
  double lo = 0, hi = 0;
  auto add = [&](double ts, bool tod) {
    if (ts <= 0) return;
    double t = (ax.time_of_day && !tod) ? std::fmod(ts, 86400.0) : ts;
    if (!any || t < lo) lo = t;
    if (!any || t > hi) hi = t;
    any = true;
  };
  for (const RankState& r : a.ranks) {
    for (const RankMark& m : r.marks) add(m.ts, m.time_of_day);
    add(r.last_line_ts, r.last_line_time_of_day);
  }
  ax.ok = any;
  ax.t0 = lo;
  ax.t1 = hi;
  for (const RankState& r : a.ranks) {
    for (const RankMark& m : r.marks) {
      if (m.ts > 0) ax.timed_lines[m.evidence.file].push_back({m.evidence.line, ax.At(m.ts, m.time_of_day)});
    }
    if (r.last_line_ts > 0) {
      ax.timed_lines[r.last_evidence.file].push_back(
          {r.last_evidence.line, ax.At(r.last_line_ts, r.last_line_time_of_day)});
    }
  }
  for (auto& [file, v] : ax.timed_lines) std::sort(v.begin(), v.end());
  return ax;
}

std::vector<Wait> TimeoutWaits(const Analysis& a, const TimeAxis& ax) {
  std::vector<Wait> out;
  if (!ax.ok) return out;
  std::vector<std::pair<double, bool>> points;  // seconds, is a timeout
  for (const RankState& r : a.ranks) {
    for (const RankMark& m : r.marks) {
      double t = ax.OfLine(m.evidence, m.ts, m.time_of_day);
      if (t >= 0) points.push_back({t, m.type == "timeout"});
    }
    double t = ax.OfLine(r.last_evidence, r.last_line_ts, r.last_line_time_of_day);
    if (t >= 0 && !r.last_evidence.text.empty()) points.push_back({t, false});
  }
  std::sort(points.begin(), points.end());
  double span = ax.t1 - ax.t0;
  for (size_t k = 1; k < points.size(); ++k) {
    if (!points[k].second) continue;
    double from = points[k - 1].first, to = points[k].first;
    if (to - from < 30 || to - from < span / 5) continue;
    if (!out.empty() && from <= out.back().to) {
      out.back().to = std::max(out.back().to, to);
    } else {
      out.push_back({from, to});
    }
  }
  return out;
}

ReproLines ReproFor(const Analysis& a, const Diagnosis& d) {
  ReproLines out;
  std::string cmd = ReproCommand(a, d);
  if (cmd.empty()) return out;
  // Ask repro's own plan code: a command it would refuse is not offered.
  nlohmann::json j = a;
  auto plan = repro::PlanFromJson(j, "analysis");
  if (!plan.ok() || !repro::ValidatePlan(*plan).ok()) return out;
  out.gpu = cmd;
  size_t comment = cmd.find("  #");
  out.dry_run = comment == std::string::npos ? cmd + " --dry-run"
                                             : cmd.substr(0, comment) + " --dry-run" + cmd.substr(comment);
  return out;
}

}  // namespace tpt::report

namespace tpt::report {

bool LedgerDrawable(const Analysis& a) {
  for (const LedgerRow& r : a.ledger) {
    for (double b : {r.weights_bytes, r.reserved_bytes, r.kv_pool_bytes, r.graphs_bytes}) {
      if (KnownBytes(b) && b > 0) return true;
    }
  }
  return false;
}

}  // namespace tpt::report
