// color.cc: see color.h.
#include "cli/color.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace tpt::cli {

namespace {

constexpr const char* kRed = "\x1b[31m";
constexpr const char* kBoldRed = "\x1b[1;31m";
constexpr const char* kBoldGreen = "\x1b[1;32m";
constexpr const char* kBold = "\x1b[1m";
constexpr const char* kReset = "\x1b[0m";

bool StartsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
bool EndsWith(const std::string& s, const char* p) {
  size_t n = std::strlen(p);
  return s.size() >= n && s.compare(s.size() - n, n, p) == 0;
}

}  // namespace

bool UseColor(const std::string& when) {
  if (when == "always") return true;
  if (when == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  return isatty(STDOUT_FILENO) == 1;
}

std::string ColorizeText(const std::string& text, bool failed) {
  std::istringstream in(text);
  std::string out, line;
  out.reserve(text.size() + 256);
  while (std::getline(in, line)) {
    if (StartsWith(line, "Verdict: ")) {
      out += std::string(kBold) + "Verdict:" + kReset + " " + (failed ? kBoldRed : kBoldGreen) + line.substr(9) + kReset;
    } else if (StartsWith(line, "ERROR: ")) {
      out += std::string(kBoldRed) + line + kReset;
    } else if (EndsWith(line, "  SHORT")) {
      out += line.substr(0, line.size() - 5) + kBoldRed + "SHORT" + kReset;
    } else if (line.find("<- failed first") != std::string::npos) {
      out += std::string(kRed) + line + kReset;
    } else {
      out += line;
    }
    out += '\n';
  }
  return out;
}

}  // namespace tpt::cli
