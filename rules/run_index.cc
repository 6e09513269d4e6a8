// run_index.cc: the events of one run, indexed for rules.
#include "rules/run_index.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "base/strings.h"
#include "rules/vocabulary.h"

namespace tpt {

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
  const EventKind* k = FindEventKind(kind);
  return k != nullptr && k->failure;
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

namespace {

// The serving framework whose package directory a traceback's frames run
// through, innermost frame first ("" when none): the Python package names
// of vLLM, SGLang, TGI's server, TensorRT-LLM and LMDeploy.
std::string ServerOfFrames(const std::vector<std::string>& lines) {
  static const std::pair<std::string_view, std::string_view> kPackages[] = {
      {"/vllm/", "vllm"}, {"/sglang/", "sglang"}, {"/text_generation_server/", "tgi"},
      {"/tensorrt_llm/", "trtllm"}, {"/lmdeploy/", "lmdeploy"}};
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    std::string_view l = *it;
    size_t file = l.find("File \"");
    if (file == std::string_view::npos) continue;
    for (const auto& [dir, fam] : kPackages)
      if (l.find(dir, file) != std::string_view::npos) return std::string(fam);
  }
  return "";
}

}  // namespace

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
    if (FieldValue prefix = e.Wrapper("prefix"); prefix.is_object()) {
      std::string id = prefix.json().value("id", "");
      if (size_t dot = id.find('.'); dot != std::string::npos) ++family_votes[id.substr(0, dot)];
    }
    // A traceback's frames name the package that raised it: a vLLM/SGLang/...
    // process whose own log lines were cut from the paste ('File
    // ".../site-packages/vllm/v1/sample/sampler.py"'). One vote per traceback.
    if (e.kind == "exception") {
      if (std::string fam = ServerOfFrames(e.extra_lines); !fam.empty()) ++family_votes[fam];
    }
    if (e.kind == "server_args") {
      // First printed value of a key wins (later lines are usually the draft's).
      const nlohmann::json fields = e.FieldsJson();
      for (const auto& [k, v] : fields.items()) {
        if (k == "args" && v.is_object()) {
          for (const auto& [ak, av] : v.items())
            if (!config_.contains(ak)) config_[ak] = av;
        } else if (!config_.contains(k)) {
          config_[k] = v;
        }
      }
    } else if (e.kind == "env_var") {
      if (FieldValue name = e.Get("name"); name.is_string()) {
        FieldValue value = e.Get("value");
        std::string v = value.present() ? JsonToValue(value.json()).ToString() : "";
        env_.emplace(name.string(), v);
      }
    } else if (e.kind == "framework_version") {
      std::string fw = e.Get("framework").string();
      FieldValue version = e.Get("version");
      std::string ver = version.present() ? JsonToValue(version.json()).ToString() : "";
      if (fw != "torch" && fw != "nccl" && version_.empty() && !ver.empty()) {
        version_ = ver;
        if (framework_.empty()) framework_ = fw;
      }
    } else if (e.kind == "gpu_info") {
      if (gpu_.empty() && e.Get("gpu_name").is_string()) gpu_ = e.Get("gpu_name").string();
      if (gpu_total_bytes_ == 0 && e.Get("total_bytes").is_number()) gpu_total_bytes_ = e.Get("total_bytes").number();
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
    FieldValue nranks = events[i].Get("nranks");
    Value n = nranks.present() ? JsonToValue(nranks.json()) : Value();
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

const std::vector<size_t>& RunIndex::OnLine(int source, uint64_t line) const {
  if (by_line_.empty())
    for (size_t i = 0; i < events_.size(); ++i) by_line_[{events_[i].source, events_[i].line}].push_back(i);
  static const std::vector<size_t> kEmpty;
  auto it = by_line_.find({source, line});
  return it == by_line_.end() ? kEmpty : it->second;
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

std::string FullText(const Event& e) {
  std::string t = e.text;
  for (const auto& l : e.extra_lines) {
    t += '\n';
    t += l;
  }
  return t;
}

}  // namespace tpt
