// reader.cc: see reader.h.
#include "parser/reader.h"
#include "parser/flight_recorder.h"
#include "parser/nccl_ras.h"
#include "parser/stack_dump.h"
#include "parser/vllm_trace.h"

#include "parser/reader_internal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace tpt {
namespace {

using reader_internal::kSniffBytes;

class FdSource : public ByteSource {
 public:
  FdSource(int fd, bool owned, std::string name) : fd_(fd), owned_(owned), name_(std::move(name)) {}
  ~FdSource() override {
    if (owned_) ::close(fd_);
  }
  StatusOr<size_t> Read(char* buf, size_t n) override {
    for (;;) {
      ssize_t r = ::read(fd_, buf, n);
      if (r >= 0) return static_cast<size_t>(r);
      if (errno == EINTR) continue;
      return DataLossError(name_ + ": read failed: " + std::strerror(errno));
    }
  }

 private:
  int fd_;
  bool owned_;
  std::string name_;
};

// Replays a peeked head, then reads the rest from the inner source.
class PeekSource : public ByteSource {
 public:
  explicit PeekSource(std::unique_ptr<ByteSource> inner) : inner_(std::move(inner)) {}
  // Reads until `n` bytes are buffered or the input ends.
  Status Peek(size_t n) {
    while (head_.size() < n && !inner_eof_) {
      size_t old = head_.size();
      head_.resize(n);
      auto r = inner_->Read(head_.data() + old, n - old);
      if (!r.ok()) {
        head_.resize(old);
        return r.status();
      }
      head_.resize(old + *r);
      if (*r == 0) inner_eof_ = true;
    }
    return OkStatus();
  }
  std::string_view head() const { return head_; }
  StatusOr<size_t> Read(char* buf, size_t n) override {
    if (pos_ < head_.size()) {
      size_t k = std::min(n, head_.size() - pos_);
      std::memcpy(buf, head_.data() + pos_, k);
      pos_ += k;
      if (pos_ == head_.size()) {
        head_.clear();
        head_.shrink_to_fit();
        pos_ = 0;
      }
      return k;
    }
    if (inner_eof_) return size_t{0};
    return inner_->Read(buf, n);
  }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::string head_;
  size_t pos_ = 0;
  bool inner_eof_ = false;
};

class GzipSource : public ByteSource {
 public:
  GzipSource(std::unique_ptr<ByteSource> inner, std::string name) : inner_(std::move(inner)), name_(std::move(name)) {
    std::memset(&z_, 0, sizeof(z_));
    ok_ = inflateInit2(&z_, 15 + 32) == Z_OK;
    in_.resize(64 * 1024);
  }
  ~GzipSource() override { inflateEnd(&z_); }

  StatusOr<size_t> Read(char* buf, size_t n) override {
    if (!ok_) return InternalError(name_ + ": zlib could not start");
    if (done_ || n == 0) return size_t{0};
    z_.next_out = reinterpret_cast<Bytef*>(buf);
    z_.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    while (z_.avail_out == static_cast<uInt>(std::min<size_t>(n, 1u << 30))) {
      if (z_.avail_in == 0 && !in_eof_) {
        auto r = inner_->Read(in_.data(), in_.size());
        if (!r.ok()) return r.status();
        if (*r == 0) {
          in_eof_ = true;
        } else {
          z_.next_in = reinterpret_cast<Bytef*>(in_.data());
          z_.avail_in = static_cast<uInt>(*r);
        }
      }
      if (z_.avail_in == 0 && in_eof_) {
        if (member_started_) {
          return DataLossError(name_ + ": the gzip stream is truncated (ends mid-member); the lines before the cut "
                                       "were read; re-copy the file or gunzip what is left");
        }
        done_ = true;
        break;
      }
      member_started_ = true;
      int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_started_ = false;
        // Concatenated members continue; anything else after the end is ignored.
        if (z_.avail_in == 0 && !in_eof_) {
          auto r = inner_->Read(in_.data(), in_.size());
          if (!r.ok()) return r.status();
          if (*r == 0) in_eof_ = true;
          z_.next_in = reinterpret_cast<Bytef*>(in_.data());
          z_.avail_in = static_cast<uInt>(*r);
        }
        if (z_.avail_in >= 1 && z_.next_in[0] == 0x1f) {
          inflateReset(&z_);
        } else {
          done_ = true;
          break;
        }
      } else if (rc == Z_BUF_ERROR) {
        if (z_.avail_in == 0 && in_eof_) continue;  // reported as truncated above
        if (z_.avail_in == 0) continue;
        break;
      } else if (rc != Z_OK) {
        return DataLossError(name_ + ": corrupt gzip data (" + std::string(z_.msg ? z_.msg : "inflate failed") +
                             "); the lines before the damage were read");
      }
    }
    return static_cast<size_t>(std::min<size_t>(n, 1u << 30) - z_.avail_out);
  }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::string name_;
  z_stream z_;
  bool ok_ = false;
  bool done_ = false;
  bool in_eof_ = false;
  bool member_started_ = false;
  std::vector<char> in_;
};


// What every decompressor says when its stream stops early or is damaged.
Status CutStream(const std::string& name, const char* what) {
  return DataLossError(name + ": the " + what + " stream is truncated (ends mid-stream); the lines before the cut "
                       "were read; re-copy the file");
}
Status CorruptStream(const std::string& name, const char* what, const std::string& why) {
  return DataLossError(name + ": corrupt " + what + " data (" + why + "); the lines before the damage were read");
}

// .xz (and .lzma-in-xz), concatenated streams too, through liblzma. The
// decoder's memory is capped like zstd's window: `xz -9` needs 65 MiB, a
// stream made with a larger dictionary is refused with the command to unpack it.
constexpr uint64_t kXzMemLimit = 128u << 20;
class XzSource : public ByteSource {
 public:
  XzSource(std::unique_ptr<ByteSource> inner, std::string name) : inner_(std::move(inner)), name_(std::move(name)) {
    ok_ = lzma_stream_decoder(&s_, kXzMemLimit, LZMA_CONCATENATED) == LZMA_OK;
    in_.resize(64 * 1024);
  }
  ~XzSource() override { lzma_end(&s_); }

  StatusOr<size_t> Read(char* buf, size_t n) override {
    if (!ok_) return InternalError(name_ + ": liblzma could not start");
    if (done_ || n == 0) return size_t{0};
    s_.next_out = reinterpret_cast<uint8_t*>(buf);
    s_.avail_out = n;
    while (s_.avail_out == n) {
      if (s_.avail_in == 0 && !in_eof_) {
        auto r = inner_->Read(in_.data(), in_.size());
        if (!r.ok()) return r.status();
        if (*r == 0) in_eof_ = true;
        s_.next_in = reinterpret_cast<const uint8_t*>(in_.data());
        s_.avail_in = *r;
      }
      lzma_ret rc = lzma_code(&s_, in_eof_ ? LZMA_FINISH : LZMA_RUN);
      if (rc == LZMA_STREAM_END) {
        done_ = true;
        break;
      }
      if (rc == LZMA_BUF_ERROR && in_eof_) return CutStream(name_, "xz");
      if (rc == LZMA_MEMLIMIT_ERROR) {
        return InvalidArgumentError(name_ + ": this xz stream needs " + std::to_string(lzma_memusage(&s_) >> 20) +
                                    " MiB to decode (a dictionary larger than tptriage's " +
                                    std::to_string(kXzMemLimit >> 20) + " MiB limit); decompress it first (xz -dk " +
                                    name_ + ") and pass the .log");
      }
      if (rc != LZMA_OK && rc != LZMA_BUF_ERROR) {
        return CorruptStream(name_, "xz", rc == LZMA_MEMLIMIT_ERROR || rc == LZMA_MEM_ERROR ? "out of memory"
                                          : rc == LZMA_FORMAT_ERROR                        ? "not xz"
                                          : rc == LZMA_OPTIONS_ERROR                       ? "unsupported options"
                                                                                           : "damaged data");
      }
    }
    return n - s_.avail_out;
  }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::string name_;
  lzma_stream s_ = LZMA_STREAM_INIT;
  bool ok_ = false, done_ = false, in_eof_ = false;
  std::vector<char> in_;
};

// .zst (concatenated frames too) through libzstd. Memory is bounded by
// libzstd's default window limit (128 MiB); a frame that needs more is refused.
class ZstdSource : public ByteSource {
 public:
  ZstdSource(std::unique_ptr<ByteSource> inner, std::string name)
      : inner_(std::move(inner)), name_(std::move(name)), d_(ZSTD_createDStream()) {
    in_.resize(ZSTD_DStreamInSize());
  }
  ~ZstdSource() override { ZSTD_freeDStream(d_); }

  StatusOr<size_t> Read(char* buf, size_t n) override {
    if (d_ == nullptr) return InternalError(name_ + ": libzstd could not start");
    ZSTD_outBuffer out{buf, n, 0};
    while (out.pos == 0 && n > 0) {
      if (in_pos_ == in_size_) {
        if (in_eof_) {
          if (frame_open_) return CutStream(name_, "zstd");
          return size_t{0};
        }
        auto r = inner_->Read(in_.data(), in_.size());
        if (!r.ok()) return r.status();
        in_pos_ = 0;
        in_size_ = *r;
        if (*r == 0) {
          in_eof_ = true;
          continue;
        }
      }
      ZSTD_inBuffer in{in_.data(), in_size_, in_pos_};
      const size_t rc = ZSTD_decompressStream(d_, &out, &in);
      in_pos_ = in.pos;
      if (ZSTD_isError(rc)) {
        if (ZSTD_getErrorCode(rc) == ZSTD_error_frameParameter_windowTooLarge) {
          return InvalidArgumentError(name_ + ": this zstd frame needs a window larger than tptriage's 128 MiB limit "
                                      "(made with zstd --long); decompress it first (zstd -d --long=31 " + name_ +
                                      ") and pass the .log");
        }
        return CorruptStream(name_, "zstd", ZSTD_getErrorName(rc));
      }
      frame_open_ = rc != 0;  // 0: a frame ended here
    }
    return out.pos;
  }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::string name_;
  ZSTD_DStream* d_;
  std::vector<char> in_;
  size_t in_pos_ = 0, in_size_ = 0;
  bool in_eof_ = false, frame_open_ = false;
};

}  // namespace

StatusOr<size_t> StringSource::Read(char* buf, size_t n) {
  size_t k = std::min(n, data_.size() - pos_);
  std::memcpy(buf, data_.data() + pos_, k);
  pos_ += k;
  return k;
}

StatusOr<OpenedInput> WrapInput(std::unique_ptr<ByteSource> raw, const std::string& name) {
  OpenedInput out;
  auto peek = std::make_unique<PeekSource>(std::move(raw));
  TPT_RETURN_IF_ERROR(peek->Peek(6));
  const std::string_view h = peek->head();
  if (h.size() >= 2 && h.substr(0, 2) == "\x1f\x8b") {
    out.gzip = true;
    out.compression = "gzip";
    peek = std::make_unique<PeekSource>(
        reader_internal::Capped(std::make_unique<GzipSource>(std::move(peek), name), name));
  } else if (h.size() >= 6 && h.substr(0, 6) == std::string_view("\xfd" "7zXZ\0", 6)) {
    out.compression = "xz";
    peek = std::make_unique<PeekSource>(
        reader_internal::Capped(std::make_unique<XzSource>(std::move(peek), name), name));
  } else if (h.size() >= 4 && h.substr(0, 4) == "\x28\xb5\x2f\xfd") {
    out.compression = "zstd";
    peek = std::make_unique<PeekSource>(
        reader_internal::Capped(std::make_unique<ZstdSource>(std::move(peek), name), name));
  } else if (h.size() >= 4 && (h.substr(0, 4) == std::string_view("PK\3\4", 4) || h.substr(0, 4) == std::string_view("PK\5\6", 4))) {
    out.archive = true;
  }
  Status s = peek->Peek(kSniffBytes);
  if (!s.ok() && peek->head().empty()) return s;
  // A tar (under gzip, xz or zstd, decompressed above): "ustar" at 257 (POSIX.1-1988 header).
  if (peek->head().size() >= 262 && peek->head().substr(257, 5) == "ustar") {
    out.archive = true;
    out.tar = true;
  }
  out.empty = peek->head().empty();
  out.looks_binary = !LooksLikeText(peek->head());
  out.flight_recorder = !out.archive && LooksLikeFlightRecorder(peek->head());
  out.stack_dump = !out.archive && !out.looks_binary && LooksLikeStackDump(peek->head());
  out.nccl_ras = !out.archive && !out.looks_binary && LooksLikeNcclRas(peek->head());
  out.vllm_trace = !out.archive && !out.looks_binary && LooksLikeVllmTrace(peek->head());
  out.source = std::move(peek);
  return out;
}

StatusOr<OpenedInput> OpenInput(const std::string& path) {
  if (path == "-") return WrapInput(std::make_unique<FdSource>(0, false, "<stdin>"), "<stdin>");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
    // A file inside an archive: "logs.zip/build/1_Set up job.txt".
    if (auto split = reader_internal::SplitArchivePath(path); split && !split->second.empty()) {
      auto member = reader_internal::OpenArchiveMember(split->first, split->second, path);
      if (!member.ok()) return member.status();
      return WrapInput(reader_internal::Capped(std::move(*member), path), path);
    }
    errno = ENOENT;
  }
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT) return NotFoundError(path + ": no such file; check the path");
    return NotFoundError(path + ": cannot open (" + std::strerror(e) + "); check its permissions");
  }
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return InvalidArgumentError(path + ": is a directory");
  }
  return WrapInput(std::make_unique<FdSource>(fd, true, path), path);
}

// ---- BlockReader -------------------------------------------------------------

// A buffer starts at this size (or buffer_bytes when smaller) and doubles.
constexpr size_t kInitialBuffer = 64 * 1024;

BlockReader::BlockReader(ByteSource* source, size_t buffer_bytes, size_t max_line_bytes)
    : source_(source),
      max_buffer_(std::max<size_t>(buffer_bytes, 1)),
      max_line_bytes_(std::max<size_t>(max_line_bytes, 1)) {
  cap_ = std::min(max_buffer_, kInitialBuffer);
  buf_.reset(new char[cap_]);
}

Status BlockReader::Fill() {
  if (begin_ > 0) {
    std::memmove(buf_.get(), buf_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  // Grow while the source keeps filling the buffer (a file, a fast pipe) or
  // when a line leaves no room; never past buffer_bytes.
  if ((last_fill_full_ || end_ == cap_) && cap_ < max_buffer_) {
    const size_t cap = cap_ > max_buffer_ / 2 ? max_buffer_ : cap_ * 2;
    std::unique_ptr<char[]> bigger(new char[cap]);
    std::memcpy(bigger.get(), buf_.get(), end_);
    buf_ = std::move(bigger);
    cap_ = cap;
  }
  const size_t room = cap_ - end_;
  auto r = source_->Read(buf_.get() + end_, room);
  if (!r.ok()) {
    eof_ = true;
    return r.status();
  }
  if (*r == 0) eof_ = true;
  last_fill_full_ = *r == room;
  end_ += *r;
  bytes_ += *r;
  if (observer_ && *r > 0) observer_->OnRead(input_, *r);
  return OkStatus();
}

StatusOr<bool> BlockReader::Next(Block* block) {
  for (;;) {
    if (begin_ == end_) {
      if (eof_) {
        if (!carry_active_) return false;
        carry_active_ = false;
        *block = Block{carry_, carry_offset_, carry_truncated_};
        return true;
      }
      TPT_RETURN_IF_ERROR(Fill());
      continue;
    }
    char* data = buf_.get() + begin_;
    size_t size = end_ - begin_;
    if (carry_active_) {
      const char* nl = static_cast<const char*>(std::memchr(data, '\n', size));
      size_t take = nl ? static_cast<size_t>(nl - data) : size;
      size_t room = max_line_bytes_ - std::min(max_line_bytes_, carry_.size());
      carry_.append(data, std::min(take, room));
      if (take > room) carry_truncated_ = true;
      size_t used = nl ? take + 1 : take;
      begin_ += used;
      consumed_ += used;
      if (!nl) continue;
      carry_active_ = false;
      *block = Block{carry_, carry_offset_, carry_truncated_};
      return true;
    }
    // Only the bytes not searched before: a line arriving in pieces is not
    // searched again from its start each time (quadratic on a long line).
    searched_ += size - std::min(scanned_, size);
    const char* last = scanned_ < size ? static_cast<const char*>(memrchr(data + scanned_, '\n', size - scanned_))
                                       : nullptr;
    if (last) {
      size_t n = static_cast<size_t>(last - data) + 1;
      *block = Block{std::string_view(data, n), consumed_, false};
      begin_ += n;
      consumed_ += n;
      scanned_ = 0;
      return true;
    }
    scanned_ = size;
    if (eof_) {  // last line without a newline
      *block = Block{std::string_view(data, size), consumed_, false};
      begin_ = end_;
      consumed_ += size;
      scanned_ = 0;
      return true;
    }
    // Room left (or the buffer may grow) and the line is not yet longer than
    // the long-line policy keeps: read more of it in place.
    if (size <= max_line_bytes_ && (size < cap_ || cap_ < max_buffer_)) {
      TPT_RETURN_IF_ERROR(Fill());
      continue;
    }
    // The buffer holds part of one line: assemble it on the side.
    carry_active_ = true;
    carry_truncated_ = false;
    carry_offset_ = consumed_;
    carry_.clear();
    carry_.append(data, std::min(size, max_line_bytes_));
    if (size > max_line_bytes_) carry_truncated_ = true;
    begin_ = end_;
    consumed_ += size;
    scanned_ = 0;
  }
}

}  // namespace tpt
