// reader_internal.h: what reader.cc and archive.cc share, not for other code.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "parser/reader.h"

namespace tpt::reader_internal {

// The bytes read to decide whether an input is text (OpenInput's sniff).
inline constexpr size_t kSniffBytes = 8192;

// "16.0 GiB", "3.5 MiB", "12 bytes".
std::string BytesText(uint64_t n);
// The message of a source cut by the run's --max-input-bytes budget.
std::string ExpandedLimitMessage(const std::string& name, uint64_t limit);
// The run's budget in force on this thread.
uint64_t ExpandedLimit();
// `inner` counted against the run's budget: past it, a DataLoss error naming the limit.
std::unique_ptr<ByteSource> Capped(std::unique_ptr<ByteSource> inner, const std::string& name);

// "logs.zip/build/x.txt" -> {"logs.zip", "build/x.txt"} when logs.zip is an
// archive file; nothing when the path does not go through one.
std::optional<std::pair<std::string, std::string>> SplitArchivePath(const std::string& path);
// The member `member` of `archive`, streamed; `name` is how errors name it.
StatusOr<std::unique_ptr<ByteSource>> OpenArchiveMember(const std::string& archive, const std::string& member,
                                                        const std::string& name);

// How many times an archive was opened for reading in this process (tests:
// an archive is read once, whatever its member count).
uint64_t ArchiveOpensForTest();

}  // namespace tpt::reader_internal
