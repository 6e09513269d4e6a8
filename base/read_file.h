// read_file.h: read a small configuration or data file whole, after checking
// what it is. A directory, FIFO, device or socket is refused by name before a
// byte is read (a FIFO would block, /dev/zero would fill memory), and so is a
// regular file larger than the cap; the read itself stops at the cap too (a
// file that grows while read).
//
//   auto text = tpt::ReadSmallFile("gpus.json", 16u << 20, "a GPU catalog");
//   if (!text.ok()) return text.status();   // "gpus.json: is a directory, not a GPU catalog"
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"

namespace tpt {

// `what` names the kind of file expected ("a GPU catalog", "a rule file"); it
// appears in the messages. NotFound when the path cannot be opened;
// InvalidArgument for the wrong file type or a file over `max_bytes`.
StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes, const std::string& what);

// "a directory", "a FIFO (named pipe)", "a character device", ... for a path
// that is not a regular file; "" for a regular file or one that cannot be stat'ed.
std::string NotRegularFileKind(const std::string& path);

}  // namespace tpt
