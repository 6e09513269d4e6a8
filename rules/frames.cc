// frames.cc: a Python traceback's frames from its text (rules/frames.h).
#include "rules/frames.h"

#include <string_view>

namespace tpt {

std::vector<Frame> FramesOf(const std::string& text) {
  std::vector<Frame> out;
  size_t pos = 0;
  bool want_code = false;
  std::string joined;  // a frame line hard-wrapped inside its path, put back together
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line(text.data() + pos, nl - pos);
    pos = nl + 1;
    size_t f = line.find("File \"");
    size_t in = f == std::string_view::npos ? f : line.find(", in ", f);
    if (f != std::string_view::npos && in == std::string_view::npos && pos < text.size()) {
      size_t nl2 = text.find('\n', pos);
      if (nl2 == std::string::npos) nl2 = text.size();
      std::string_view next(text.data() + pos, nl2 - pos);
      if (next.find("\", line ") != std::string_view::npos && next.find(", in ") != std::string_view::npos &&
          next.find("File \"") == std::string_view::npos) {
        std::string_view head = line;
        while (!head.empty() && (head.back() == ' ' || head.back() == '\r')) head.remove_suffix(1);
        joined = std::string(head) + std::string(next);
        line = joined;
        pos = nl2 + 1;
        in = line.find(", in ", f);
      }
    }
    if (f != std::string_view::npos && in != std::string_view::npos) {
      Frame fr;
      size_t q = line.find('"', f + 6);
      fr.file = std::string(line.substr(f + 6, q == std::string_view::npos ? 0 : q - f - 6));
      std::string_view fn = line.substr(in + 5);
      while (!fn.empty() && (fn.back() == ' ' || fn.back() == '\r')) fn.remove_suffix(1);
      fr.function = std::string(fn);
      out.push_back(std::move(fr));
      want_code = true;
      continue;
    }
    if (want_code) {
      size_t b = line.find_first_not_of(" \t");
      // Python 3.11+ prints ^~~~ markers under the code: not code.
      if (b != std::string_view::npos && line[b] != '^' && line[b] != '~') {
        out.back().code = std::string(line.substr(b));
        want_code = false;
      }
    }
  }
  return out;
}

}  // namespace tpt
