// host_platform.h: the operating system a launch runs on (`plan --host`), and what it
// may hold on the card that a plan cannot size before the launch.
//
//   auto host = tpt::memory::ParseHostPlatform("wsl");           // HostPlatform::kWsl
//   auto u = tpt::memory::HostUnsizedMemory(*host, 12 * kGiB);   // u->point_bytes = 4.6% of it,
//                                                                // u->high_bytes = 15% of it
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tpt::memory {

enum class HostPlatform { kLinux, kWindows, kWsl };

// "linux" | "windows" | "wsl"; anything else is an error naming --host and its values.
StatusOr<HostPlatform> ParseHostPlatform(std::string_view name);
std::string HostPlatformName(HostPlatform host);

// What the host may hold beyond a native Linux launch, unknown before the launch: none on
// Linux; on Windows (WDDM) and WSL2 (GPU paravirtualization over the Windows host's WDDM
// driver) point_bytes at the plan's point (a measured share, host_platform.cc) and up to
// high_bytes in its range, with the reason (`unknown:`) and the way to pin it.
struct HostUnsized {
  double point_bytes = 0;   // taken from the free memory at init at the plan's point
  double high_bytes = 0;    // the range's end: what such a host may hold, at most
  std::string point_why;    // the point's share, where it was measured (`assumed:`)
  std::string why;
};
std::optional<HostUnsized> HostUnsizedMemory(HostPlatform host, double total_bytes);

}  // namespace tpt::memory
