// ledger.cc: per-rank memory figures -> memory::BuildLedger.
#include "rules/ledger.h"

#include <map>

#include "rules/memory/memory_model.h"

namespace tpt {

namespace {

double Field(const Event& e, const char* key) {
  if (!e.fields().contains(key)) return -1;
  Value v = JsonToValue(e.fields()[key]);
  return v.is_number() ? v.number() : -1;
}

}  // namespace

std::vector<LedgerRow> BuildLedger(const RunIndex& run) {
  struct Seen {
    memory::RankMemory m;
    bool any = false;
    double avail_after_weights = -1;
    double avail_before_dist_init = -1;
  };
  std::map<int, Seen> ranks;
  auto first = [](double* slot, double v) {
    if (v >= 0 && *slot == 0) *slot = v;
  };
  for (const Event& e : run.events()) {
    Seen& s = ranks[e.rank];
    s.m.rank = e.rank;
    if (e.kind == "weights_load_begin") {
      first(&s.m.free_at_init_bytes, Field(e, "avail_bytes"));
    } else if (e.kind == "dist_init_begin") {
      // Before NCCL and the CUDA context of init: only when nothing later says.
      if (s.avail_before_dist_init < 0) s.avail_before_dist_init = Field(e, "avail_bytes");
    } else if (e.kind == "dist_init_end") {
      first(&s.m.free_at_init_bytes, Field(e, "avail_bytes"));
    } else if (e.kind == "weights_load_end") {
      first(&s.m.weights_bytes, Field(e, "weights_bytes"));
      if (s.avail_after_weights < 0) s.avail_after_weights = Field(e, "avail_bytes");
    } else if (e.kind == "memory_profile") {
      first(&s.m.total_bytes, Field(e, "total_bytes"));
      first(&s.m.weights_bytes, Field(e, "weights_bytes"));
      first(&s.m.kv_pool_bytes, Field(e, "kv_cache_bytes"));
    } else if (e.kind == "kv_pool_alloc") {
      double kv = Field(e, "kv_bytes");
      if (kv < 0 && Field(e, "k_bytes") >= 0 && Field(e, "v_bytes") >= 0) kv = Field(e, "k_bytes") + Field(e, "v_bytes");
      first(&s.m.kv_pool_bytes, kv);
    } else if (e.kind == "graph_capture_end") {
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
  std::vector<memory::RankMemory> rows;
  for (auto& [rank, s] : ranks) {
    if (!s.any) continue;
    if (s.m.free_at_init_bytes == 0 && s.avail_before_dist_init > 0) s.m.free_at_init_bytes = s.avail_before_dist_init;
    if (s.m.total_bytes == 0 && run.gpu_total_bytes() > 0) s.m.total_bytes = run.gpu_total_bytes();
    // Weights printed as "avail" only: what loading took.
    if (s.m.weights_bytes == 0 && s.m.free_at_init_bytes > 0 && s.avail_after_weights >= 0)
      s.m.weights_bytes = s.m.free_at_init_bytes - s.avail_after_weights;
    // SGLang keeps (1 - f) of the free memory at init back (sglang-source.md §1.1).
    if (sglang && f.is_number() && s.m.free_at_init_bytes > 0 && s.avail_after_weights >= 0) {
      memory::SglangKvInput in;
      in.free_at_init_bytes = s.m.free_at_init_bytes;
      in.avail_after_weights_bytes = s.avail_after_weights;
      in.mem_fraction_static = f.number();
      in.cell_bytes = 1;
      if (auto r = memory::SglangKvPool(in); r.ok()) s.m.reserved_bytes = r->reserved_bytes;
    }
    // A rank that printed phase lines but no figure has nothing to show.
    if (s.m.free_at_init_bytes == 0 && s.m.weights_bytes == 0 && s.m.kv_pool_bytes == 0 && s.m.graphs_bytes == 0)
      continue;
    rows.push_back(s.m);
  }
  return memory::BuildLedger(rows);
}

}  // namespace tpt
