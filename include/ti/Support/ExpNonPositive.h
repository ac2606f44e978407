//===- ExpNonPositive.h - e^x for x <= 0, in a loop the compiler vectorizes -*- C++ -*-===//
//
// The sampler weighs every token of the vocabulary by e^((logit - top) / T),
// an argument never above 0. std::exp is a call the compiler does not
// vectorize without -ffast-math (which would also take the sampler's NaN
// tests away): 0.1 ms of a 0.53 ms draw for Llama 3's 128,256 logits
// (docs/PERFORMANCE.md, "Serving"). This one is
// straight-line float and integer arithmetic with no call and no branch:
// x = k ln 2 + r with k = round(x log2 e) (the 1.5 * 2^23 shift rounds to the
// nearest integer and leaves k in the low bits), ln 2 split in two so that r
// keeps its bits (Cody and Waite), e^r by a degree-6 polynomial on
// [-ln 2 / 2, ln 2 / 2] (Cephes' expf), 2^k by building its exponent.
// Within 2 ulp of e^x on [-87, 0]; below -87 it is 0 (e^-87 is 1.6e-38: a
// weight that small moves no draw), -inf included, and NaN gives 0 too (a
// NaN logit weighs nothing). Pure and thread-safe; the same bits on every
// run of a build.
//
//===----------------------------------------------------------------------===//
#ifndef TI_SUPPORT_EXPNONPOSITIVE_H
#define TI_SUPPORT_EXPNONPOSITIVE_H

#include <bit>
#include <cstdint>

namespace ti {

/// e^x for x <= 0 (above 0 it is not e^x); 0 below -87, for -inf and for NaN.
inline float expNonPositive(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kShift = 12582912.0f; // 1.5 * 2^23: the sum's ulp is 1.
  constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  constexpr uint32_t kMinus87 = 0xc2ae0000u; // -87.0f
  // Out of range (x <= 0: below -87, -inf or NaN) when the magnitude's bits
  // pass 87's; a mask of all ones then, so that the selects are bit
  // operations (a float compare is control flow the vectorizer refuses).
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t out = 0u - uint32_t((bits & 0x7fffffffu) > (kMinus87 & 0x7fffffffu));
  const float clamped = std::bit_cast<float>((bits & ~out) | (kMinus87 & out));
  const float shifted = clamped * kLog2e + kShift;
  const float k = shifted - kShift;
  // k (-126 .. 0) as a two's complement integer: the sum's low mantissa bits.
  const uint32_t kBits = std::bit_cast<uint32_t>(shifted) - std::bit_cast<uint32_t>(kShift);
  const float r = (clamped - k * kLn2Hi) - k * kLn2Lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * r * r + r + 1.0f;
  const float twoToK = std::bit_cast<float>((kBits + 127u) << 23);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(er * twoToK) & ~out);
}

} // namespace ti

#endif // TI_SUPPORT_EXPNONPOSITIVE_H
