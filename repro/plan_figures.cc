// plan_figures.cc: see plan_figures.h.
#include "repro/plan_figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "memory/memory_model.h"
#include "repro/startup_servers.h"

namespace tpt::repro {
void CompleteFigures(const nlohmann::json& run, bool from_log, Plan* p) {
  const std::string given = from_log ? kFromLog : "plan file";
  const bool dumps = run.is_object() && run.contains("environment") && run["environment"].is_array() &&
                     !run["environment"].empty();
  auto mark = [&](const char* key, bool known) {
    if (known && !p->sources.count(key)) p->sources[key] = given;
  };
  mark("card_total_bytes", p->card_total_bytes > 0);
  mark("free_at_init_bytes", p->free_at_init_bytes > 0 || !p->free_at_init_per_rank.empty());
  mark("weights_bytes", p->weights_bytes > 0 || !p->weights_per_rank.empty());
  mark("mem_fraction_static", p->mem_fraction_static > 0);
  mark("gpu_memory_utilization", p->gpu_memory_utilization > 0);
  mark("kv_bytes_per_token", p->kv_bytes_per_token > 0);

  // The card: the log, a dump's nvidia-smi total, the catalogue, then (SGLang) free at init.
  if (p->card_total_bytes <= 0 && run.is_object() && run.value("gpu_memory_bytes", int64_t{0}) > 0) {
    p->card_total_bytes = run["gpu_memory_bytes"].get<int64_t>();
    p->sources["card_total_bytes"] = std::string(kFromEnvDump) + ": nvidia-smi's total";
  }
  if (p->card_total_bytes <= 0 && !p->gpu.empty()) {
    auto g = memory::FindGpu(p->gpu);
    if (g.ok()) {
      p->card_total_bytes = static_cast<int64_t>(g->memory_bytes);
      const std::string amb = memory::GpuAmbiguity(p->gpu);
      p->sources["card_total_bytes"] = std::string(kFromCatalog) + ": '" + p->gpu + "' named in the " +
                                       (dumps ? "log / environment dump" : "log") + " (" + g->name + ")" +
                                       (amb.empty() ? "" : "; " + amb);
    }
  }
  if (p->card_total_bytes <= 0 && p->framework == "sglang") {
    for (int r = 0; r < std::max<int>(1, p->free_at_init_per_rank.size()); ++r) {
      p->card_total_bytes = std::max(p->card_total_bytes, FreeAtInit(*p, r));
    }
    if (p->card_total_bytes > 0) {
      p->card_total_assumed = true;
      p->sources["card_total_bytes"] = std::string(kFromAssumed) + ": free at init (SGLang's formula does not use the total)";
    }
  }
  if (p->card_total_bytes <= 0) {
    // Nothing names a card the catalog knows (FindGpu takes no card whose name only
    // holds a known one: "RTX A4000" is not the A40): the free memory at init, if
    // known, plus what a context and NCCL take; else the commonest card of these servers.
    const std::string why = p->gpu.empty() ? std::string("the log names no GPU")
                                           : "the log's GPU '" + p->gpu + "' is not in the GPU catalog";
    const int64_t free0 = FreeAtInit(*p, 0);
    if (free0 > 0) {
      p->card_total_bytes = free0 + kContextAndNcclBytes;
      p->sources["card_total_bytes"] = std::string(kFromAssumed) + ": free at init + 1.08 GiB of context and NCCL";
    } else {
      auto g = memory::FindGpu("H100");
      p->card_total_bytes = g.ok() ? static_cast<int64_t>(g->memory_bytes) : 80 * kGiB;
      p->sources["card_total_bytes"] = std::string(kFromAssumed) + ": " + why + "; an H100 80GB";
    }
    p->asked.push_back("--target-gpu-mem " + FormatBytes(p->card_total_bytes) + " (assumed: " + why +
                       " and the log prints no total)");
  }

  // TGI, LMDeploy, TensorRT-LLM (and warm-up OOMs): their failing point's free
  // memory, defaults and warm-up figures (startup_servers.h).
  CompleteStartupFigures(p);

  if (p->free_at_init_bytes <= 0 && p->free_at_init_per_rank.empty()) {
    p->free_at_init_bytes = std::max<int64_t>(0, p->card_total_bytes - kContextAndNcclBytes);
    p->sources["free_at_init_bytes"] = std::string(kFromAssumed) +
                                       ": the card's total less the CUDA context and NCCL (1.08 GiB, measured on the H200)";
    p->asked.push_back("--free-at-init " + FormatBytes(p->free_at_init_bytes) +
                       " (assumed: the log prints no free memory at init; another process on the GPU lowers it)");
  }

  // SGLang's error line names the fraction: "Current value: ...mem_fraction_static=0.2".
  for (const char* key : {"mem_fraction_static=", "gpu_memory_utilization="}) {
    const size_t at = p->failure_message.find(key);
    if (at == std::string::npos) continue;
    const double v = std::strtod(p->failure_message.c_str() + at + std::strlen(key), nullptr);
    if (!(v > 0 && v <= 1)) continue;
    double& field = std::string(key).rfind("mem", 0) == 0 ? p->mem_fraction_static : p->gpu_memory_utilization;
    if (field <= 0) {
      field = v;
      p->sources[std::string(key).substr(0, std::strlen(key) - 1)] = std::string(kFromLog) + ": the error line";
    }
  }
  if (p->framework == "sglang" && p->mem_fraction_static <= 0) {
    memory::SglangDefaultsInput in;
    in.version = p->version;
    in.gpu_capacity_bytes = static_cast<double>(p->card_total_bytes);
    in.tp = p->tp;
    in.pp = p->pp;
    auto d = memory::SglangDefaultMemFraction(in);
    const bool known = d.ok();
    if (!known) {
      // No readable version: v0.5's _handle_gpu_memory_settings without the piecewise graphs
      // of 0.5.10 on (0.5.9, what this took before the default was read by release), asked for.
      in.version = "0.5.9";
      d = memory::SglangDefaultMemFraction(in);
    }
    if (d.ok() && d->mem_fraction_static > 0) {
      p->mem_fraction_static = d->mem_fraction_static;
      p->sources["mem_fraction_static"] =
          known ? std::string(kFromDefault) + ": SGLang " + p->version + " at TP " + std::to_string(p->tp) + " (" + d->rule + ")"
                : std::string(kFromAssumed) + ": SGLang's default of v0.5.9 (the log names no version) at TP " +
                      std::to_string(p->tp) + " (" + d->rule + ")";
      if (!known) {
        char b[64];
        std::snprintf(b, sizeof b, "--mem-fraction-static %.3f", d->mem_fraction_static);
        p->asked.push_back(std::string(b) + " (assumed: the log prints neither the fraction nor the server's version)");
      }
    }
  }
  if (p->framework == "vllm" && p->gpu_memory_utilization <= 0) {
    p->gpu_memory_utilization = 0.9;
    p->sources["gpu_memory_utilization"] = std::string(kFromDefault) + ": vLLM's --gpu-memory-utilization 0.9";
  }

  if (p->weights_bytes <= 0 && p->weights_per_rank.empty()) {
    // Where the server died in the weights, they are what did not fit: the
    // free memory at init and a little more; elsewhere they are unknown and
    // only move the rest, so the log's failure step is what to check.
    if (p->failed_step == kStepWeights) {
      // Unknown weights decide a weights OOM: a size is assumed for the dry
      // run, and the verdict will not count on it (runner.cc).
      p->weights_bytes = p->card_total_bytes;
      p->sources["weights_bytes"] = std::string(kFromAssumed) + ": the log prints no size; the card's total";
    } else {
      const double f = p->framework == "vllm" ? p->gpu_memory_utilization : p->mem_fraction_static;
      p->weights_bytes = static_cast<int64_t>(FreeAtInit(*p, 0) * std::clamp(f > 0 ? f - 0.1 : 0.5, 0.1, 0.9));
      p->sources["weights_bytes"] = std::string(kFromAssumed) + ": the log prints no weight size";
    }
    p->asked.push_back("--weights " + FormatBytes(p->weights_bytes) + " (assumed: " + p->sources["weights_bytes"].substr(9) +
                       "; the log's 'Load weight end ... mem usage' or 'Model loading took' line gives it)");
  }

  AssumeWarmupAsk(p);

  if (p->kv_bytes_per_token <= 0) {
    p->kv_bytes_per_token = kAssumedKvBytesPerToken;
    p->kv_bytes_per_token_assumed = true;
    p->sources["kv_bytes_per_token"] = std::string(kFromAssumed) + ": 64 KiB a token (the verdict does not depend on it)";
  }
}

}  // namespace tpt::repro
