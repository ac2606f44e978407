//===- WeightStream.cuh - How ops read weight bytes -------------*- CUDA -*-===//
//
// The one interface through which tasks load the weights data: random access
// by byte offset, each load issued by the thread that uses it. (A weight
// stream that runs ahead of the tasks, through a shared-memory ring, would
// need the ops to consume stage by stage instead: this interface does not
// hide that change.)
//
// The contract an op keeps:
//   - beginTask(t) before its first load of task t, endTask() after its last
//     (every thread of the block calls both);
//   - loads name 16-byte aligned offsets inside the task's weight slices
//     (`weight` .. + weightBytes, and its norm scale);
//   - the returned values are the bytes of the weights data as uploaded.
//
// Today: plain 16-byte non-coherent global loads (ld.global.nc, not allocated
// in L1: each weight byte is read once per step), issued by the consuming
// thread itself; beginTask/endTask do nothing.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_WEIGHTSTREAM_CUH
#define TI_LIB_RUNTIME_CUDA_WEIGHTSTREAM_CUH

#include "Config.cuh"

#include "ti/Plan/TaskRecord.h"

#include <cstdint>

namespace ti::cuda {

/// Eight bf16 values, as loaded: element 2i in the low half of word i.
struct Bf16x8 {
  uint32_t w[4];
  /// Element e (0..7) widened to float (exact).
  __device__ __forceinline__ float at(uint32_t e) const {
    uint32_t word = w[e / 2];
    return __uint_as_float((e & 1) ? (word & 0xffff0000u) : (word << 16));
  }
};
static_assert(sizeof(Bf16x8) == 16);

/// A position in the weights data that a thread reads forward from: loads at
/// small constant distances, then a step forward (the distances become the
/// load instructions' immediate offsets).
class WeightCursor {
public:
  WeightCursor() = default;
  __device__ explicit WeightCursor(const uint8_t *at) : at_(at) {}

  /// The 8 bf16 at `distance` bytes past the cursor (16-byte aligned).
  __device__ __forceinline__ Bf16x8 load(uint32_t distance = 0) const {
    Bf16x8 v;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3])
        : "l"(at_ + distance));
    return v;
  }
  __device__ __forceinline__ void advance(uint64_t bytes) { at_ += bytes; }

private:
  const uint8_t *at_ = nullptr;
};

class WeightStream {
public:
  __device__ explicit WeightStream(const uint8_t *weights) : base_(weights) {}

  __device__ void beginTask(const plan::TaskRecord &) {}
  __device__ void endTask() {}

  /// A cursor at byte `offset` of the weights data (a multiple of 16).
  __device__ __forceinline__ WeightCursor at(uint64_t offset) const {
    return WeightCursor(base_ + offset);
  }
  /// The 8 bf16 at byte `offset` of the weights data (a multiple of 16).
  __device__ __forceinline__ Bf16x8 load(uint64_t offset) const { return at(offset).load(); }

private:
  const uint8_t *base_;
};

} // namespace ti::cuda

#endif // TI_LIB_RUNTIME_CUDA_WEIGHTSTREAM_CUH
