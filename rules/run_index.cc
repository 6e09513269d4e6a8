// run_index.cc: event index and the rule-expression scope.
#include "rules/run_index.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

#include <re2/re2.h>

#include "base/strings.h"
#include "rules/generated_defs.h"

namespace tpt {

namespace {

bool ContainsCaseless(std::string_view hay, std::string_view needle) {
  if (needle.empty()) return true;
  return Lower(hay).find(Lower(needle)) != std::string::npos;
}

std::string FullText(const Event& e) {
  std::string t = e.text;
  for (const auto& l : e.extra_lines) {
    t += '\n';
    t += l;
  }
  return t;
}

const std::set<std::string_view>& Functions() {
  static const std::set<std::string_view> f = {
      "count", "has", "ranks", "first", "last", "minof", "maxof", "seen_before", "seen_after", "count_before",
      "missing_ranks", "first_rank", "contains", "matches", "any_text", "version_ge", "version_lt",
      "kind_before", "rank_value", "count_where", "argmin_rank", "argmax_rank", "near_text",
      "frames", "innermost_function", "innermost_code", "innermost_file", "ranks_where",
      "ranks_without", "rank_without"};
  return f;
}


// One frame of a Python traceback: `File "path", line N, in func` and the
// source line printed under it (empty when the excerpt ends first).
struct Frame {
  std::string file, function, code;
};

// The frames of a traceback's text, outermost first. Wrapper prefixes are
// already stripped from continuation lines by the parser; a frame cut
// mid-line keeps what was printed.
std::vector<Frame> FramesOf(const std::string& text) {
  std::vector<Frame> out;
  size_t pos = 0;
  bool want_code = false;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line(text.data() + pos, nl - pos);
    pos = nl + 1;
    size_t f = line.find("File \"");
    size_t in = f == std::string_view::npos ? f : line.find(", in ", f);
    if (f != std::string_view::npos && in != std::string_view::npos) {
      Frame fr;
      size_t q = line.find('"', f + 6);
      fr.file = std::string(line.substr(f + 6, q == std::string_view::npos ? 0 : q - f - 6));
      std::string_view fn = line.substr(in + 5);
      while (!fn.empty() && (fn.back() == ' ' || fn.back() == '\r')) fn.remove_suffix(1);
      fr.function = std::string(fn);
      out.push_back(std::move(fr));
      want_code = true;
      continue;
    }
    if (want_code) {
      size_t b = line.find_first_not_of(" \t");
      // Python 3.11+ prints ^~~~ markers under the code: not code.
      if (b != std::string_view::npos && line[b] != '^' && line[b] != '~') {
        out.back().code = std::string(line.substr(b));
        want_code = false;
      }
    }
  }
  return out;
}

}  // namespace

Value JsonToValue(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_string()) return j.get<std::string>();
  if (j.is_array()) {
    std::optional<double> best;
    for (const auto& x : j)
      if (x.is_number() && (!best || x.get<double>() > *best)) best = x.get<double>();
    return best ? Value(*best) : Value();
  }
  return Value();
}

bool IsFailureKind(std::string_view kind) {
  for (size_t i = 0; i < generated::kNumFailureKinds; ++i)
    if (kind == generated::kFailureKinds[i]) return true;
  return false;
}

int CompareVersions(std::string_view a, std::string_view b) {
  auto next = [](std::string_view& s) -> long {
    while (!s.empty() && !std::isdigit(static_cast<unsigned char>(s[0]))) {
      // "post", "rc", "dev" and "+local" parts do not order releases here.
      if (s[0] == '+' ) { s = {}; return -1; }
      s.remove_prefix(1);
    }
    if (s.empty()) return -1;
    long v = 0;
    while (!s.empty() && std::isdigit(static_cast<unsigned char>(s[0]))) {
      v = v * 10 + (s[0] - '0');
      s.remove_prefix(1);
    }
    return v;
  };
  if (!a.empty() && (a[0] == 'v' || a[0] == 'V')) a.remove_prefix(1);
  if (!b.empty() && (b[0] == 'v' || b[0] == 'V')) b.remove_prefix(1);
  for (int i = 0; i < 3; ++i) {
    long x = next(a), y = next(b);
    if (x < 0) x = 0;
    if (y < 0) y = 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

RunIndex::RunIndex(const std::vector<Event>& events, const RunTotals* totals)
    : events_(events), total_events_(events.size()), totals_(totals) {
  if (totals_) {
    total_events_ = std::max<uint64_t>(totals_->events, events.size());
    for (const auto& d : totals_->dropped) {
      dropped_of_kind_[d.kind] += d.count;
      dropped_of_rank_[d.before < events.size() ? events[d.before].rank : -1] += d.count;
    }
  }
  std::map<std::string, int> family_votes;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    by_kind_[e.kind].push_back(i);
    if (e.rank >= 0) ranks_.insert(e.rank);
    if (!e.family.empty() && e.family != "python" && e.family != "wrappers") ++family_votes[e.family];
    // The line's producer prefix votes too: an NCCL or torch line printed through
    // vLLM's logger ('ERROR 03-28 21:38:23 ray_utils.py:44] ...', prefix id
    // 'vllm.log_header') came from a vLLM process.
    if (e.wrapper().contains("prefix") && e.wrapper()["prefix"].is_object()) {
      std::string id = e.wrapper()["prefix"].value("id", "");
      if (size_t dot = id.find('.'); dot != std::string::npos) ++family_votes[id.substr(0, dot)];
    }
    if (e.kind == "server_args") {
      // First printed value of a key wins (later lines are usually the draft's).
      for (const auto& [k, v] : e.fields().items()) {
        if (k == "args" && v.is_object()) {
          for (const auto& [ak, av] : v.items())
            if (!config_.contains(ak)) config_[ak] = av;
        } else if (!config_.contains(k)) {
          config_[k] = v;
        }
      }
    } else if (e.kind == "env_var") {
      if (e.fields().contains("name") && e.fields()["name"].is_string()) {
        std::string v = e.fields().contains("value") ? JsonToValue(e.fields()["value"]).ToString() : "";
        env_.emplace(e.fields()["name"].get<std::string>(), v);
      }
    } else if (e.kind == "framework_version") {
      std::string fw = e.fields().value("framework", "");
      std::string ver = e.fields().contains("version") ? JsonToValue(e.fields()["version"]).ToString() : "";
      if (fw != "torch" && fw != "nccl" && version_.empty() && !ver.empty()) {
        version_ = ver;
        if (framework_.empty()) framework_ = fw;
      }
    } else if (e.kind == "gpu_info") {
      if (gpu_.empty() && e.fields().contains("gpu_name") && e.fields()["gpu_name"].is_string())
        gpu_ = e.fields()["gpu_name"].get<std::string>();
      if (gpu_total_bytes_ == 0 && e.fields().contains("total_bytes") && e.fields()["total_bytes"].is_number())
        gpu_total_bytes_ = e.fields()["total_bytes"].get<double>();
    }
  }
  if (framework_.empty() && config_.contains("framework") && config_["framework"].is_string())
    framework_ = config_["framework"].get<std::string>();
  if (framework_.empty()) {
    // The serving family that printed most events (nccl/torch/cuda lines are shared by all).
    static const std::set<std::string> kServers = {"sglang", "vllm", "tgi", "trtllm", "lmdeploy"};
    int best = 0;
    for (const auto& [fam, n] : family_votes)
      if (kServers.count(fam) && n > best) best = n, framework_ = fam;
    if (framework_.empty())
      for (const auto& [fam, n] : family_votes)
        if (n > best) best = n, framework_ = fam;
  }
  if (!ranks_.empty()) world_size_ = *ranks_.rbegin() + 1;
  for (size_t i : OfKind("nccl_comm_init")) {
    Value n = events[i].fields().contains("nranks") ? JsonToValue(events[i].fields()["nranks"]) : Value();
    if (n.is_number() && n.number() > world_size_ && n.number() < (1 << 16)) world_size_ = static_cast<int>(n.number());
  }
  int64_t tp = ConfigInt("tp_size"), pp = std::max(ConfigInt("pp_size"), 1);
  if (tp > 0 && tp * pp > world_size_ && tp * pp < (1 << 16)) world_size_ = static_cast<int>(tp * pp);
}

const std::vector<size_t>& RunIndex::OfKind(const std::string& kind) const {
  static const std::vector<size_t> kEmpty;
  auto it = by_kind_.find(kind);
  return it == by_kind_.end() ? kEmpty : it->second;
}

const std::vector<size_t>& RunIndex::OfSource(int source) const {
  if (by_source_.empty())
    for (size_t i = 0; i < events_.size(); ++i) by_source_[events_[i].source].push_back(i);
  static const std::vector<size_t> kEmpty;
  auto it = by_source_.find(source);
  return it == by_source_.end() ? kEmpty : it->second;
}

uint64_t RunIndex::CountOf(const std::string& kind) const {
  auto it = dropped_of_kind_.find(kind);
  return OfKind(kind).size() + (it == dropped_of_kind_.end() ? 0 : it->second);
}

uint64_t RunIndex::CountBefore(const std::string& kind, size_t index) const {
  const auto& idx = OfKind(kind);
  uint64_t n = static_cast<uint64_t>(std::lower_bound(idx.begin(), idx.end(), index) - idx.begin());
  if (totals_)
    for (const auto& d : totals_->dropped)
      if (d.kind == kind && d.before <= index) n += d.count;
  return n;
}

uint64_t RunIndex::DroppedOfRank(int rank) const {
  auto it = dropped_of_rank_.find(rank);
  return it == dropped_of_rank_.end() ? 0 : it->second;
}

bool RunIndex::AnyText(const std::string& needle_in) const {
  std::string needle = Lower(needle_in);
  if (auto it = any_text_cache_.find(needle); it != any_text_cache_.end()) return it->second;
  bool found = false;
  for (const auto& e : events_) {
    if (Lower(e.text).find(needle) != std::string::npos) found = true;
    for (const auto& l : e.extra_lines)
      if (!found && Lower(l).find(needle) != std::string::npos) found = true;
    if (found) break;
  }
  any_text_cache_[needle] = found;
  return found;
}

int RunIndex::ConfigInt(const char* key) const {
  if (!config_.contains(key)) return 0;
  Value v = JsonToValue(config_[key]);
  if (v.is_number()) return static_cast<int>(v.number());
  if (v.is_string()) return std::atoi(v.str().c_str());
  return 0;
}

bool RunScope::IsFunction(std::string_view name) { return Functions().count(name) > 0; }

bool RunScope::IsVariable(std::string_view n) {
  static const std::set<std::string_view> kPlain = {"framework", "version", "tp", "pp", "dp", "ep",
                                                    "nranks", "gpu", "gpu_total_bytes", "world_size"};
  if (kPlain.count(n)) return true;
  for (std::string_view p : {"anchor.", "config.", "env."})
    if (n.size() > p.size() && n.substr(0, p.size()) == p) return true;
  return false;
}

bool RunScope::IsKnownKind(std::string_view kind) {
  for (size_t i = 0; i < generated::kNumEventKinds; ++i)
    if (kind == generated::kEventKinds[i]) return true;
  return false;
}

bool RunScope::SameRank(const Event& e) const {
  if (anchor_ == kNoAnchor) return true;
  int r = run_.events()[anchor_].rank;
  return r < 0 || e.rank < 0 || e.rank == r;
}

Value RunScope::Lookup(std::string_view n) const {
  if (auto it = vars_.find(std::string(n)); it != vars_.end()) return it->second;
  auto starts = [&](std::string_view p) { return n.size() > p.size() && n.substr(0, p.size()) == p; };
  if (starts("anchor.")) {
    if (anchor_ == kNoAnchor) return Value();
    const Event& e = run_.events()[anchor_];
    std::string f(n.substr(7));
    if (f == "rank") return e.rank < 0 ? Value() : Value(e.rank);
    // For sentences: "rank 3", or "a rank" when the line does not say which.
    if (f == "who") return e.rank < 0 ? Value("a rank") : Value("rank " + std::to_string(e.rank));
    if (f == "kind") return e.kind;
    if (f == "family") return e.family;
    if (f == "text") return FullText(e);
    if (f == "line") return static_cast<double>(e.line);
    if (f == "ts") return e.ts ? Value(*e.ts) : Value();
    if (f == "consequence") return e.consequence;
    if (e.fields().contains(f)) return JsonToValue(e.fields()[f]);
    return Value();
  }
  if (starts("config.")) {
    std::string k(n.substr(7));
    if (run_.config().contains(k)) return JsonToValue(run_.config()[k]);
    return Value();
  }
  if (starts("env.")) {
    auto it = run_.env().find(std::string(n.substr(4)));
    return it == run_.env().end() ? Value() : Value(it->second);
  }
  if (n == "framework") return run_.framework().empty() ? Value() : Value(run_.framework());
  if (n == "version") return run_.version().empty() ? Value() : Value(run_.version());
  if (n == "gpu") return run_.gpu().empty() ? Value() : Value(run_.gpu());
  if (n == "gpu_total_bytes") return run_.gpu_total_bytes() > 0 ? Value(run_.gpu_total_bytes()) : Value();
  if (n == "nranks") return static_cast<double>(run_.ranks().size());
  if (n == "world_size") return run_.WorldSize() > 0 ? Value(run_.WorldSize()) : Value();
  if (n == "tp" || n == "pp" || n == "dp" || n == "ep") {
    int v = run_.ConfigInt((std::string(n) + "_size").c_str());
    return v > 0 ? Value(v) : Value();
  }
  return Value();
}

Value RunScope::Call(std::string_view name, const std::vector<Value>& a) const {
  auto str = [&](size_t i) -> std::string { return i < a.size() && a[i].is_string() ? a[i].str() : std::string(); };
  const auto& evs = run_.events();
  const std::string kind = str(0);
  const auto& idx = run_.OfKind(kind);

  if (name == "count") return static_cast<double>(run_.CountOf(kind));
  if (name == "has") return !idx.empty();
  if (name == "ranks") {
    std::set<int> r;
    for (size_t i : idx)
      if (evs[i].rank >= 0) r.insert(evs[i].rank);
    return static_cast<double>(r.size());
  }
  if (name == "missing_ranks") {
    std::set<int> r;
    for (size_t i : idx)
      if (evs[i].rank >= 0) r.insert(evs[i].rank);
    return static_cast<double>(run_.ranks().size() - std::min(run_.ranks().size(), r.size()));
  }
  if (name == "ranks_without" || name == "rank_without") {
    // The ranks of the run (0 .. world size - 1) with no event of `kind`: the
    // ones the others waited for. A list "2, 5" / the one rank; null when none
    // (or, for rank_without, when more than one).
    std::set<int> with;
    for (size_t i : idx)
      if (evs[i].rank >= 0) with.insert(evs[i].rank);
    if (with.empty()) return Value();
    std::vector<int> without;
    for (int r = 0; r < run_.WorldSize() && without.size() <= 64; ++r)
      if (!with.count(r)) without.push_back(r);
    if (without.empty()) return Value();
    if (name == "rank_without") return without.size() == 1 ? Value(without[0]) : Value();
    std::string list;
    for (int r : without) list += (list.empty() ? "" : ", ") + std::to_string(r);
    return list;
  }
  if (name == "first_rank") {
    for (size_t i : idx)
      if (evs[i].rank >= 0) return evs[i].rank;
    return Value();
  }
  if (name == "first" || name == "last" || name == "minof" || name == "maxof" || name == "rank_value") {
    std::string field = str(1);
    Value best;
    for (size_t i : idx) {
      if (name == "rank_value" && !SameRank(evs[i])) continue;
      if (!evs[i].fields().contains(field)) continue;
      Value v = JsonToValue(evs[i].fields()[field]);
      if (v.is_null()) continue;
      if (name == "first" || name == "rank_value") return v;
      if (name == "last") best = v;
      else if (v.is_number() && (best.is_null() || (name == "minof" ? v.number() < best.number()
                                                                      : v.number() > best.number())))
        best = v;
    }
    return best;
  }
  if (name == "argmin_rank" || name == "argmax_rank") {
    // The rank whose event of `kind` has the smallest (largest) `field`: e.g.
    // the rank behind in collective sequence numbers.
    std::string field = str(1);
    Value best, rank;
    for (size_t i : idx) {
      if (evs[i].rank < 0 || !evs[i].fields().contains(field)) continue;
      Value v = JsonToValue(evs[i].fields()[field]);
      if (!v.is_number()) continue;
      if (best.is_null() || (name == "argmin_rank" ? v.number() < best.number() : v.number() > best.number()))
        best = v, rank = evs[i].rank;
    }
    return rank;
  }
  if (name == "near_text") {
    // The anchor's text, or that of an event printed within 3 events of it on its
    // rank (an OOM line and the traceback around it), holds the substring.
    if (anchor_ == kNoAnchor || a.empty()) return false;
    std::string needle = a[0].ToString();
    size_t lo = anchor_ >= 3 ? anchor_ - 3 : 0, hi = std::min(evs.size(), anchor_ + 4);
    for (size_t i = lo; i < hi; ++i)
      if ((i == anchor_ || SameRank(evs[i])) && ContainsCaseless(FullText(evs[i]), needle)) return true;
    return false;
  }
  if (name == "frames" || name == "innermost_function" || name == "innermost_code" || name == "innermost_file") {
    // The traceback of the anchor (its own lines, or the nearest event within 3
    // of it on its rank that has frames: an OOM line and the traceback around
    // it). frames(): function names outermost first, joined by ' > ';
    // innermost_*: the frame that raised (its function, its source line).
    if (anchor_ == kNoAnchor) return Value();
    size_t lo = anchor_ >= 3 ? anchor_ - 3 : 0, hi = std::min(evs.size(), anchor_ + 4);
    std::vector<size_t> order = {anchor_};
    for (size_t d = 1; d <= 3; ++d) {
      if (anchor_ + d < hi) order.push_back(anchor_ + d);
      if (anchor_ >= lo + d) order.push_back(anchor_ - d);
    }
    for (size_t i : order) {
      if (i != anchor_ && !SameRank(evs[i])) continue;
      std::vector<Frame> fr = FramesOf(FullText(evs[i]));
      if (fr.empty()) continue;
      if (name == "innermost_function") return fr.back().function;
      if (name == "innermost_code") return fr.back().code;
      if (name == "innermost_file") return fr.back().file;
      std::string joined;
      for (const Frame& f : fr) joined += (joined.empty() ? "" : " > ") + f.function;
      return joined;
    }
    return Value();
  }
  if (name == "seen_before" || name == "seen_after") {
    if (anchor_ == kNoAnchor) return !idx.empty();
    const Event& an = evs[anchor_];
    for (size_t i : idx) {
      if (!SameRank(evs[i])) continue;
      // Streams without a shared clock (stdout + stderr of one run, no
      // timestamps) have no order between them: an error ends its run, so a
      // phase line of another stream counts as before it, never after.
      bool unordered = evs[i].source != an.source && (!evs[i].ts || !an.ts);
      if (name == "seen_before" ? (i < anchor_ || unordered) : (i > anchor_ && !unordered)) return true;
    }
    return false;
  }
  if (name == "count_before") {
    return static_cast<double>(anchor_ == kNoAnchor ? run_.CountOf(kind) : run_.CountBefore(kind, anchor_));
  }
  if (name == "ranks_where") {
    // ranks_where('kind', 'field', value): distinct ranks with an event of kind
    // whose field equals value (a rank printing the same line twice counts once).
    std::set<int> r;
    std::string field = str(1);
    for (size_t i : idx)
      if (evs[i].rank >= 0 && evs[i].fields().contains(field) && a.size() > 2 &&
          JsonToValue(evs[i].fields()[field]).ToString() == a[2].ToString())
        r.insert(evs[i].rank);
    return static_cast<double>(r.size());
  }
  if (name == "count_where") {
    // count_where('kind', 'field', value): events of kind whose field equals value.
    double n = 0;
    std::string field = str(1);
    for (size_t i : idx)
      if (evs[i].fields().contains(field) && a.size() > 2 &&
          JsonToValue(evs[i].fields()[field]).ToString() == a[2].ToString())
        ++n;
    return n;
  }
  if (name == "kind_before") {
    const auto& other = run_.OfKind(str(1));
    if (idx.empty()) return false;
    return other.empty() || idx.front() < other.front();
  }
  if (name == "contains") {
    if (a.size() < 2 || a[0].is_null()) return false;
    return ContainsCaseless(a[0].ToString(), a[1].ToString());
  }
  if (name == "matches") {
    if (a.size() < 2 || a[0].is_null() || !a[1].is_string()) return false;
    // Patterns come from rule files; compile each once per thread.
    thread_local std::unordered_map<std::string, std::unique_ptr<RE2>> cache;
    auto& re = cache[a[1].str()];
    if (!re) {
      RE2::Options o;
      o.set_log_errors(false);
      o.set_case_sensitive(false);
      re = std::make_unique<RE2>(a[1].str(), o);
    }
    return re->ok() && RE2::PartialMatch(a[0].ToString(), *re);
  }
  if (name == "any_text") return run_.AnyText(kind);
  if (name == "version_ge" || name == "version_lt") {
    if (run_.version().empty() || a.empty()) return Value();
    int c = CompareVersions(run_.version(), a[0].ToString());
    return name == "version_ge" ? c >= 0 : c < 0;
  }
  return Value();
}

}  // namespace tpt
