// fuzz_dir.h: a private folder for a fuzzer that writes its input to a file,
// made once a process (`prefix` names the fuzzer: /tmp/PREFIX-XXXXXX).
#pragma once

#include <stdlib.h>

#include <string>

namespace tpt::fuzz {

inline const std::string& PrivateDir(const char* prefix) {
  static const std::string dir = [prefix] {
    std::string tmpl = std::string("/tmp/") + prefix + "-XXXXXX";
    const char* d = mkdtemp(tmpl.data());
    return std::string(d != nullptr ? d : "/tmp");
  }();
  return dir;
}

}  // namespace tpt::fuzz
