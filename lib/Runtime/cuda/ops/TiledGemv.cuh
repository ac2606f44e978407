//===- TiledGemv.cuh - A Gemv or GateUp over weight tiles, on the tensor cores -*- CUDA -*-===//
//
// The Stream worker's form of a kFlagTiledWeights task (TaskRecord.h): its
// rows are stored in octet tiles (ti/Plan/WeightTiles.h) and arrive through
// the ring octet by octet, in pieces of a stage (WeightStream::consumeTiled).
//
// 1. x' into shared memory as the A operand of `mma.sync.m16n8k16` (bf16 in,
//    f32 sums): for each 8 columns of x', a bf16 hi and lo pair per value in
//    the 32 bytes the floats would take (Common.cuh: loadNormalizedInput with
//    fragments, storeVector). A's row 0 is hi and row 8 lo, the other rows
//    zero, so only lanes 0-3 hold a nonzero A operand.
// 2. A tile is 8 rows x 32 columns, the B operands of two products (k
//    blocks of 16): lane l's 16 bytes are row l / 4's columns 8 (l % 4) .. +8,
//    of which columns +0..3 feed the first product and +4..7 the second
//    (which k slot a column takes does not change a dot product, as long as
//    A's x' sits in the same slot: storeVector's order). Warp w takes the
//    piece's tiles w, w + 8, ..., two a turn into four accumulator chains,
//    so a chain is a quarter of its products deep. At the octet's last piece the warp adds
//    its chains (in a fixed order) and lane q < 4 leaves the rows 2q and
//    2q + 1 of its sum (hi + lo: C's rows 0 and 8) in the tile partials
//    (shared memory, [rows][warps]: WorkerLayout.h).
// 3. After the last octet and a block barrier, thread r adds row r's warps'
//    partials in warp order and emits it: Gemv's residual, output and V
//    cache row, or GateUp's silu(gate) * up from its gate and up rows.
//
// The sums differ from the row form's (Common.cuh: XSlice) in order and by
// x's hi + lo split (|x - hi - lo| <= 2^-17 |x|); a run repeats them bit for
// bit.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_TILEDGEMV_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_TILEDGEMV_CUH

#include "Common.cuh"

TI_WORKER_NAMESPACE_BEGIN

#if TI_WORKER_STREAM
/// d += A b for one k block of 16: A's four words of this lane, B's two.
__device__ __forceinline__ void mmaBf16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                        uint32_t a3, uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/// Steps 2 of every segment of task t, then a block barrier: every row's
/// warp partials in `partials` ([rows of all segments][kWarps], the
/// segments' rows one after another). `xa` is x' as A words (step 1).
__device__ __forceinline__ void tiledProducts(WeightStream &ws, const plan::TaskRecord &t,
                                              const float *xa, float *partials) {
  constexpr uint32_t kChains = 4;
  // The tiles of a 32 KB stage: the pieces the unrolled batch takes.
  constexpr uint32_t kFullPieceTiles = 64;
  const plan::StreamSegments segments = plan::streamSegments(t);
  const uint32_t lane = laneId(), warp = warpId();
  // Lanes 0-3 read their A words (32 bytes a lane per tile); the others' are 0.
  const bool holdsA = lane < 4;
  const uint8_t *aBase = reinterpret_cast<const uint8_t *>(xa) + lane * 32;
  uint32_t rowBase = 0; // The segment's first row among all segments' rows.
#pragma unroll 1
  for (uint32_t k = 0; k < segments.count; ++k) {
    const plan::StreamSegment &seg = segments.segment[k];
    float acc[kChains][4] = {};
    ws.consumeTiled(seg, [&](uint32_t octet, uint32_t first, uint32_t bytes, const uint8_t *data) {
      const uint32_t tiles = bytes / plan::kTileBytes;
      // The piece's first tile in its octet: the A words of its columns.
      const uint8_t *a = aBase + first / plan::kTileBytes * (plan::kTileCols * 4);
      const uint8_t *w = data + lane * 16;
      if (tiles == kFullPieceTiles) {
        // A whole stage of tiles (every octet of 2,048 columns, every piece
        // but an octet's last of longer ones): the warp's tiles in batches
        // of kBatch, every load of a batch issued before its first product
        // (kFullPieceTiles / kWarps in one batch made the worker spill). One
        // tile a turn, each product waited for its own loads (short
        // scoreboard) and the turn before's chain: 0.66 us a 32 KB stage
        // with nothing to wait for (compute-only, docs/PERFORMANCE.md).
        constexpr uint32_t kBatch = 4;
        static_assert(kFullPieceTiles % (kBatch * kWarps) == 0, "whole batches");
#pragma unroll 1
        for (uint32_t i0 = warp; i0 < kFullPieceTiles; i0 += kBatch * kWarps) {
          uint4 b[kBatch], lo[kBatch], hi[kBatch];
#pragma unroll
          for (uint32_t j = 0; j < kBatch; ++j)
            b[j] = *reinterpret_cast<const uint4 *>(w + (i0 + j * kWarps) * plan::kTileBytes);
#pragma unroll
          for (uint32_t j = 0; j < kBatch; ++j) {
            lo[j] = hi[j] = uint4{0, 0, 0, 0};
            if (holdsA) {
              const uint4 *at =
                  reinterpret_cast<const uint4 *>(a + (i0 + j * kWarps) * (plan::kTileCols * 4));
              lo[j] = at[0], hi[j] = at[1];
            }
          }
#pragma unroll
          for (uint32_t j = 0; j < kBatch; ++j) {
            mmaBf16(acc[2 * (j % 2)], lo[j].x, lo[j].y, lo[j].z, lo[j].w, b[j].x, b[j].y);
            mmaBf16(acc[2 * (j % 2) + 1], hi[j].x, hi[j].y, hi[j].z, hi[j].w, b[j].z, b[j].w);
          }
        }
      } else {
      // Two tiles a turn, into chains 0-1 and 2-3, all four loads first.
      uint32_t i = warp;
#pragma unroll 1
      for (; i + kWarps < tiles; i += 2 * kWarps) {
        const uint4 b0 = *reinterpret_cast<const uint4 *>(w + i * plan::kTileBytes);
        const uint4 b1 = *reinterpret_cast<const uint4 *>(w + (i + kWarps) * plan::kTileBytes);
        uint4 a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0;
        if (holdsA) {
          const uint4 *at = reinterpret_cast<const uint4 *>(a + i * (plan::kTileCols * 4));
          const uint4 *next =
              reinterpret_cast<const uint4 *>(a + (i + kWarps) * (plan::kTileCols * 4));
          a0 = at[0], a1 = at[1], a2 = next[0], a3 = next[1];
        }
        mmaBf16(acc[0], a0.x, a0.y, a0.z, a0.w, b0.x, b0.y);
        mmaBf16(acc[1], a1.x, a1.y, a1.z, a1.w, b0.z, b0.w);
        mmaBf16(acc[2], a2.x, a2.y, a2.z, a2.w, b1.x, b1.y);
        mmaBf16(acc[3], a3.x, a3.y, a3.z, a3.w, b1.z, b1.w);
      }
      if (i < tiles) {
        const uint4 b0 = *reinterpret_cast<const uint4 *>(w + i * plan::kTileBytes);
        uint4 a0 = {0, 0, 0, 0}, a1 = a0;
        if (holdsA) {
          const uint4 *at = reinterpret_cast<const uint4 *>(a + i * (plan::kTileCols * 4));
          a0 = at[0], a1 = at[1];
        }
        mmaBf16(acc[0], a0.x, a0.y, a0.z, a0.w, b0.x, b0.y);
        mmaBf16(acc[1], a1.x, a1.y, a1.z, a1.w, b0.z, b0.w);
      }
      }
      if (first + bytes < plan::octetBytes(seg.rowBytes))
        return; // The octet goes on in the next piece.
      float sum[4];
#pragma unroll
      for (uint32_t e = 0; e < 4; ++e) {
        sum[e] = (acc[0][e] + acc[1][e]) + (acc[2][e] + acc[3][e]);
#pragma unroll
        for (uint32_t c = 0; c < kChains; ++c)
          acc[c][e] = 0;
      }
      if (holdsA) {
        const uint32_t row = rowBase + octet * plan::kTileRows + 2 * lane;
        partials[row * kWarps + warp] = sum[0] + sum[2];
        partials[(row + 1) * kWarps + warp] = sum[1] + sum[3];
      }
    });
    rowBase += seg.rows;
  }
  blockBarrier();
}

/// Row r's sum over the warps' partials, in warp order.
__device__ __forceinline__ float tiledRow(const float *partials, uint32_t r) {
  const float4 p0 = reinterpret_cast<const float4 *>(partials + r * kWarps)[0];
  const float4 p1 = reinterpret_cast<const float4 *>(partials + r * kWarps)[1];
  static_assert(kWarps == 8, "a row's partials are two float4");
  return ((((((p0.x + p0.y) + p0.z) + p0.w) + p1.x) + p1.y) + p1.z) + p1.w;
}

/// A kFlagTiledWeights Gemv or GateUp (TaskRecord.h), steps 1-3: one body
/// for both (a second inlined copy of the prologue made the worker spill).
/// A GateUp's gate rows are its first segment's, its up rows the second's.
__device__ void runTiledTask(const KernelArgs &a, const plan::TaskRecord &t, const Step &step,
                             WeightStream &ws, const Scratch &s) {
  const uint32_t k = t.aux[0], flags = t.flags;
  const bool gateUp = static_cast<plan::Opcode>(t.opcode) == plan::Opcode::GateUp;
  const uint32_t chunks =
      (flags & plan::kFlagMergeChunks) && step.longMode ? t.geometry.chunks : 1u;
  const uint32_t begin = t.rowBegin, rows = t.rowEnd - t.rowBegin;
  const bool hasResidual = flags & plan::kFlagResidual;
  const F32In residual = in1(a, t, step);
  // Thread r's residual is issued before the input's loads and waited for
  // after the products (rows past kThreads load theirs then).
  const bool hasEarly = hasResidual && threadIdx.x < rows;
  const uint64_t earlyIssued = hasEarly ? residual.issue(begin + threadIdx.x) : 0;
  float *xa = s.floats;
  loadNormalizedInput(a, t, step, ws, k, chunks, xa, s, /*fragments=*/true);
  float *partials = s.floats + rowPartialsAt(t);
  tiledProducts(ws, t, xa, partials);

  const F32Out y = out0(a, t, step);
  const uint32_t vFirst = (flags & plan::kFlagVCache) ? t.aux[1] : ~0u;
  uint16_t *vCache = (flags & plan::kFlagVCache) ? arenaBf16(a, t.out[1]) : nullptr;
  const plan::KvCacheLayout cache = plan::KvCacheLayout::of(t.geometry, a.maxContext);
  for (uint32_t r = threadIdx.x; r < rows; r += kThreads) {
    float v = tiledRow(partials, r);
    if (gateUp)
      v = siluTimes(v, tiledRow(partials, rows + r));
    if (hasResidual)
      v = (r == threadIdx.x ? residual.finish(begin + r, earlyIssued) : residual.load1(begin + r)) +
          v;
    const uint32_t i = begin + r;
    y.store(i, v);
    if (i >= vFirst)
      vCache[cache.at(step.pos, i - vFirst)] = floatToBf16(v);
  }
}
#endif

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_TILEDGEMV_CUH
