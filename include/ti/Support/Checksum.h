//===- Checksum.h - The checksum of weights files ---------------*- C++ -*-===//
//
// XXH3-64 from the xxHash library (Debian libxxhash-dev), compiled into
// TiSupport from its header (XXH_INLINE_ALL), so that no binary needs the
// library at run time. It checks weights files for damage (WeightsFile.h):
// not cryptographic, not a signature, but fast enough for a whole checkpoint
// (several GB/s on one core) where the FNV-1a of Fnv1a.h manages about one.
//
//===----------------------------------------------------------------------===//
#ifndef TI_SUPPORT_CHECKSUM_H
#define TI_SUPPORT_CHECKSUM_H

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ti {

/// A checksum of bytes fed in order, in as many pieces as the caller likes:
/// the value depends only on the bytes.
class Checksum {
public:
  Checksum();
  ~Checksum();
  Checksum(const Checksum &) = delete;
  Checksum &operator=(const Checksum &) = delete;

  Checksum &update(const void *data, size_t bytes);
  /// The checksum of everything fed so far (more may follow).
  uint64_t value() const;

private:
  struct State;
  std::unique_ptr<State> state;
};

/// The checksum of `bytes` bytes at `data`.
uint64_t checksum(const void *data, size_t bytes);

} // namespace ti

#endif // TI_SUPPORT_CHECKSUM_H
