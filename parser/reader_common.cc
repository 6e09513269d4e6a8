// reader_common.cc: what every input reader shares (reader.cc for files,
// streams and compressed logs; archive.cc for archives): the run's budget of
// expanded bytes, the names a log folder reads, and the test for text.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "parser/reader.h"
#include "parser/reader_internal.h"

namespace tpt {
namespace {

// Per thread: `analyze --runs --jobs N` reads N runs at once, one a thread,
// and each run has its own budget.
thread_local uint64_t g_expanded_limit = kDefaultMaxExpandedBytes;
thread_local uint64_t g_expanded_used = 0;

// Counts what a decompressing source hands out against the run's budget.
class CappedSource : public ByteSource {
 public:
  CappedSource(std::unique_ptr<ByteSource> inner, std::string name) : inner_(std::move(inner)), name_(std::move(name)) {}
  StatusOr<size_t> Read(char* buf, size_t n) override {
    const uint64_t limit = g_expanded_limit;
    const uint64_t used = g_expanded_used;
    if (used >= limit) {
      return DataLossError(reader_internal::ExpandedLimitMessage(name_, limit));
    }
    n = static_cast<size_t>(std::min<uint64_t>(n, limit - used));
    auto r = inner_->Read(buf, n);
    if (r.ok()) g_expanded_used += *r;
    return r;
  }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::string name_;
};

}  // namespace

std::string reader_internal::BytesText(uint64_t n) {
  char buf[48];
  if (n >= (uint64_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.1f GiB", n / double(uint64_t{1} << 30));
  else if (n >= (uint64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", n / double(uint64_t{1} << 20));
  else std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(n));
  return buf;
}

std::string reader_internal::ExpandedLimitMessage(const std::string& name, uint64_t limit) {
  return name + ": decompressing stopped at the --max-input-bytes limit (" + BytesText(limit) +
         " expanded in this run); the rest was not read; raise --max-input-bytes (e.g. 64G) to read it all";
}

uint64_t reader_internal::ExpandedLimit() { return g_expanded_limit; }

bool HasLogExtension(const std::filesystem::path& p) {
  static const char* kExt[] = {".log", ".txt", ".out", ".err", ".gz", ".xz", ".zst", ".jsonl"};
  const std::string ext = p.extension().string();
  for (auto e : kExt) {
    if (ext == e) return true;
  }
  // rank0.log.1 style rotations.
  return p.filename().string().find(".log.") != std::string::npos;
}

std::unique_ptr<ByteSource> reader_internal::Capped(std::unique_ptr<ByteSource> inner, const std::string& name) {
  return std::make_unique<CappedSource>(std::move(inner), name);
}

void SetExpandedByteBudget(uint64_t max_bytes) {
  g_expanded_limit = max_bytes;
  g_expanded_used = 0;
}
uint64_t ExpandedByteBudget() { return g_expanded_limit; }

namespace {

// Bytes of `s` that are not part of a well-formed UTF-8 sequence; a sequence
// cut by the end of `s` is not counted (the sniff reads a fixed-size head).
size_t InvalidUtf8Bytes(std::string_view s) {
  size_t bad = 0, i = 0;
  const size_t n = s.size();
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xbf;  // allowed range of the second byte
    if (c >= 0xc2 && c <= 0xdf) len = 2;
    else if (c == 0xe0) len = 3, lo = 0xa0;
    else if (c >= 0xe1 && c <= 0xef) len = 3, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c == 0xf0) len = 4, lo = 0x90;
    else if (c >= 0xf1 && c <= 0xf3) len = 4;
    else if (c == 0xf4) len = 4, hi = 0x8f;
    if (len == 0) {
      ++bad, ++i;
      continue;
    }
    size_t k = 1;
    for (; k < len && i + k < n; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      if (d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xbf)) break;
    }
    if (k == len) {
      i += len;
    } else if (i + k == n) {
      break;  // cut by the end of the head
    } else {
      ++bad, ++i;
    }
  }
  return bad;
}

}  // namespace

bool LooksLikeText(std::string_view head) {
  if (head.empty()) return true;
  size_t nul = 0, ctrl = 0;
  for (unsigned char c : head) {
    if (c == 0) ++nul;
    else if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\b' && c != 0x1b) || c == 0x7f)
      ++ctrl;
  }
  // A log may hold a few NULs (a file cut and zero-filled); a binary has many.
  if (nul * 100 > head.size() || (nul + ctrl) * 10 > head.size()) return false;
  // Uniform random bytes are ~10% C0 controls, so the check above passes a
  // third of them; they are also ~45% invalid UTF-8, where a log written in
  // any encoding a server uses (UTF-8; Latin-1 names in ASCII) has a few.
  const size_t bad = InvalidUtf8Bytes(head);
  return bad <= 8 || bad * 16 <= head.size();
}

}  // namespace tpt
