//===- Fnv1a.h - The 64-bit FNV-1a hash --------------------------*- C++ -*-===//
//
// The one hash the project computes where the result must be the same on
// every machine and in every build: the plan's weights layout hash (which
// weights.bin repeats), the worker's fingerprint and the synthetic weights'
// per-tensor keys. FNV-1a is not cryptographic; these hashes guard against
// mistakes (a weights file packed for another plan, a plan probed with another
// worker binary), not against an attacker.
//
// Values are hashed as their bytes on a little-endian host (the only hosts the
// plan format supports). Header-only, pure, thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef TI_SUPPORT_FNV1A_H
#define TI_SUPPORT_FNV1A_H

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace ti {

class Fnv1a {
public:
  static constexpr uint64_t kOffsetBasis = 0xcbf29ce484222325ull;
  static constexpr uint64_t kPrime = 0x100000001b3ull;

  /// `n` bytes at `data`.
  Fnv1a &bytes(const void *data, size_t n) {
    const auto *p = static_cast<const unsigned char *>(data);
    for (size_t i = 0; i < n; ++i) {
      h ^= p[i];
      h *= kPrime;
    }
    return *this;
  }
  /// A scalar's bytes.
  template <typename T> Fnv1a &value(T v) {
    static_assert(std::is_arithmetic_v<T>, "hash scalars; spell out a struct's fields");
    return bytes(&v, sizeof v);
  }
  /// A string's length (as uint64_t), then its bytes: "ab" + "c" and "a" +
  /// "bc" hash differently.
  Fnv1a &string(std::string_view s) {
    value(uint64_t(s.size()));
    return bytes(s.data(), s.size());
  }
  uint64_t hash() const { return h; }

private:
  uint64_t h = kOffsetBasis;
};

/// FNV-1a of `bytes` alone (no length first).
inline uint64_t fnv1a64(std::string_view bytes) {
  return Fnv1a().bytes(bytes.data(), bytes.size()).hash();
}

} // namespace ti

#endif // TI_SUPPORT_FNV1A_H
