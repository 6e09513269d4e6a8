// nccl_graph_capture.cc: the measured bound on NCCL collectives in CUDA graphs
// (nccl_graph_capture.h).
#include "memory/nccl_graph_capture.h"

#include <algorithm>
#include <cstdio>

#include "memory/memory_model.h"

namespace tpt::memory {

NcclCaptureNeed NcclCaptureNeedOf(double priced_bytes, double high_bytes, double after_bytes) {
  NcclCaptureNeed n;
  n.low_bytes = priced_bytes + after_bytes;
  n.high_bytes = std::max(priced_bytes, high_bytes) + after_bytes;
  return n;
}

std::string NcclCaptureNeedRange(const NcclCaptureNeed& need) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f-%.2f GiB", need.low_bytes / kGiB, need.high_bytes / kGiB);
  return buf;
}

}  // namespace tpt::memory
