// cxx_literal.h: bytes as a C++ string literal, for what the build generates
// (parser/match/tools/gen_prefilter_blob.cc's database, fast_layout_emit.cc's code).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace tpt {

// `bytes` between double quotes: plain printable ASCII as is, anything else
// (and '"', '\\', '?', against trigraphs) as a 3-digit octal escape, so a
// following digit cannot join it. With `wrap` > 0 the literal is cut into
// adjacent literals of about `wrap` columns, each on its own line after
// `indent` (the first one too).
inline std::string CxxLiteral(std::string_view bytes, size_t wrap = 0, std::string_view indent = "") {
  std::string out(indent);
  out += '"';
  size_t line = 0;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?') {
      out += static_cast<char>(c);
      line += 1;
    } else {
      char esc[5];
      std::snprintf(esc, sizeof esc, "\\%03o", c);
      out += esc;
      line += 4;
    }
    if (wrap > 0 && line >= wrap) {
      out += "\"\n";
      out += indent;
      out += '"';
      line = 0;
    }
  }
  out += '"';
  return out;
}

}  // namespace tpt
