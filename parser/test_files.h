// test_files.h: the bytes of a file of the source tree, for parser tests
// (TPT_SOURCE_DIR is set by parser/CMakeLists.txt).
//
//   std::string dump = tpt::SourceFile("samples/rules/x/nccl_trace_rank_0");
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace tpt {

inline std::string SourceFile(const std::string& rel) {
  std::ifstream in(rel.empty() || rel[0] != '/' ? std::string(TPT_SOURCE_DIR) + "/" + rel : rel, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace tpt
