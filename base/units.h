// units.h: one grammar for sizes, used by every input that takes one: the log
// formats' byte fields, `plan` and `repro` flags, and the CLI's byte flags
// (cli/size_flag.h ByteSize).
//
//   ParseSize("96GiB")            -> 96 x 2^30
//   ParseSize("9.3 G")            -> 9.3 x 2^30
//   ParseSize("21.70 GB")         -> 21.7 x 2^30   (the servers' "GB" is GiB)
//   ParseSize("94", BareNumber::kNeedsUnit)  -> error: "a size needs a unit, e.g. 94GiB ..."
//   ParseWholeBytes("64K")        -> 65536         (a count of bytes: whole, >= 0)
//
// The grammar: NUMBER [spaces] [UNIT]. NUMBER is decimal digits with at most one
// '.', no sign, no exponent. UNIT is one of B, K/KB/KiB, M/MB/MiB, G/GB/GiB,
// T/TB/TiB, in any case, and every one of them is 1024-based. That is the
// servers' convention: SGLang prints "avail mem=21.70 GB" for
// torch.cuda.mem_get_info() / (1 << 30), vLLM prints GiB, and a user who copies a
// number from a log means what the log meant. A bare number is bytes, or refused
// with a hint where a flag holds GPU-sized quantities (--free-at-init 94 is
// almost never 94 bytes).
//
// Log formats are the one place where "GB" may be decimal: a format names the
// unit its server prints (FormatUnitScale): KiB/MiB/GiB/TiB binary, KB/MB/GB/TB
// decimal (SI), GB_as_GiB for a server that prints GiB as "GB".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tpt {

// "9.3GiB" -> {9.3, "gib"}: the leading number and the rest, lower case, spaces
// removed. nullopt when there is no leading number or it overflows.
struct NumberAndUnit {
  double number = 0;
  std::string unit;
};
std::optional<NumberAndUnit> SplitNumberUnit(std::string_view text);

// Bytes in one UNIT of the grammar above ("" and "b" are 1); nullopt if unknown.
std::optional<double> SizeUnitScale(std::string_view unit);

// What a number without a unit means.
enum class BareNumber {
  kBytes,      // "4096" is 4096 bytes (flags named in bytes: --max-line-bytes)
  kNeedsUnit,  // refused: "a size needs a unit" (GPU memory, weights, free memory)
};

// Text -> bytes (may be fractional: "0.6GiB"). Errors quote the text and say
// what to write.
StatusOr<double> ParseSize(std::string_view text, BareNumber bare = BareNumber::kBytes);

// Text -> a count of bytes that fits 64 bits: ParseSize rounded to the byte
// ("1.5K" is 1536, "72.3GiB" the nearest byte); a bare number must be whole
// ("1.5" is refused).
StatusOr<uint64_t> ParseWholeBytes(std::string_view text, BareNumber bare = BareNumber::kBytes);

// Bytes in one unit as a log format names it (parser/formats/*.json "unit"):
// B/bytes, KiB/MiB/GiB/TiB and K/M/G/T binary; KB/MB/GB/TB decimal; GB_as_GiB
// binary (the server prints GiB as "GB"). nullopt if unknown.
std::optional<double> FormatUnitScale(std::string_view unit);

}  // namespace tpt
