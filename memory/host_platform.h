// host_platform.h: the operating system a launch runs on (`plan --host`), and what it
// may hold on the card that a plan cannot size before the launch.
//
//   auto host = tpt::memory::ParseHostPlatform("wsl");           // HostPlatform::kWsl
//   auto u = tpt::memory::HostUnsizedMemory(*host, 12 * kGiB);   // u->high_bytes = 15% of it
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
// driver) up to high_bytes, with the reason (`unknown:`) and the way to pin it.
struct HostUnsized {
  double high_bytes = 0;
  std::string why;
};
std::optional<HostUnsized> HostUnsizedMemory(HostPlatform host, double total_bytes);

}  // namespace tpt::memory
