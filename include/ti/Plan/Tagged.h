//===- Tagged.h - Values that carry the step that wrote them ----*- C++ -*-===//
//
// A tagged buffer's element is 8 bytes, stored and loaded whole: the f32
// value's bits in the low half, the tag of the step that wrote it in the high
// half (little-endian: the value at byte 0, the tag at byte 4). A reader that
// waits for its step's tag on every element it reads needs no barrier between
// the writing wave and its own: the 8-byte store is single-copy atomic, so a
// matching tag comes with its value (Sync.cuh on the GPU; the CPU executor
// checks the tags instead of waiting).
//
// Tags. Launch n of an executor gets a base; step s of the launch writes tag
// base + s. Bases grow by the launch's steps, start at 1, and never return to
// a value while an element of that tag can still be read: every tagged buffer
// is written in every step before it is read (the plan verifier proves it),
// and an arena restored from elsewhere has its tagged buffers cleared (tag 0,
// which no step uses until 2^32 steps have run).
//
//===----------------------------------------------------------------------===//
#ifndef TI_PLAN_TAGGED_H
#define TI_PLAN_TAGGED_H

#include "ti/Support/HostDevice.h"

#include <cstdint>
#include <cstring>

namespace ti::plan {

/// The bytes of one tagged element.
constexpr uint64_t kTaggedBytes = 8;

/// The tag no step writes: what a cleared buffer holds.
constexpr uint32_t kNoTag = 0;

TI_HOST_DEVICE inline uint64_t packTagged(float value, uint32_t tag) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return uint64_t(tag) << 32 | bits;
}
TI_HOST_DEVICE inline uint32_t tagOf(uint64_t element) { return uint32_t(element >> 32); }
TI_HOST_DEVICE inline float valueOf(uint64_t element) {
  const uint32_t bits = uint32_t(element);
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

/// The tag of step `step` of a launch whose base is `base` (wraps at 2^32).
TI_HOST_DEVICE inline uint32_t stepTag(uint32_t base, int32_t step) {
  return base + uint32_t(step);
}

} // namespace ti::plan

#endif // TI_PLAN_TAGGED_H
