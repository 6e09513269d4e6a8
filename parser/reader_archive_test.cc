// reader_archive_test.cc: .xz, .zst and archives (.zip, .tar.*) as the
// reader opens them (parser/reader.h); the inputs are made here with the
// same libraries, so no binary fixture is checked in.
#include <archive.h>
#include <archive_entry.h>
#include <lzma.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <string>
#include <vector>

#include "parser/reader.h"
#include "parser/reader_internal.h"

namespace tpt {
namespace {

namespace fs = std::filesystem;

std::string Xz(const std::string& data) {
  std::string out(lzma_stream_buffer_bound(data.size()), '\0');
  size_t pos = 0;
  EXPECT_EQ(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const uint8_t*>(data.data()),
                                    data.size(), reinterpret_cast<uint8_t*>(out.data()), &pos, out.size()),
            LZMA_OK);
  out.resize(pos);
  return out;
}

// With its checksum, as the zstd command writes by default.
std::string Zstd(const std::string& data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  size_t n = ZSTD_compress2(c, out.data(), out.size(), data.data(), data.size());
  ZSTD_freeCCtx(c);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

// A zip (or, with `tar_gz`, a .tar.gz) holding `files` (path -> content).
// With `tar_xz9`, a .tar.xz at xz's preset 9 (a 64 MiB dictionary), as `tar -cJf` with XZ_OPT=-9.
void WriteArchive(const std::string& path, const std::vector<std::pair<std::string, std::string>>& files,
                  bool tar_gz = false, bool tar_xz9 = false) {
  archive* a = archive_write_new();
  if (tar_gz) {
    archive_write_set_format_pax_restricted(a);
    archive_write_add_filter_gzip(a);
  } else if (tar_xz9) {
    archive_write_set_format_pax_restricted(a);
    archive_write_add_filter_xz(a);
    archive_write_set_filter_option(a, "xz", "compression-level", "9");
  } else {
    archive_write_set_format_zip(a);
  }
  ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK) << archive_error_string(a);
  for (const auto& [name, content] : files) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, name.c_str());
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, static_cast<la_int64_t>(content.size()));
    ASSERT_EQ(archive_write_header(a, e), ARCHIVE_OK) << archive_error_string(a);
    for (size_t off = 0; off < content.size(); off += 1 << 20) {
      const size_t k = std::min<size_t>(1 << 20, content.size() - off);
      ASSERT_EQ(archive_write_data(a, content.data() + off, k), static_cast<la_ssize_t>(k));
    }
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
}

std::string Lines(int n, const std::string& what) {
  std::string s;
  for (int i = 0; i < n; ++i) s += what + " line " + std::to_string(i) + "\n";
  return s;
}

struct ReadResult {
  std::string text;
  std::string error;
};

ReadResult ReadThrough(ByteSource* src) {
  ReadResult r;
  BlockReader reader(src, 64 * 1024, 1 << 20);
  Block b;
  for (;;) {
    auto more = reader.Next(&b);
    if (!more.ok()) {
      r.error = more.status().message();
      break;
    }
    if (!*more) break;
    r.text.append(b.text);
  }
  return r;
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/tpt_archive_test_XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(OpenInput, XzAndZstdAreDetectedByMagicAndInflated) {
  const std::string text = Lines(500, "xz or zstd");
  struct Case {
    std::string packed, want;
    const char* codec;
  };
  for (const Case& c : {Case{Xz(text), text, "xz"}, Case{Zstd(text), text, "zstd"},
                        Case{Xz("a\n") + Xz("b\n"), "a\nb\n", "xz"},  // concatenated streams
                        Case{Zstd("a\n") + Zstd("b\n"), "a\nb\n", "zstd"}}) {
    const std::string& packed = c.packed;
    const char* codec = c.codec;
    auto opened = WrapInput(std::make_unique<StringSource>(packed), "mem");
    ASSERT_TRUE(opened.ok()) << codec;
    EXPECT_STREQ(opened->compression, codec);
    EXPECT_FALSE(opened->looks_binary);
    ReadResult r = ReadThrough(opened->source.get());
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.text, c.want) << codec;
  }
}

TEST(OpenInput, TruncatedOrCorruptXzAndZstdAreDataLossAfterTheReadableLines) {
  // Big enough that the decoders hand out lines before the cut (zstd
  // decodes whole 128 KiB blocks).
  const std::string text = Lines(40000, "a log that was cut");
  for (const auto& [packed, codec] : {std::pair{Xz(text), "xz"}, std::pair{Zstd(text), "zstd"}}) {
    std::string cut = packed.substr(0, packed.size() * 3 / 4);
    auto opened = WrapInput(std::make_unique<StringSource>(cut), "cut." + std::string(codec));
    ASSERT_TRUE(opened.ok()) << codec;
    ReadResult r = ReadThrough(opened->source.get());
    EXPECT_NE(r.error.find("cut." + std::string(codec) + ": the " + codec + " stream is truncated"), std::string::npos)
        << r.error;
    EXPECT_GT(r.text.size(), 100000u) << codec;
    EXPECT_EQ(text.compare(0, r.text.size(), r.text), 0) << codec << ": what was read is the start of the log";

    std::string bad = packed;
    bad[bad.size() / 2] ^= 0x55;
    bad[bad.size() / 2 + 1] ^= 0x55;
    opened = WrapInput(std::make_unique<StringSource>(bad), "bad");
    ASSERT_TRUE(opened.ok());
    r = ReadThrough(opened->source.get());
    EXPECT_NE(r.error.find("bad: corrupt " + std::string(codec) + " data"), std::string::npos) << codec << ": " << r.error;
  }
}

TEST(ListArchive, ZipReadsLikeAFolder) {
  TempDir d;
  const std::string zip = d / "logs_42.zip";
  // GitHub's log archive: one file per job, and a folder per job with one file per step.
  WriteArchive(zip, {{"0_serve.txt", "job\n"},
                     {"serve/2_Run server.txt", "step 2\n"},
                     {"serve/1_Set up job.txt", "step 1\n"},
                     {"serve/.hidden", "x\n"},
                     {"__MACOSX/serve/._1_Set up job.txt", "x\n"}});
  EXPECT_TRUE(IsArchiveFile(zip));
  auto all = ListArchive(zip);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->archive, zip);
  EXPECT_TRUE(all->error.empty()) << all->error;
  EXPECT_EQ(all->members,
            (std::vector<std::string>{zip + "/0_serve.txt", zip + "/serve/1_Set up job.txt", zip + "/serve/2_Run server.txt"}));
  auto folder = ListArchive(zip + "/serve");
  ASSERT_TRUE(folder.has_value());
  EXPECT_EQ(folder->members, (std::vector<std::string>{zip + "/serve/1_Set up job.txt", zip + "/serve/2_Run server.txt"}));

  auto member = OpenInput(zip + "/serve/2_Run server.txt");
  ASSERT_TRUE(member.ok()) << member.status().message();
  EXPECT_EQ(ReadThrough(member->source.get()).text, "step 2\n");
  auto missing = OpenInput(zip + "/serve/9_nope.txt");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no such file in " + zip), std::string::npos);

  // Not archives: a folder, a text file, a path that does not exist.
  WriteFile(d / "plain.log", "text\n");
  EXPECT_FALSE(ListArchive(d / "plain.log").has_value());
  EXPECT_FALSE(ListArchive(d / "plain.log/x").has_value());
  EXPECT_FALSE(ListArchive(d / "nope.zip/x").has_value());
  EXPECT_FALSE(IsArchiveFile(d / "plain.log"));
}

TEST(ListArchive, CompressedMembersAndTarGzToo) {
  TempDir d;
  const std::string text = Lines(50, "rank 0");
  WriteArchive(d / "runs.tar.gz", {{"./run1/rank0.log.xz", Xz(text)}, {"./run1/rank1.log.zst", Zstd(text)}}, true);
  auto l = ListArchive(d / "runs.tar.gz");
  ASSERT_TRUE(l.has_value());
  EXPECT_TRUE(l->error.empty()) << l->error;
  ASSERT_EQ(l->members.size(), 2u);
  for (const std::string& m : l->members) {
    auto opened = OpenInput(m);
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    EXPECT_EQ(ReadThrough(opened->source.get()).text, text) << m;
  }
}

TEST(ListArchive, TruncatedZipSaysSoAndKeepsWhatCameBefore) {
  TempDir d;
  const std::string zip = d / "cut.zip";
  std::string big = Lines(200000, "second file");  // ~4 MiB, deflated to much less
  WriteArchive(zip, {{"a/1_first.txt", Lines(10, "first file")}, {"a/2_second.txt", big}});
  std::string bytes;
  {
    std::ifstream in(zip, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  WriteFile(zip, bytes.substr(0, bytes.size() / 2));  // the central directory and half of file 2 gone
  auto l = ListArchive(zip);
  ASSERT_TRUE(l.has_value());
  EXPECT_NE(l->error.find(zip + ": the archive is truncated or corrupt"), std::string::npos) << l->error;
  ASSERT_EQ(l->members.size(), 2u);
  EXPECT_EQ(ReadThrough(OpenInput(l->members[0])->source.get()).text, Lines(10, "first file"));
  auto second = OpenInput(l->members[1]);
  ASSERT_TRUE(second.ok()) << second.status().message();
  ReadResult r = ReadThrough(second->source.get());
  EXPECT_NE(r.error.find(l->members[1] + ": the archive is truncated or corrupt here"), std::string::npos) << r.error;
  EXPECT_GT(r.text.size(), 10000u);
  EXPECT_EQ(big.compare(0, r.text.size(), r.text), 0);

  WriteFile(d / "junk.zip", "PK\x03\x04 not really a zip");
  auto junk = ListArchive(d / "junk.zip");
  ASSERT_TRUE(junk.has_value());
  EXPECT_TRUE(junk->members.empty());
  EXPECT_NE(junk->error.find("junk.zip"), std::string::npos);
}

// Resident set of this process now, in KiB (/proc/self/statm: pages).
long ResidentKib() {
  std::ifstream in("/proc/self/statm");
  long size = 0, resident = 0;
  in >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// Runs `work` in a child and returns how far its peak resident set
// (ru_maxrss) rose above its resident set at the start, in KiB; `work`
// returns the child's exit code (0: done; else the test fails with `codes`).
long ChildPeakGrowthKib(const std::function<int()>& work, const char* codes) {
  int fds[2];
  if (pipe(fds) != 0) {
    ADD_FAILURE() << "pipe";
    return -1;
  }
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const long start = ResidentKib();
    const int rc = work();
    (void)!write(fds[1], &start, sizeof start);
    _exit(rc);
  }
  close(fds[1]);
  long start = -1;
  const bool got = read(fds[0], &start, sizeof start) == static_cast<ssize_t>(sizeof start);
  close(fds[0]);
  int status = 0;
  struct rusage ru {};
  EXPECT_EQ(wait4(pid, &status, 0, &ru), pid);
  EXPECT_TRUE(got && WIFEXITED(status)) << "the child died: status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << codes;
  return ru.ru_maxrss - start;
}

// A member is streamed: reading 64 MiB from a zip never holds it in memory,
// whether it is copied to the spool in $TMPDIR (parser/archive.cc Build) or, with
// no room there, read from the archive itself (ArchiveMemberSource). Measured as
// the peak resident set (ru_maxrss) of a child that does only the read, against
// its resident set when it started: it counts every page, mmap'd buffers and
// sanitizer builds included (mallinfo2 sees neither).
void ExpectMemberStreamed(const char* tmpdir) {
  TempDir d;
  const std::string zip = d / "big.zip";
  const std::string line = "[2026-12-01 10:00:00 TP0] Decode batch. #running-req: 8, #token: 4096\n";
  size_t size = 0;
  {
    std::string big;
    big.reserve(64 << 20);
    while (big.size() < (64 << 20)) big += line;
    WriteArchive(zip, {{"job/1_serve.txt", big}});
    size = big.size();
  }
  const long grew = ChildPeakGrowthKib(
      [&] {
        if (tmpdir != nullptr) setenv("TMPDIR", tmpdir, 1);
        auto opened = OpenInput(zip + "/job/1_serve.txt");
        if (!opened.ok()) return 3;
        size_t total = 0;
        BlockReader reader(opened->source.get(), 1 << 20, 1 << 20);
        Block b;
        while (*reader.Next(&b)) total += b.text.size();
        return total == size ? 0 : 4;
      },
      "3: the member did not open; 4: it did not read whole");
  std::printf("member of %zu MiB read (TMPDIR %s) with the peak resident set %ld KiB above the start\n", size >> 20,
              tmpdir != nullptr ? tmpdir : "as set", grew);
  EXPECT_LT(grew, 24L << 10) << "KiB: the peak resident set grew with the member's size";
}

TEST(ListArchive, MemberIsStreamedWithBoundedMemory) { ExpectMemberStreamed(nullptr); }

// No room for a spool (TMPDIR cannot take a file): the member is read from the
// archive as it is asked for, still in bounded memory.
TEST(ListArchive, MemberIsStreamedWithBoundedMemoryWithoutASpool) {
  ExpectMemberStreamed("/nonexistent-tptriage-tmpdir");
}

// An archive is decompressed once, however many members it has and however
// often it is listed (a folder inside it, each --runs run): before, every
// member re-read the archive from its start (a 5,000-member zip timed out).
TEST(ArchiveSpool, AnArchiveIsReadOnceForItsListingsAndAllItsMembers) {
  TempDir d;
  for (bool tar_gz : {false, true}) {
    const std::string arc = d / (tar_gz ? "many.tar.gz" : "many.zip");
    std::vector<std::pair<std::string, std::string>> files;
    for (int i = 0; i < 300; ++i) {
      files.push_back({(i % 2 ? "a/" : "b/") + std::to_string(i) + ".log", Lines(3, "member " + std::to_string(i))});
    }
    WriteArchive(arc, files, tar_gz);
    const uint64_t before = reader_internal::ArchiveOpensForTest();
    auto all = ListArchive(arc);
    auto a = ListArchive(arc + "/a");
    ASSERT_TRUE(all && a);
    ASSERT_EQ(all->members.size(), 300u);
    EXPECT_EQ(a->members.size(), 150u);
    // Every member open at once, as a group of inputs is read.
    std::vector<OpenedInput> open;
    for (const auto& m : all->members) {
      auto in = OpenInput(m);
      ASSERT_TRUE(in.ok()) << in.status().message();
      open.push_back(std::move(*in));
    }
    for (size_t i = 0; i < open.size(); ++i) {
      const std::string& m = all->members[i];
      const std::string n = fs::path(m).stem().string();
      ReadResult r = ReadThrough(open[i].source.get());
      EXPECT_EQ(r.error, "") << m;
      EXPECT_EQ(r.text, Lines(3, "member " + n)) << m;
    }
    EXPECT_EQ(reader_internal::ArchiveOpensForTest() - before, 1u)
        << (tar_gz ? "tar.gz" : "zip") << ": the archive was read again for a listing or a member";
  }
}

// The unpacked copy lives in an unlinked file: nothing is left in $TMPDIR,
// even while members are open. A member the copy does not hold (another
// extension, named by hand) is still read, from the archive.
TEST(ArchiveSpool, LeavesNothingInTmpdirAndStillReadsOtherMembersByName) {
  TempDir d;
  const std::string tmp = d / "tmp";
  fs::create_directory(tmp);
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  setenv("TMPDIR", tmp.c_str(), 1);
  const std::string zip = d / "job.zip";
  WriteArchive(zip, {{"serve.log", Lines(5, "serve")}, {"env.json", "{\"CUDA_VISIBLE_DEVICES\": \"0,1\"}\n"}});
  auto log = OpenInput(zip + "/serve.log");
  auto env = OpenInput(zip + "/env.json");
  ASSERT_TRUE(log.ok() && env.ok());
  EXPECT_TRUE(fs::is_empty(tmp)) << "the spool left a file in $TMPDIR";
  EXPECT_EQ(ReadThrough(log->source.get()).text, Lines(5, "serve"));
  EXPECT_EQ(ReadThrough(env->source.get()).text, "{\"CUDA_VISIBLE_DEVICES\": \"0,1\"}\n");
  if (old) setenv("TMPDIR", saved.c_str(), 1);
  else unsetenv("TMPDIR");
}

// The unpacked copy stops at the run's --max-input-bytes: the member cut by
// it says so when read (never a silent end), a later one too.
TEST(ArchiveSpool, TheByteLimitCutsTheCopyAndTheMemberSaysSo) {
  TempDir d;
  const std::string zip = d / "limit.zip";
  WriteArchive(zip, {{"a.log", Lines(200, "first")}, {"b.log", Lines(200, "second")}});
  // Opened (a member cut before its first byte reports at once) or read, it names the limit.
  auto read_under_limit = [&](const std::string& member) {
    SetExpandedByteBudget(1000);
    ReadResult r;
    auto in = OpenInput(zip + "/" + member);
    if (!in.ok()) r.error = in.status().message();
    else r = ReadThrough(in->source.get());
    SetExpandedByteBudget(kDefaultMaxExpandedBytes);
    return r;
  };
  ReadResult ra = read_under_limit("a.log");
  ReadResult rb = read_under_limit("b.log");
  EXPECT_LE(ra.text.size(), 1000u);
  EXPECT_EQ(rb.text, "");
  EXPECT_NE(ra.error.find("--max-input-bytes"), std::string::npos) << ra.error;
  EXPECT_NE(rb.error.find("--max-input-bytes"), std::string::npos) << rb.error;
  // With the default limit again, the archive is read whole.
  auto again = OpenInput(zip + "/b.log");
  ASSERT_TRUE(again.ok());
  ReadResult whole = ReadThrough(again->source.get());
  EXPECT_EQ(whole.error, "");
  EXPECT_EQ(whole.text, Lines(200, "second"));
}

// Members of a tar.xz open at once share one decompression: before, each
// open member carried its own decoder and dictionary (200 x 1 MiB members of
// an xz -9 archive took 4.2 GiB). Peak resident set of a child that opens
// all 48 members and reads them, against its start.
TEST(ArchiveSpool, OpenMembersOfATarXzShareOneDecoder) {
  TempDir d;
  const std::string txz = d / "ranks.tar.xz";
  const std::string line = "[2026-12-01 10:00:00 TP0] Decode batch. #running-req: 8, #token: 4096, gen throughput\n";
  std::string mib;
  while (mib.size() < (1u << 20)) mib += line;
  std::vector<std::pair<std::string, std::string>> files;
  for (int i = 0; i < 48; ++i) files.push_back({"rank" + std::to_string(i) + ".log", mib});
  WriteArchive(txz, files, false, true);
  const long grew = ChildPeakGrowthKib(
      [&] {
        std::vector<OpenedInput> open;
        for (int i = 0; i < 48; ++i) {
          auto in = OpenInput(txz + "/rank" + std::to_string(i) + ".log");
          if (!in.ok()) return 3;
          open.push_back(std::move(*in));
        }
        for (auto& in : open) {
          if (ReadThrough(in.source.get()).text.size() != mib.size()) return 4;
        }
        return 0;
      },
      "3: a member did not open; 4: one did not read whole");
  std::printf("48 members of a tar.xz (xz -9) open at once: peak resident set %ld KiB above the start\n", grew);
  EXPECT_LT(grew, 160L << 10) << "KiB: memory grew with the number of open members";
}

}  // namespace
}  // namespace tpt
