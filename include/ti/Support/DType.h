//===- DType.h - Element types and their sizes -------------------*- C++ -*-===//
//
// The element types the graph language names, and bytesOf(), the one place an
// element's size is written: the compiler, the verifier, both executors and
// the kernel multiply by it rather than by 2 or 4, so that a new storage type
// (fp8 weights, say) is a change here and in what stores it, not a search for
// every `* 2`.
//
//===----------------------------------------------------------------------===//
#ifndef TI_SUPPORT_DTYPE_H
#define TI_SUPPORT_DTYPE_H

#include "ti/Support/HostDevice.h"

#include <cstdint>

namespace ti {

enum class DType : uint8_t { BF16, F16, F32, I32 };

/// The graph language's spelling: "bf16", "f16", "f32", "i32".
constexpr const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::BF16: return "bf16";
  case DType::F16: return "f16";
  case DType::F32: return "f32";
  case DType::I32: return "i32";
  }
  return "?";
}

/// Bytes of one element.
TI_HOST_DEVICE constexpr uint32_t bytesOf(DType dtype) {
  switch (dtype) {
  case DType::BF16:
  case DType::F16: return 2;
  case DType::F32:
  case DType::I32: return 4;
  }
  return 0;
}

} // namespace ti

#endif // TI_SUPPORT_DTYPE_H
