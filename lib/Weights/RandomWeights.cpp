//===- RandomWeights.cpp - Deterministic synthetic weights ----------------===//
//
// RandomWeights.h states the function. The arithmetic is done in double, in
// the stated operations and order, then rounded to float. Two things keep the
// bits the same on every build and every CPU:
//  - contraction of a * b + c into a fused multiply-add is off in this file
//    (GCC contracts by default, even in ISO mode, wherever FMA exists);
//  - the bulk loop is compiled twice, for x86-64-v4 (AVX-512: 64-bit
//    multiplies and int64 -> double conversions in vectors, about 3.5x
//    faster) and for the baseline, and chosen at run time; both compute the
//    same IEEE operations per element, which the tests check against the
//    one-element form. The choice is a plain branch, not an ifunc
//    (target_clones): an ifunc resolver runs before ThreadSanitizer's
//    runtime is up and crashes an instrumented binary at load.
//
//===----------------------------------------------------------------------===//
#include "ti/Weights/RandomWeights.h"

#include "ti/Support/Fnv1a.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define TI_HAVE_V4 1
#endif

uint64_t ti::splitmix64(uint64_t x) {
  uint64_t z = x + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

namespace {

/// u0 + u1 + u2 + u3 - 2 = (a0 + a1 + a2 + a3 + 2) / 65536 - 2
///                       = (a0 + a1 + a2 + a3 - 131070) / 65536,
/// exact in double (18 significant bits at most), so the only roundings are
/// those of the last three operations, as in the stated form. The sum goes
/// through int64_t: converting a signed integer to double is one
/// instruction, an unsigned one is not.
inline float valueOf(uint64_t key, uint64_t index, double scale, double bias) {
  uint64_t z = ti::splitmix64(key + index);
  int64_t sum = static_cast<int64_t>((z & 0xffff) + ((z >> 16) & 0xffff) +
                                     ((z >> 32) & 0xffff) + (z >> 48));
  double centred = static_cast<double>(sum - 131070) * 0x1p-16;
  double n = centred * 1.7320508075688772; // sqrt(3)
  return static_cast<float>(bias + scale * n);
}

inline void fill(uint64_t key, unsigned rank, uint64_t first, size_t count, float *out) {
  double scale = rank >= 2 ? 0.02 : 0.1, bias = rank >= 2 ? 0.0 : 1.0;
  for (size_t i = 0; i < count; ++i)
    out[i] = valueOf(key, first + i, scale, bias);
}

#ifdef TI_HAVE_V4
__attribute__((target("arch=x86-64-v4"))) void fillV4(uint64_t key, unsigned rank,
                                                      uint64_t first, size_t count, float *out) {
  fill(key, rank, first, count, out);
}
#endif

} // namespace

uint64_t ti::randomTensorKey(uint64_t seed, std::string_view name) {
  return splitmix64(fnv1a64(name) ^ splitmix64(seed));
}

float ti::randomWeight(uint64_t seed, std::string_view name, uint64_t index, unsigned rank) {
  double scale = rank >= 2 ? 0.02 : 0.1, bias = rank >= 2 ? 0.0 : 1.0;
  return valueOf(randomTensorKey(seed, name), index, scale, bias);
}

void ti::randomWeightsKeyed(uint64_t key, unsigned rank, uint64_t first, size_t count,
                            float *out) {
#ifdef TI_HAVE_V4
  static const bool v4 = __builtin_cpu_supports("x86-64-v4");
  if (v4)
    return fillV4(key, rank, first, count, out);
#endif
  fill(key, rank, first, count, out);
}

void ti::randomWeights(uint64_t seed, std::string_view name, unsigned rank, uint64_t first,
                       size_t count, float *out) {
  randomWeightsKeyed(randomTensorKey(seed, name), rank, first, count, out);
}
