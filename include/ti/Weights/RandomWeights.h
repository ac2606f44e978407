//===- RandomWeights.h - Deterministic synthetic weights --------*- C++ -*-===//
//
// Weights for models whose checkpoints we do not have (or do not want to
// download in CI): every element is a pure function of (seed, checkpoint
// tensor name, flat element index in the checkpoint tensor's row-major order),
// so that any piece of any tensor can be made on its own, in any order, on any
// thread, and the same seed always gives the same model. Because the index is
// the CHECKPOINT's, packing random weights directly gives the same bytes as
// writing the same values as a bf16 checkpoint and packing that.
//
// The function:
//   h = splitmix64(fnv1a64(name) ^ splitmix64(seed))
//   z = splitmix64(h + index)
//   u_k = (((z >> 16k) & 0xffff) + 0.5) / 65536,  k = 0..3
//   n = (u0 + u1 + u2 + u3 - 2) * sqrt(3)        (mean 0, variance 1)
//   value = 0.02 * n        for tensors of rank >= 2 (matrices)
//           1 + 0.1 * n     for rank-1 tensors (norm scales)
// where splitmix64(x) is SplitMix64's output for the state x: x + the golden
// gamma, then its two multiply-xorshift rounds, and fnv1a64 is 64-bit FNV-1a
// of the name's bytes (ti/Support/Fnv1a.h). n is an Irwin-Hall sum: close
// to a standard normal, bounded by |n| <= 2 sqrt(3).
//
// Norm scales are deliberately not exactly 1: a kernel that forgot to multiply
// by the scale would still pass the tests if they were.
//
// All functions are pure and thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef TI_WEIGHTS_RANDOMWEIGHTS_H
#define TI_WEIGHTS_RANDOMWEIGHTS_H

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ti {

uint64_t splitmix64(uint64_t x);

/// Element `index` (flat, row-major) of checkpoint tensor `name` of rank `rank`.
float randomWeight(uint64_t seed, std::string_view name, uint64_t index, unsigned rank);

/// The bulk form: elements [first, first + count) of the tensor into `out`,
/// the same values as randomWeight. Rows [r0, r1) of a [R, C] tensor are the
/// flat range [r0 * C, r1 * C); a block of columns is one call per row.
void randomWeights(uint64_t seed, std::string_view name, unsigned rank, uint64_t first,
                   size_t count, float *out);

/// h of the function above, for callers making many small ranges of one
/// tensor (a transpose's tiles): hashing the name costs as much as a few
/// dozen elements.
uint64_t randomTensorKey(uint64_t seed, std::string_view name);
/// randomWeights with h given: the same values.
void randomWeightsKeyed(uint64_t key, unsigned rank, uint64_t first, size_t count, float *out);

} // namespace ti

#endif // TI_WEIGHTS_RANDOMWEIGHTS_H
