// archive.cc: archives (zip; tar under gzip, xz, zstd, bzip2) read once.
//
// An archive is decompressed in one pass into a spool: an unlinked file in
// $TMPDIR (nothing is left behind, whatever the exit) holding, one after the
// other, the bytes of every member a log folder would read (*.log, *.txt, ...;
// a member without extension while it looks like text). Its listing and every
// member's source come from the spool, so the time is linear in the member
// count and the memory is the listing (one decompressor at a time, not one a
// member: an xz dictionary each was 4.2 GiB for 200 members). The spool of an
// archive serves every input and every `--runs` run of this process that
// names it or a folder inside it. A member the spool does not hold (another
// extension, named by hand; a spool that could not be written) is read as
// before: the archive again from its start, for that member alone.
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <list>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "parser/reader_internal.h"

namespace tpt {
namespace {

namespace fs = std::filesystem;
using reader_internal::kSniffBytes;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// An entry's path as a folder would show it: no "./", no trailing '/'.
std::string EntryPath(archive_entry* e) {
  const char* p = archive_entry_pathname(e);
  std::string s = p ? p : "";
  while (s.rfind("./", 0) == 0) s.erase(0, 2);
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

bool HiddenEntry(const std::string& path) {
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string_view part(path.data() + start, end - start);
    if (part.empty() || part[0] == '.' || part == "__MACOSX") return true;
    start = end + 1;
  }
  return path.empty();
}

struct ArchiveHandle {
  archive* a = archive_read_new();
  ~ArchiveHandle() { archive_read_free(a); }
  std::string Error() const {
    const char* e = archive_error_string(a);
    return e ? e : "unreadable";
  }
};

// Opens `path` for reading entries: zip (seekable: its central directory when
// whole, else entry by entry) and tar under gzip, xz, zstd or bzip2.
std::atomic<uint64_t> g_archive_opens{0};

Status OpenArchive(const std::string& path, ArchiveHandle* h) {
  ++g_archive_opens;
  archive_read_support_format_zip(h->a);
  archive_read_support_format_tar(h->a);
  archive_read_support_format_gnutar(h->a);
  archive_read_support_filter_gzip(h->a);
  archive_read_support_filter_xz(h->a);
  archive_read_support_filter_zstd(h->a);
  archive_read_support_filter_bzip2(h->a);
  if (archive_read_open_filename(h->a, path.c_str(), 64 * 1024) != ARCHIVE_OK) {
    return DataLossError(path + ": cannot read it as an archive (" + h->Error() +
                         "); re-download it, or unpack it and pass the folder");
  }
  return OkStatus();
}

std::string DamagedArchive(const std::string& path, const std::string& why, size_t files_before) {
  return path + ": the archive is truncated or corrupt (" + why + ") after " + std::to_string(files_before) +
         " file(s); the files past the damage were not read; re-download it";
}

// The error of a member's data, as its reader reports it.
Status MemberDataError(const std::string& name, const std::string& why) {
  if (why.find("assphrase") != std::string::npos) {
    return InvalidArgumentError(name + ": the archive member is encrypted (password-protected); unpack it with "
                                       "its password and pass the folder");
  }
  return DataLossError(name + ": the archive is truncated or corrupt here (" + why +
                       "); the lines before the damage were read; re-download it");
}

// One file of an archive, streamed from the archive's start (a member the
// spool does not hold).
class ArchiveMemberSource : public ByteSource {
 public:
  explicit ArchiveMemberSource(std::string name) : name_(std::move(name)) {}
  Status Open(const std::string& archive_path, const std::string& member) {
    TPT_RETURN_IF_ERROR(OpenArchive(archive_path, &h_));
    archive_entry* e = nullptr;
    for (;;) {
      int rc = archive_read_next_header(h_.a, &e);
      if (rc == ARCHIVE_EOF) return NotFoundError(name_ + ": no such file in " + archive_path + "; check the path");
      if (rc < ARCHIVE_WARN) {
        return DataLossError(name_ + ": the archive is truncated or corrupt before this file (" + h_.Error() +
                             "); re-download it");
      }
      if (archive_entry_filetype(e) == AE_IFREG && EntryPath(e) == member) return OkStatus();
    }
  }
  StatusOr<size_t> Read(char* buf, size_t n) override {
    if (n == 0) return size_t{0};
    la_ssize_t r = archive_read_data(h_.a, buf, n);
    if (r < 0) return MemberDataError(name_, h_.Error());
    return static_cast<size_t>(r);
  }

 private:
  std::string name_;
  ArchiveHandle h_;
};

// ---- The spool ---------------------------------------------------------------

// A member's bytes in the spool file: [offset, offset + size), then `error`
// (the data was damaged, encrypted, or cut by the byte limit) if any.
struct SpoolEntry {
  std::string path;
  bool hidden = false;
  bool spooled = false;
  uint64_t offset = 0, size = 0;
  std::string error;  // raw: libarchive's words, or kCutByLimit
};

constexpr const char* kCutByLimit = "\x01limit";

struct Spool {
  // The archive file as it was when spooled: a changed file is spooled again.
  dev_t dev = 0;
  ino_t ino = 0;
  off_t bytes = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  uint64_t cap = 0;      // the byte limit it was spooled under
  bool cut = false;      // a member was cut by that limit
  int fd = -1;           // the unlinked spool file; -1: none could be made
  std::string open_error;                 // the archive could not be opened
  std::string damage;                     // the listing stopped here (libarchive's words)
  size_t files_before_damage = 0;
  std::vector<SpoolEntry> entries;        // regular files, in archive order
  std::map<std::string, size_t> first;    // path -> index of its first entry
  ~Spool() {
    if (fd >= 0) ::close(fd);
  }
};

bool SameFile(const Spool& s, const struct stat& st) {
  return s.dev == st.st_dev && s.ino == st.st_ino && s.bytes == st.st_size &&
         s.mtime_ns == int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec &&
         s.ctime_ns == int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec;
}

// An unlinked read-write file in $TMPDIR (else /tmp); -1 when none can be made.
int SpoolFile() {
  const char* env = std::getenv("TMPDIR");
  const std::string dir = env && *env ? env : "/tmp";
  int fd = -1;
#ifdef O_TMPFILE
  fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
#endif
  std::string tmpl = dir + "/tptriage-spool-XXXXXX";
  fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd >= 0) ::unlink(tmpl.c_str());
  return fd;
}

bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// The members a log folder would read: a log's extension, or none (such a
// member is kept while it looks like text; a binary one keeps its head,
// which is all the sniff reads).
enum class Keep { kNo, kAll, kWhileText };
Keep WhatToKeep(const std::string& path) {
  const fs::path p(path);
  if (HasLogExtension(p)) return Keep::kAll;
  return p.has_extension() ? Keep::kNo : Keep::kWhileText;
}

void Build(const std::string& path, uint64_t cap, Spool* s) {
  s->cap = cap;
  ArchiveHandle h;
  if (Status st = OpenArchive(path, &h); !st.ok()) {
    s->open_error = st.message();
    return;
  }
  s->fd = SpoolFile();
  bool writable = s->fd >= 0;
  uint64_t spooled = 0;
  std::vector<char> buf(256 * 1024);
  archive_entry* e = nullptr;
  for (;;) {
    int rc = archive_read_next_header(h.a, &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc < ARCHIVE_WARN) {
      s->damage = h.Error();
      s->files_before_damage = s->entries.size();
      break;
    }
    if (archive_entry_filetype(e) != AE_IFREG) continue;
    SpoolEntry en;
    en.path = EntryPath(e);
    en.hidden = HiddenEntry(en.path);
    const bool first = s->first.emplace(en.path, s->entries.size()).second;
    const Keep keep = WhatToKeep(en.path);
    if (!en.hidden && first && keep != Keep::kNo && writable) {
      en.spooled = true;
      en.offset = spooled;
      for (;;) {
        if (spooled >= cap) {
          en.error = kCutByLimit;
          s->cut = true;
          break;
        }
        const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), cap - spooled));
        la_ssize_t r = archive_read_data(h.a, buf.data(), want);
        if (r < 0) {
          en.error = h.Error();
          break;
        }
        if (r == 0) break;
        if (!WriteAll(s->fd, buf.data(), static_cast<size_t>(r))) {
          // No room in $TMPDIR: this member and the rest are read from the archive.
          writable = false;
          en.spooled = false;
          break;
        }
        spooled += static_cast<uint64_t>(r);
        en.size += static_cast<uint64_t>(r);
        if (keep == Keep::kWhileText && en.size >= kSniffBytes) {
          // Decided: text reads on, a binary head is all that is needed.
          std::string head(kSniffBytes, '\0');
          if (::pread(s->fd, head.data(), head.size(), static_cast<off_t>(en.offset)) ==
                  static_cast<ssize_t>(head.size()) &&
              !LooksLikeText(head)) {
            break;
          }
        }
      }
    }
    s->entries.push_back(std::move(en));
  }
}

// Spools are kept for the process, the most recent kMaxSpools of them (an
// evicted one's file goes when its last reader does).
constexpr size_t kMaxSpools = 64;
std::mutex g_spool_mu;
std::list<std::pair<std::string, std::shared_ptr<const Spool>>> g_spools;  // most recent first

std::shared_ptr<const Spool> SpoolOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return nullptr;
  const uint64_t cap = reader_internal::ExpandedLimit();
  std::lock_guard<std::mutex> lock(g_spool_mu);
  for (auto it = g_spools.begin(); it != g_spools.end(); ++it) {
    const Spool& s = *it->second;
    if (it->first == path && SameFile(s, st) && (s.cap >= cap || !s.cut)) {
      g_spools.splice(g_spools.begin(), g_spools, it);
      return g_spools.front().second;
    }
  }
  auto s = std::make_shared<Spool>();
  s->dev = st.st_dev;
  s->ino = st.st_ino;
  s->bytes = st.st_size;
  s->mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  s->ctime_ns = int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec;
  Build(path, cap, s.get());
  g_spools.remove_if([&](const auto& p) { return p.first == path; });
  g_spools.emplace_front(path, s);
  if (g_spools.size() > kMaxSpools) g_spools.pop_back();
  return s;
}

// A member's bytes from the spool, then its error if it has one.
class SpoolSource : public ByteSource {
 public:
  SpoolSource(std::shared_ptr<const Spool> spool, const SpoolEntry* entry, std::string name)
      : spool_(std::move(spool)), entry_(entry), name_(std::move(name)) {}
  StatusOr<size_t> Read(char* buf, size_t n) override {
    if (n == 0) return size_t{0};
    if (pos_ >= entry_->size) {
      if (entry_->error.empty()) return size_t{0};
      if (entry_->error == kCutByLimit) {
        return DataLossError(reader_internal::ExpandedLimitMessage(name_, spool_->cap));
      }
      return MemberDataError(name_, entry_->error);
    }
    const size_t want = static_cast<size_t>(std::min<uint64_t>(n, entry_->size - pos_));
    for (;;) {
      ssize_t r = ::pread(spool_->fd, buf, want, static_cast<off_t>(entry_->offset + pos_));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return DataLossError(name_ + ": reading its unpacked copy in $TMPDIR failed (" +
                                       std::string(r < 0 ? std::strerror(errno) : "cut short") +
                                       "); unpack the archive and pass the folder");
      pos_ += static_cast<uint64_t>(r);
      return static_cast<size_t>(r);
    }
  }

 private:
  std::shared_ptr<const Spool> spool_;
  const SpoolEntry* entry_;
  std::string name_;
  uint64_t pos_ = 0;
};

}  // namespace

bool IsArchiveFile(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  for (const char* ext : {".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.zst", ".tzst", ".tar.bz2"}) {
    if (EndsWith(path, ext)) return true;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  unsigned char m[4] = {0, 0, 0, 0};
  const bool got = ::read(fd, m, 4) == 4;
  ::close(fd);
  return got && m[0] == 'P' && m[1] == 'K' && ((m[2] == 3 && m[3] == 4) || (m[2] == 5 && m[3] == 6));
}

std::optional<ArchiveListing> ListArchive(const std::string& path) {
  auto split = reader_internal::SplitArchivePath(path);
  if (!split) return std::nullopt;
  ArchiveListing out;
  out.archive = split->first;
  const std::string& folder = split->second;
  auto spool = SpoolOf(out.archive);
  if (!spool) {
    out.error = out.archive + ": cannot read it (" + std::strerror(errno) + "); check the path and its permissions";
    return out;
  }
  if (!spool->open_error.empty()) {
    out.error = spool->open_error;
    return out;
  }
  if (!spool->damage.empty()) out.error = DamagedArchive(out.archive, spool->damage, spool->files_before_damage);
  std::set<std::string> seen;
  for (const SpoolEntry& en : spool->entries) {
    const std::string& p = en.path;
    if (!folder.empty() && p != folder && p.rfind(folder + "/", 0) != 0) continue;
    if (en.hidden) {
      ++out.hidden;
      continue;
    }
    if (!seen.insert(out.archive + "/" + p).second) out.duplicates.push_back(out.archive + "/" + p);
  }
  out.members.assign(seen.begin(), seen.end());
  return out;
}

namespace reader_internal {

uint64_t ArchiveOpensForTest() { return g_archive_opens.load(); }

std::optional<std::pair<std::string, std::string>> SplitArchivePath(const std::string& path) {
  std::error_code ec;
  if (IsArchiveFile(path)) return std::make_pair(path, std::string());
  for (size_t pos = path.find('/', 1); pos != std::string::npos; pos = path.find('/', pos + 1)) {
    const std::string prefix = path.substr(0, pos);
    fs::file_status st = fs::status(prefix, ec);
    if (ec || !fs::exists(st)) return std::nullopt;
    if (fs::is_directory(st)) continue;
    if (!fs::is_regular_file(st) || !IsArchiveFile(prefix)) return std::nullopt;
    std::string rest = path.substr(pos + 1);
    while (!rest.empty() && rest.back() == '/') rest.pop_back();
    return std::make_pair(prefix, rest);
  }
  return std::nullopt;
}

StatusOr<std::unique_ptr<ByteSource>> OpenArchiveMember(const std::string& archive, const std::string& member,
                                                        const std::string& name) {
  auto spool = SpoolOf(archive);
  if (spool && spool->open_error.empty()) {
    auto it = spool->first.find(member);
    if (it == spool->first.end()) {
      if (!spool->damage.empty()) {
        return DataLossError(name + ": the archive is truncated or corrupt before this file (" + spool->damage +
                             "); re-download it");
      }
      return NotFoundError(name + ": no such file in " + archive + "; check the path");
    }
    const SpoolEntry& en = spool->entries[it->second];
    if (en.spooled) return std::unique_ptr<ByteSource>(std::make_unique<SpoolSource>(spool, &en, name));
  }
  auto direct = std::make_unique<ArchiveMemberSource>(name);
  TPT_RETURN_IF_ERROR(direct->Open(archive, member));
  return std::unique_ptr<ByteSource>(std::move(direct));
}

}  // namespace reader_internal
}  // namespace tpt
