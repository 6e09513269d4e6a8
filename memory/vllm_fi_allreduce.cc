// vllm_fi_allreduce.cc: the FlashInfer all-reduce fusion workspace of vLLM 0.16 on
// (vllm_fi_allreduce.h has the sources read).
#include "memory/vllm_fi_allreduce.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

double RoundUp(double bytes, double granule) { return std::ceil(bytes / granule) * granule; }

// FI_ALLREDUCE_FUSION_MAX_SIZE_MB (allreduce_rms_fusion.py) in MiB; 0: not supported.
double FusionMaxSizeMiB(int sm, int tp) {
  if (sm == 90) return tp == 2 ? 64 : tp == 4 ? 2 : tp == 8 ? 0.5 : 0;
  if (sm == 103) return tp == 2 ? 64 : tp == 4 ? 64 : tp == 8 ? 2 : 0;
  if (sm >= 100 && sm < 110) return tp == 2 ? 64 : tp == 4 ? 32 : tp == 8 ? 1 : 0;
  return 0;
}

// NVSwitch systems support multicast; the NVL cards pair over NVLink bridges.
bool MulticastLikely(const VllmFiArWorkspaceInput& in) {
  if (in.gpu_interconnect != "nvlink") return false;
  std::string name = in.gpu_name.substr(0, in.gpu_name.find(" ["));  // not the "[assumed: ...]" note
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name.find(" nvl") == std::string::npos;
}

}  // namespace

VllmFiArWorkspace VllmFlashInferAllReduceWorkspace(const VllmFiArWorkspaceInput& in) {
  VllmFiArWorkspace w;
  auto v = ParseVersion(in.version);
  if (!v.ok() || CompareVersions(*v, {0, 16}) < 0) return w;
  if (in.tp <= 1 || in.pp != 1 || in.dp != 1 || in.enforce_eager || in.hidden <= 0) return w;
  const double max_mib = FusionMaxSizeMiB(in.gpu_sm, in.tp);
  if (max_mib <= 0 || !MulticastLikely(in)) return w;
  const int e = std::max(in.dtype_bytes, 1);
  const double mib = 1024.0 * 1024.0;
  w.max_token_num = std::min<int64_t>(static_cast<int64_t>(max_mib * mib) / (in.hidden * e), in.max_num_batched_tokens);
  if (w.max_token_num <= 0) return w;
  const double cell = static_cast<double>(in.tp) * static_cast<double>(w.max_token_num) * static_cast<double>(in.hidden);
  const double buffer = cell * 2;
  const double flags = static_cast<double>(in.tp) * 256 * 4;
  const double max_comm = static_cast<double>(2147483647LL & ~((1LL << 21) - 1));
  const double lamport = 3 * std::min(cell * (e == 4 ? 4 : 2), max_comm);
  auto granules = [&](double granule) {
    double sum = 0;
    for (double size : {buffer, flags, lamport}) {
      sum += RoundUp(RoundUp(RoundUp(size, 2 * mib) + 2048, 2 * mib), std::max(granule, 2 * mib));
    }
    return sum;
  };
  w.created = true;
  w.bytes = granules(kVllmMulticastGranularityBytes);
  w.bytes_min = granules(2 * mib);
  std::ostringstream s;
  s << "FlashInfer's all-reduce fusion workspace " << FormatGiB(w.bytes) << " (vLLM 0.16 on at TP " << in.tp
    << ", -O2: " << w.max_token_num << " tokens x hidden " << in.hidden << "; a buffer of " << FormatGiB(buffer)
    << ", flags and lamport buffers of " << FormatGiB(lamport) << ", each rounded to the "
    << FormatGiB(kVllmMulticastGranularityBytes) << " multicast granule)";
  w.arithmetic = s.str();
  return w;
}

}  // namespace tpt::memory
