//===- AtomicFile.h - Write a file whole or not at all ----------*- C++ -*-===//
//
// Every output of the tools (plans, packed weights, target files) is written to
// a temporary file beside the destination and renamed over it only once it is
// complete, so an interrupted or failed run never leaves a half-written file
// under the final name. Nothing is left beside it either: the temporary file
// is removed on failure, on SIGINT, SIGTERM and SIGHUP (a handler installed
// while one is open, where the signal's action is the default), and, after a
// SIGKILL, by the next run that writes the same output (temporary names carry
// the writer's pid: `weights.bin.tmp.<pid>.XXXXXX`, removed once that process
// is gone). Needs no LLVM: the runtime uses it too.
//
//===----------------------------------------------------------------------===//
#ifndef TI_SUPPORT_ATOMICFILE_H
#define TI_SUPPORT_ATOMICFILE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ti {

/// Writes `contents` to `path` ("-" means standard output). Returns an empty
/// string on success, otherwise a one-line description of what failed.
std::string writeFileAtomically(const std::string &path, std::string_view contents);

/// The streaming form, for files too large to hold in memory (weights.bin):
/// open() creates a temporary file beside `path`, write() appends, commit()
/// syncs and renames it over `path`. Destroying an uncommitted writer (an
/// error, an exception, an early return) removes the temporary file.
/// Not thread-safe; not copyable.
class AtomicFileWriter {
public:
  AtomicFileWriter() = default;
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;

  /// Each returns an empty string on success, else one line saying what failed.
  std::string open(const std::string &path);
  std::string write(const void *data, size_t bytes);
  /// Appends `bytes` zero bytes.
  std::string writeZeros(size_t bytes);
  /// Writes over bytes already written, at `offset` (a header whose
  /// checksums are known only at the end); the size does not change.
  std::string writeAt(uint64_t offset, const void *data, size_t bytes);
  std::string commit();

  uint64_t bytesWritten() const { return written; }

private:
  /// Appends (`at` < 0), or writes at byte `at`; abandons the file on an error.
  std::string writeBytes(const void *data, size_t bytes, int64_t at);
  void abandon();
  std::string path, tmp;
  int fd = -1;
  int slot = -1; // in the signal handler's list of temporary files
  uint64_t written = 0;
};

} // namespace ti

#endif // TI_SUPPORT_ATOMICFILE_H
