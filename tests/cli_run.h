// cli_run.h: run a shell command (the built tptriage) and collect its output
// and exit status, for whole-binary tests.
//
//   tpt::test::CmdResult r = tpt::test::RunCmd("'" TPTRIAGE_BIN "' events x.log");
//   EXPECT_EQ(r.rc, 0) << r.out;
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace tpt::test {

struct CmdResult {
  int rc = -1;      // exit status; -1 when it could not run or was killed
  std::string out;  // stdout (and stderr with merge_stderr)
};

inline CmdResult RunCmd(const std::string& cmd, bool merge_stderr = false) {
  std::string full = cmd + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  CmdResult r;
  FILE* p = popen(full.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// `s` in single quotes for the shell (the paths tests make hold none).
inline std::string Quote(const std::string& s) { return "'" + s + "'"; }

#ifdef TPTRIAGE_BIN
// The built tptriage with `args` (already quoted where they need it).
inline CmdResult Tptriage(const std::string& args, bool merge_stderr) {
  return RunCmd(Quote(TPTRIAGE_BIN) + " " + args, merge_stderr);
}
#endif

#ifdef TPT_SOURCE_DIR
// A model folder of samples/models, quoted for the shell.
inline std::string SampleModel(const std::string& name) {
  return Quote(std::string(TPT_SOURCE_DIR) + "/samples/models/" + name);
}
#endif

}  // namespace tpt::test
