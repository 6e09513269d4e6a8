// launch_plan_sensitivity.cc: the plan's ranges (Plan::sensitivity): each assumption the
// point rests on, varied to its low and high end and re-planned, and what they say of the
// outcome: a start (or a failure) the plan's own ranges reach across is not vouched for.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "memory/vllm_deepseek_mha.h"
#include "memory/launch_plan_internal.h"
#include "memory/numeric.h"
#include "memory/tgi_warmup_held.h"
#include "memory/trtllm_engine_build.h"
#include "memory/unified_memory.h"

namespace tpt::memory::internal {

void AddSensitivity(const PlanInput& in, Plan& p) {
  auto vary = [&](const std::string& what, PlanInput lo, PlanInput hi) {
    auto a = Run(lo), b = Run(hi);
    if (!a.ok() || !b.ok()) return;
    Sensitivity s;
    s.assumption = what;
    s.kv_tokens_low = std::min(a->kv_tokens, b->kv_tokens);
    s.kv_tokens_high = std::max(a->kv_tokens, b->kv_tokens);
    s.fits_low = a->kv_tokens <= b->kv_tokens ? a->fits : b->fits;
    s.fits_high = a->kv_tokens <= b->kv_tokens ? b->fits : a->fits;
    if (s.kv_tokens_low != p.kv_tokens || s.kv_tokens_high != p.kv_tokens || s.fits_low != p.fits ||
        s.fits_high != p.fits) {
      p.sensitivity.push_back(s);
    }
  };
  const bool sglang = in.framework == "sglang";
  const double w = p.weights_bytes;
  // The weights' line below: +/-1% where the index's total is known, else +/-3% (config estimate).
  const bool weights_estimated = in.model && !in.weights_bytes && !in.avail_after_weights_bytes;
  const double weights_spread = p.weights && p.weights->index_total_bytes ? 0.01 : 0.03;
  if (weights_estimated) {
    const double spread = weights_spread;
    PlanInput lo = in, hi = in;
    // A TensorRT engine trtllm-serve builds unquantized priced the checkpoint's weights at its
    // torch_dtype (trtllm_engine_build.cc), which the variants' replan applies again.
    const double unq =
        p.figures.contains("engine_unquantized_ratio") ? p.figures["engine_unquantized_ratio"].get<double>() : 1.0;
    lo.weights_bytes = w / unq * (1 + spread);
    hi.weights_bytes = w / unq * (1 - spread);
    // The variants keep the model: what the plan derives from it besides the weights
    // (TGI's defaults before the warm-up, tgi_launcher.cc; SGLang's mamba state and
    // hybrid sliding-window pool; vLLM's hybrid KV cache groups) is the point's too, so
    // only the weights move (a variant without the model priced a hybrid model's pool as
    // all full attention, and its range missed its own point). The cell and the
    // activation peak below are given, so it sizes nothing else.
    for (PlanInput* t : {&lo, &hi}) {
      KvDims d = KvDimsOf(*in.model, in.pp);
      std::string mha_why;  // vLLM before 0.7.1 keeps DeepSeek's KV as padded MHA, as the point does
      if (in.framework == "vllm") VllmDeepseekKvAsMha(*in.model, in.version, &d, &mha_why);
      if (t->dims.layers == 0) t->dims = d;
      t->context_length = p.input.context_length;
      // Still the model's context (TGI v3 then warms up on the prefill, not on requests of it).
      t->context_from_model = p.input.context_from_model;
      // TGI, TensorRT-LLM and LMDeploy price the KV cell the plan did (TensorRT-LLM's
      // checkpoint KV dtype needs the model, which these variants drop).
      if (in.framework == "tgi" || in.framework == "trtllm" || in.framework == "lmdeploy") t->cell_bytes = p.cell_bytes;
      if (!sglang && !t->activation_peak_bytes && p.figures.contains("activation_peak_bytes")) {
        t->activation_peak_bytes = p.figures["activation_peak_bytes"].get<double>();
      }
      if (p.figures.contains("turbomind_held_bytes")) {
        t->turbomind_held_bytes = p.figures["turbomind_held_bytes"].get<double>();
      }
      if (p.figures.contains("sglang_multimodal_factor")) {
        t->sglang_multimodal_factor = p.figures["sglang_multimodal_factor"].get<double>();
      }
      if (!t->runtime_buffers_bytes && p.figures.contains("runtime_buffers_bytes")) {
        t->runtime_buffers_bytes = p.figures["runtime_buffers_bytes"].get<double>();
      }
    }
    char buf[96];
    std::snprintf(buf, sizeof(buf), "weights per rank +/-%.0f%% (%s)", spread * 100,
                  p.weights && p.weights->index_total_bytes ? "index total known" : "config estimate");
    vary(buf, lo, hi);
  }
  if (!in.free_at_init_bytes) {
    PlanInput lo = in, hi = in;
    lo.free_at_init_bytes = p.free_at_init_bytes - 0.5 * kGiB;
    hi.free_at_init_bytes = std::min(in.total_bytes, p.free_at_init_bytes + 0.25 * kGiB);
    vary("free memory at init -0.5/+0.25 GiB (context, NCCL by GPU and driver)", lo, hi);
  }
  if (in.total_bytes_low > 0 && in.total_bytes_low < in.total_bytes && !in.free_at_init_bytes &&
      !in.avail_after_weights_bytes) {
    // The card's total differs by host (gpu_catalog.json memory_gib_low: ECC on, a newer
    // driver's reserve): the point takes the catalog's, the range runs down to the lower.
    PlanInput lo = in;
    lo.total_bytes = in.total_bytes_low;
    lo.total_bytes_low = 0;
    vary("card total: " + FormatGiB(in.total_bytes_low) + " where " + in.total_low_when + " to the catalog's " +
             FormatGiB(in.total_bytes) + " (pass --gpu-mem with the host's)",
         lo, in);
  }
  if (in.framework == "tgi" && !in.activation_peak_bytes && p.figures.contains("tgi_least_held_bytes")) {
    // TGI's warm-up at its free-memory read (tgi_warmup_held.cc): the point holds both phases
    // and what no source sizes at this version; the most the read can see is both phases and
    // the most measured on any launch (1.9 GiB), the least the larger phase alone (the caching
    // allocator reuses or gives back the other's blocks) with nothing unexplained.
    PlanInput lo = in, hi = in;
    const double more = p.figures.contains("tgi_more_held_bytes") ? p.figures["tgi_more_held_bytes"].get<double>() : 0;
    if (more > 0) lo.activation_peak_bytes = p.figures["activation_peak_bytes"].get<double>() + more;
    hi.activation_peak_bytes = p.figures["tgi_least_held_bytes"].get<double>();
    vary(more > 0 ? "TGI's warm-up at its free-memory read: from both phases and the most held beyond them on any "
                    "logged launch (" + FormatGiB(TgiUnexplainedHeldBytes("")) + ") to the larger phase alone"
                  : "TGI's warm-up at its free-memory read: from the point's (both phases and the unexplained bytes) "
                    "to the larger phase alone",
         lo, hi);
    if (p.figures.contains("tgi_vlm_unpriced_bytes")) {
      // A VLM warm-up cost the plan names under `unknown:` and leaves out of its point
      // (tgi_vlm_warmup.h): held at the read too, it may turn the outcome, which is then not
      // vouched for (below).
      const double more_vlm = p.figures["tgi_vlm_unpriced_bytes"].get<double>();
      PlanInput with = in;
      with.activation_peak_bytes = p.figures["activation_peak_bytes"].get<double>() + more_vlm;
      vary("TGI's VLM warm-up: what the plan names under unknown: and does not price, none to " + FormatGiB(more_vlm),
           with, in);
    }
  } else if (!sglang && !in.activation_peak_bytes) {
    double a = p.figures.contains("activation_peak_bytes") ? p.figures["activation_peak_bytes"].get<double>() : 0;
    PlanInput lo = in, hi = in;
    // A multimodal encoder's profiling the plan does not size (unknown:) can take more
    // than twice the estimate; its range is wider.
    const bool encoder = p.input.encoder_profile_unmodelled;
    const bool tgi = in.framework == "tgi";  // without a model: its warm-up at the read (unknown:)
    // A TensorRT engine's activations were sized by TensorRT at build time (the engine path
    // measures no estimation pass): x0.5-x1.5, no PyTorch extras.
    const bool trtllm = in.framework == "trtllm" && !p.figures.contains("runtime_buffers_bytes");
    const double up = encoder ? 3.0 : tgi ? 2.0 : 1.5;
    // TensorRT-LLM's estimation pass measures everything held at its end (_util.py
    // estimate_max_tokens: peak = torch peak + non-torch extra_cost), beyond the forward the
    // estimate prices: up to 2 GiB more (unknown: in PlanTrtllm).
    lo.activation_peak_bytes = std::max(a * up, 0.5 * kGiB) + (trtllm ? 2.0 * kGiB : 0.0);
    lo.encoder_profile_unmodelled = hi.encoder_profile_unmodelled = false;
    hi.activation_peak_bytes = std::max(a * 0.5, p.input.activation_floor_bytes);
    vary(encoder  ? "activation peak x0.5-x3 (profiling run estimate; encoder profiling not modelled)"
         : tgi    ? "activation peak x0.5-x2 (TGI's warm-up as its free-memory read sees it)"
         : trtllm ? "estimation-pass peak x0.5 to x1.5 + 2 GiB (its CUDA graphs, sampler and non-torch memory)"
         : p.figures.contains("runtime_buffers_bytes") ? "activations x0.5-x1.5 (the engine's execution context, sized at build)"
                  : "activation peak x0.5-x1.5 (profiling run estimate)",
         lo, hi);
  }
  if (p.input.mm_images_worst > 1 && !in.activation_peak_bytes) {
    // vLLM V0's InternVL profiling without --limit-mm-per-prompt (unknown: in Run): from the
    // default's one image a prompt to the most a prompt of the context can carry.
    PlanInput lo = in;
    lo.mm_limits = VllmMmLimits{static_cast<int>(p.input.mm_images_worst), 1, true};
    const std::string what = "--limit-mm-per-prompt images 1 (the default) to " +
                             std::to_string(p.input.mm_images_worst) + " (the most a prompt of the context carries)";
    vary(what, lo, in);
    // A start that a launch setting the flag would not have: not vouched for (unknown: above).
    if (p.fits && !p.sensitivity.empty() && p.sensitivity.back().assumption == what && !p.sensitivity.back().fits_low) {
      p.outcome_certain = false;
    }
  }
  if (p.figures.contains("nccl_graph_room_bytes") && !in.cuda_graph_bytes) {
    // vLLM V1 before 0.21 at TP > 1 without the custom all-reduce: its graphs, captured
    // after the KV cache outside the budget, hold NCCL all-reduces whose memory nothing in
    // vLLM's source sizes (unknown: in Run, vllm_graph_capture.h). The pool is the same
    // either way; what the capture needs runs from the plan's estimate to more than the
    // room the pool leaves, and the outcome with it.
    // The high end is the estimate taken as measured (no "may fail" on it, vllm_graph_capture.h).
    PlanInput lo = in, hi = in;
    lo.cuda_graph_bytes = std::max(p.figures["nccl_graph_room_bytes"].get<double>(), 0.0) + 1024.0 * 1024.0;
    hi.cuda_graph_bytes = p.figures.value("cuda_graph_bytes", 0.0);
    vary("CUDA graphs with NCCL all-reduces, captured after the KV cache: the estimate to more than the room the "
         "pool leaves (not sized by vLLM's source)",
         lo, hi);
  }
  if (p.figures.contains("v0_graph_high_bytes") && !in.cuda_graph_bytes && !in.enforce_eager) {
    // vLLM V0's graphs after the KV cache (vllm_v0_graphs.h): what a graph takes a layer is
    // measured, not sized by vLLM's source; the pool is the same at both ends of the logged
    // range, the outcome may not be.
    PlanInput lo = in, hi = in;
    lo.cuda_graph_bytes = p.figures["v0_graph_high_bytes"].get<double>();
    hi.cuda_graph_bytes = p.figures["v0_graph_low_bytes"].get<double>();
    vary("CUDA graphs (V0) captured after the KV cache: " + FormatGiB(*hi.cuda_graph_bytes) + "-" +
             FormatGiB(*lo.cuda_graph_bytes) + " (0.16-2.0 MiB a graph and layer on the logged launches)",
         lo, hi);
  }
  if (p.figures.contains("mrv2_smaller_bytes") && p.figures.contains("activation_peak_bytes")) {
    // vLLM's Model Runner V2, the default runner here (unknown: in Run, vllm_runner_v2.h):
    // its profile up to twice the legacy estimate, which its source does not explain, so
    // at its low end together with the weights at the top of their line (the two logged
    // launches with that peak were over on both: a stated bound, not a fit); or no graphs
    // in its budget and a sampler without top-k/top-p.
    const double a = p.figures["activation_peak_bytes"].get<double>();
    PlanInput lo = in, hi = in;
    lo.activation_peak_bytes =
        a + p.figures["mrv2_smaller_bytes"].get<double>() + (weights_estimated ? weights_spread * w : 0.0);
    hi.activation_peak_bytes = std::max(a - p.figures["mrv2_sampler_bytes"].get<double>(), 0.0);
    if (!in.cuda_graph_bytes) hi.cuda_graph_bytes = 0.0;
    vary(weights_estimated ? "Model Runner V2 (the default runner): its profile up to twice the legacy estimate (not "
                             "explained by its source) with the weights' line at its top, or no CUDA graphs in its "
                             "budget and a sampler without top-k/top-p"
                           : "Model Runner V2 (the default runner): its profile up to twice the legacy estimate (not "
                             "explained by its source), or no CUDA graphs in its budget and a sampler without "
                             "top-k/top-p",
         lo, hi);
  }
  if (p.figures.contains("cold_compile_bytes") && p.figures.contains("activation_peak_bytes")) {
    // vLLM V1's first start compiles inside its memory profile (unknown: in Run,
    // vllm_cold_compile.h): a warm start's point down to the most a cold compile was logged to
    // charge; a start the low end does not have is not vouched for.
    PlanInput lo = in;
    lo.activation_peak_bytes = p.figures["activation_peak_bytes"].get<double>() + p.figures["cold_compile_bytes"].get<double>();
    vary("compile cache: warm (the point) to a first start's cold compile inside the profile", lo, in);
    if (p.fits && !p.sensitivity.empty() && p.sensitivity.back().assumption.starts_with("compile cache") &&
        !p.sensitivity.back().fits_low) p.outcome_certain = false;
  }
  if (p.input.flashinfer_probs_peak_bytes > 0 && !in.activation_peak_bytes) {
    // vLLM V1 0.8.x with an older FlashInfer installed samples without the sort (unknown:
    // in Run; model_config.h kFlashInferProbs).
    PlanInput hi = in;
    hi.activation_peak_bytes = p.input.flashinfer_probs_peak_bytes;
    // The warm-up after the pool samples with it too (vllm_sampler_warmup.h), 0.8.x's
    // fallback included.
    hi.vllm_flashinfer = true;
    const size_t before = p.sensitivity.size();
    vary(VersionBefore(in.version, {0, 9}) ? "sampler: FlashInfer's (installed, older than 0.2.3) instead of the sort"
                                           : "sampler: FlashInfer's (installed) instead of the sort",
         in, hi);
    // Which sampler profiles is the install's (the images carry FlashInfer, pip does not),
    // which no input says: where it decides the outcome, the plan cannot call a failure
    // ("may fail"; an unfitted A100-40G launch from a vllm/vllm-openai image started with
    // the pool FlashInfer's sampler leaves).
    if (p.sensitivity.size() > before && p.sensitivity.back().fits_low != p.sensitivity.back().fits_high) {
      p.outcome_certain = false;
    }
  }
  if (p.figures.contains("sampling_workspace_bytes") && !in.runtime_buffers_bytes) {
    // A TensorRT engine's decoder: top-P's workspace from none (deferred) to all of it
    // (unknown: in PlanTrtllmEngine).
    const double buffers = p.figures["runtime_buffers_bytes"].get<double>();
    PlanInput lo = in, hi = in;
    lo.runtime_buffers_bytes = buffers + p.figures["sampling_workspace_rest_bytes"].get<double>();
    hi.runtime_buffers_bytes = buffers - p.figures["sampling_workspace_bytes"].get<double>();
    vary("the engine decoder's top-P workspace, none to all of it", lo, hi);
  }
  if (PlanInput lo; in.framework == "trtllm") {
    // The engine's build on these GPUs (unknown: in PlanTrtllmEngine, trtllm_engine_build.cc):
    // nothing beyond the engine's weights (the point) to as much again.
    if (std::string what; TrtllmEngineBuildVariant(in, p, lo, what)) vary(what, lo, in);
    if (std::string what; TrtllmEngineBuildPathVariant(in, p, lo, what)) vary(what, in, lo);
  }
  if (in.framework == "lmdeploy" && in.lmdeploy_backend != "pytorch") {
    // TurboMind reads the free memory when its engine is created, after the weights and
    // whatever else it holds by then (unknown: in PlanLmdeploy).
    // Beyond what turbomind_startup.cc sizes: up to 2 GiB, and the weights' pool keeping
    // every layer's unfused gate/up (its reuse across layers is the driver's).
    const double reuse = p.figures.contains("turbomind_held_upper_bytes")
                             ? p.figures["turbomind_held_upper_bytes"].get<double>() -
                                   p.figures["turbomind_held_bytes"].get<double>()
                             : 0.0;
    PlanInput lo = in;
    lo.free_at_init_bytes = p.free_at_init_bytes - 2.0 * kGiB - reuse;
    vary(reuse > 0 ? "TurboMind's allocations before its free-memory read, up to 2 GiB beyond those sized, and its "
                     "weight pool reusing no freed gate/up"
                   : "TurboMind's allocations before its free-memory read, up to 2 GiB beyond those sized",
         lo, in);
  }
  if (in.unified_memory) {
    // The host's use on a GB10 or a Jetson (unknown: in Run, unified_memory.cc): TensorRT-LLM's
    // point takes the checkpoint's page cache, its range runs to none; vLLM before 0.11.1, TGI
    // and LMDeploy keep it out of the point and the range takes it.
    UnifiedMemoryInput ui;
    ui.framework = in.framework;
    ui.version = in.version;
    ui.trtllm_backend = in.trtllm_backend.empty() ? TrtllmDefaultBackend(in.version) : in.trtllm_backend;
    ui.checkpoint_bytes = p.weights_bytes;
    ui.logged_peak = in.peak_from_log;
    if (auto u = UnifiedMemoryHostUse(ui); u && u->range_bytes > 0) {
      PlanInput lo = in, hi = in;
      if (in.framework == "trtllm") {
        hi.unified_memory = false;
      } else if (in.framework == "vllm") {
        lo.non_torch_bytes = p.non_torch_bytes + u->range_bytes;
      } else if (in.framework == "sglang") {
        // Read after the weights: the free memory after them loses the cache in full
        // (unified_memory.cc), the reserve taken from the free memory at init does not.
        lo.avail_after_weights_bytes = p.free_at_init_bytes - p.weights_bytes - u->range_bytes;
      } else {
        lo.free_at_init_bytes = p.free_at_init_bytes - u->range_bytes;
      }
      vary("unified memory: the checkpoint's page cache (" + FormatGiB(u->range_bytes) + ") counted as used, all of "
           "it to none",
           lo, hi);
    }
  }
  if (in.unified_memory && sglang && !in.free_at_init_bytes && !in.avail_after_weights_bytes &&
      p.figures.contains("sglang_fraction_in_force")) {
    // What other programs and the OS hold on a unified-memory device (unknown: in Run): SGLang
    // reads it in both of its free-memory figures (model_runner.py profile_max_num_token: rest
    // = free after the weights - free at init x (1 - fraction)), so H held takes fraction x H
    // from the pool, and nothing bounds H before the launch: the range runs down to the H that
    // leaves no pool ("Not enough memory"). The Jetson AGX Orin launch beside Ollama (the
    // launches13 set) lost about 39 GiB of its 61 that way.
    const double f = p.figures["sglang_fraction_in_force"].get<double>();
    const double held = f > 0 ? p.free_at_init_bytes - w / f : 0.0;
    if (held > 0 && p.cell_bytes > 0) {
      PlanInput lo = in;
      lo.free_at_init_bytes = p.free_at_init_bytes - held;
      char per[64];
      std::snprintf(per, sizeof(per), "%.2f GiB (%s tokens)", f,
                    WithCommas(static_cast<int64_t>(f * kGiB / static_cast<double>(p.cell_bytes))).c_str());
      vary("other programs and the OS on this unified-memory device, not sized before the launch: each GiB they "
           "hold takes " + std::string(per) + " from the pool, none is left at " + FormatGiB(held),
           lo, in);
    }
  }
  if (auto u = HostUnsizedMemory(in.host, in.total_bytes); u && !in.free_at_init_bytes) {
    // What a Windows/WSL2 host's OS and desktop hold (unknown: in Run, host_platform.cc).
    // The point took u->point_bytes (Run); the range runs from none (the Linux arithmetic) to
    // u->high_bytes.
    PlanInput lo = in, hi = in;
    lo.free_at_init_bytes = p.free_at_init_bytes + u->point_bytes - u->high_bytes;
    hi.free_at_init_bytes = p.free_at_init_bytes + u->point_bytes;
    vary("host " + HostPlatformName(in.host) + ": its OS, desktop and other programs' memory, none to 15% of the "
         "card (the point takes " + FormatGiB(u->point_bytes) + ")",
         lo, hi);
  }
  if (in.version_assumed) {
    std::vector<std::string> others = sglang                        ? std::vector<std::string>{"0.4.6", "0.5.3", "0.5.9"}
                                      : in.framework == "vllm"      ? std::vector<std::string>{"0.10.1", "0.11.0", "0.21.0"}
                                      : in.framework == "tgi"       ? std::vector<std::string>{"2.0.4", "3.0.0", "3.3.6"}
                                      : in.framework == "lmdeploy"  ? std::vector<std::string>{"0.6.0", "0.10.0", "0.14.0"}
                                                                    : std::vector<std::string>{"1.0.0"};
    int64_t lo_t = p.kv_tokens, hi_t = p.kv_tokens;
    bool lo_fit = p.fits, hi_fit = p.fits;
    for (const auto& v : others) {
      PlanInput t = in;
      t.version = v;
      t.version_assumed = false;
      auto r = Run(t);
      if (!r.ok()) continue;
      if (r->kv_tokens < lo_t) { lo_t = r->kv_tokens; lo_fit = r->fits; }
      if (r->kv_tokens > hi_t) { hi_t = r->kv_tokens; hi_fit = r->fits; }
    }
    p.sensitivity.push_back({"server version unknown (" + others.front() + " - " + others.back() + ")", lo_t, hi_t,
                             lo_fit, hi_fit});
  }
  // vLLM 0.2.5 to 0.3.0 at TP > 1 (era kV0PeakWholeGpu after vllm PR #2031): peak = total - free
  // right after the profiling run, and the logged launches show several GiB a rank more than the
  // plan prices there (vllm#2136: CodeLlama-13B TP 2 on 2 x RTX 4090, 1464 blocks on 0.2.4, 112 on
  // 0.2.5, ~7.6 GiB a rank; #2031's Llama-2-70B TP 4 on A100 80GB, 31615 -> 20865 blocks, ~13 GiB),
  // while at TP 1 the change is the CUDA context alone (7449 -> 7351). What holds it (memory the
  // TP forward leaves outside torch's allocated peak, not freed before mem_get_info) is not read
  // in vLLM's or torch's source here, so it is not priced: the pool runs from the point down to none.
  if (in.framework == "vllm" && in.tp > 1 && !in.non_torch_bytes && p.kv_tokens > 0) {
    auto era = VllmEraForVersion(in.version, in.vllm_engine);
    if (era.ok() && *era == VllmEra::kV0PeakWholeGpu && !VersionBefore(in.version, {0, 2, 5})) {
      PlanInput lo = in;
      lo.non_torch_bytes = p.non_torch_bytes + static_cast<double>(p.kv_tokens + 1) * static_cast<double>(p.cell_bytes);
      p.unknowns.push_back("vLLM " + in.version + " at TP " + std::to_string(in.tp) + " (0.2.5-0.3.0, peak = total - "
                           "free after the profiling run): launches logged several GiB a rank of non-KV memory more "
                           "than the plan prices (vllm#2136: 7.6 GiB at TP 2; vllm PR #2031: ~13 GiB at TP 4), which "
                           "no source read here sizes: the pool may be far smaller than the point (the range below)");
      vary("vLLM 0.2.5-0.3.0 at TP > 1: memory the profile sees beyond the plan's, none to all the pool's", lo, in);
    }
  }
  // A start (or a failure) that the plan's own stated range does not keep is not vouched for:
  // the estimates' error bars reach the other outcome.
  if (p.outcome_certain) {
    std::string turns;
    for (const auto& s : p.sensitivity) {
      if (s.fits_low != p.fits || s.fits_high != p.fits) turns += (turns.empty() ? "" : "; ") + s.assumption;
    }
    if (!turns.empty()) {
      p.outcome_certain = false;
      p.unknowns.push_back("the outcome turns on what the plan estimates (the range lines below): " + turns);
    }
  }
}

}  // namespace tpt::memory::internal
