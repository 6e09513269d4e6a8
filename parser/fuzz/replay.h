// replay.h: runs every file of a folder through a fuzz iteration: the
// regression tests of the fuzz targets (found inputs and seeds, replayed in
// every build; a regression crashes or aborts the test).
//
//   EXPECT_GT(tpt::fuzz::ReplayDir(dir, FuzzOne), 0);
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tpt::fuzz {

// The number of inputs replayed.
inline int ReplayDir(const std::string& dir, void (*one)(const uint8_t*, size_t)) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string data = ss.str();
    SCOPED_TRACE(path.string());
    one(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  }
  return static_cast<int>(files.size());
}

}  // namespace tpt::fuzz
