//===- AttentionLayout.h - Where a layer's attention data lives -*- C++ -*-===//
//
// The attention workspace of one layer: what the attention tasks write in
// long mode and its MergeAttention tasks read, as TaskRecord.h specifies. One
// definition for the compiler (which sizes the buffer), the access model (which checks every byte),
// the CPU executor and the CUDA worker (which index it): host and device code
// alike. Offsets are in f32 elements from the workspace's start.
//
//   partials [chunks][heads][headDim]  each chunk's attention output
//   stats    [chunks][heads][2]        (max, sum of exp) per chunk and head
//
// The partials come first, so that the projection's in[0] is the workspace's
// start and the chunks' statistics follow its C * heads * headDim inputs.
//
// Also here: the K/V caches' layout (KvCacheLayout, head-major, offsets in
// bf16 elements), a long-mode task's positions (attentionPositions), and the
// blocks in which a kFlagStreamKv task's cached rows go through the weight
// stream (kvBlockRows).
//
//===----------------------------------------------------------------------===//
#ifndef TI_PLAN_ATTENTIONLAYOUT_H
#define TI_PLAN_ATTENTIONLAYOUT_H

#include "ti/Plan/TaskRecord.h"
#include "ti/Support/HostDevice.h"

#include <cstdint>

namespace ti::plan {

struct AttentionWorkspace {
  uint32_t heads, headDim, chunks;

  /// The workspace of a layer of this geometry.
  TI_HOST_DEVICE static constexpr AttentionWorkspace of(const HeadGeometry &g) {
    return AttentionWorkspace{g.heads, g.headDim, g.chunks};
  }

  /// Chunk `chunk`'s output of head `head` (headDim of them); partials(c, 0)
  /// is where chunk c's whole output (heads x headDim) starts.
  TI_HOST_DEVICE constexpr uint64_t partials(uint32_t chunk, uint32_t head) const {
    return (uint64_t(chunk) * heads + head) * headDim;
  }
  /// Chunk `chunk`'s (max, sum) of head `head`.
  TI_HOST_DEVICE constexpr uint64_t stats(uint32_t chunk, uint32_t head) const {
    return uint64_t(chunks) * heads * headDim + (uint64_t(chunk) * heads + head) * 2;
  }
  /// Elements from one chunk's stats of a head to the next chunk's.
  TI_HOST_DEVICE constexpr uint32_t statsStride() const { return 2 * heads; }
  /// Elements of the whole workspace.
  TI_HOST_DEVICE constexpr uint64_t elements() const { return stats(chunks, 0); }
};

/// The K and V caches of a layer: bf16[kvHeads][maxContext][headDim], each
/// kv head's rows position after position, so that a task of one kv head and
/// a run of positions reads two contiguous runs (one of K, one of V). The
/// access model (TaskAccesses.h) speaks of a cache row `pos` and its columns
/// (kv head * headDim + d); this says where they are.
struct KvCacheLayout {
  uint32_t maxContext, headDim;

  TI_HOST_DEVICE static constexpr KvCacheLayout of(const HeadGeometry &g, uint32_t maxContext) {
    return KvCacheLayout{maxContext, g.headDim};
  }
  /// Element of position `pos`, kv head `head`, dimension 0.
  TI_HOST_DEVICE constexpr uint64_t row(uint32_t pos, uint32_t head) const {
    return (uint64_t(head) * maxContext + pos) * headDim;
  }
  /// Element of position `pos`, column `column` (kv head * headDim + d).
  TI_HOST_DEVICE constexpr uint64_t at(uint32_t pos, uint32_t column) const {
    return row(pos, column / headDim) + column % headDim;
  }
  /// Elements from a kv head's row of position p to its row of p + 1.
  TI_HOST_DEVICE constexpr uint32_t positionStride() const { return headDim; }
};

/// The positions [begin, end) an attention task of chunk `chunk` (of
/// `chunks`) covers when it decodes position `pos` (context pos + 1): above
/// the plan's split context (long mode) chunk c takes [c*ctx/C, (c+1)*ctx/C),
/// so that the chunks cover the context once, in order; at or below it, chunk
/// 0 takes all of [0, ctx) and the others nothing. One definition for the CPU
/// executor, the worker's consumers and its producer, which streams the rows
/// of [begin, min(end, pos)): row pos is the step's own, written by it.
struct AttentionPositions {
  int32_t begin, end;

  /// The cached rows the task reads: its positions before pos.
  TI_HOST_DEVICE constexpr int32_t cachedEnd(int32_t pos) const { return end < pos ? end : pos; }
};
TI_HOST_DEVICE constexpr AttentionPositions attentionPositions(uint32_t chunk, uint32_t chunks,
                                                               int32_t pos, bool longMode) {
  const int64_t ctx = int64_t(pos) + 1;
  if (!longMode)
    return chunk == 0 ? AttentionPositions{0, int32_t(ctx)} : AttentionPositions{0, 0};
  return AttentionPositions{int32_t(int64_t(chunk) * ctx / chunks),
                            int32_t(int64_t(chunk + 1) * ctx / chunks)};
}

/// Whether the streamed attention's value pass can take rows of this head
/// dimension: headDim / 8 lanes share a row, one 16-byte vector each, so
/// headDim / 8 is a power of two up to 32 (headDim 8, 16, 32, 64, 128, 256).
TI_HOST_DEVICE constexpr bool kvRowsStreamable(uint32_t headDim) {
  const uint32_t lanes = headDim / 8;
  return headDim % 8 == 0 && lanes >= 1 && lanes <= 32 && (lanes & (lanes - 1)) == 0;
}

/// The cached rows of a kFlagStreamKv attention task go through the weight
/// stream in blocks of this many positions: a block's K rows fill one stage,
/// then its V rows the next; a block has at most a row per consumer thread
/// (AttentionStream.cuh scores one a thread, AttentionStreamMma.cuh's warps
/// take its 16-row tiles in turn). The largest power of two that both a stage's rows (headDim bf16
/// each) and the task's `threads` allow; 0 below 32 (a warp's lanes) or for a
/// head dimension the value pass cannot take (kvRowsStreamable), where the
/// plan may not stream the rows.
TI_HOST_DEVICE constexpr uint32_t kvBlockRows(uint32_t stageBytes, uint32_t headDim,
                                              uint32_t threads) {
  if (!kvRowsStreamable(headDim))
    return 0;
  const uint32_t rows = stageBytes / (2 * headDim);
  uint32_t p = 1;
  while (2 * p <= rows && 2 * p <= threads)
    p *= 2;
  return p >= 32 ? p : 0u;
}

/// The blocks of a kFlagStreamKv task's cached rows at a step: positions
/// [begin, end) (its positions before pos), blockRows at a time, the last
/// block the rest; each block a stage of K rows, then one of V rows. The
/// producer copies them (WeightStream.cuh: WeightProducer::fillKv), the
/// consumers and the stream-only skip walk them (AttentionStream.cuh,
/// AttentionStreamMma.cuh), all
/// from kvBlocks, so that the three agree on every stage.
struct KvBlocks {
  int32_t begin, end;
  uint32_t blockRows;
  /// Rows of the block that starts at `base`.
  TI_HOST_DEVICE constexpr uint32_t rowsAt(int32_t base) const {
    return uint32_t(end - base < int32_t(blockRows) ? end - base : int32_t(blockRows));
  }
  /// How many blocks.
  TI_HOST_DEVICE constexpr uint32_t count() const {
    return begin < end ? (uint32_t(end - begin) + blockRows - 1) / blockRows : 0u;
  }
};
TI_HOST_DEVICE constexpr KvBlocks kvBlocks(uint32_t chunk, uint32_t chunks, int32_t pos,
                                           bool longMode, uint32_t stageBytes, uint32_t headDim,
                                           uint32_t threads) {
  const AttentionPositions r = attentionPositions(chunk, chunks, pos, longMode);
  return KvBlocks{r.begin, r.cachedEnd(pos), kvBlockRows(stageBytes, headDim, threads)};
}

} // namespace ti::plan

#endif // TI_PLAN_ATTENTIONLAYOUT_H
