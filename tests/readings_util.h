// readings_util.h: what the source-readings tests share: a bundled sample's
// text, the analysis of a text (written to a temporary file, the built-in
// formats, rules and findings), whether a diagnosis proposes a flag, and a text
// without the lines that hold a needle.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "rules/analyzer.h"

namespace tpt::readings {

inline std::string Read(const std::string& rel) {
  std::ifstream in(std::filesystem::path(TPT_SOURCE_DIR) / "samples" / rel);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << rel;
  return ss.str();
}

// One analyzer for the test binary.
inline Analysis AnalyzeText(const std::string& name, const std::string& text) {
  static auto an = Analyzer::Create({});
  if (!an.ok()) {
    ADD_FAILURE() << an.status().message();
    return Analysis{};
  }
  std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("tpt_readings_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p) << text;
  auto a = an->Run({p.string()});
  std::filesystem::remove(p);
  EXPECT_TRUE(a.ok()) << name;
  return a.ok() ? *a : Analysis{};
}

inline Analysis RunSample(const std::string& rel) {
  return AnalyzeText(std::filesystem::path(rel).filename().string(), Read(rel));
}

// The diagnosis proposes a remedy for flag (of that kind, when one is given).
inline bool HasRemedy(const Diagnosis& d, const std::string& flag, const std::string& kind = "") {
  for (const Remedy& r : d.remedy)
    if (r.flag == flag && (kind.empty() || r.kind == kind)) return true;
  return false;
}

inline std::string Without(const std::string& text, const std::string& needle) {
  std::string out, line;
  std::istringstream in(text);
  while (std::getline(in, line))
    if (line.find(needle) == std::string::npos) out += line + "\n";
  return out;
}

}  // namespace tpt::readings
