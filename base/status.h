// status.h: the one error vocabulary of tptriage (after absl::Status).
//
// A Status is ok or carries a code and a message that names the input and what
// to do. StatusOr<T> holds a value or a non-ok Status. Nothing in tptriage
// throws across a module boundary; errors are values.
//
//   StatusOr<int> ParsePort(std::string_view s);
//   auto port = ParsePort("8000");
//   if (!port.ok()) return port.status();
//   Use(*port);
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace tpt {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,   // bad flag, bad rule file, bad format file
  kNotFound,          // missing file
  kDataLoss,          // truncated / corrupt input
  kUnavailable,       // no GPU, device busy
  kDeadlineExceeded,  // a wait ran past its deadline
  kInternal,          // a bug or an API failure (CUDA, NCCL)
  kCancelled,         // Ctrl-C
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgumentError(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFoundError(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status DataLossError(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status UnavailableError(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status DeadlineExceededError(std::string m) { return {StatusCode::kDeadlineExceeded, std::move(m)}; }
inline Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status CancelledError(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }

const char* StatusCodeName(StatusCode code);

inline std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

inline const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kDataLoss: return "DATA_LOSS";
    case StatusCode::kUnavailable: return "UNAVAILABLE";
    case StatusCode::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case StatusCode::kInternal: return "INTERNAL";
    case StatusCode::kCancelled: return "CANCELLED";
  }
  return "UNKNOWN";
}

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit like absl
  StatusOr(Status status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

#define TPT_RETURN_IF_ERROR(expr)             \
  do {                                        \
    ::tpt::Status tpt_status_ = (expr);       \
    if (!tpt_status_.ok()) return tpt_status_; \
  } while (0)

}  // namespace tpt
