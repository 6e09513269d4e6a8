// ledger_from_events.cc: per-rank memory figures -> memory::BuildLedger.
#include "rules/ledger_from_events.h"

#include <algorithm>
#include <map>

#include <re2/re2.h>

#include "base/strings.h"
#include "memory/memory_model.h"

namespace tpt {

namespace {

double Field(const Event& e, const char* key) {
  FieldValue f = e.Get(key);
  if (!f.present()) return -1;
  Value v = JsonToValue(f.json());
  return v.is_number() ? v.number() : -1;
}

}  // namespace

std::vector<LedgerRow> BuildLedger(const RunIndex& run) {
  // Every column starts unknown; a figure is only shown when a line printed it
  // or it follows from printed figures (never 0 for "not printed").
  struct Seen {
    memory::RankMemory m;
    bool any = false;
    double avail_after_weights = kUnknownBytes;
    double avail_before_dist_init = kUnknownBytes;
    bool reached_kv = false, reached_graphs = false;  // a line of that phase was seen on the rank
  };
  std::map<int, Seen> ranks;
  auto first = [](double* slot, double v) {
    if (v >= 0 && !KnownBytes(*slot)) *slot = v;
  };
  for (const Event& e : run.events()) {
    auto [it, fresh] = ranks.try_emplace(e.rank);
    Seen& s = it->second;
    if (fresh) {
      s.m.rank = e.rank;
      s.m.total_bytes = s.m.free_at_init_bytes = s.m.weights_bytes = s.m.reserved_bytes = s.m.kv_pool_bytes =
          s.m.graphs_bytes = kUnknownBytes;
    }
    if (e.kind == "weights_load_begin") {
      first(&s.m.free_at_init_bytes, Field(e, "avail_bytes"));
    } else if (e.kind == "dist_init_begin") {
      // Before NCCL and the CUDA context of init: only when nothing later says.
      if (!KnownBytes(s.avail_before_dist_init) && Field(e, "avail_bytes") >= 0)
        s.avail_before_dist_init = Field(e, "avail_bytes");
    } else if (e.kind == "dist_init_end") {
      first(&s.m.free_at_init_bytes, Field(e, "avail_bytes"));
    } else if (e.kind == "weights_load_end") {
      first(&s.m.weights_bytes, Field(e, "weights_bytes"));
      if (!KnownBytes(s.avail_after_weights) && Field(e, "avail_bytes") >= 0) s.avail_after_weights = Field(e, "avail_bytes");
    } else if (e.kind == "memory_profile") {
      s.reached_kv = true;
      first(&s.m.total_bytes, Field(e, "total_bytes"));
      first(&s.m.free_at_init_bytes, Field(e, "free_bytes"));  // vLLM's own free-memory figure
      first(&s.m.weights_bytes, Field(e, "weights_bytes"));
      first(&s.m.kv_pool_bytes, Field(e, "kv_cache_bytes"));
    } else if (e.kind == "free_memory_below_util") {
      first(&s.m.total_bytes, Field(e, "total_bytes"));
      first(&s.m.free_at_init_bytes, Field(e, "free_bytes"));
    } else if (e.kind == "kv_pool_alloc") {
      s.reached_kv = true;
      double kv = Field(e, "kv_bytes");
      if (kv < 0 && Field(e, "k_bytes") >= 0 && Field(e, "v_bytes") >= 0) kv = Field(e, "k_bytes") + Field(e, "v_bytes");
      first(&s.m.kv_pool_bytes, kv);
    } else if (e.kind == "memory_pool_end") {
      s.reached_kv = true;
      continue;
    } else if (e.kind == "graph_capture_begin" || e.kind == "graph_capture_end") {
      s.reached_graphs = true;
      if (e.kind == "graph_capture_begin") continue;
      first(&s.m.graphs_bytes, Field(e, "graph_bytes"));
    } else if (e.kind == "cuda_oom") {
      first(&s.m.total_bytes, Field(e, "total_bytes"));
    } else {
      continue;
    }
    s.any = true;
  }
  RunScope scope(run, RunScope::kNoAnchor);
  Value f = scope.Lookup("config.mem_fraction_static");
  bool sglang = run.framework() == "sglang";
  // Graph capture is often printed by one rank only (SGLang's TP0): the others
  // that got as far as the pool captured too, by an amount not printed.
  bool any_graphs = false;
  for (const auto& [rank, s] : ranks) any_graphs |= s.reached_graphs;
  std::vector<LedgerRow> rows;
  for (auto& [rank, s] : ranks) {
    if (!s.any) continue;
    s.reached_graphs |= any_graphs && s.reached_kv;
    memory::RankMemory& m = s.m;
    if (!KnownBytes(m.free_at_init_bytes) && KnownBytes(s.avail_before_dist_init)) m.free_at_init_bytes = s.avail_before_dist_init;
    // SGLang's "Load weight end. avail mem=A, mem usage=U" without its begin
    // line: free before the weights was A + U.
    if (!KnownBytes(m.free_at_init_bytes) && KnownBytes(s.avail_after_weights) && KnownBytes(m.weights_bytes))
      m.free_at_init_bytes = s.avail_after_weights + m.weights_bytes;
    if (!KnownBytes(m.total_bytes) && run.gpu_total_bytes() > 0) m.total_bytes = run.gpu_total_bytes();
    // Weights printed as "avail" only: what loading took.
    if (!KnownBytes(m.weights_bytes) && KnownBytes(m.free_at_init_bytes) && KnownBytes(s.avail_after_weights))
      m.weights_bytes = m.free_at_init_bytes - s.avail_after_weights;
    // SGLang keeps (1 - f) of the free memory at init back (sglang-source.md §1.1).
    if (sglang && f.is_number() && KnownBytes(m.free_at_init_bytes) && KnownBytes(s.avail_after_weights)) {
      memory::SglangKvInput in;
      in.free_at_init_bytes = m.free_at_init_bytes;
      in.avail_after_weights_bytes = s.avail_after_weights;
      in.mem_fraction_static = f.number();
      in.cell_bytes = 1;
      if (auto r = memory::SglangKvPool(in); r.ok()) m.reserved_bytes = r->reserved_bytes;
    }
    // A rank that printed phase lines but no figure has nothing to show.
    if (!KnownBytes(m.free_at_init_bytes) && !KnownBytes(m.weights_bytes) && !KnownBytes(m.kv_pool_bytes) &&
        !KnownBytes(m.graphs_bytes))
      continue;
    // left needs free and weights; a pool or graphs never allocated (the rank
    // stopped before that phase) hold 0 bytes; SGLang's reserved slice needs f.
    memory::RankMemory sum = m;
    auto zero_if = [](double* v, bool cond) {
      if (!KnownBytes(*v) && cond) *v = 0;
    };
    zero_if(&sum.kv_pool_bytes, !s.reached_kv);
    zero_if(&sum.graphs_bytes, !s.reached_graphs);
    zero_if(&sum.reserved_bytes, !sglang);
    LedgerRow row = memory::BuildLedgerRow(sum);
    row.total_bytes = m.total_bytes;
    row.kv_pool_bytes = KnownBytes(m.kv_pool_bytes) || s.reached_kv ? m.kv_pool_bytes : 0;
    row.graphs_bytes = KnownBytes(m.graphs_bytes) || s.reached_graphs ? m.graphs_bytes : 0;
    row.reserved_bytes = m.reserved_bytes;
    if (!KnownBytes(row.left_bytes)) row.left_bytes = kUnknownBytes;
    rows.push_back(row);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const LedgerRow& a, const LedgerRow& b) {
    if (a.role != b.role) return a.role == "target";
    return a.rank < b.rank;
  });
  return rows;
}

namespace {

// A speculative draft's model class (Eagle, NextN, MTP, ...), caseless.
bool DraftClass(const Event& e) {
  static const RE2 kDraft("(?i)(Eagle|NextN|MTP|Draft|Medusa)");
  FieldValue model_class = e.Get("model_class");
  return model_class.present() && RE2::PartialMatch(JsonToValue(model_class.json()).ToString(), kDraft);
}

}  // namespace

// Ledger rows of a speculative draft model (sglang-source.md §1.5 step 6: the
// draft worker repeats weight load, pool and capture after the target on each
// rank; its lines are the second of each kind, or carry role=draft).
std::vector<LedgerRow> DraftLedger(const RunIndex& run) {
  RunScope scope(run, RunScope::kNoAnchor);
  Value algo = scope.Lookup("config.speculative_algorithm");
  bool speculative = algo.is_string() && !algo.str().empty() && Lower(algo.str()) != "none";
  struct PerRank {
    int loads_begun = 0, loads_done = 0, pools = 0, graphs = 0;
    bool draft = false;
    memory::RankMemory m;
  };
  std::map<int, PerRank> ranks;
  for (const Event& e : run.events()) {
    PerRank& pr = ranks[e.rank];
    bool draft_role = e.Get("role").string() == "draft";
    if (e.kind == "weights_load_begin") {
      if (++pr.loads_begun == 2 && speculative) pr.m.free_at_init_bytes = std::max(0.0, Field(e, "avail_bytes"));
    } else if (e.kind == "weights_load_end") {
      ++pr.loads_done;
      if ((pr.loads_done == 2 && speculative) || DraftClass(e)) {
        pr.draft = true;
        pr.m.weights_bytes = std::max(0.0, Field(e, "weights_bytes"));
      }
    } else if (e.kind == "kv_pool_alloc" && (Field(e, "k_bytes") >= 0 || Field(e, "kv_bytes") >= 0)) {
      ++pr.pools;
      if (pr.draft && (pr.pools >= 2 || draft_role) && pr.m.kv_pool_bytes == 0) {
        double kv = Field(e, "kv_bytes");
        if (kv < 0) kv = Field(e, "k_bytes") + std::max(0.0, Field(e, "v_bytes"));
        pr.m.kv_pool_bytes = kv;
      }
    } else if (e.kind == "graph_capture_end" && Field(e, "graph_bytes") >= 0) {
      ++pr.graphs;
      if (pr.draft && (draft_role || pr.graphs >= 2) && pr.m.graphs_bytes == 0) pr.m.graphs_bytes = Field(e, "graph_bytes");
    }
  }
  std::vector<memory::RankMemory> rows;
  for (auto& [rank, pr] : ranks) {
    if (!pr.draft) continue;
    pr.m.rank = rank;
    pr.m.role = "draft";
    pr.m.total_bytes = run.gpu_total_bytes();
    rows.push_back(pr.m);
  }
  return memory::BuildLedger(rows);
}

}  // namespace tpt
