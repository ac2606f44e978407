//===- Hex.h - Numbers as hexadecimal text -----------------------*- C++ -*-===//
//
// How the tools print hashes and bit sets: lower-case digits, zero-padded to
// a width, no prefix (callers that want "0x" write it). Header-only.
//
//===----------------------------------------------------------------------===//
#ifndef TI_SUPPORT_HEX_H
#define TI_SUPPORT_HEX_H

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>

namespace ti {

/// `value` in hexadecimal, at least `minDigits` digits (16: a whole uint64_t).
inline std::string hexDigits(uint64_t value, int minDigits = 16) {
  char text[24];
  std::snprintf(text, sizeof text, "%0*" PRIx64, minDigits, value);
  return text;
}

} // namespace ti

#endif // TI_SUPPORT_HEX_H
