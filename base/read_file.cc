// read_file.cc: see read_file.h.
#include "base/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tpt {
namespace {

std::string KindOfMode(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (!S_ISREG(m)) return "not a regular file";
  return "";
}

std::string HumanBytes(size_t n) {
  if (n >= (1u << 20) && n % (1u << 20) == 0) return std::to_string(n >> 20) + " MiB";
  if (n >= (1u << 10) && n % (1u << 10) == 0) return std::to_string(n >> 10) + " KiB";
  return std::to_string(n) + " bytes";
}

}  // namespace

std::string NotRegularFileKind(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "";
  return KindOfMode(st.st_mode);
}

StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes, const std::string& what) {
  // O_NONBLOCK: opening a FIFO with no writer must not block before fstat says what it is.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int e = errno;
    return NotFoundError(path + ": cannot open " + what + " (" + std::strerror(e) + ")");
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return NotFoundError(path + ": cannot read " + what + " (" + std::strerror(e) + ")");
  }
  if (const std::string kind = KindOfMode(st.st_mode); !kind.empty()) {
    ::close(fd);
    return InvalidArgumentError(path + ": is " + kind + ", not " + what + "; give a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return InvalidArgumentError(path + ": larger than " + HumanBytes(max_bytes) + " (" + std::to_string(st.st_size) +
                                " bytes); not " + what);
  }
  // Back to blocking reads for a regular file.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string text;
  text.resize(static_cast<size_t>(st.st_size) + 1);
  size_t got = 0;
  for (;;) {
    if (got == text.size()) {
      if (text.size() > max_bytes) break;
      text.resize(std::min(max_bytes + 1, text.size() * 2 + 4096));
    }
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      return NotFoundError(path + ": cannot read " + what + " (" + std::strerror(e) + ")");
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got > max_bytes) {
    return InvalidArgumentError(path + ": larger than " + HumanBytes(max_bytes) + " (it grew while read); not " + what);
  }
  text.resize(got);
  return text;
}

}  // namespace tpt
