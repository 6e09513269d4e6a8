// run_facts.cc: events of one run -> RunFacts (see run_facts.h).
#include "rules/diff/run_facts.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <set>

#include "base/strings.h"

namespace tpt::diff {
namespace {

using json = nlohmann::json;

// Parallel sizes and model name appear under several flag names; diff shows
// them once under a summary key.
struct Alias {
  const char* flag;
  const char* key;
};
constexpr Alias kAliases[] = {
    {"tp_size", "tp"},          {"tensor_parallel_size", "tp"}, {"pp_size", "pp"},
    {"pipeline_parallel_size", "pp"}, {"dp_size", "dp"},        {"data_parallel_size", "dp"},
    {"ep_size", "ep"},          {"expert_parallel_size", "ep"}, {"model_path", "model"},
    {"model", "model"},
};

const char* AliasOf(const std::string& flag) {
  for (const Alias& a : kAliases) {
    if (flag == a.flag) return a.key;
  }
  return nullptr;
}

// The phase an error of this kind is raised in whatever lines came before
// (parser/events.json phase_intrinsic; knowledge/sglang-source.md 1.2,
// vllm-source.md 1.6), or null.
const char* IntrinsicPhase(const std::string& kind) {
  const EventKind* k = FindEventKind(kind);
  return k == nullptr || k->phase_intrinsic.empty() ? nullptr : k->phase_intrinsic.c_str();
}

// The phase an event shows completed (parser/events.json phase_completed), or -1.
int CompletesPhase(const std::string& kind) {
  const EventKind* k = FindEventKind(kind);
  return k == nullptr ? -1 : PhaseIndex(k->phase_completed);
}

int NumPhases() { return static_cast<int>(Phases().size()); }

std::optional<double> NumberField(const Event& e, const char* name) {
  FieldValue v = e.Get(name);
  if (!v.is_number()) return std::nullopt;
  return v.number();
}

int RankOf(const Event& e) {
  if (e.rank >= 0) return e.rank;
  if (e.tp_rank >= 0) return e.tp_rank;
  if (e.local_rank >= 0) return e.local_rank;
  // vLLM worker process names carry the TP rank: "Worker_TP1", "Worker_PP0_TP3".
  if (auto at = e.process.find("TP"); at != std::string::npos && (at == 0 || e.process[at - 1] == '_')) {
    int tp = 0;
    const char* b = e.process.data() + at + 2;
    const char* end = e.process.data() + e.process.size();
    if (auto [ptr, ec] = std::from_chars(b, end, tp); ec == std::errc() && ptr != b) return tp;
  }
  return -1;
}

// Sets `slot` once: the first measurement of a phase is the target model's;
// a speculative draft worker repeats the startup lines afterwards.
void SetOnce(std::optional<double>& slot, std::optional<double> v) {
  if (v && !slot) slot = v;
}

void Derive(RankMemory& m) {
  if (!m.free_at_init && m.free_after_dist_init && m.dist_init_usage) {
    m.free_at_init = *m.free_after_dist_init + *m.dist_init_usage;
  }
  if (!m.dist_init_usage && m.free_at_init && m.free_after_dist_init) {
    m.dist_init_usage = *m.free_at_init - *m.free_after_dist_init;
  }
  if (!m.weights_usage && m.free_after_dist_init && m.free_after_weights) {
    m.weights_usage = *m.free_after_dist_init - *m.free_after_weights;
  }
}

}  // namespace

const MemoryQuantity kMemoryQuantities[] = {
    {"free_at_init", "free at init", "init", &RankMemory::free_at_init},
    {"dist_init", "distributed init uses", "dist_init", &RankMemory::dist_init_usage},
    {"free_after_dist_init", "free after dist init", "dist_init", &RankMemory::free_after_dist_init},
    {"weights", "weights use", "weights", &RankMemory::weights_usage},
    {"free_after_weights", "free after weights", "weights", &RankMemory::free_after_weights},
    {"kv_pool", "KV pool", "kv_pool", &RankMemory::kv_pool},
    {"graphs", "CUDA graphs use", "graphs", &RankMemory::graphs_usage},
    {"left", "left at the end", "ready", &RankMemory::left},
};
const int kNumMemoryQuantities = sizeof(kMemoryQuantities) / sizeof(kMemoryQuantities[0]);


// A failure kind that does not say what failed (parser/events.json generic).
bool IsGenericErrorKind(const std::string& kind) {
  const EventKind* k = FindEventKind(kind);
  return k != nullptr && k->generic;
}

// A kind that means the run failed (parser/events.json failure), not a warning.
bool IsErrorKind(const std::string& kind) {
  const EventKind* k = FindEventKind(kind);
  return k != nullptr && k->failure && !k->warning;
}

json NormalizeValue(const json& v) {
  if (!v.is_string()) return v;
  std::string s = v.get<std::string>();
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  s = s.substr(start);
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front()) {
    s = s.substr(1, s.size() - 2);
  }
  if (s == "True" || s == "true") return true;
  if (s == "False" || s == "false") return false;
  if (s == "None" || s == "null") return nullptr;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  int64_t i = 0;
  if (!s.empty() && std::from_chars(b, e, i).ptr == e) return i;
  double d = 0;
  if (!s.empty() && std::from_chars(b, e, d).ptr == e) return d;
  return s;
}

std::string RunFacts::LastPhase() const {
  std::string last;
  for (int i = 0; i < NumPhases(); ++i) {
    if (completed[i]) last = Phases()[i];
  }
  return last;
}

std::optional<double> RunFacts::Number(const std::string& key) const {
  auto it = config.find(key);
  if (it == config.end() || !it->second.is_number()) return std::nullopt;
  return it->second.get<double>();
}

std::optional<bool> RunFacts::Bool(const std::string& key) const {
  auto it = config.find(key);
  if (it == config.end() || !it->second.is_boolean()) return std::nullopt;
  return it->second.get<bool>();
}

std::optional<double> RunFacts::MinOverRanks(std::optional<double> RankMemory::*field) const {
  std::optional<double> best;
  for (const auto& [rank, m] : ranks) {
    const auto& v = m.*field;
    if (v && (!best || *v < *best)) best = v;
  }
  return best;
}

RunFacts CollectFacts(const std::vector<Event>& events) {
  RunFacts f;
  std::map<std::string, int> family_votes;
  std::map<int, std::optional<double>> last_avail;  // per rank, latest free memory printed
  int reached = -1;  // highest phase completed so far, in stream order
  std::optional<Failure> generic_failure;  // first exception/signal: used when nothing more specific is seen

  auto update_avail = [&](int rank, std::optional<double> v) {
    if (v) last_avail[rank] = v;
  };
  auto observe = [&](const std::string& key, const json& value) {
    if (f.config.emplace(key, value).second) f.observed.insert(key);
  };

  for (const Event& e : events) {
    ++f.event_counts[e.kind];
    if (!e.family.empty()) ++family_votes[e.family];
    const int rank = RankOf(e);

    const bool is_error = !e.consequence && (IsErrorKind(e.kind) || (e.kind == "memory_imbalance" &&
                                                                      e.text.find("Error") != std::string::npos));
    const bool generic = IsGenericErrorKind(e.kind);
    if (is_error && !(generic ? generic_failure : f.failure)) {
      Failure fail;
      fail.kind = e.kind;
      if (const char* p = IntrinsicPhase(e.kind)) {
        fail.phase = p;
      } else {
        fail.phase = Phases()[std::min(reached + 1, NumPhases() - 1)];
      }
      fail.file = e.file;
      fail.line = e.line;
      fail.rank = rank;
      fail.text = e.text;
      fail.fields = e.FieldsJson();
      (generic ? generic_failure : f.failure) = std::move(fail);
    }
    // Phases completed before the first failure only: a dying server can
    // still print a serving line from another rank.
    if (int p = CompletesPhase(e.kind); p >= 0 && !f.failure && !generic_failure) reached = std::max(reached, p);

    RankMemory& m = f.ranks[rank];
    if (e.kind == "server_args") {
      if (FieldValue fw = e.Get("framework"); fw.is_string()) {
        if (f.framework.empty()) f.framework = fw.string();
      }
      json flags = json::object();
      if (FieldValue args = e.Get("args"); args.is_object()) flags = args.json();
      const json fields = e.FieldsJson();
      for (auto it = fields.begin(); it != fields.end(); ++it) {
        if (it.key() == "args" || it.key() == "framework") continue;
        if (!flags.contains(it.key())) flags[it.key()] = it.value();
      }
      // vLLM's engine-config line carries the version: a version, not a flag.
      if (auto v = flags.find("version"); v != flags.end()) {
        std::string fw = e.Get("framework").string(e.family);
        if (v->is_string() && !fw.empty()) f.config.emplace("version." + Lower(fw), *v);
        flags.erase(v);
      }
      for (auto it = flags.begin(); it != flags.end(); ++it) {
        const char* alias = AliasOf(it.key());
        std::string key = alias ? alias : "flag." + it.key();
        f.config.emplace(key, NormalizeValue(it.value()));
      }
    } else if (e.kind == "env_var") {
      if (FieldValue name = e.Get("name"); name.is_string()) {
        f.config.emplace("env." + name.string(), NormalizeValue(e.Get("value").json()));
      }
    } else if (e.kind == "framework_version" || e.kind == "nccl_version") {
      std::string fw = e.kind == "nccl_version" ? "nccl" : Lower(e.Get("framework").string(e.family));
      if (FieldValue version = e.Get("version"); version.present()) {
        json v = version.json();
        f.config.emplace("version." + fw, v.is_string() ? v : json(v.dump()));
      }
    } else if (e.kind == "gpu_info") {
      if (FieldValue gpu = e.Get("gpu_name"); gpu.present()) observe("gpu", gpu.json());
      if (auto t = NumberField(e, "total_bytes")) observe("gpu_total_bytes", *t);
    } else if (e.kind == "custom_ar_enabled") {
      f.config["custom_all_reduce"] = "on";
      f.observed.insert("custom_all_reduce");
    } else if (e.kind == "custom_ar_disabled") {
      observe("custom_all_reduce", "off (" + e.Get("reason").string("disabled") + ")");
    } else if (e.kind == "dist_init_begin") {
      SetOnce(m.free_at_init, NumberField(e, "avail_bytes"));
      update_avail(rank, NumberField(e, "avail_bytes"));
    } else if (e.kind == "dist_init_end") {
      SetOnce(m.free_after_dist_init, NumberField(e, "avail_bytes"));
      for (const char* name : {"usage_bytes", "mem_usage_bytes"}) SetOnce(m.dist_init_usage, NumberField(e, name));
      update_avail(rank, NumberField(e, "avail_bytes"));
    } else if (e.kind == "weights_load_begin") {
      SetOnce(m.free_after_dist_init, NumberField(e, "avail_bytes"));
      update_avail(rank, NumberField(e, "avail_bytes"));
    } else if (e.kind == "weights_load_end") {
      SetOnce(m.free_after_weights, NumberField(e, "avail_bytes"));
      SetOnce(m.weights_usage, NumberField(e, "weights_bytes"));
      update_avail(rank, NumberField(e, "avail_bytes"));
    } else if (e.kind == "kv_pool_alloc") {
      std::optional<double> kv = NumberField(e, "kv_bytes");
      auto k = NumberField(e, "k_bytes"), v = NumberField(e, "v_bytes");
      if (!kv && k) kv = *k + v.value_or(0);
      SetOnce(m.kv_pool, kv);
      if (auto tokens = NumberField(e, "tokens"); tokens && !f.profile.contains("kv_tokens")) {
        f.profile["kv_tokens"] = *tokens;
      }
      // LMDeploy TurboMind's BlockManager prints the block size and the count on two lines.
      if (auto b = NumberField(e, "blocks"); b && !f.profile.contains("kv_blocks")) f.profile["kv_blocks"] = *b;
      if (auto b = NumberField(e, "block_bytes"); b && !f.profile.contains("kv_block_bytes")) f.profile["kv_block_bytes"] = *b;
    } else if (e.kind == "memory_pool_end") {
      SetOnce(m.free_after_kv_pool, NumberField(e, "avail_bytes"));
      update_avail(rank, NumberField(e, "avail_bytes"));
    } else if (e.kind == "graph_capture_begin") {
      SetOnce(m.free_after_kv_pool, NumberField(e, "avail_bytes"));
      update_avail(rank, NumberField(e, "avail_bytes"));
    } else if (e.kind == "graph_capture_end") {
      SetOnce(m.graphs_usage, NumberField(e, "graph_bytes"));
      update_avail(rank, NumberField(e, "avail_bytes"));
    } else if (e.kind == "memory_profile") {
      const json fields = e.FieldsJson();
      for (auto it = fields.begin(); it != fields.end(); ++it) {
        if (it->is_number() && !f.profile.contains(it.key())) f.profile[it.key()] = *it;
      }
      SetOnce(m.weights_usage, NumberField(e, "weights_bytes"));
      SetOnce(m.kv_pool, NumberField(e, "kv_cache_bytes"));
      SetOnce(m.graphs_usage, NumberField(e, "cuda_graph_bytes"));
      SetOnce(m.free_at_init, NumberField(e, "free_bytes"));  // vLLM "Free memory on device (F/T GiB) on startup"
      if (auto t = NumberField(e, "total_bytes")) observe("gpu_total_bytes", *t);
      if (auto u = NumberField(e, "gpu_memory_utilization")) observe("flag.gpu_memory_utilization", *u);
    } else if (e.kind == "free_memory_below_util") {
      SetOnce(m.free_at_init, NumberField(e, "free_bytes"));
      if (auto t = NumberField(e, "total_bytes")) observe("gpu_total_bytes", *t);
      if (auto u = NumberField(e, "gpu_memory_utilization")) observe("flag.gpu_memory_utilization", *u);
    }
  }

  // Ranks that printed no memory line carry nothing to compare.
  for (auto it = f.ranks.begin(); it != f.ranks.end();) {
    const RankMemory& m = it->second;
    bool any = false;
    for (int q = 0; q < kNumMemoryQuantities; ++q) any = any || (m.*kMemoryQuantities[q].field).has_value();
    if (!any && !last_avail.count(it->first)) {
      it = f.ranks.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& [rank, m] : f.ranks) {
    Derive(m);
    // What is left once the pool is sized; a run that died before has no "left".
    if (auto it = last_avail.find(rank); it != last_avail.end() && reached >= PhaseIndex("kv_pool")) {
      m.left = it->second;
    }
  }
  // A log without rank prefixes on a single-GPU run: call it rank 0.
  if (f.ranks.size() == 1 && f.ranks.count(-1)) {
    RankMemory m = f.ranks[-1];
    f.ranks.clear();
    f.ranks[0] = m;
  }

  if (!f.failure) f.failure = std::move(generic_failure);
  for (int i = 0; i <= reached; ++i) f.completed[i] = true;
  if (f.framework.empty() && !family_votes.empty()) {
    // The server family that printed most lines (nccl/torch/python lines ride along).
    int best = 0;
    for (const auto& [family, votes] : family_votes) {
      if (family == "sglang" || family == "vllm" || family == "tgi" || family == "trtllm" || family == "lmdeploy") {
        if (votes > best) {
          best = votes;
          f.framework = family;
        }
      }
    }
  }
  if (!f.framework.empty()) {
    if (auto it = f.config.find("version." + f.framework); it != f.config.end() && it->second.is_string()) {
      f.version = it->second.get<std::string>();
    }
    f.config.emplace("framework", f.framework);
  }
  return f;
}

void SetRootCause(RunFacts& facts, const std::string& root_cause, const std::string& verdict) {
  facts.root_cause = root_cause;
  if (facts.failure || root_cause.empty() || root_cause == "none") return;
  Failure fail;
  fail.kind = root_cause;
  int next = 0;
  while (next < NumPhases() - 1 && facts.completed[next]) ++next;
  fail.phase = Phases()[next];
  fail.text = verdict;
  facts.failure = std::move(fail);
}

}  // namespace tpt::diff
