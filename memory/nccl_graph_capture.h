// nccl_graph_capture.h: what NCCL collectives captured into CUDA graphs can hold, as measured
// (no server's source sizes it), and the "may fail" test both vLLM (vllm_graph_capture.h) and
// TGI (tgi_graph_capture.h) apply to the room their KV cache leaves for the capture.
#pragma once

#include <string>

namespace tpt::memory {

// vllm#5517 (vLLM 0.5.0, custom all-reduce off, A10G and L4): 3.81 GiB of graphs a rank with
// CUDA drivers 12.2 and 12.3, 1.14 GiB from 12.4 on the same model and TP size; elsewhere
// 0.06-0.36 GiB is logged. The driver, NCCL and topology are no input a plan has, so up to
// this much is possible on any launch that captures NCCL collectives.
inline constexpr double kNcclCaptureHighBytes = 3.8086 * 1024.0 * 1024.0 * 1024.0;

// The most measured a captured collective: Gemma 2 9B on eight L4s (vLLM 0.5.4, TP 8,
// vllm#7593, memory/README.md "May fail"): its 35 graphs' 2,940 all-reduces ran out of memory
// in the 4.63 GiB its pool left, more than 1.6 MiB each (NVIDIA/nccl#1234; logged starts span
// 0.07-0.59 MiB an all-reduce). The bound for a server that captures far fewer collectives
// than vLLM's 35-67 sizes (TGI's six graphs).
inline constexpr double kNcclCaptureHighBytesPerCollective = 4.63 * 1024.0 * 1024.0 * 1024.0 / 2940.0;

// What a capture needs: low = the graphs the plan prices + what must still fit after them
// (vLLM V1's sampler warm-up); high = the larger of the priced graphs and `high_bytes` (the
// measured end) + the same.
struct NcclCaptureNeed {
  double low_bytes = 0;
  double high_bytes = 0;
};
NcclCaptureNeed NcclCaptureNeedOf(double priced_bytes, double high_bytes, double after_bytes);

// "1.63-5.19 GiB"
std::string NcclCaptureNeedRange(const NcclCaptureNeed& need);

}  // namespace tpt::memory
