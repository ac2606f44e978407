//===- AttentionStreamMma.cuh - Streamed attention, scores on the tensor cores -*- CUDA -*-===//
//
// AttentionStream.cuh's task (kFlagStreamKv: the cached K and V rows come
// through the weight stream, a block's K rows in one stage, then its V rows
// in the next) for heads of D = 64 or 128 dimensions and groups of at most
// four query heads (WorkerLayout.h: streamedScoresOnTensorCores; Llama 3.2
// 1B and 3B, Llama 3.1 8B). There a warp scored one head's positions a lane
// a position, a row's 64 multiply-adds from shared memory in two chains, and
// every head's warps read every K row: the 1B's task took 7.3 us of compute for
// 64 KB that HBM delivers to a worker in 2.7 (docs/PERFORMANCE.md, step 29).
// Here every warp takes whole 16-position tiles of a block for all the
// group's heads, and keeps one online softmax per head:
// 1. Scores (K stage): one `mma.sync.m16n8k16` (bf16 in, f32 sums) per 16
//    dimensions of a tile. A is the tile's K rows: lane (g, t) (g = l / 4,
//    t = l % 4) loads row g's and row g + 8's 16 bytes at dimension 32j + 8t,
//    four bf16 pairs: pairs 0 and 1 take A's k slots (2t, 2t + 1) and
//    (2t + 8, 2t + 9) of a product in chain c0, pairs 2 and 3 the same slots
//    of one in chain c1 (which slot a dimension takes does not change a dot
//    product, as long as B's query sits in the same one). B's column 2h is head h's query as
//    bf16 hi, column 2h + 1 as lo (hi = bf16(q), lo = bf16(q - hi), as the
//    tiled GEMV's x'), so lane (g, t) ends with head t's scores of rows g and
//    g + 8 as c0 + c1 and c2 + c3. Each head's warp maximum (shuffles over
//    g), the rescale of the warp's sums, and the weights exp(s - m) to
//    shared memory ([row][head]: the warp's rows only, so no block barrier).
// 2. Values (V stage): L = D / 8 lanes a row, lane (r, c) the 16-byte vector
//    c of rows r, r + 32 / L, ... of the warp's tiles, converted once and
//    added to every head's eight sums with the row's weights (one float4).
// 3. Position pos (its rotated key and value are floats in shared memory) is
//    warp 0's one-row block after the cached rows.
// 4. Each warp's states (a head's sums, max and sum of weights; the lanes'
//    shares added in a fixed order) to shared memory, one block barrier, and
//    the heads' states merged in warp order into the chunk's partials and
//    stats, as AttentionStream.cuh does.
// The same passes serve short mode above the plan's short_mma_context
// (TaskRecord.h: streamsKvAt), where chunk 0's task takes every cached row
// through the stream and step 4 stores the heads' outputs instead of
// partials and stats. There one warp a query head (AttentionShort.cuh) made the
// 1B's step 6% slower at context 113 on an H100 (0.918 against 0.866 ms);
// below about 60 positions these passes' fixed cost (a block's tiles for few
// rows, the warps' states merged through shared memory) is the larger
// (docs/PERFORMANCE.md, step 33).
//
// The sums differ from AttentionStream.cuh's in order, by the query's hi + lo
// split (|q - hi - lo| <= 2^-17 |q|) and by the tensor cores' own rounding of
// their sums; a run repeats them bit for bit.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_ATTENTIONSTREAMMMA_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_ATTENTIONSTREAMMMA_CUH

#include "AttentionStream.cuh"
#include "AttentionTask.cuh"
#include "Common.cuh"
#include "TiledGemv.cuh"

TI_WORKER_NAMESPACE_BEGIN
#if TI_WORKER_STREAM

constexpr uint32_t kMmaRows = 16; // A tile: the positions of one product's A.
constexpr uint32_t kMmaHeads = plan::kStreamedMmaHeads;
/// A block's tiles a warp takes at most (blocks of at most kThreads rows).
constexpr uint32_t kMaxWarpTiles = kThreads / kMmaRows / kWarps;
static_assert(kMaxWarpTiles >= 1 && kMaxWarpTiles * kMmaRows * kWarps == kThreads,
              "a block of kThreads rows is whole tiles, the same count a warp");

/// A block's rows as the products read them (StageKv, NowKv): k(row, at) is
/// row `row`'s 16 bytes of K at byte `at` as bf16; raw(row, c) what a lane
/// loads of V vector c before converting it, v(raw, c, out) that vector as
/// floats.
///
/// K and V rows of bf16 in a stage, rowBytes apart.
struct StageKv {
  const uint8_t *rows;
  uint32_t rowBytes;
  /// Row `row`'s 16 bytes at byte `at`.
  __device__ __forceinline__ uint4 k(uint32_t row, uint32_t at) const {
    return *reinterpret_cast<const uint4 *>(rows + row * rowBytes + at);
  }
  /// Row `row`'s vector c as it lies (8 bf16), then as floats.
  __device__ __forceinline__ uint4 raw(uint32_t row, uint32_t c) const {
    return *reinterpret_cast<const uint4 *>(rows + row * rowBytes + c * 16);
  }
  __device__ __forceinline__ void v(const uint4 &raw, uint32_t /*c*/,
                                    float (&out)[kVector]) const {
    bf16x8Floats(raw, out);
  }
};

/// Position pos's key and value (floats, already rounded to bf16) as a
/// one-row block: raw() loads nothing, v() reads the value's floats itself.
struct NowKv {
  const float *key, *value;
  __device__ __forceinline__ uint4 k(uint32_t, uint32_t at) const {
    const float *x = key + at / 2; // 16 bytes of bf16: 8 dimensions.
    uint32_t w[4];
#pragma unroll
    for (uint32_t p = 0; p < 4; ++p)
      w[p] = uint32_t(floatToBf16(x[2 * p])) | uint32_t(floatToBf16(x[2 * p + 1])) << 16;
    return uint4{w[0], w[1], w[2], w[3]};
  }
  __device__ __forceinline__ uint4 raw(uint32_t, uint32_t) const { return uint4{0, 0, 0, 0}; }
  __device__ __forceinline__ void v(const uint4 &, uint32_t c, float (&out)[kVector]) const {
#pragma unroll
    for (uint32_t i = 0; i < kVector; ++i)
      out[i] = value[c * kVector + i];
  }
};

/// A warp's online softmax of every head of the group. A lane is (g, t) =
/// (lane / 4, lane % 4) for the scores and (r, c) = (lane / L, lane % L) for
/// the values (L = D / 8): its m is head t's running maximum (the same in every lane of
/// that t), l its share of head t's sum of weights, and its sums are vector c
/// of each head's weighted values over its rows r, r + 32 / L, ..., all
/// relative to that head's m.
struct MmaSoftmax {
  float m = kNegativeInfinity, l = 0;
  float sums[kMmaHeads][kVector] = {};
};

/// Lane (g, t)'s B words: column g of the products is head g / 2's query,
/// bf16 hi (g even) or lo (g odd), zero past the group; words[j] are its
/// dimensions 32j + 8t .. 32j + 8t + 7 in pairs.
template <uint32_t kJ>
__device__ __forceinline__ void queryWords(const float *qs, uint32_t group,
                                           uint32_t (&words)[kJ][4]) {
  const uint32_t lane = laneId(), g = lane / 4, t = lane % 4, h = g / 2;
#pragma unroll
  for (uint32_t j = 0; j < kJ; ++j)
#pragma unroll
    for (uint32_t p = 0; p < 4; ++p) {
      uint32_t hi = 0, lo = 0;
      if (h < group) {
        const float *q = qs + h * kJ * 32 + 32 * j + 8 * t + 2 * p;
        splitBf16Pair(q[0], q[1], hi, lo);
      }
      words[j][p] = (g & 1) ? lo : hi;
    }
}

/// Step 1 for the warp's tiles of a block of `count` rows: the scores, the
/// heads' maxima and rescales, the weights to weights[row][head].
template <uint32_t kJ, typename Kv>
__device__ __forceinline__ void scoreTiles(const Kv &kv, uint32_t count, uint32_t firstTile,
                                           const uint32_t (&words)[kJ][4], float scale,
                                           MmaSoftmax &st, float *weights) {
  const uint32_t lane = laneId(), g = lane / 4, t = lane % 4;
  float s[kMaxWarpTiles][2], top = kNegativeInfinity;
#pragma unroll
  for (uint32_t u = 0; u < kMaxWarpTiles; ++u) {
    const uint32_t base = (firstTile + u * kWarps) * kMmaRows;
    s[u][0] = s[u][1] = kNegativeInfinity;
    if (base >= count) // The same in the whole warp.
      continue;
    const uint32_t r0 = base + g, r1 = base + g + 8;
    // Two chains: the first and the last four of the lane's eight dimensions of each 32.
    float c0[4] = {}, c1[4] = {};
    // 64 dimensions' rows at a time, every load before the first product.
#pragma unroll
    for (uint32_t j0 = 0; j0 < kJ; j0 += 2) {
      uint4 a0[2], a1[2];
#pragma unroll
      for (uint32_t j = 0; j < 2; ++j) {
        a0[j] = r0 < count ? kv.k(r0, 64 * (j0 + j) + 16 * t) : uint4{0, 0, 0, 0};
        a1[j] = r1 < count ? kv.k(r1, 64 * (j0 + j) + 16 * t) : uint4{0, 0, 0, 0};
      }
#pragma unroll
      for (uint32_t j = 0; j < 2; ++j) {
        const uint32_t(&b)[4] = words[j0 + j];
        mmaBf16(c0, a0[j].x, a1[j].x, a0[j].y, a1[j].y, b[0], b[1]);
        mmaBf16(c1, a0[j].z, a1[j].z, a0[j].w, a1[j].w, b[2], b[3]);
      }
    }
    if (r0 < count)
      s[u][0] = scale * ((c0[0] + c0[1]) + (c1[0] + c1[1]));
    if (r1 < count)
      s[u][1] = scale * ((c0[2] + c0[3]) + (c1[2] + c1[3]));
    top = fmaxf(top, fmaxf(s[u][0], s[u][1]));
  }
  top = fmaxf(st.m, warpReduce(top, MaxOp{}, 4)); // Over g: head t's.
  // No row yet (a warp whose tiles all lie past the blocks so far): nothing
  // to weigh. (Lanes of a head past the group score zeros; nothing uses
  // their weights or state.)
  const bool empty = top == kNegativeInfinity;
  const float rescale = empty ? 1.0f : expf(st.m - top); // 0 while st.m is -inf.
  st.m = top;
  float added = 0;
#pragma unroll
  for (uint32_t u = 0; u < kMaxWarpTiles; ++u)
#pragma unroll
    for (uint32_t i = 0; i < 2; ++i) {
      const uint32_t row = (firstTile + u * kWarps) * kMmaRows + g + 8 * i;
      if (row >= count)
        continue;
      const float w = empty ? 0.0f : expf(s[u][i] - top);
      weights[row * kMmaHeads + t] = w;
      added += w;
    }
  st.l = fmaf(st.l, rescale, added);
#pragma unroll
  for (uint32_t h = 0; h < kMmaHeads; ++h) {
    const float f = __shfl_sync(0xffffffffu, rescale, h); // Lane h: (0, h).
#pragma unroll
    for (uint32_t e = 0; e < kVector; ++e)
      st.sums[h][e] *= f;
  }
  warpBarrier(); // The value pass reads every lane's weights.
}

/// Step 2 for the warp's tiles of a block of `count` rows.
template <uint32_t kJ, typename Kv>
__device__ __forceinline__ void addValueTiles(const Kv &kv, uint32_t count, uint32_t firstTile,
                                              uint32_t group, MmaSoftmax &st,
                                              const float *weights) {
  constexpr uint32_t kL = kJ * 4;          // Lanes a row: D / 8.
  constexpr uint32_t kR = kWarpSize / kL;  // Rows a pass.
  constexpr uint32_t kBatch = 2;           // Rows a lane loads before adding.
  constexpr uint32_t kPasses = kMmaRows / kR;
  static_assert(kPasses % kBatch == 0, "whole batches a tile");
  const uint32_t lane = laneId(), r = lane / kL, c = lane % kL;
#pragma unroll
  for (uint32_t u = 0; u < kMaxWarpTiles; ++u) {
    const uint32_t base = (firstTile + u * kWarps) * kMmaRows;
    if (base >= count)
      continue;
#pragma unroll
    for (uint32_t b0 = 0; b0 < kPasses; b0 += kBatch) {
      uint4 x[kBatch]; // Kept raw until used: as floats they held 4 more registers each.
      float4 w[kBatch];
#pragma unroll
      for (uint32_t b = 0; b < kBatch; ++b) {
        const uint32_t row = base + r + (b0 + b) * kR;
        if (row < count) {
          x[b] = kv.raw(row, c);
          w[b] = *reinterpret_cast<const float4 *>(weights + row * kMmaHeads);
        }
      }
#pragma unroll
      for (uint32_t b = 0; b < kBatch; ++b) {
        if (base + r + (b0 + b) * kR >= count)
          continue;
        float v[kVector];
        kv.v(x[b], c, v);
        const float wh[kMmaHeads] = {w[b].x, w[b].y, w[b].z, w[b].w};
#pragma unroll
        for (uint32_t h = 0; h < kMmaHeads; ++h)
          if (h < group)
#pragma unroll
            for (uint32_t e = 0; e < kVector; ++e)
              st.sums[h][e] = fmaf(wh[h], v[e], st.sums[h][e]);
      }
    }
  }
  warpBarrier(); // Every lane has read the weights the next block overwrites.
}

/// Steps 1-4 for heads of 32 * kJ dimensions.
template <uint32_t kJ>
__device__ void attendStreamedMmaJ(const AttentionTask &at, const Step &step, float scale,
                                   const float *qs, const float *kNow, const float *vNow,
                                   const AttentionLayout &layout, float *shared, WeightStream &ws) {
  constexpr uint32_t kD = 32 * kJ, kL = kD / kVector;
  const uint32_t group = at.group, warp = warpId(), lane = laneId();
  const plan::KvBlocks blocks = plan::kvBlocks(at.chunk, at.geo.chunks, step.pos, step.longMode,
                                               ws.stageBytes(), kD, kThreads);
  uint32_t words[kJ][4];
  queryWords<kJ>(qs, group, words);
  MmaSoftmax st;
  float *weights = shared + layout.weightsAt; // [row][kMmaHeads]
#pragma unroll 1
  for (int32_t base = blocks.begin; base < blocks.end; base += int32_t(blocks.blockRows)) {
    const uint32_t count = blocks.rowsAt(base);
    ws.consume(kvBlockSegment(count, kD), [&](uint32_t, uint32_t, const uint8_t *stage) {
      scoreTiles<kJ>(StageKv{stage, 2 * kD}, count, warp, words, scale, st, weights);
    });
    ws.consume(kvBlockSegment(count, kD), [&](uint32_t, uint32_t, const uint8_t *stage) {
      addValueTiles<kJ>(StageKv{stage, 2 * kD}, count, warp, group, st, weights);
    });
  }
  if (at.je > step.pos && warp == 0) { // Position pos: warp 0's block of one row.
    scoreTiles<kJ>(NowKv{kNow, vNow}, 1, 0, words, scale, st, weights);
    addValueTiles<kJ>(NowKv{kNow, vNow}, 1, 0, group, st, weights);
  }
  // Step 4: the warp's states, [warp][head] (d sums, m, l).
  const uint32_t stride = layout.stateStride; // d + 2
  float *states = shared + layout.statesAt;
  const float l = warpReduce(st.l, SumOp{}, 4); // Head t's, over g.
#pragma unroll
  for (uint32_t h = 0; h < kMmaHeads; ++h)
#pragma unroll
    for (uint32_t e = 0; e < kVector; ++e)
      st.sums[h][e] = warpReduce(st.sums[h][e], SumOp{}, kL); // Over r.
  if (lane < kL)
#pragma unroll
    for (uint32_t h = 0; h < kMmaHeads; ++h)
      if (h < group)
#pragma unroll
        for (uint32_t e = 0; e < kVector; ++e)
          states[(warp * group + h) * stride + lane * kVector + e] = st.sums[h][e];
  if (lane < group) { // Lane h: (0, h).
    states[(warp * group + lane) * stride + kD] = st.m;
    states[(warp * group + lane) * stride + kD + 1] = l;
  }
  blockBarrier();
  storeChunkStates(at, states, kD, group, kWarps, stride, group * stride, step.longMode);
  blockBarrier();
}

/// The task's attention over its streamed rows and position pos, into the
/// chunk's partials and stats (short mode: the heads' outputs), for a
/// geometry streamedScoresOnTensorCores takes. Ends with a block barrier.
__device__ void attendStreamedMma(const AttentionTask &at, const Step &step, float scale,
                                  const float *qs, const float *kNow, const float *vNow,
                                  const AttentionLayout &layout, float *shared, WeightStream &ws) {
  switch (at.geo.headDim) {
  case 64:
    return attendStreamedMmaJ<2>(at, step, scale, qs, kNow, vNow, layout, shared, ws);
  case 128:
    return attendStreamedMmaJ<4>(at, step, scale, qs, kNow, vNow, layout, shared, ws);
  default: // streamedScoresOnTensorCores admits no other; the verifier's plans reach none.
    __trap();
  }
}

#endif
TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_ATTENTIONSTREAMMMA_CUH
