// reader.h: bytes in, blocks of complete lines out, with bounded memory.
//
// OpenInput() opens a file or "-" (stdin) and transparently inflates gzip, xz
// and zstd (detected by their magic bytes, not the name). An archive (.zip,
// as GitHub's "Download log archive" gives; .tar, .tar.gz/.tgz, .tar.xz,
// .tar.zst by name) reads as a folder: "logs.zip/build/1_Set up job.txt" names
// one file in it, streamed from the archive (never unpacked whole in memory or
// on disk); ListArchive() lists them. BlockReader hands out blocks
// of whole lines straight from its buffer, which starts small and grows up to
// buffer_bytes only while reads keep filling it (a small file never costs the
// whole size). A line longer than the buffer or than max_line_bytes is
// assembled in a side buffer capped at max_line_bytes (the rest of it is
// skipped, never held) and handed out alone, flagged `truncated` when cut.
// Each byte is searched for '\n' once, however the source hands them out
// (a pipe's 64 KiB at a time), so reading stays linear.
//
//   auto src = tpt::OpenInput("rank0.log.gz");
//   tpt::BlockReader reader(src->get(), 1 << 20, 1 << 20);
//   tpt::Block b;
//   while (*reader.Next(&b)) Scan(b.text);   // b.text ends at a '\n' (or EOF)
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tpt {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to n bytes; 0 at end of input. A DataLoss error for a truncated
  // or corrupt compressed stream.
  virtual StatusOr<size_t> Read(char* buf, size_t n) = 0;
};

// A source over memory (tests, fuzzing).
class StringSource : public ByteSource {
 public:
  explicit StringSource(std::string data) : data_(std::move(data)) {}
  StatusOr<size_t> Read(char* buf, size_t n) override;

 private:
  std::string data_;
  size_t pos_ = 0;
};

struct OpenedInput {
  std::unique_ptr<ByteSource> source;
  bool gzip = false;
  const char* compression = "";  // "gzip", "xz", "zstd" or "" (plain)
  bool archive = false;           // the bytes are a .zip or a tar (stdin; a member): name the file instead
  bool tar = false;               // ... a tar ("ustar" at 257), compressed or not
  bool looks_binary = false;  // sniffed from the first 8 KiB (decompressed)
  bool stack_dump = false;       // a py-spy dump or faulthandler's threads (parser/stack_dump.h), by its first lines
  bool flight_recorder = false;  // a PyTorch flight-recorder dump (parser/flight_recorder.h), by its first bytes
  bool nccl_ras = false;         // ncclras output (parser/nccl_ras.h), by its first lines
  bool vllm_trace = false;       // vLLM's VLLM_TRACE_FUNCTION trace (parser/vllm_trace.h), by its first line
  bool empty = false;         // no byte at all
};

// The most decompressed bytes (gzip, xz and zstd streams, archive members)
// one run may read (--max-input-bytes): a 9 MB .zst can hold 100 GiB. Past
// it every decompressing source stops with a DataLoss error naming the limit
// (the input then reads "read only in part"). Set before a run (it resets
// the count); the default is kDefaultMaxExpandedBytes.
inline constexpr uint64_t kDefaultMaxExpandedBytes = uint64_t{16} << 30;
void SetExpandedByteBudget(uint64_t max_bytes);
uint64_t ExpandedByteBudget();

// Opens `path` ("-" = stdin). NotFound / unreadable errors name the path.
StatusOr<OpenedInput> OpenInput(const std::string& path);
// The same over an already open source (gzip + binary sniffing).
StatusOr<OpenedInput> WrapInput(std::unique_ptr<ByteSource> raw, const std::string& name);

// The files of an archive, or of a folder inside one ("logs.zip/build").
struct ArchiveListing {
  std::string archive;               // the archive file's own path
  std::vector<std::string> members;  // "ARCHIVE/dir/file" of each regular file under the folder, sorted
  std::string error;                 // the listing stopped early (truncated or corrupt archive); else empty
  // Members whose name the archive holds more than once (a zip written
  // twice, `tar -r`): only the first copy can be named, so the rest is unread.
  std::vector<std::string> duplicates;
  size_t hidden = 0;  // regular files left out as hidden (.x, __MACOSX/) or unsafe (../, /abs)
};
// Nothing when `path` is neither an archive nor a path inside one. Hidden
// names (.x, __MACOSX/) are left out, as in a folder.
std::optional<ArchiveListing> ListArchive(const std::string& path);
// True when a folder (or an archive) reads the file by its name: .log, .txt,
// .out, .err, .gz, .xz, .zst, .jsonl, and rotations (rank0.log.1).
bool HasLogExtension(const std::filesystem::path& p);
// True when `path` is an archive file (zip by its magic bytes; tar by name).
bool IsArchiveFile(const std::string& path);

// True when the bytes look like text: few NULs, few control characters other
// than \t \n \r \f \b ESC, and few bytes outside valid UTF-8. A stray
// invalid byte (a Latin-1 name, a cut character) is still text; random or
// compressed bytes (about half of them invalid UTF-8) are not.
bool LooksLikeText(std::string_view head);

struct Block {
  std::string_view text;  // whole lines; ends with '\n' unless at end of input
  uint64_t offset = 0;    // stream offset of text[0]
  bool truncated = false; // a single line cut by the long-line policy
};

// Told of the bytes a BlockReader hands on (decompressed), a read at a time:
// a run's progress line (cli/progress.h). Called on the reading thread.
class ReadObserver {
 public:
  virtual ~ReadObserver() = default;
  virtual void OnRead(const std::string& input, uint64_t bytes) = 0;
};

class BlockReader {
 public:
  BlockReader(ByteSource* source, size_t buffer_bytes, size_t max_line_bytes);
  // False at end of input.
  StatusOr<bool> Next(Block* block);
  uint64_t bytes() const { return bytes_; }
  // Tells `observer` (may be null) of each read, naming the input `input`.
  void set_observer(ReadObserver* observer, std::string input) {
    observer_ = observer;
    input_ = std::move(input);
  }
  // For tests: bytes allocated now, and bytes searched for '\n' so far.
  size_t buffer_capacity() const { return cap_; }
  uint64_t bytes_searched() const { return searched_; }

 private:
  Status Fill();

  ByteSource* source_;
  std::unique_ptr<char[]> buf_;  // not zero-filled: only what is read is touched
  size_t cap_ = 0;               // bytes allocated, <= max_buffer_
  size_t max_buffer_;
  size_t begin_ = 0, end_ = 0;
  size_t scanned_ = 0;           // bytes after begin_ known to hold no '\n'
  bool last_fill_full_ = false;  // the last read filled all the room: grow
  bool eof_ = false;
  uint64_t consumed_ = 0;  // stream offset of buf_[begin_]
  uint64_t bytes_ = 0;
  uint64_t searched_ = 0;
  size_t max_line_bytes_;
  ReadObserver* observer_ = nullptr;
  std::string input_;
  // The long line being assembled.
  bool carry_active_ = false;
  bool carry_truncated_ = false;
  uint64_t carry_offset_ = 0;
  std::string carry_;
};

}  // namespace tpt
