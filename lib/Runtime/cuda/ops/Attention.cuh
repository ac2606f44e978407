//===- Attention.cuh - One kv head's attention over a chunk -----*- CUDA -*-===//
//
// A task covers the G query heads of kv head g (of its own layer's geometry,
// TaskRecord::geometry) over its positions [jb, je): all of [0, ctx) for chunk
// 0 in short mode (the other chunks do nothing), [c*ctx/C, (c+1)*ctx/C) for
// chunk c in long mode. One pass over the K and V rows, with nothing through
// global memory but the rows and the result; in long mode the layer's
// MergeAttention tasks merge the chunks by their statistics (flash decoding;
// MergeAttention.cuh).
//
// 1. RoPE: the block rotates the G queries and the key (pairs (i, i + D/2) by
//    float(pos) * invFreq[i], precise sincosf) into shared memory; the key is
//    rounded to bf16 there, and the chunk-0 task writes it to K cache row pos.
//    The items past the rotations copy position pos's value from the q|k|v
//    vector, rounded to bf16: the bits the q+k+v task wrote to V cache row
//    pos. Position pos always uses that key and value from shared memory.
// 2. The warps form S sets of W = warps / S (the warps past S*W idle); set r
//    takes H = G / S heads of the group, each lane keeping an online softmax
//    for all H (WorkerLayout.h: attentionHeadsPerLane): the Stream worker has
//    one set of all G heads for groups of 4, so that each K/V row is loaded
//    once (G sets of one head while kOneHeadRounds rounds of those cover the
//    task's positions); otherwise, and in the Plain worker, G sets of one
//    head. Warps without a position skip to step 3 with empty states. In a
//    set, a group of L = D/8 lanes takes one
//    position at a time, lane i of the group the 16-byte vector i of its K
//    and V rows; groups take positions jb + group, + groups, ...,
//    kAttentionRowsAhead of them per round, each round's loads issued a round
//    ahead. Per position and head, a group adds its lanes' 8 products (xor
//    butterfly) into s = scale * q.k and folds s and the value row into its
//    running max m, sum l = sum exp(s_j - m) and 8 sums per lane of
//    exp(s_j - m) * V[j] (each rescaled by exp(m_old - m) when m grows).
// 3. The groups of a warp merge by butterfly, then each head's warps in warp
//    order through shared memory: in short mode the output, sum / l (out[0],
//    tagged when the plan tags it); in long mode partials[c][h] = sum / l and
//    stats[c][h] = (m, l) (out[1], the workspace).
//
// In the Stream worker a chunk-0 task in short mode whose heads have 64 or
// 128 dimensions runs AttentionShort.cuh instead (one warp a head, in
// registers), unless the step streams its rows (above the plan's
// short_mma_context), and a task with kFlagStreamKv, at a step that streams
// (TaskRecord.h: streamsKvAt), replaces steps 2 and 3 by AttentionStream.cuh:
// its cached rows come through the weight stream instead of its own loads
// (AttentionStreamMma.cuh, its scores on the tensor cores, for the heads and
// groups WorkerLayout.h's streamedScoresOnTensorCores takes).
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_ATTENTION_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_ATTENTION_CUH

#include "AttentionShort.cuh"
#include "AttentionStream.cuh"
#include "AttentionStreamMma.cuh"
#include "AttentionTask.cuh"
#include "Common.cuh"

TI_WORKER_NAMESPACE_BEGIN

/// One lane group's online softmax of one head over its positions (step 2):
/// the largest score so far, the sum of exp(s - m) and the lane's 8 sums of
/// exp(s - m) * V, all relative to m. Empty: m = -inf, nothing added.
struct OnlineSoftmax {
  float m = kNegativeInfinity, l = 0;
  float v[kVector] = {};

  __device__ __forceinline__ void add(float s, const float (&value)[kVector]) {
    const float top = fmaxf(m, s);
    const float rescale = expf(m - top); // 0 while empty (m = -inf).
    const float p = expf(s - top);
    l = fmaf(l, rescale, p);
#pragma unroll
    for (uint32_t e = 0; e < kVector; ++e)
      v[e] = fmaf(p, value[e], v[e] * rescale);
    m = top;
  }
  /// Folds in another state of the same head (the order is part of the result).
  __device__ __forceinline__ void merge(float om, float ol, const float (&ov)[kVector]) {
    const float top = fmaxf(m, om);
    if (top == kNegativeInfinity)
      return; // Both empty.
    const float mine = expf(m - top), other = expf(om - top);
    l = l * mine + ol * other;
#pragma unroll
    for (uint32_t e = 0; e < kVector; ++e)
      v[e] = v[e] * mine + ov[e] * other;
    m = top;
  }
  /// The state of the lane `offset` away (xor), merged in; whole warps call it.
  __device__ __forceinline__ void mergeLane(uint32_t offset) {
    const float om = __shfl_xor_sync(0xffffffffu, m, offset);
    const float ol = __shfl_xor_sync(0xffffffffu, l, offset);
    float ov[kVector];
#pragma unroll
    for (uint32_t e = 0; e < kVector; ++e)
      ov[e] = __shfl_xor_sync(0xffffffffu, v[e], offset);
    merge(om, ol, ov);
  }
};

/// Steps 2 and 3 with lanes keeping kH heads each (H, exact: the loops over
/// the heads compile to straight code; with H known only at run time they
/// cost 2% of the 1B's step at context 16, docs/PERFORMANCE.md, step 5): the
/// group's attention over the task's positions from the rotated queries
/// `qs`, the rounded key `kNow` and value `vNow` of position pos and the
/// caches' rows before it, into the chunk's partials and stats. Ends with a
/// block barrier.
template <uint32_t kH>
__device__ void attendChunk(const AttentionTask &at, const Step &step, float scale,
                            const float *qs, const float *kNow, const float *vNow,
                            const AttentionLayout &layout, float *states) {
  static_assert(kH >= 1 && kH <= kHeadsPerLane, "heads a lane keeps");
  const uint32_t d = at.geo.headDim, lanes = at.lanes();
  constexpr uint32_t perLane = kH;
  const uint32_t sets = at.group / perLane, warpsPerSet = kWarps / sets;
  const uint32_t set = warpId() / warpsPerSet;
  const uint32_t local = threadIdx.x - set * warpsPerSet * kWarpSize;
  const uint32_t groups = warpsPerSet * kWarpSize / lanes;
  const uint32_t group = local / lanes, lane = local % lanes;
  const uint32_t stride = layout.stateStride;
  // A warp whose first group has no position has none at all (positions
  // only grow from there): it skips the loop and the merges, so a short
  // context costs the warps it uses (at context 1, one).
  const bool busy =
      set < sets && at.jb + int32_t((warpId() - set * warpsPerSet) * kWarpSize / lanes) < at.je;
  OnlineSoftmax acc[kH];
  if (busy) { // Whole warps: the idle ones skip the loop together.
    // The queries from shared memory at each use: in registers they would
    // spill the Plain worker's 64.
    const float *q = qs + set * perLane * d + lane * kVector;
    const uint64_t row = at.positionStride;
    const uint16_t *kCache = at.kCache + lane * kVector;
    const uint16_t *vCache = at.vCache + lane * kVector;
    // Slot u holds the cache rows of the group's position u of each round:
    // kAttentionRowsAhead positions' loads in flight together, each issued a
    // round ahead (one at a time, each was a dependent round trip through L2:
    // 1.9 us of the 1B's task at context 2, docs/PERFORMANCE.md). A slot past
    // je is computed on, never added.
    Bf16x8 kRows[kAttentionRowsAhead] = {}, vRows[kAttentionRowsAhead] = {};
    auto fetch = [&](int32_t j, uint32_t u) {
      if (j < at.je && j != step.pos) {
        kRows[u] = loadArenaBf16x8(kCache + uint64_t(j) * row);
        vRows[u] = loadArenaBf16x8(vCache + uint64_t(j) * row);
      }
    };
    const int32_t round = int32_t(kAttentionRowsAhead * groups);
#pragma unroll
    for (uint32_t u = 0; u < kAttentionRowsAhead; ++u)
      fetch(at.jb + int32_t(group + u * groups), u);
    // Every group of a set runs the same trip count (the butterflies need
    // whole warps); a group past je folds in nothing.
#pragma unroll 1
    for (int32_t base = at.jb; base < at.je; base += round) {
#pragma unroll
      for (uint32_t u = 0; u < kAttentionRowsAhead; ++u) {
        // A slot whose first position is past je stays so in later rounds:
        // skipped, with nothing to fetch (the same for the whole set).
        if (base + int32_t(u * groups) >= at.je)
          continue;
        const int32_t j = base + int32_t(group + u * groups);
        float k8[kVector], v8[kVector];
#pragma unroll
        for (uint32_t e = 0; e < kVector; ++e) { // Position pos: from the task's own.
          k8[e] = j == step.pos ? kNow[lane * kVector + e] : kRows[u].at(e);
          v8[e] = j == step.pos ? vNow[lane * kVector + e] : vRows[u].at(e);
        }
        fetch(j + round, u);
        // Every head's lane sum first, then their butterflies side by side:
        // one head after another, each waited for the last's shuffles.
        float p[kH];
#pragma unroll
        for (uint32_t r = 0; r < kH; ++r) {
          p[r] = 0;
#pragma unroll
          for (uint32_t e = 0; e < kVector; ++e)
            p[r] = fmaf(k8[e], q[r * d + e], p[r]);
        }
#pragma unroll
        for (uint32_t r = 0; r < kH; ++r)
          p[r] = groupSum(p[r], lanes);
        if (j < at.je)
#pragma unroll
          for (uint32_t r = 0; r < kH; ++r)
            acc[r].add(scale * p[r], v8);
      }
    }
  }
#pragma unroll
  for (uint32_t r = 0; r < kH; ++r)
    if (busy)
      for (uint32_t offset = lanes; offset < kWarpSize; offset *= 2)
        acc[r].mergeLane(offset);
  if (set < sets && laneId() < lanes) { // An idle warp's states are empty.
#pragma unroll
    for (uint32_t r = 0; r < kH; ++r) {
      float *mine = states + (warpId() * perLane + r) * stride;
#pragma unroll
      for (uint32_t e = 0; e < kVector; ++e)
        mine[lane * kVector + e] = acc[r].v[e];
      if (lane == 0) {
        mine[d] = acc[r].m;
        mine[d + 1] = acc[r].l;
      }
    }
  }
  blockBarrier();
  // Head h of the group: state r = h mod H of warps [s*W, (s+1)*W), s = h / H.
  const uint32_t first = at.g * at.group, warpStride = perLane * stride;
  for (uint32_t i = threadIdx.x; i < at.group * d; i += kThreads) {
    const uint32_t h = i / d, k = i % d;
    const float *w = states + ((h / perLane) * warpsPerSet * perLane + h % perLane) * stride;
    float top = kNegativeInfinity;
    for (uint32_t x = 0; x < warpsPerSet; ++x)
      top = fmaxf(top, w[x * warpStride + d]);
    float l = 0, sum = 0;
    for (uint32_t x = 0; x < warpsPerSet; ++x) {
      const float f = expf(w[x * warpStride + d] - top); // 0 for an empty warp.
      l = fmaf(w[x * warpStride + d + 1], f, l);
      sum = fmaf(w[x * warpStride + k], f, sum);
    }
    if (!step.longMode) { // The whole attention: the heads' outputs.
      at.result.store((first + h) * d + k, sum / l);
      continue;
    }
    at.result.store(at.partials(first + h) + k, sum / l);
    if (k == 0) {
      at.result.store(at.stats(first + h), top);
      at.result.store(at.stats(first + h) + 1, l);
    }
  }
  blockBarrier();
}

/// Long mode's chunk over plain loads (attendChunk) reads its cached K and
/// V rows, earlier steps' writes, only after q+k+v's tags and the rotations.
/// Asked of L2 at the task's start, their reads from HBM run beside that
/// wait instead: on an H100 the 1B's step 0.8-1.2% faster at 448-512 cached
/// positions and 1.8-2.9% at 640-896 (docs/PERFORMANCE.md, step 35).
__device__ __forceinline__ void prefetchChunkRows(const AttentionTask &at, int32_t pos) {
  const int32_t end = plan::AttentionPositions{at.jb, at.je}.cachedEnd(pos);
  if (end <= at.jb)
    return;
  const uint64_t first = uint64_t(at.jb) * at.positionStride;
  prefetchL2Pair(at.kCache + first, at.vCache + first,
                 uint64_t(end - at.jb) * at.positionStride * sizeof(uint16_t));
}

__device__ void runAttention(const KernelArgs &a, const plan::TaskRecord &t, const Step &step,
                             WeightStream &ws, const Scratch &s) {
  const AttentionTask at = attentionTask(a, t, step);
  if (!step.longMode && at.chunk != 0) {
    ws.inputsReady(); // It needs none.
    return;
  }
  if (step.longMode && !plan::streamsKvRows(t.flags, step.streamKv))
    prefetchChunkRows(at, step.pos);
  const AttentionLayout layout = attentionLayout(at.geo);
  float *qs = s.floats + layout.qAt;
  float *kNow = s.floats + layout.kAt;
  float *vNow = s.floats + layout.vAt;
  const float *params = at.params;
  const float scale = params[0];
  const float *invFreq = params + 1;
  const uint32_t d = at.geo.headDim, half = d / 2, g = at.g, group = at.group;
#if TI_WORKER_STREAM
  // Chunk 0 (the others returned); above the plan's short_mma_context the
  // rows come through the stream instead (below).
  if (!step.longMode && !plan::streamsKvRows(t.flags, step.streamKv) && attendsShort(d, group)) {
    attendShort(at, step, scale, invFreq, s.floats + layout.statesAt, ws);
    return;
  }
#endif

  // 1. Rotate the group's queries and the key; round the key to bf16. The
  //    items past the rotations copy position pos's value, so that its loads
  //    are in flight with the rotations'.
  const F32In &qkv = at.qkv;
  const uint32_t rotations = (group + 1) * half;
  const uint32_t items = rotations + d;
  for (uint32_t idx = threadIdx.x; idx < items; idx += kThreads) {
    if (idx >= rotations) {
      const uint32_t i = idx - rotations;
      vNow[i] = bf16ToFloat(floatToBf16(qkv.load1(at.geo.qRows() + at.geo.kvRows() + g * d + i)));
      continue;
    }
    uint32_t r = idx / half, i = idx % half;
    const uint64_t src = r < group ? uint64_t(g * group + r) * d : at.geo.qRows() + g * d;
    // Both loads in flight before either is waited for, and issued before
    // the angle's load and sincosf, whose latency theirs then covers. Issued
    // after them, the three ran in a row: this loop took 1,650 of the 1B's
    // chunk-0 task's 6,740 cycles at context 1, and issuing first made the
    // task 0.3 us shorter (clock marks, docs/PERFORMANCE.md, step 19).
    const uint64_t issued0 = qkv.issue(src + i), issued1 = qkv.issue(src + i + half);
    float sn, cs;
    sincosf(static_cast<float>(step.pos) * invFreq[i], &sn, &cs);
    const float x0 = qkv.finish(src + i, issued0), x1 = qkv.finish(src + i + half, issued1);
    float y0 = x0 * cs - x1 * sn, y1 = x1 * cs + x0 * sn;
    if (r < group) {
      qs[r * d + i] = y0;
      qs[r * d + i + half] = y1;
    } else {
      kNow[i] = bf16ToFloat(floatToBf16(y0));
      kNow[i + half] = bf16ToFloat(floatToBf16(y1));
    }
  }
  blockBarrier();
  ws.inputsReady();
  if (at.chunk == 0) {
    uint16_t *row = at.kOut + uint64_t(step.pos) * at.positionStride;
    for (uint32_t i = threadIdx.x; i < d; i += kThreads)
      row[i] = floatToBf16(kNow[i]);
  }
#if TI_WORKER_STREAM
  if (plan::streamsKvRows(t.flags, step.streamKv)) {
    if (plan::streamedScoresOnTensorCores(d, group))
      attendStreamedMma(at, step, scale, qs, kNow, vNow, layout, s.floats, ws);
    else
      attendStreamed(at, step, scale, qs, kNow, vNow, layout, s.floats, ws);
    return;
  }
#endif
  // H: G or 1. Positions that sets of one head cover in kOneHeadRounds
  // rounds take one head a lane even where the layout allows G.
  const uint32_t oneHeadRound = kWarps / group * kWarpSize / at.lanes() * kAttentionRowsAhead;
  const uint32_t perLane = uint32_t(at.je - at.jb) <= kOneHeadRounds * oneHeadRound
                               ? 1u
                               : layout.headsPerLane;
  float *states = s.floats + layout.statesAt;
  if (perLane == 1)
    attendChunk<1>(at, step, scale, qs, kNow, vNow, layout, states);
  else
    attendChunk<kHeadsPerLane>(at, step, scale, qs, kNow, vNow, layout, states);
}

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_ATTENTION_CUH
