//===- AttentionLayout.h - Where a layer's attention data lives -*- C++ -*-===//
//
// The attention workspace of one layer: what the attention tasks write and
// the output projection (a kFlagMergeChunks Gemv) reads, as TaskRecord.h
// specifies. One definition for the compiler (which sizes the buffer and points
// the projection at the partials), the access model (which checks every byte),
// the CPU executor and the CUDA worker (which index it): host and device code
// alike. Offsets are in f32 elements from the workspace's start.
//
//   scores   [heads][maxContext]     a row of scores per query head
//   stats    [chunks][heads][2]      (max, sum of exp) per chunk and head
//   partials [chunks][heads][headDim]  each chunk's weighted values
//
//===----------------------------------------------------------------------===//
#ifndef TI_PLAN_ATTENTIONLAYOUT_H
#define TI_PLAN_ATTENTIONLAYOUT_H

#include "ti/Plan/TaskRecord.h"
#include "ti/Support/HostDevice.h"

#include <cstdint>

namespace ti::plan {

struct AttentionWorkspace {
  uint32_t heads, headDim, chunks, maxContext;

  /// The workspace of a layer of this geometry in a plan of `maxContext` positions.
  TI_HOST_DEVICE static constexpr AttentionWorkspace of(const HeadGeometry &g,
                                                        uint32_t maxContext) {
    return AttentionWorkspace{g.heads, g.headDim, g.chunks, maxContext};
  }

  /// Head `head`'s scores (maxContext of them).
  TI_HOST_DEVICE constexpr uint64_t scores(uint32_t head) const {
    return uint64_t(head) * maxContext;
  }
  /// Chunk `chunk`'s (max, sum) of head `head`.
  TI_HOST_DEVICE constexpr uint64_t stats(uint32_t chunk, uint32_t head) const {
    return uint64_t(heads) * maxContext + (uint64_t(chunk) * heads + head) * 2;
  }
  /// Elements from one chunk's stats of a head to the next chunk's.
  TI_HOST_DEVICE constexpr uint32_t statsStride() const { return 2 * heads; }
  /// Chunk `chunk`'s weighted values of head `head` (headDim of them);
  /// partials(c, 0) is where chunk c's whole output (heads x headDim) starts.
  TI_HOST_DEVICE constexpr uint64_t partials(uint32_t chunk, uint32_t head) const {
    return uint64_t(heads) * maxContext + uint64_t(chunks) * heads * 2 +
           (uint64_t(chunk) * heads + head) * headDim;
  }
  /// Elements of the whole workspace.
  TI_HOST_DEVICE constexpr uint64_t elements() const { return partials(chunks, 0); }
};

} // namespace ti::plan

#endif // TI_PLAN_ATTENTIONLAYOUT_H
