// safe_stderr.cc: see safe_stderr.h.
#include "cli/safe_stderr.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "report/common.h"

namespace tpt::cli {
namespace {

std::string& Pending() {
  static std::string* line = new std::string;  // never destroyed: written at exit
  return *line;
}

void WriteAll(std::string_view s) {
  while (!s.empty()) {
    const ssize_t n = ::write(2, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    s.remove_prefix(static_cast<size_t>(n));
  }
}

ssize_t CookieWrite(void*, const char* buf, size_t size) {
  std::string& pending = Pending();
  std::string out;
  for (size_t i = 0; i < size; ++i) {
    if (buf[i] != '\n') {
      pending += buf[i];
      continue;
    }
    out += SafeStderrLine(pending);
    out += '\n';
    pending.clear();
  }
  WriteAll(out);
  return static_cast<ssize_t>(size);
}

void FlushPending() {
  std::fflush(stderr);
  if (!Pending().empty()) WriteAll(SafeStderrLine(Pending()));
  Pending().clear();
}

}  // namespace

std::string SafeStderrLine(std::string_view line) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    const unsigned char c1 = i + 1 < line.size() ? static_cast<unsigned char>(line[i + 1]) : 0;
    if ((c < 0x20 && c != '\t') || c == 0x7F) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else if (c == 0xC2 && c1 >= 0x80 && c1 <= 0x9F) {  // a C1 control (U+009B is a CSI)
      out += "\\u00";
      out += kHex[c1 >> 4];
      out += kHex[c1 & 15];
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return report::InertWorkflowCommands(out);
}

void NeutraliseStderr() {
  cookie_io_functions_t io{};
  io.write = CookieWrite;
  FILE* f = fopencookie(nullptr, "w", io);
  if (f == nullptr) return;  // keep the plain stream
  std::setvbuf(f, nullptr, _IONBF, 0);
  stderr = f;
  std::atexit(FlushPending);
}

}  // namespace tpt::cli
