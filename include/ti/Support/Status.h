//===- Status.h - Errors without exceptions or LLVM -------------*- C++ -*-===//
//
// The runtime side (plan loading, verification, executors) reports failures as
// a Status with one line of text; tools print it and exit 1. StatusOr<T> holds a
// value or the reason there is none.
//
//===----------------------------------------------------------------------===//
#ifndef TI_SUPPORT_STATUS_H
#define TI_SUPPORT_STATUS_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace ti {

class [[nodiscard]] Status {
public:
  Status() = default;
  static Status error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !failed; }
  explicit operator bool() const { return ok(); }
  const std::string &message() const { return text; }

private:
  explicit Status(std::string message) : failed(true), text(std::move(message)) {}
  bool failed = false;
  std::string text;
};

template <typename T> class [[nodiscard]] StatusOr {
public:
  StatusOr(T value) : value_(std::move(value)) {}
  StatusOr(Status status) : status_(std::move(status)) { assert(!status_.ok()); }

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status &status() const { return status_; }
  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }

private:
  std::optional<T> value_;
  Status status_;
};

} // namespace ti

#endif // TI_SUPPORT_STATUS_H
