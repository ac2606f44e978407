//===- Bf16.h - bf16 and f16 conversions, header-only -----------*- C++ -*-===//
//
// The weights are bf16; checkpoints come in bf16, f16 or f32. The packer
// converts once, the CPU executor widens in its inner loops, so these are
// inline and branch-light. Bit-exact and portable: they do not depend on the
// host's floating-point rounding mode or on compiler flags.
//
// All functions are pure and thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef TI_SUPPORT_BF16_H
#define TI_SUPPORT_BF16_H

#include <bit>
#include <cstdint>

namespace ti {

/// The bf16 nearest to `f`, ties to even (as PyTorch's `.to(torch.bfloat16)`).
/// NaN stays NaN (quiet, sign kept): plain rounding would carry a NaN whose
/// payload sits in the low 16 bits into infinity, or into the sign bit.
/// Finite values above the largest bf16 round to infinity, as IEEE says.
inline uint16_t floatToBf16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x0040u);
  // Adding 0x7fff rounds halves down and the rest to nearest; the kept
  // lowest bit adds the one more that makes an exact half round to even.
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

/// Exact: a bf16 is the top half of an f32.
inline float bf16ToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

/// Exact: every IEEE half (subnormals, infinities, NaN payloads) is an f32.
inline float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13); // Infinity or NaN.
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13); // Rebias 15 -> 127.
  } else if (mantissa == 0) {
    bits = sign; // Signed zero.
  } else {
    // Subnormal: mantissa * 2^-24, normal in f32. Shift the leading one up to
    // the implicit bit, lowering the exponent once per shift.
    uint32_t e = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

} // namespace ti

#endif // TI_SUPPORT_BF16_H
