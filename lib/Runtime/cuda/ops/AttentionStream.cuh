//===- AttentionStream.cuh - Attention over K/V rows from the stream -*- CUDA -*-===//
//
// The Stream worker's attention task with kFlagStreamKv (issue #13, item 2):
// its cached K and V rows, [jb, min(je, pos)) of kv head g, come through the
// weight stream, which the producer fills ahead of the consumers as it does
// weights (WeightStream.cuh: WeightProducer::fillKv), in blocks of P =
// kvBlockRows positions: a block's K rows in one stage, then its V rows in
// the next (AttentionLayout.h: one contiguous run each, the caches being
// head-major). Position pos, the step's own, whose rotated key and value are
// in shared memory, is one more row of the last block where it has room (a
// chunk of at most P positions is one block), else a block of its own.
//
// Per block, with the running maximum m of each head the same in every
// thread:
// 1. Scores. Thread t takes position t mod P and the heads h = t / P,
//    t / P + T/P, ... (T threads): q_h against the K row, D products in order
//    (the row's vectors from the thread's own rotation, so that a warp's
//    lanes read different banks), times the scale. Each warp's maximum per
//    head to a slot; after a barrier every thread raises m by the block's
//    and keeps the rescale exp(m_old - m); the scorers write the weights
//    w = exp(s - m) to shared memory. The K stage is released.
// 2. Values. Thread t = (r * G + h) * E + e (E = D/8) adds, over its subset r
//    of the block's positions (r, r + R, ...), w * V[j][8e .. 8e + 8) and w,
//    then folds them into its own state in shared memory (the state times the
//    rescale, plus the block's). The V stage is released.
// At the end the subsets add in order and each head's sums over its sum of
// weights go to the chunk's partials, with (m, l) to its stats: the one-pass
// loop's results (Attention.cuh), summed in another fixed order. Every exp is
// computed once per position and head, and no thread waits on a global load
// (docs/PERFORMANCE.md, step 11: the blocks that loaded their rows waited for
// HBM behind the ring's copies).
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_ATTENTIONSTREAM_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_ATTENTIONSTREAM_CUH

#include "AttentionTask.cuh"
#include "Common.cuh"

TI_WORKER_NAMESPACE_BEGIN
#if TI_WORKER_STREAM

/// x[i] for an i known only at run time, without indexing a register array
/// (which would put it in local memory).
__device__ __forceinline__ float pick(const float (&x)[kMaxGroup], uint32_t i) {
  float v = x[0];
#pragma unroll
  for (uint32_t k = 1; k < kMaxGroup; ++k)
    v = i == k ? x[k] : v;
  return v;
}

/// The segments of a block: `rows` K or V rows of headDim bf16 (the offset is
/// the producer's business; consumers only walk the stages).
__device__ __forceinline__ plan::StreamSegment kvBlockSegment(uint32_t rows, uint32_t headDim) {
  return plan::StreamSegment{0, rows, headDim * 2};
}

/// The state of one task's blocks: the running maxima (the same in every
/// thread) and whether a block was folded. The last block's rescales wait in
/// shared memory, after the warps' slots (registers held across the stage
/// waits made ptxas spill).
struct StreamedSoftmax {
  float m[kMaxGroup];
  bool folded = false;
};

/// Step 1 for the block's `count` of `positions` rows (a power of two from 32
/// to kThreads); key(p, v, out) writes vector v of row p's key as floats.
template <typename Key>
__device__ void scoreBlock(const AttentionTask &at, float scale, const float *qs,
                           const AttentionLayout &layout, float *shared, uint32_t positions,
                           uint32_t count, StreamedSoftmax &sm, Key key) {
  const uint32_t d = at.geo.headDim, group = at.group, vectors = d / kVector;
  const uint32_t p = threadIdx.x % positions, set = threadIdx.x / positions;
  const uint32_t sets = kThreads / positions;
  float *weights = shared + layout.weightsAt; // [group][positions]
  float *slots = shared + layout.slotsAt;     // [kWarps][group], then [group] rescales
  float s[kMaxGroup];
#pragma unroll
  for (uint32_t i = 0; i < kMaxGroup; ++i)
    s[i] = 0;
  if (p < count) {
    // The row's vectors from the thread's own rotation (no division inside).
    uint32_t v = p % vectors;
#pragma unroll 1
    for (uint32_t k = 0; k < vectors; ++k, v = v + 1 == vectors ? 0 : v + 1) {
      float x[kVector];
      key(p, v, x);
#pragma unroll
      for (uint32_t i = 0; i < kMaxGroup; ++i) {
        const uint32_t h = set + i * sets;
        if (h >= group)
          continue;
        const float4 *q = reinterpret_cast<const float4 *>(qs + h * d + v * kVector);
        const float4 lo = q[0], hi = q[1];
        float acc = s[i];
        acc = fmaf(x[0], lo.x, acc);
        acc = fmaf(x[1], lo.y, acc);
        acc = fmaf(x[2], lo.z, acc);
        acc = fmaf(x[3], lo.w, acc);
        acc = fmaf(x[4], hi.x, acc);
        acc = fmaf(x[5], hi.y, acc);
        acc = fmaf(x[6], hi.z, acc);
        acc = fmaf(x[7], hi.w, acc);
        s[i] = acc;
      }
    }
  }
  // A warp's lanes share a set (positions >= 32): its maximum per head.
#pragma unroll
  for (uint32_t i = 0; i < kMaxGroup; ++i) {
    const uint32_t h = set + i * sets;
    if (h >= group) // The same in the whole warp.
      continue;
    s[i] = p < count ? scale * s[i] : kNegativeInfinity;
    const float top = warpReduce(s[i], MaxOp{});
    if (laneId() == 0)
      slots[warpId() * group + h] = top;
  }
  blockBarrier();
  const uint32_t warpsPerSet = positions / kWarpSize;
#pragma unroll
  for (uint32_t h = 0; h < kMaxGroup; ++h) {
    if (h >= group)
      continue;
    float top = sm.m[h];
    const uint32_t firstWarp = (h % sets) * warpsPerSet;
    for (uint32_t w = firstWarp; w < firstWarp + warpsPerSet; ++w)
      top = fmaxf(top, slots[w * group + h]);
    if (threadIdx.x == 0) // 0 before the first block (m = -inf).
      slots[kWarps * group + h] = expf(sm.m[h] - top);
    sm.m[h] = top;
  }
#pragma unroll
  for (uint32_t i = 0; i < kMaxGroup; ++i) {
    const uint32_t h = set + i * sets;
    if (h < group)
      weights[h * positions + p] = p < count ? expf(s[i] - pick(sm.m, h)) : 0.0f;
  }
  blockBarrier();
}

/// Step 2 for the block's `count` rows; value(p, e, out) writes vector e of
/// row p's value as floats.
template <typename Value>
__device__ void valueBlock(const AttentionTask &at, const AttentionLayout &layout, float *shared,
                           uint32_t positions, uint32_t count, StreamedSoftmax &sm, Value value) {
  const uint32_t d = at.geo.headDim, group = at.group, vectors = d / kVector;
  const uint32_t unit = group * vectors, subsets = kThreads / unit;
  const uint32_t subset = threadIdx.x / unit, head = threadIdx.x % unit / vectors;
  const uint32_t e = threadIdx.x % vectors;
  if (subset < subsets) {
    const float *w = shared + layout.weightsAt + head * positions;
    float l = 0, sums[kVector] = {};
#pragma unroll 1
    for (uint32_t p = subset; p < count; p += subsets) {
      float x[kVector];
      value(p, e, x);
      l += w[p];
#pragma unroll
      for (uint32_t i = 0; i < kVector; ++i)
        sums[i] = fmaf(w[p], x[i], sums[i]);
    }
    // The thread's own state: nothing else touches it until the merge.
    const float r = shared[layout.slotsAt + kWarps * group + head];
    float *ours = shared + layout.statesAt + (subset * group + head) * layout.stateStride;
#pragma unroll
    for (uint32_t i = 0; i < kVector; ++i) {
      float &x = ours[e * kVector + i];
      x = sm.folded ? fmaf(x, r, sums[i]) : sums[i];
    }
    if (e == 0)
      ours[d] = sm.folded ? fmaf(ours[d], r, l) : l;
  }
  sm.folded = true;
}

/// Eight floats of a bf16 row in a stage.
__device__ __forceinline__ void stageVector(const uint8_t *row, uint32_t v, float (&out)[kVector]) {
  const uint4 raw = *reinterpret_cast<const uint4 *>(row + v * 16);
  const Bf16x8 b{{raw.x, raw.y, raw.z, raw.w}};
#pragma unroll
  for (uint32_t i = 0; i < kVector; ++i)
    out[i] = b.at(i);
}

/// Eight floats of a row kept as floats in shared memory (position pos's).
__device__ __forceinline__ void sharedVector(const float *row, uint32_t v, float (&out)[kVector]) {
  const float4 lo = *reinterpret_cast<const float4 *>(row + v * kVector);
  const float4 hi = *reinterpret_cast<const float4 *>(row + v * kVector + 4);
  out[0] = lo.x, out[1] = lo.y, out[2] = lo.z, out[3] = lo.w;
  out[4] = hi.x, out[5] = hi.y, out[6] = hi.z, out[7] = hi.w;
}

/// The task's attention over its streamed rows and position pos, into the
/// chunk's partials and stats (the header's steps). Ends with a block barrier.
__device__ void attendStreamed(const AttentionTask &at, const Step &step, float scale,
                               const float *qs, const float *kNow, const float *vNow,
                               const AttentionLayout &layout, float *shared, WeightStream &ws) {
  const uint32_t d = at.geo.headDim, group = at.group, rowBytes = d * 2;
  const uint32_t positions = plan::kvBlockRows(ws.stageBytes(), d, kThreads);
  const int32_t cachedEnd = plan::AttentionPositions{at.jb, at.je}.cachedEnd(step.pos);
  StreamedSoftmax sm;
#pragma unroll
  for (uint32_t h = 0; h < kMaxGroup; ++h)
    sm.m[h] = kNegativeInfinity;
  // Position pos joins the last block where it has room (a chunk of at most
  // P positions is one block): a block of its own costs two more barriers.
  const bool hasNow = at.je > step.pos;
  bool nowDone = false;
#pragma unroll 1
  for (int32_t base = at.jb; base < cachedEnd; base += int32_t(positions)) {
    const uint32_t count = uint32_t(min(cachedEnd - base, int32_t(positions)));
    const bool withNow = hasNow && base + int32_t(count) == cachedEnd && count < positions;
    const uint32_t rows = count + (withNow ? 1u : 0u);
    ws.consume(kvBlockSegment(count, d), [&](uint32_t, uint32_t, const uint8_t *stage) {
      scoreBlock(at, scale, qs, layout, shared, positions, rows, sm,
                 [&](uint32_t p, uint32_t v, float (&out)[kVector]) {
                   if (p < count)
                     stageVector(stage + p * rowBytes, v, out);
                   else
                     sharedVector(kNow, v, out);
                 });
    });
    ws.consume(kvBlockSegment(count, d), [&](uint32_t, uint32_t, const uint8_t *stage) {
      valueBlock(at, layout, shared, positions, rows, sm,
                 [&](uint32_t p, uint32_t e, float (&out)[kVector]) {
                   if (p < count)
                     stageVector(stage + p * rowBytes, e, out);
                   else
                     sharedVector(vNow, e, out);
                 });
    });
    nowDone = nowDone || withNow;
  }
  if (hasNow && !nowDone) { // Position pos: a block of one row, from shared memory.
    scoreBlock(at, scale, qs, layout, shared, kWarpSize, 1, sm,
               [&](uint32_t, uint32_t v, float (&out)[kVector]) { sharedVector(kNow, v, out); });
    valueBlock(at, layout, shared, kWarpSize, 1, sm,
               [&](uint32_t, uint32_t e, float (&out)[kVector]) { sharedVector(vNow, e, out); });
  }
  blockBarrier();
  const uint32_t vectors = d / kVector, subsets = kThreads / (group * vectors);
  const float *states = shared + layout.statesAt;
  const uint32_t stride = layout.stateStride, first = at.g * group;
  for (uint32_t i = threadIdx.x; i < group * d; i += kThreads) {
    const uint32_t h = i / d, k = i % d;
    float sum = 0, weight = 0;
    for (uint32_t x = 0; x < subsets; ++x) {
      const float *theirs = states + (x * group + h) * stride;
      sum += theirs[k];
      weight += theirs[d];
    }
    at.workspace.store(at.partials(first + h) + k, sum / weight);
    if (k == 0) {
      at.workspace.store(at.stats(first + h), pick(sm.m, h));
      at.workspace.store(at.stats(first + h) + 1, weight);
    }
  }
  blockBarrier();
}

/// StreamOnly (WorkerMode.h): the task's K/V stages, released unread.
__device__ void skipStreamedKv(const plan::TaskRecord &t, const Step &step, WeightStream &ws) {
  const plan::HeadGeometry geo = t.geometry;
  const plan::AttentionPositions range =
      plan::attentionPositions(t.aux[1], geo.chunks, step.pos, step.longMode);
  const uint32_t positions = plan::kvBlockRows(ws.stageBytes(), geo.headDim, kThreads);
  const int32_t cachedEnd = range.cachedEnd(step.pos);
  for (int32_t base = range.begin; base < cachedEnd; base += int32_t(positions)) {
    const uint32_t count = uint32_t(min(cachedEnd - base, int32_t(positions)));
    for (uint32_t k = 0; k < 2; ++k)
      ws.consume(kvBlockSegment(count, geo.headDim), [](uint32_t, uint32_t, const uint8_t *) {});
  }
}

#endif
TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_ATTENTIONSTREAM_CUH
