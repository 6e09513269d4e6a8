// signature.cc: masking a failure message into a template, and hashing it.
#include "report/signature.h"

#include <cstdint>
#include <cstdio>

#include <re2/re2.h>

#include "report/common.h"

namespace tpt::report {

namespace {

struct Mask {
  const RE2* re;
  const char* rewrite;
};

// Order matters: wider shapes (UUIDs, timestamps, addresses, paths) are
// masked before the bare numbers inside them.
const std::vector<Mask>& Masks() {
  static const auto* masks = [] {
    auto* m = new std::vector<Mask>;
    auto add = [&](const char* pattern, const char* rewrite) {
      m->push_back({new RE2(pattern), rewrite});
    };
    add(R"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})", "<uuid>");
    // 2025-06-01T10:11:12.345+00:00, 2025-06-01 10:11:12,345
    add(R"(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)", "<ts>");
    // vLLM "06-01 10:11:12", bare times "10:11:12.345"
    add(R"((?:\d{2}-\d{2} )?\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)", "<ts>");
    add(R"(\d{4}-\d{2}-\d{2})", "<ts>");
    // IPv4 with an optional port, and bracketed IPv6.
    add(R"(\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?)", "<ip>");
    add(R"(\[[0-9a-fA-F:]*:[0-9a-fA-F:]+\](?::\d+)?)", "<ip>");
    // URLs, then absolute or relative paths that start after a separator.
    add(R"([a-zA-Z][a-zA-Z0-9+.-]*://[^\s'"<>)\]]+)", "<path>");
    add(R"((^|[\s'"(=\[,])(?:~|\.{1,2})?(?:/[\w.+@%-]+)+/?)", "\\1<path>");
    add(R"(0[xX][0-9a-fA-F]+)", "<hex>");
    add(R"(\b[0-9a-fA-F]{8,}\b)", "<hex>");
    add(R"(\d+(?:\.\d+)?)", "<n>");
    add(R"(\s+)", " ");
    return m;
  }();
  return *masks;
}

std::string Trim(std::string s) {
  size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(' ');
  return s.substr(b, e - b + 1);
}

}  // namespace

std::string MessageTemplate(std::string_view message) {
  // Cap the work on a huge line before masking; the template keeps 200 bytes.
  std::string s = ValidUtf8(message.substr(0, 4096));
  for (const Mask& mask : Masks()) RE2::GlobalReplace(&s, *mask.re, mask.rewrite);
  s = Trim(std::move(s));
  if (s.size() > 200) s = Truncate(s, 200);
  return s;
}

std::string MajorMinor(std::string_view version) {
  size_t start = 0;
  while (start < version.size() && !(version[start] >= '0' && version[start] <= '9')) ++start;
  std::string_view v = version.substr(start);
  size_t dot = v.find('.');
  if (dot == std::string_view::npos) return std::string(v.empty() ? version : v);
  size_t end = dot + 1;
  while (end < v.size() && v[end] >= '0' && v[end] <= '9') ++end;
  return std::string(v.substr(0, end));
}

std::string Fnv1a64Hex(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

Signature ComputeSignature(const Analysis& a) {
  Signature sig;
  if (a.root_cause == "none" || a.root_cause.empty()) return sig;
  const RankState* first = FirstFailingRank(a);
  const Diagnosis* primary = PrimaryDiagnosis(a);
  std::string message;
  if (first != nullptr) {
    sig.phase = first->last_phase;
    sig.error_class = first->first_error;
  }
  // The diagnosis' anchor line says more than a generic "Traceback" header;
  // without a diagnosis, the first failing rank's own first error line.
  if (primary != nullptr && !primary->evidence.empty()) message = primary->evidence.front().text;
  if (message.empty() && first != nullptr) message = first->first_error_evidence.text;
  // Evidence lines were cut at 400 bytes when signatures were first recorded;
  // they are whole now, and the signature reads the same 400 so ids stay stable.
  if (message.size() > 400) message = message.substr(0, 400) + "...";
  sig.message = MessageTemplate(message);
  std::string framework = a.run.framework;
  if (!a.run.version.empty()) framework += " " + MajorMinor(a.run.version);
  sig.canonical = "v1|" + framework + "|" + sig.phase + "|" + a.root_cause + "|" + sig.error_class +
                  "|" + sig.message;
  sig.id = Fnv1a64Hex(sig.canonical).substr(0, 12);
  return sig;
}

}  // namespace tpt::report
