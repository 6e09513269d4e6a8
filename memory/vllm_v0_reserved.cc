// vllm_v0_reserved.cc: the profiling forward of vLLM V0 before 0.6.4 replayed through
// PyTorch's caching allocator (vllm_v0_reserved.h).
#include "memory/vllm_v0_reserved.h"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "memory/memory_model.h"
#include "memory/model_config.h"
#include "memory/vllm_fused_moe.h"

namespace tpt::memory {
namespace {

constexpr int64_t kSmallSize = 1 << 20;         // largest "small" request (small pool: left out)
constexpr int64_t kMinLargeAlloc = 10 << 20;    // requests below it get a 20 MiB segment
constexpr int64_t kLargeBuffer = 20 << 20;
constexpr int64_t kRoundLarge = 2 << 20;        // larger ones a segment rounded up to 2 MiB
constexpr int64_t kMinBlockSize = 512;          // every request rounded up to 512 bytes

// The large pool of c10/cuda/CUDACachingAllocator.cpp, one stream, no max_split_size.
class AllocatorReplay {
 public:
  // Returns a handle (0 for a request the small pool takes).
  int Malloc(double bytes) {
    int64_t size = static_cast<int64_t>(bytes);
    size = std::max(kMinBlockSize, (size + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize);
    if (size <= kSmallSize) return 0;
    Seg* best_seg = nullptr;
    size_t best = 0;
    for (Seg& s : segs_) {
      for (size_t i = 0; i < s.size(); ++i) {
        if (s[i].id == 0 && s[i].size >= size && (best_seg == nullptr || s[i].size < (*best_seg)[best].size)) {
          best_seg = &s;
          best = i;
        }
      }
    }
    if (best_seg == nullptr) {
      const int64_t seg = size < kMinLargeAlloc ? kLargeBuffer : (size + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
      segs_.push_back({Block{seg, 0}});
      reserved_ += seg;
      reserved_peak_ = std::max(reserved_peak_, reserved_);
      best_seg = &segs_.back();
      best = 0;
    }
    Seg& s = *best_seg;
    if (s[best].size - size > kSmallSize) {  // should_split for the large pool
      s.insert(s.begin() + static_cast<std::ptrdiff_t>(best) + 1, Block{s[best].size - size, 0});
      s[best].size = size;
    }
    s[best].id = ++next_id_;
    allocated_ += s[best].size;
    allocated_peak_ = std::max(allocated_peak_, allocated_);
    return next_id_;
  }

  void Free(int id) {
    if (id == 0) return;
    for (Seg& s : segs_) {
      for (size_t i = 0; i < s.size(); ++i) {
        if (s[i].id != id) continue;
        s[i].id = 0;
        allocated_ -= s[i].size;
        if (i + 1 < s.size() && s[i + 1].id == 0) {  // merge with the free neighbours
          s[i].size += s[i + 1].size;
          s.erase(s.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        }
        if (i > 0 && s[i - 1].id == 0) {
          s[i - 1].size += s[i].size;
          s.erase(s.begin() + static_cast<std::ptrdiff_t>(i));
        }
        return;
      }
    }
  }

  double allocated_peak() const { return static_cast<double>(allocated_peak_); }
  double reserved_peak() const { return static_cast<double>(reserved_peak_); }

 private:
  struct Block {
    int64_t size;
    int id;  // 0: free
  };
  using Seg = std::vector<Block>;
  std::vector<Seg> segs_;
  int64_t reserved_ = 0, reserved_peak_ = 0, allocated_ = 0, allocated_peak_ = 0;
  int next_id_ = 0;
};

bool Before(std::string_view version, std::vector<int> than) {
  auto v = ParseVersion(version);
  return v.ok() && CompareVersions(*v, than) < 0;
}

}  // namespace

int64_t VllmFusedMoeChunkTokens(std::string_view version, int64_t tokens) {
  if (Before(version, {0, 5, 1})) return tokens;
  if (Before(version, {0, 6, 0})) return std::min<int64_t>(tokens, 65536);
  return std::min<int64_t>(tokens, kVllmFusedMoeChunkTokens);
}

VllmV0Reserve VllmV0ReservedPeak(const ModelConfig& m, int tp, int64_t tokens, std::string_view version) {
  VllmV0Reserve r;
  tp = std::max(tp, 1);
  if (tokens <= 0 || m.layers <= 0 || m.hidden <= 0 || m.heads <= 0 || m.vision_params > 0 ||
      (!m.layer_kind.empty() && std::any_of(m.layer_kind.begin(), m.layer_kind.end(),
                                             [](const std::string& k) { return k == "linear"; }))) {
    return r;
  }
  const bool padded_mla = m.IsMla() && Before(version, {0, 7, 1}) &&
                          (m.architecture == "DeepseekV2ForCausalLM" || m.architecture == "DeepseekV3ForCausalLM");
  if (m.IsMla() && !padded_mla) return r;
  const double T = static_cast<double>(tokens), e = m.dtype_bytes, h = m.hidden;
  const double heads = static_cast<double>(m.heads) / tp;
  auto cols = [&](double c) { return T * c * e; };
  AllocatorReplay a;
  // Layer 0 (llama.py / deepseek_v2.py forward): the embedding becomes the residual and
  // input_layernorm writes a new tensor; later layers' fused add-RMSNorm works in place.
  a.Malloc(cols(h));
  int hidden = a.Malloc(cols(h));
  const VllmMoeCaches caches = VllmMoeCachesFor(version, m);
  const int64_t chunk = VllmFusedMoeChunkTokens(version, tokens);
  for (int l = 0; l < m.layers; ++l) {
    int out;
    if (padded_mla) {
      // deepseek_v2.py 0.5.1:285-330 (the same to 0.6.6.post1): q, the latent, kv_a's
      // contiguous copy and its norm, kv_b's K/V, the rotary parts (forward_native returns
      // new q_pe, k_pe), k = empty_like(q), q/k/v padded to 256 a head, the backend's
      // output and its kernel's, the un-padded copy o_proj reads.
      const double qk = m.qk_nope_head_dim + m.qk_rope_head_dim, vd = m.v_head_dim > 0 ? m.v_head_dim : 128;
      std::vector<int> held;
      if (m.q_lora_rank > 0) {
        const int qa = a.Malloc(cols(m.q_lora_rank));
        const int qn = a.Malloc(cols(m.q_lora_rank));
        a.Free(qa);
        held.push_back(a.Malloc(cols(heads * qk)));
        a.Free(qn);
      } else {
        held.push_back(a.Malloc(cols(heads * qk)));
      }
      held.push_back(a.Malloc(cols(m.kv_lora_rank + m.qk_rope_head_dim)));
      const int contiguous = a.Malloc(cols(m.kv_lora_rank));
      held.push_back(a.Malloc(cols(m.kv_lora_rank)));
      a.Free(contiguous);
      held.push_back(a.Malloc(cols(heads * (m.qk_nope_head_dim + vd))));
      held.push_back(a.Malloc(cols(heads * m.qk_rope_head_dim)));
      held.push_back(a.Malloc(cols(m.qk_rope_head_dim)));
      const int k = a.Malloc(cols(heads * qk));
      held.push_back(a.Malloc(cols(heads * 256)));
      held.push_back(a.Malloc(cols(heads * 256)));
      a.Free(k);
      held.push_back(a.Malloc(cols(heads * 256)));
      const int output = a.Malloc(cols(heads * 256));
      a.Free(a.Malloc(cols(heads * 256)));
      held.push_back(a.Malloc(cols(heads * vd)));
      a.Free(output);
      out = a.Malloc(cols(h));
      for (int id : held) a.Free(id);
    } else {
      // llama.py (0.3-0.6): qkv_proj, the backend's output = empty_like(query) and the
      // kernel's own output copied into it, o_proj; qkv and the output go at return.
      const double q = heads * m.head_dim;
      const double kv = 2.0 * KvHeadsPerRank(m.kv_heads, tp) * m.head_dim;
      const int qkv = a.Malloc(cols(q + kv));
      const int output = a.Malloc(cols(q));
      a.Free(a.Malloc(cols(q)));
      out = a.Malloc(cols(h));
      a.Free(qkv);
      a.Free(output);
    }
    // The layer rebinds its `hidden_states` to the attention's output, but the model loop
    // (`hidden_states, residual = layer(positions, hidden_states, ...)`, llama.py 0.4.3
    // L286-294) still names the layer's input until the layer returns: from layer 1 on that
    // input (the previous output, normed in place) stays through the MLP. Layer 0's caller
    // names the embedding, which is the residual; its new normed tensor goes here.
    int stale = 0;
    if (l == 0) {
      a.Free(hidden);
    } else {
      stale = hidden;
    }
    hidden = out;
    const bool moe = m.IsMoe() && static_cast<size_t>(l) < m.moe_layer.size() && m.moe_layer[l];
    if (!moe) {
      // MLP: gate_up, SiluAndMul's output, down_proj's; the first two go at return.
      const double inter = static_cast<double>(m.intermediate) / tp;
      const int gate_up = a.Malloc(cols(2 * inter));
      const int act = a.Malloc(cols(inter));
      out = a.Malloc(cols(h));
      a.Free(gate_up);
      a.Free(act);
    } else {
      // The shared experts' MLP first (its output kept), then fused_experts' caches over the
      // chunk (written in place into the input), then DeepSeek's `* routed_scaling_factor`
      // and `+ shared_output`, each a new tensor.
      int shared = 0;
      if (m.shared_experts > 0) {
        const double inter = static_cast<double>(m.shared_intermediate) * m.shared_experts / tp;
        const int gate_up = a.Malloc(cols(2 * inter));
        const int act = a.Malloc(cols(inter));
        shared = a.Malloc(cols(h));
        a.Free(gate_up);
        a.Free(act);
      }
      const double M = static_cast<double>(chunk), k = m.experts_per_tok;
      const double N = 2.0 * m.moe_intermediate / tp;
      std::vector<int> c;
      if (caches == VllmMoeCaches::kShared13) {
        c.push_back(a.Malloc(M * k * std::max(N, h) * e));
        c.push_back(a.Malloc(M * k * N / 2 * e));
      } else {
        c.push_back(a.Malloc(M * k * N * e));
        c.push_back(a.Malloc(M * k * N / 2 * e));
        c.push_back(a.Malloc(M * k * h * e));
      }
      for (int id : c) a.Free(id);
      if (shared != 0) {
        const int scaled = a.Malloc(cols(h));
        out = a.Malloc(cols(h));
        a.Free(scaled);
        a.Free(shared);
      } else {
        out = hidden;  // fused_moe(..., inplace=True) returns its input (Mixtral)
      }
    }
    if (out != hidden) a.Free(hidden);
    if (stale != 0) a.Free(stale);
    hidden = out;
  }
  r.allocated_peak = a.allocated_peak();
  r.reserved_peak = a.reserved_peak();
  r.modelled = true;
  return r;
}

}  // namespace tpt::memory
