// unified_memory.h: devices whose GPU has no memory of its own (DGX Spark's GB10, Jetson):
// what the host holds there (the checkpoint's page cache above all) and which server's free
// memory counts it, by server and version.
//
//   tpt::memory::UnifiedMemoryInput u{"trtllm", "1.1.0", "pytorch", 60 * kGiB};
//   auto h = tpt::memory::UnifiedMemoryHostUse(u);  // h->point_bytes = 60 GiB: KvCacheCreator counts it
#pragma once

#include <optional>
#include <string>

namespace tpt::memory {

struct UnifiedMemoryInput {
  std::string framework;       // sglang | vllm | tgi | trtllm | lmdeploy
  std::string version;         // the server's version ("" when unknown)
  std::string trtllm_backend;  // tensorrt | pytorch (TensorRT-LLM only)
  double checkpoint_bytes = 0; // what loading reads from disk: the page cache it can leave
  bool logged_peak = false;    // --activation-peak from TensorRT-LLM's log: it holds the host's use
};

// What the host's use takes from the pool on a unified-memory device: point_bytes the point
// subtracts (only where the server's own arithmetic counts it whatever happened before the
// launch), range_bytes the most the range takes (the checkpoint's page cache), and why
// (`unknown:`). nullopt for a server that is not one of the five.
struct UnifiedHostUse {
  double point_bytes = 0;
  double range_bytes = 0;
  std::string why;
};
std::optional<UnifiedHostUse> UnifiedMemoryHostUse(const UnifiedMemoryInput& in);

}  // namespace tpt::memory
