//===- AttentionShort.cuh - A kv head's attention over a short context -*- CUDA -*-===//
//
// The Stream worker's form of a chunk-0 attention task in short mode (ctx <=
// the plan's split context: the task takes every position [0, ctx) of kv head
// g), for heads of 64 or 128 dimensions. The general form (Attention.cuh)
// passes the rotated queries, the key and every warp's online softmax
// through shared memory with three block barriers; at context 1 that chain
// was 3.6 us of the 1B's 4.2 us attention hop a layer, with HBM idle behind
// it (docs/PERFORMANCE.md, steps 19 and 26). Here a head lives in one warp's
// registers:
//
// 1. Warp w takes query head w / W of the group (W = kWarps / G warps a head,
//    rounded down; warps past G W idle) and lane l the head's dimensions
//    [E l, E l + E) (E = D / 32), whose rotation partners (i, i + D/2) are
//    lane (l ^ 16)'s: one shuffle a value rotates the lane's query and key.
//    Each warp issues its first cached rows (plain loads: earlier steps wrote
//    them) and its query, key and value of position pos (tagged pairs) before
//    it waits for any, then rotates (the same sincosf and products as the
//    general form); the key and the value are rounded to bf16 as the caches
//    keep them, and warp 0 writes the key to K cache row pos.
// 2. The warp's positions in batches of kShortBatch<E>: the lane's E
//    products of each position, the batch's butterflies side by side (every
//    lane gets each score), then one max, the batch's exps side by side, and
//    the running sum and the lane's E weighted sums of the values rescaled
//    once a batch and added to in position order. The next batch's rows are
//    loaded while this one is computed.
// 3. Positions that fit one batch are warp 0 of the head's alone, and it
//    stores the head's outputs (sum / l; tagged where the plan tags them)
//    with no block barrier at all. Otherwise each of the head's W warps takes
//    a contiguous W-th of the positions, and the first merges the others'
//    states (shared memory, after one block barrier) in warp order.
//
// The sums differ from the general form's in order; a run repeats them bit
// for bit.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_ATTENTIONSHORT_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_ATTENTIONSHORT_CUH

#include "AttentionTask.cuh"
#include "Common.cuh"

TI_WORKER_NAMESPACE_BEGIN

#if TI_WORKER_STREAM
/// Whether attendShort takes kv heads of `d` dimensions in groups of `group`
/// query heads.
__device__ __forceinline__ bool attendsShort(uint32_t d, uint32_t group) {
  return (d == 64 || d == 128) && group >= 1 && group <= kWarps;
}

/// Positions a warp takes at once: 16 words of K and V rows a lane for each
/// of two batches (the one computed and the one in flight; 32 words a batch
/// made the worker spill).
template <uint32_t kE> constexpr uint32_t kShortBatch = 16 / kE;

/// A lane's kE bf16 of a cache row, as kE / 2 words (element 2w in word w's
/// low half).
template <uint32_t kE> struct Bf16Lane {
  uint32_t w[kE / 2];
  __device__ __forceinline__ void load(const uint16_t *p) {
    if constexpr (kE == 2) {
      w[0] = *reinterpret_cast<const uint32_t *>(p);
    } else {
      static_assert(kE == 4, "heads of 64 or 128 dimensions");
      const uint2 v = *reinterpret_cast<const uint2 *>(p);
      w[0] = v.x, w[1] = v.y;
    }
  }
  __device__ __forceinline__ float at(uint32_t e) const { return bf16OfWord(w[e / 2], e % 2); }
};

/// One batch of a warp's positions: this lane's part of their K and V rows.
template <uint32_t kE> struct ShortRows {
  Bf16Lane<kE> k[kShortBatch<kE>], v[kShortBatch<kE>];
};

/// The sum over the warp's 32 lanes (xor butterfly: every lane gets the same
/// bits), of kB values side by side.
template <uint32_t kB> __device__ __forceinline__ void warpSums(float (&x)[kB]) {
#pragma unroll
  for (uint32_t offset = kWarpSize / 2; offset > 0; offset /= 2)
#pragma unroll
    for (uint32_t b = 0; b < kB; ++b)
      x[b] += __shfl_xor_sync(0xffffffffu, x[b], offset);
}

/// Steps 1-3 for a chunk-0 task in short mode, kE = D / 32; ends with the
/// warps' states merged and stored (a block barrier only where W warps
/// merge).
template <uint32_t kE>
__device__ void attendShortE(const AttentionTask &at, const Step &step, float scale,
                             const float *invFreq, float *states, WeightStream &ws) {
  constexpr uint32_t kB = kShortBatch<kE>;
  const uint32_t d = at.geo.headDim, group = at.group;
  const uint32_t perHead = kWarps / group; // W
  const uint32_t lane = laneId(), warp = warpId();
  const uint32_t head = warp / perHead, part = warp % perHead;
  const bool works = head < group;
  const uint32_t dim = kE * lane; // The lane's first dimension.
  const bool firstHalf = dim < d / 2;

  // The warp's positions: all in part 0 when they fit one batch.
  const uint32_t count = uint32_t(at.je - at.jb);
  const bool merges = perHead > 1 && count > kB;
  const uint32_t per = merges ? (count + perHead - 1) / perHead : count;
  const int32_t begin = at.jb + int32_t(min(count, part * per));
  const int32_t end = works ? at.jb + int32_t(min(count, (part + 1) * per)) : begin;

  const uint16_t *kCache = at.kCache + dim, *vCache = at.vCache + dim;
  auto fetch = [&](ShortRows<kE> &rows, int32_t base) {
#pragma unroll
    for (uint32_t b = 0; b < kB; ++b) {
      const int32_t j = base + int32_t(b);
      if (j < end && j != step.pos) {
        rows.k[b].load(kCache + uint64_t(j) * at.positionStride);
        rows.v[b].load(vCache + uint64_t(j) * at.positionStride);
      }
    }
  };
  ShortRows<kE> rowsA{}, rowsB{};
  fetch(rowsA, begin);

  // Position pos's query, key and value pairs, and the angles.
  constexpr uint32_t kPairs = kE / 2;
  const uint32_t qHead = at.g * group + head;
  uint64_t pairAt[3 * kPairs];
#pragma unroll
  for (uint32_t p = 0; p < kPairs; ++p) {
    pairAt[p] = uint64_t(qHead) * d + dim + 2 * p;
    pairAt[kPairs + p] = at.geo.qRows() + uint64_t(at.g) * d + dim + 2 * p;
    pairAt[2 * kPairs + p] = at.geo.qRows() + at.geo.kvRows() + uint64_t(at.g) * d + dim + 2 * p;
  }
  float angle[kE];
#pragma unroll
  for (uint32_t e = 0; e < kE; ++e)
    angle[e] = invFreq[(dim + e) % (d / 2)];
  float2 pairs[3 * kPairs] = {};
  if (works)
    at.qkv.loadPairsAt<3 * kPairs>(pairAt, pairs);
  ws.inputsReady();

  // Rotate: pair (i, i + D/2) is this lane's value and lane (l ^ 16)'s.
  float q[kE], k[kE], v[kE];
#pragma unroll
  for (uint32_t p = 0; p < kPairs; ++p) {
    q[2 * p] = pairs[p].x, q[2 * p + 1] = pairs[p].y;
    k[2 * p] = pairs[kPairs + p].x, k[2 * p + 1] = pairs[kPairs + p].y;
    v[2 * p] = pairs[2 * kPairs + p].x, v[2 * p + 1] = pairs[2 * kPairs + p].y;
  }
#pragma unroll
  for (uint32_t e = 0; e < kE; ++e) {
    float sn, cs;
    sincosf(static_cast<float>(step.pos) * angle[e], &sn, &cs);
    const float qOther = __shfl_xor_sync(0xffffffffu, q[e], kWarpSize / 2);
    const float kOther = __shfl_xor_sync(0xffffffffu, k[e], kWarpSize / 2);
    // (x0, x1) -> (x0 cs - x1 sn, x1 cs + x0 sn), as Attention.cuh's step 1.
    q[e] = firstHalf ? q[e] * cs - qOther * sn : q[e] * cs + qOther * sn;
    k[e] = bf16ToFloat(floatToBf16(firstHalf ? k[e] * cs - kOther * sn : k[e] * cs + kOther * sn));
    v[e] = bf16ToFloat(floatToBf16(v[e]));
  }
  if (warp == 0) {
    uint16_t *row = at.kOut + uint64_t(step.pos) * at.positionStride + dim;
#pragma unroll
    for (uint32_t e = 0; e < kE; ++e)
      row[e] = floatToBf16(k[e]);
  }

  // 2. The online softmax over the warp's positions, a batch at a time.
  float m = kNegativeInfinity, l = 0, acc[kE] = {};
  auto attend = [&](const ShortRows<kE> &rows, int32_t base) {
    float s[kB];
    float kj[kB][kE], vj[kB][kE];
#pragma unroll
    for (uint32_t b = 0; b < kB; ++b) {
      const bool now = base + int32_t(b) == step.pos;
#pragma unroll
      for (uint32_t e = 0; e < kE; ++e) {
        kj[b][e] = now ? k[e] : rows.k[b].at(e);
        vj[b][e] = now ? v[e] : rows.v[b].at(e);
      }
      s[b] = 0;
#pragma unroll
      for (uint32_t e = 0; e < kE; ++e)
        s[b] = fmaf(q[e], kj[b][e], s[b]);
    }
    warpSums<kB>(s);
    float top = m;
#pragma unroll
    for (uint32_t b = 0; b < kB; ++b)
      if (base + int32_t(b) < end)
        top = fmaxf(top, scale * s[b]);
    const float rescale = expf(m - top); // 0 while empty (m = -inf).
    l *= rescale;
#pragma unroll
    for (uint32_t e = 0; e < kE; ++e)
      acc[e] *= rescale;
#pragma unroll
    for (uint32_t b = 0; b < kB; ++b) {
      if (base + int32_t(b) >= end)
        continue;
      const float p = expf(scale * s[b] - top);
      l += p;
#pragma unroll
      for (uint32_t e = 0; e < kE; ++e)
        acc[e] = fmaf(p, vj[b][e], acc[e]);
    }
    m = top;
  };
#pragma unroll 1
  for (int32_t base = begin; base < end; base += 2 * int32_t(kB)) {
    fetch(rowsB, base + int32_t(kB));
    attend(rowsA, base);
    if (base + int32_t(kB) >= end)
      break;
    fetch(rowsA, base + 2 * int32_t(kB));
    attend(rowsB, base + int32_t(kB));
  }

  // 3. The head's W states merged in warp order by its first warp.
  const uint32_t stride = d + 2;
  if (merges) {
    float *mine = states + warp * stride;
#pragma unroll
    for (uint32_t e = 0; e < kE; ++e)
      mine[dim + e] = acc[e];
    if (lane == 0)
      mine[d] = m, mine[d + 1] = l;
    blockBarrier();
    if (part == 0 && works)
      for (uint32_t x = 1; x < perHead; ++x) {
        const float *other = states + (warp + x) * stride;
        const float om = other[d], top = fmaxf(m, om);
        if (top == kNegativeInfinity)
          continue; // Both empty.
        const float a = expf(m - top), b = expf(om - top);
        l = l * a + other[d + 1] * b;
#pragma unroll
        for (uint32_t e = 0; e < kE; ++e)
          acc[e] = acc[e] * a + other[dim + e] * b;
        m = top;
      }
  }
  if (part == 0 && works)
#pragma unroll
    for (uint32_t e = 0; e < kE; ++e)
      at.result.store(uint64_t(qHead) * d + dim + e, acc[e] / l);
}

/// attendShortE for the task's head size (attendsShort says which it takes).
__device__ void attendShort(const AttentionTask &at, const Step &step, float scale,
                            const float *invFreq, float *states, WeightStream &ws) {
  if (at.geo.headDim == 64)
    attendShortE<2>(at, step, scale, invFreq, states, ws);
  else
    attendShortE<4>(at, step, scale, invFreq, states, ws);
}
#endif

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_ATTENTIONSHORT_CUH
