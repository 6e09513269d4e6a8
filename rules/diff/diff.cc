// diff.cc: differences, divergence and attribution between two runs (see diff.h).
#include "rules/diff/diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "rules/diff/kv_inputs.h"
#include "memory/memory_model.h"

namespace tpt::diff {
namespace {

using json = nlohmann::json;

// Two launches print memory with 2 decimals of GiB (about 10 MiB): closer
// values are the same number.
constexpr double kSameBytes = 6.0 * 1024 * 1024;

bool SameValue(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) {
    double x = a.get<double>(), y = b.get<double>();
    return std::fabs(x - y) <= 1e-9 * std::max({1.0, std::fabs(x), std::fabs(y)});
  }
  return a == b;
}

std::string KindOfConfigKey(const std::string& key) {
  if (key.rfind("version.", 0) == 0 || key == "framework") return "version";
  return "config";
}

std::string Show(const json& v) {
  if (v.is_null()) return "(not set)";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g", v.get<double>());
    return buf;
  }
  return v.dump();
}

// Memory quantities compared between runs: the first of each group both runs
// printed. Free memory after a phase follows from the usages before it, so
// only the independent quantities become differences.
struct QuantityGroup {
  std::vector<const char*> names;
};
const QuantityGroup kCompared[] = {
    {{"free_at_init", "free_after_dist_init"}}, {{"dist_init"}}, {{"weights", "free_after_weights"}},
    {{"kv_pool"}},                              {{"graphs"}},    {{"left"}},
};

const MemoryQuantity* FindQuantity(const std::string& name) {
  for (int i = 0; i < kNumMemoryQuantities; ++i) {
    if (name == kMemoryQuantities[i].name) return &kMemoryQuantities[i];
  }
  return nullptr;
}

void AddMemoryDifferences(const RunFacts& good, const RunFacts& bad, std::vector<Difference>* out) {
  for (const QuantityGroup& group : kCompared) {
    for (const char* name : group.names) {
      const MemoryQuantity* q = FindQuantity(name);
      struct Pair {
        int rank;
        double g, b;
      };
      std::vector<Pair> pairs;
      for (const auto& [rank, gm] : good.ranks) {
        auto it = bad.ranks.find(rank);
        if (it == bad.ranks.end()) continue;
        const auto& gv = gm.*(q->field);
        const auto& bv = it->second.*(q->field);
        if (gv && bv) pairs.push_back({rank, *gv, *bv});
      }
      if (pairs.empty()) continue;  // try the next quantity of the group
      std::vector<Pair> differing;
      for (const Pair& p : pairs) {
        if (std::fabs(p.b - p.g) > kSameBytes) differing.push_back(p);
      }
      // Every rank moved by the same amount: one row for all of them.
      bool uniform = differing.size() == pairs.size() && pairs.size() > 1;
      for (const Pair& p : differing) uniform = uniform && std::fabs((p.b - p.g) - (differing[0].b - differing[0].g)) <= kSameBytes;
      if (uniform) {
        Difference d;
        d.key = std::string("memory.") + name;
        d.good = differing[0].g;
        d.bad = differing[0].b;
        d.kind = "memory";
        d.phase = q->phase;
        d.delta_bytes = differing[0].b - differing[0].g;
        out->push_back(std::move(d));
      } else {
        for (const Pair& p : differing) {
          Difference d;
          d.key = std::string("memory.") + name + ".rank" + std::to_string(p.rank);
          d.good = p.g;
          d.bad = p.b;
          d.kind = "memory";
          d.phase = q->phase;
          d.delta_bytes = p.b - p.g;
          d.rank = p.rank;
          out->push_back(std::move(d));
        }
      }
      break;
    }
  }
}

std::string FirstDifferingPhase(const RunFacts& good, const RunFacts& bad) {
  for (int i = 0; i < static_cast<int>(Phases().size()); ++i) {
    if (good.completed[i] != bad.completed[i]) return Phases()[i];
  }
  return "";
}

std::vector<Difference> FindDifferences(const RunFacts& good, const RunFacts& bad) {
  std::vector<Difference> out;
  std::set<std::string> keys;
  for (const auto& [k, v] : good.config) keys.insert(k);
  for (const auto& [k, v] : bad.config) keys.insert(k);
  for (const std::string& key : keys) {
    auto g = good.config.find(key);
    auto b = bad.config.find(key);
    json gv = g == good.config.end() ? json(nullptr) : g->second;
    json bv = b == bad.config.end() ? json(nullptr) : b->second;
    if (SameValue(gv, bv)) continue;
    // Printed during startup by one run only: the other died before saying.
    if ((gv.is_null() || bv.is_null()) && (good.observed.count(key) || bad.observed.count(key))) continue;
    Difference d;
    d.key = key;
    d.good = gv;
    d.bad = bv;
    d.kind = KindOfConfigKey(key);
    out.push_back(std::move(d));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Difference& a, const Difference& b) { return a.kind == "config" && b.kind != "config"; });
  AddMemoryDifferences(good, bad, &out);
  if (std::string phase = FirstDifferingPhase(good, bad); !phase.empty()) {
    Difference d;
    d.key = "phase.reached";
    d.good = good.LastPhase();
    d.bad = bad.LastPhase();
    d.kind = "event";
    d.phase = phase;
    out.push_back(std::move(d));
  }
  auto add_error = [&](const RunFacts& run, const RunFacts& other, bool run_is_bad) {
    if (!run.failure) return;
    if (other.failure && other.failure->kind == run.failure->kind) return;
    Difference d;
    d.key = "error." + run.failure->kind;
    json text = run.failure->text;
    auto count = other.event_counts.find(run.failure->kind);
    json other_side = count == other.event_counts.end() ? json(nullptr) : json(count->second);
    d.good = run_is_bad ? other_side : text;
    d.bad = run_is_bad ? text : other_side;
    d.kind = "event";
    d.phase = run.failure->phase;
    d.rank = run.failure->rank;
    out.push_back(std::move(d));
  };
  add_error(bad, good, true);
  add_error(good, bad, false);
  return out;
}

std::string DivergesAt(const RunFacts& good, const RunFacts& bad, const std::vector<Difference>& diffs) {
  int first = static_cast<int>(Phases().size());
  for (const Difference& d : diffs) {
    if (d.phase.empty()) continue;
    if (d.kind == "memory" && (!d.delta_bytes || std::fabs(*d.delta_bytes) < kMaterialBytes)) continue;
    first = std::min(first, PhaseIndex(d.phase));
  }
  return first < static_cast<int>(Phases().size()) ? Phases()[first] : "";
}

// ---------------------------------------------------------------------------
// Attribution.

bool IsKvFailure(const std::string& kind) {
  return kind == "not_enough_memory" || kind == "min_viable_fraction_error" || kind == "no_cache_blocks" ||
         kind == "kv_too_small" || kind == "free_memory_below_util";
}

// Configuration that acts on memory through a quantity diff measures.
const char* MeasuredThrough(const std::string& key) {
  if (key == "custom_all_reduce" || key == "flag.disable_custom_all_reduce" || key == "flag.enable_custom_all_reduce") {
    return "dist_init";
  }
  if (key == "tp" || key == "pp" || key == "model" || key == "flag.quantization" || key == "flag.dtype" ||
      key == "flag.load_format") {
    return "weights";
  }
  return nullptr;
}

// Whether custom all-reduce ran in a run, from its log (events, then flags).
std::optional<bool> CustomArOn(const RunFacts& f) {
  if (auto it = f.config.find("custom_all_reduce"); it != f.config.end() && it->second.is_string()) {
    return it->second.get<std::string>() == "on";
  }
  if (auto v = f.Bool("flag.disable_custom_all_reduce")) return !*v;
  if (auto v = f.Bool("flag.enable_custom_all_reduce")) return *v;
  return std::nullopt;
}

// Links between a failure kind and the configuration that can cause it, from
// the servers' source (knowledge/sglang-source.md §3, vllm-source.md §3,
// anchors-allreduce.md): key prefixes.
struct Link {
  const char* kind;
  std::vector<const char*> keys;
  const char* why;
};
const Link kLinks[] = {
    {"p2p_error",
     {"custom_all_reduce", "flag.disable_custom_all_reduce", "flag.enable_custom_all_reduce", "flag.enable_p2p_check",
      "env.NCCL_P2P", "env.SGLANG_SKIP_P2P_CHECK", "env.VLLM_SKIP_P2P_CHECK", "env.PYTORCH_CUDA_ALLOC_CONF",
      "env.CUDA_VISIBLE_DEVICES", "gpu"},
     "peer access and IPC handles are set up by custom all-reduce and the NCCL P2P transport"},
    {"illegal_memory_access",
     {"custom_all_reduce", "flag.disable_custom_all_reduce", "flag.enable_custom_all_reduce", "version."},
     "custom all-reduce kernels read peers' buffers directly"},
    {"nccl_error",
     {"env.NCCL_", "version.nccl", "custom_all_reduce", "flag.disable_custom_all_reduce", "env.CUDA_VISIBLE_DEVICES"},
     "NCCL reads its NCCL_* environment at communicator init"},
    {"network_error", {"env.NCCL_SOCKET_IFNAME", "env.GLOO_SOCKET_IFNAME", "env.MASTER_", "env.NCCL_IB", "flag.dist_init_addr", "flag.host"},
     "the bootstrap store and NCCL pick interfaces and addresses from these"},
    {"watchdog_timeout", {"env.NCCL_", "custom_all_reduce", "flag.disable_custom_all_reduce", "version.nccl"},
     "collectives run through NCCL or custom all-reduce"},
    {"shm_error", {"env.NCCL_SHM", "env.NCCL_P2P"}, "NCCL falls back to shared memory without P2P"},
    {"no_kernel_image", {"gpu", "version.", "env.TORCH_CUDA_ARCH_LIST"}, "kernels are built for a list of GPU architectures"},
    {"unsupported_arch", {"gpu", "version.", "flag.attention_backend"}, "backends support a set of GPU architectures"},
    {"driver_mismatch", {"version.", "env.LD_LIBRARY_PATH"}, "the CUDA runtime needs a matching driver"},
    {"address_in_use", {"flag.port", "env.MASTER_PORT", "flag.dist_init_addr"}, "the port is taken"},
    {"duplicate_gpu", {"env.CUDA_VISIBLE_DEVICES", "tp"}, "two ranks mapped to one device"},
};

bool KeyMatches(const std::string& key, const char* prefix) {
  std::string p = prefix;
  if (!p.empty() && (p.back() == '.' || p.back() == '_')) return key.rfind(p, 0) == 0;
  return key == p || key.rfind(p, 0) == 0;
}

// How an error message names a flag or variable: "--mem-fraction-static",
// "mem_fraction_static=", "NCCL_P2P_DISABLE". A one-word flag ("device",
// "port") only counts with its dashes: as a bare word it is ordinary English.
std::vector<std::string> Spellings(const std::string& key) {
  std::vector<std::string> out;
  if (key.rfind("env.", 0) == 0) {
    out.push_back(key.substr(4));
  } else if (key.rfind("flag.", 0) == 0) {
    std::string name = key.substr(5);
    std::string dashed = name;
    std::replace(dashed.begin(), dashed.end(), '_', '-');
    out.push_back("--" + dashed);
    if (name.find('_') != std::string::npos) out.push_back(name);
  }
  return out;
}

struct Candidate {
  const Difference* diff = nullptr;
  double effect = 0;     // bytes of KV budget (or free memory) the difference cost the bad run
  bool flips = false;    // reverting it alone makes the bad run fit
  bool has_effect = false;
  std::string how;       // what reverting means, for the explanation
  std::string via;       // memory difference it is measured through
  std::optional<double> size_bytes;  // memory it takes in the bad run, per rank
  std::string size_phase;
};

std::string Signed(double bytes) { return (bytes >= 0 ? "+" : "") + FormatBytes(bytes); }

std::string RevertWord(const Difference& d) {
  auto show = [&](const json& v) {
    return d.kind == "memory" && v.is_number() ? FormatBytes(v.get<double>()) : Show(v);
  };
  return d.key + " " + show(d.bad) + " (GOOD " + show(d.good) + ")";
}

void AttributeKv(const RunFacts& good, const RunFacts& bad, const std::vector<Difference>& diffs,
                 const KvArithmetic& bad_kv, const KvInputs& bad_in, DiffResult* r) {
  const Failure& fail = *bad.failure;
  std::vector<Candidate> cands;
  for (const Difference& d : diffs) {
    if (d.kind == "event") continue;
    Candidate c;
    c.diff = &d;
    KvInputs in = bad_in;
    bool can = false;
    if (d.kind == "memory") {
      std::string quantity = d.key.substr(7);
      if (auto dot = quantity.find(".rank"); dot != std::string::npos) quantity = quantity.substr(0, dot);
      if (PhaseIndex(d.phase) < PhaseIndex(fail.phase) ||
          (PhaseIndex(d.phase) == PhaseIndex(fail.phase) && d.phase == "init")) {
        RevertMemory(in, quantity, d.rank, good, bad);
        can = true;
        c.how = "with GOOD's " + quantity + (d.rank >= 0 ? " on rank " + std::to_string(d.rank) : "");
        if (d.delta_bytes) c.size_bytes = std::fabs(*d.delta_bytes);
        c.size_phase = d.phase;
      }
    } else if (d.key == "flag.mem_fraction_static" && d.good.is_number()) {
      in.mem_fraction_static = d.good.get<double>();
      can = true;
      c.how = "with mem_fraction_static " + Show(d.good);
    } else if (d.key == "flag.gpu_memory_utilization" && d.good.is_number()) {
      in.gpu_memory_utilization = d.good.get<double>();
      can = true;
      c.how = "with gpu_memory_utilization " + Show(d.good);
    } else if (d.key == "version." + bad.framework && d.good.is_string() && good.framework == bad.framework) {
      in.version = d.good.get<std::string>();
      can = true;
      c.how = "under the formula of " + bad.framework + " " + in.version;
    } else if (const char* through = MeasuredThrough(d.key)) {
      // Measured when both runs printed the quantity it acts through.
      for (const Difference& m : diffs) {
        if (m.kind == "memory" && (m.key == std::string("memory.") + through ||
                                   m.key.rfind(std::string("memory.") + through + ".rank", 0) == 0)) {
          RevertMemory(in, through, m.rank, good, bad);
          can = true;
          c.via = m.key;
          if (m.delta_bytes) c.size_bytes = std::fabs(*m.delta_bytes);
          c.size_phase = m.phase;
        }
      }
      if (can) {
        c.how = "without its " + std::string(through) + " memory (" + c.via + ")";
      } else if (std::string(through) == "dist_init") {
        auto g = CustomArOn(good), b = CustomArOn(bad);
        if (g && b && *b && !*g) {
          // Not measured: the buffers' size from the source (sglang-source.md §3).
          ReleaseAtDistInit(in, memory::kCustomAllReduceBytes);
          can = true;
          c.size_bytes = memory::kCustomAllReduceBytes;
          c.size_phase = "dist_init";
          c.how = "without custom all-reduce buffers (" + FormatBytes(memory::kCustomAllReduceBytes) +
                  " a rank, from the source: 2 x 8 MiB IPC buffers + 8 MiB rank data)";
        }
      }
    }
    if (can) {
      KvArithmetic cf = EvaluateKv(in);
      if (cf.computed) {
        c.has_effect = true;
        c.effect = cf.budget_bytes - bad_kv.budget_bytes;
        c.flips = !cf.fails;
        c.how += std::string(cf.fails ? ": still short by " + FormatBytes(cf.shortfall_bytes)
                                      : " the same run has " + Signed(cf.budget_bytes) + " to spare and starts");
      }
    }
    cands.push_back(std::move(c));
  }

  // The explaining difference: reverting it alone makes the run fit; the
  // largest such; configuration before the memory difference it acts through.
  const Candidate* best = nullptr;
  for (const Candidate& c : cands) {
    if (!c.flips) continue;
    if (!best || c.effect > best->effect + kSameBytes ||
        (std::fabs(c.effect - best->effect) <= kSameBytes && best->diff->kind == "memory" && c.diff->kind != "memory")) {
      best = &c;
    }
  }
  const std::string shortfall = FormatBytes(bad_kv.shortfall_bytes);
  for (const Candidate& c : cands) {
    if (&c == best) continue;
    std::string reason;
    const Difference& d = *c.diff;
    if (best && (best->via == d.key)) {
      reason = "accounted to " + best->diff->key;
    } else if (c.has_effect) {
      std::string size = c.size_bytes ? "takes " + FormatBytes(*c.size_bytes) +
                                            (good.ranks.size() > 1 && d.rank < 0 ? " a rank" : "") + " at " +
                                            c.size_phase + ", worth "
                                      : "worth ";
      reason = size + Signed(c.effect) + " of KV budget against a " + shortfall + " shortfall (" + c.how + ")";
      if (c.flips) reason = "would also let it start (" + c.how + "), but " + best->diff->key + " weighs more";
    } else if (d.kind == "memory") {
      reason = "differs at " + d.phase + " (" + Signed(d.delta_bytes.value_or(0)) + ")" +
               (d.phase == fail.phase ? ", the phase that fails: a symptom of the failure, not a cause"
                                      : ", after the failure at " + fail.phase);
    } else {
      reason = "not an input of " + bad.framework + "'s KV-pool arithmetic";
    }
    r->attribution.ruled_out.push_back({d.key, reason});
  }
  std::string arithmetic = "under " + bad.framework + " " + bad_kv.era + ", " + bad_kv.arithmetic +
                           ": short by " + shortfall;
  if (best) {
    r->attribution.cause = best->diff->key;
    r->attribution.explanation = "BAD fails with " + fail.kind + " at " + fail.phase + ": " + arithmetic + ". " +
                                 "It follows from " + RevertWord(*best->diff) + ": " + best->how + " (" +
                                 Signed(best->effect) + " of KV budget).";
    r->exit_code = 1;
  } else {
    const Candidate* largest = nullptr;
    for (const Candidate& c : cands) {
      if (c.has_effect && (!largest || c.effect > largest->effect)) largest = &c;
    }
    r->attribution.explanation = "BAD fails with " + fail.kind + " at " + fail.phase + ": " + arithmetic +
                                 ". No single difference explains it" +
                                 (largest ? "; the largest, " + largest->diff->key + ", recovers " +
                                                FormatBytes(largest->effect)
                                          : std::string()) +
                                 ".";
    r->exit_code = 3;
  }
}

// Failures that are not the KV arithmetic (CUDA OOM in a phase, or a KV
// failure the model cannot compute): differences are weighed by the free
// memory they took from the bad run before the failing phase.
void AttributePressure(const RunFacts& good, const RunFacts& bad, const std::vector<Difference>& diffs,
                       DiffResult* r) {
  const Failure& fail = *bad.failure;
  std::optional<double> shortfall;
  auto tried = fail.fields.find("tried_bytes"), free = fail.fields.find("free_bytes");
  if (tried != fail.fields.end() && free != fail.fields.end() && tried->is_number() && free->is_number()) {
    shortfall = tried->get<double>() - free->get<double>();
  }
  const int fail_phase = PhaseIndex(fail.phase);
  const Difference* best = nullptr;
  double best_effect = 0;
  std::vector<std::pair<const Difference*, double>> effects;
  auto free_init = bad.MinOverRanks(&RankMemory::free_after_dist_init);
  for (const Difference& d : diffs) {
    if (d.kind == "event") continue;
    std::optional<double> effect;
    if (d.kind == "memory" && PhaseIndex(d.phase) < fail_phase && d.delta_bytes) {
      bool is_free = d.key.rfind("memory.free", 0) == 0;
      effect = is_free ? -*d.delta_bytes : *d.delta_bytes;
    } else if (d.key == "flag.mem_fraction_static" && d.good.is_number() && d.bad.is_number() && free_init &&
               fail_phase > PhaseIndex("kv_pool")) {
      effect = (d.bad.get<double>() - d.good.get<double>()) * *free_init;  // a larger pool leaves less
    } else if (d.key == "flag.gpu_memory_utilization" && d.good.is_number() && d.bad.is_number() &&
               bad.Number("gpu_total_bytes") && fail_phase > PhaseIndex("kv_pool")) {
      effect = (d.bad.get<double>() - d.good.get<double>()) * *bad.Number("gpu_total_bytes");
    }
    effects.push_back({&d, effect.value_or(NAN)});
    if (effect && *effect > best_effect && (shortfall ? *effect >= *shortfall : *effect >= kMaterialBytes)) {
      best = &d;
      best_effect = *effect;
    }
  }
  std::string need = shortfall ? "a " + FormatBytes(*shortfall) + " shortfall" : "the failure";
  for (const auto& [d, effect] : effects) {
    if (d == best) continue;
    std::string reason;
    if (!std::isnan(effect)) {
      reason = FormatBytes(std::fabs(effect)) + (effect < 0 ? " more free" : " less free") + " at " + fail.phase +
               " against " + need;
    } else if (d->kind == "memory") {
      reason = "differs at " + d->phase + ", not before the failure at " + fail.phase;
    } else {
      reason = "no memory effect before " + fail.phase;
    }
    r->attribution.ruled_out.push_back({d->key, reason});
  }
  std::string head = "BAD fails with " + fail.kind + " at " + fail.phase +
                     (shortfall ? " (short by " + FormatBytes(*shortfall) + ")" : "");
  if (best) {
    r->attribution.cause = best->key;
    r->attribution.explanation = head + ". " + RevertWord(*best) + " leaves " + FormatBytes(best_effect) +
                                 " less free memory before " + fail.phase + ", which covers " + need + ".";
    r->exit_code = 1;
  } else {
    r->attribution.explanation = head + "; no difference before " + fail.phase + " accounts for " + need + ".";
    r->exit_code = 3;
  }
}

// Non-memory failures: a difference named in the error text, else one linked
// to the failure kind by mechanism.
void AttributeEvent(const RunFacts& good, const RunFacts& bad, const std::vector<Difference>& diffs, DiffResult* r) {
  const Failure& fail = *bad.failure;
  const Difference* best = nullptr;
  std::string why;
  for (const Difference& d : diffs) {
    if (d.kind == "event" || d.kind == "memory") continue;
    for (const std::string& s : Spellings(d.key)) {
      if (s.size() >= 4 && fail.text.find(s) != std::string::npos) {
        best = &d;
        why = "the error names " + s;
        break;
      }
    }
    if (best) break;
  }
  if (!best) {
    for (const Link& link : kLinks) {
      if (fail.kind != link.kind) continue;
      for (const Difference& d : diffs) {
        if (d.kind == "event" || d.kind == "memory") continue;
        for (const char* k : link.keys) {
          if (KeyMatches(d.key, k)) {
            best = &d;
            why = link.why;
            break;
          }
        }
        if (best) break;
      }
    }
  }
  for (const Difference& d : diffs) {
    if (&d == best || d.kind == "event") continue;
    r->attribution.ruled_out.push_back({d.key, "no known link to " + fail.kind + " at " + fail.phase});
  }
  std::string head = "BAD fails with " + fail.kind + " at " + fail.phase + " (\"" + fail.text.substr(0, 160) + "\")";
  if (best) {
    r->attribution.cause = best->key;
    r->attribution.explanation = head + ". " + RevertWord(*best) + " differs, and " + why + ".";
    r->exit_code = 1;
  } else {
    r->attribution.explanation = head + "; no difference is linked to it.";
    r->exit_code = 3;
  }
}

}  // namespace

KvArithmetic ComputeKv(const RunFacts& run, const RunFacts* other) {
  return EvaluateKv(GatherKvInputs(run, other));
}

DiffResult Compare(const RunFacts& good, const RunFacts& bad) {
  DiffResult r;
  r.good = good;
  r.bad = bad;
  r.differences = FindDifferences(good, bad);
  r.diverges_at = DivergesAt(good, bad, r.differences);
  KvInputs bad_in = GatherKvInputs(bad, &good);
  r.good_kv = ComputeKv(good, &bad);
  r.bad_kv = EvaluateKv(bad_in);
  if (!good.framework.empty() && !bad.framework.empty() && good.framework != bad.framework) {
    r.warnings.push_back("the runs are different servers (" + good.framework + " and " + bad.framework +
                         "): memory figures do not compare one to one");
  }

  if (!bad.failure) {
    r.exit_code = 0;
    if (good.failure) {
      r.warnings.push_back("the GOOD run failed (" + good.failure->kind + " at " + good.failure->phase +
                           ") and the BAD run did not: were they given in the wrong order?");
      r.attribution.explanation = "BAD shows no failure; GOOD fails with " + good.failure->kind + ".";
    } else {
      r.attribution.explanation = "Neither run shows a failure.";
    }
    return r;
  }
  if (good.failure && good.failure->kind == bad.failure->kind) {
    r.exit_code = 3;
    r.attribution.explanation = "Both runs fail with " + bad.failure->kind + " (GOOD at " + good.failure->phase +
                                ", BAD at " + bad.failure->phase + "): the differences did not change the outcome.";
    for (const Difference& d : r.differences) {
      if (d.kind != "event") r.attribution.ruled_out.push_back({d.key, "GOOD fails the same way"});
    }
    return r;
  }
  const bool memory_failure = IsKvFailure(bad.failure->kind) || bad.failure->kind == "cuda_oom" ||
                              bad.failure->kind == "weights_oom" || bad.failure->kind == "graph_capture_failed";
  if (IsKvFailure(bad.failure->kind) && r.bad_kv.computed && r.bad_kv.fails) {
    AttributeKv(good, bad, r.differences, r.bad_kv, bad_in, &r);
  } else if (memory_failure) {
    if (IsKvFailure(bad.failure->kind)) {
      r.warnings.push_back(r.bad_kv.computed
                               ? "the memory model says BAD's KV pool fits (" + Signed(r.bad_kv.budget_bytes) +
                                     ") although the log shows " + bad.failure->kind + ": some input is missing"
                               : "BAD's KV arithmetic cannot be computed: " + r.bad_kv.note);
    }
    AttributePressure(good, bad, r.differences, &r);
  } else {
    AttributeEvent(good, bad, r.differences, &r);
  }
  return r;
}

// ---------------------------------------------------------------------------
// JSON.

void to_json(json& j, const Difference& d) {
  j = {{"key", d.key}, {"good", d.good}, {"bad", d.bad}, {"kind", d.kind}, {"phase", d.phase}};
  if (d.delta_bytes) j["delta_bytes"] = *d.delta_bytes;
  if (d.rank >= 0) j["rank"] = d.rank;
}

void to_json(json& j, const RuledOut& r) { j = {{"key", r.key}, {"reason", r.reason}}; }

void to_json(json& j, const Attribution& a) {
  j = {{"cause", a.cause}, {"explanation", a.explanation}, {"ruled_out", a.ruled_out}};
}

void to_json(json& j, const KvArithmetic& k) {
  j = {{"computed", k.computed}, {"framework", k.framework}, {"version", k.version}, {"era", k.era},
       {"formula", k.formula},   {"arithmetic", k.arithmetic}, {"inputs", k.inputs},       {"results", k.results}, {"budget_bytes", k.budget_bytes},
       {"shortfall_bytes", k.shortfall_bytes}, {"fails", k.fails}, {"note", k.note}};
}

json MemoryTable(const RunFacts& f) {
  json t = json::object();
  for (int q = 0; q < kNumMemoryQuantities; ++q) {
    json row = json::object();
    for (const auto& [rank, m] : f.ranks) {
      const auto& v = m.*kMemoryQuantities[q].field;
      if (v) row[std::to_string(rank)] = *v;
    }
    if (!row.empty()) t[kMemoryQuantities[q].name] = row;
  }
  return t;
}

namespace {
json RunJson(const RunFacts& f, const KvArithmetic& kv) {
  json j = {{"framework", f.framework},
            {"version", f.version},
            {"last_phase", f.LastPhase()},
            {"root_cause", f.root_cause},
            {"config", f.config},
            {"memory", MemoryTable(f)},
            {"kv", kv}};
  if (f.failure) {
    j["failure"] = {{"kind", f.failure->kind}, {"phase", f.failure->phase}, {"file", f.failure->file},
                    {"line", f.failure->line}, {"rank", f.failure->rank},   {"text", f.failure->text}};
  } else {
    j["failure"] = nullptr;
  }
  return j;
}
}  // namespace

void to_json(json& j, const DiffResult& r) {
  j = {{"schema_version", r.schema_version},
       {"differences", r.differences},
       {"diverges_at", r.diverges_at},
       {"attribution", r.attribution},
       {"good", RunJson(r.good, r.good_kv)},
       {"bad", RunJson(r.bad, r.bad_kv)},
       {"warnings", r.warnings},
       {"exit_code", r.exit_code}};
}

}  // namespace tpt::diff
