//===- Attention.cuh - Scores, softmax and values of one kv head -*- CUDA -*-===//
//
// A task covers the G query heads of kv head g (of its own layer's geometry,
// TaskRecord::geometry) and, in long mode, the
// positions [c*ctx/C, (c+1)*ctx/C) of its chunk c (all of [0, ctx) in short
// mode, chunk 0 only). Work is split by position: a group of L = D/8 lanes
// takes one position at a time, lane i of the group the 16-byte vector i of
// its K or V row; groups take positions jb + group, + groups, ...
//
// 1. RoPE: the block rotates the G queries and the key (pairs (i, i + D/2) by
//    float(pos) * invFreq[i], precise sincosf) into shared memory; the key is
//    rounded to bf16 there, and the chunk-0 task writes it to K cache row pos.
//    Position pos always uses that rounded key from shared memory. Short mode
//    also takes position pos's value from the q|k|v vector, rounded to bf16:
//    the bits the q+k+v task wrote to V cache row pos.
//
// Short mode then runs the softmax online, in one pass over the positions,
// with nothing through global memory but the K/V rows and the result:
// 2s. Warps [r*W, (r+1)*W) take head r of the group (W = warps / G; the warps
//    past G*W idle). Per position, a group adds its lanes' 8 products (xor
//    butterfly) into s = scale * q.k and folds s and the value row into its
//    running max m, sum l = sum exp(s_j - m) and 8 sums per lane of
//    exp(s_j - m) * V[j] (each rescaled by exp(m_old - m) when m grows).
// 3s. The groups of a warp merge by butterfly, then each head's warps in warp
//    order through shared memory: partials[0][h] = sum / l.
//
// Long mode keeps every score in the workspace, since its chunks' tasks
// combine their statistics before the values:
// 2. Scores: per position, each lane's 8 products per head are added across
//    the group (xor butterfly); lane 0 of the group writes scale * q.k to the
//    workspace's scores[h][j].
// 3. Per head, block reductions give m = max s_j and l = sum exp(s_j - m),
//    stored as the chunk's stats.
// 4. Values (AttentionValues): each group adds exp(s_j - m) / l * V[j] over its
//    positions into 8 sums per lane; the groups of a warp are added by a
//    butterfly, the warps in warp order through shared memory.
//
// AttentionValues (long mode only) takes M and L over the chunks' stats (every
// thread computes them the same way, chunks in order) and runs step 4 over its
// chunk's positions into partials[c][h].
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_ATTENTION_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_ATTENTION_CUH

#include "Common.cuh"

#include "ti/Plan/AttentionLayout.h"

TI_WORKER_NAMESPACE_BEGIN

/// One attention task: its layer's geometry (the task's own), which kv head
/// and chunk, its positions, its workspace (AttentionLayout.h) and every other
/// buffer it touches. The task reads its record here and nowhere else, so the
/// loads are in flight together; reads at each use made a chain of them (0.4
/// µs of the 1B's short-mode task, docs/PERFORMANCE.md).
struct AttentionTask {
  plan::HeadGeometry geo;
  uint32_t g, chunk;
  uint32_t group;   // G: geo.group() without its zero test (the verifier's kv_heads > 0).
  int32_t jb, je;   // The task's positions.
  plan::AttentionWorkspace workspaceLayout;
  float *workspace; // f32 at out[0].
  const float *qkv; // in[0]: the stacked q|k|v of the position.
  const uint16_t *kCache, *vCache; // in[1], in[2].
  uint16_t *kOut;      // out[1], the K cache again (AttentionScores; else null).
  const float *params; // The softmax scale, then the RoPE inverse frequencies.

  __device__ uint32_t lanes() const { return geo.headDim / kVector; } // Per position.
  __device__ uint32_t chunks() const { return geo.chunks; }
  __device__ float *scores(uint32_t h) const { return workspace + workspaceLayout.scores(h); }
  __device__ float *stats(uint32_t c, uint32_t h) const {
    return workspace + workspaceLayout.stats(c, h);
  }
  __device__ float *partials(uint32_t c, uint32_t h) const {
    return workspace + workspaceLayout.partials(c, h);
  }
};

__device__ AttentionTask attentionTask(const KernelArgs &a, const plan::TaskRecord &t,
                                       const Step &step) {
  const plan::HeadGeometry geo = t.geometry;
  const uint32_t chunk = t.aux[1], chunks = geo.chunks;
  const int32_t ctx = step.pos + 1;
  return AttentionTask{geo,
                       t.aux[0],
                       chunk,
                       uint32_t(geo.heads) / uint32_t(geo.kvHeads),
                       step.longMode ? int32_t(int64_t(chunk) * ctx / chunks) : 0,
                       step.longMode ? int32_t(int64_t(chunk + 1) * ctx / chunks) : ctx,
                       plan::AttentionWorkspace::of(geo, a.maxContext),
                       arenaF32(a, t.out[0]),
                       arenaF32(a, t.in[0]),
                       arenaBf16(a, t.in[1]),
                       arenaBf16(a, t.in[2]),
                       t.out[1] != plan::kNone ? arenaBf16(a, t.out[1]) : nullptr,
                       a.params + t.param};
}

/// v[r] for r < G combined over the block, the heads side by side: per head a
/// warp butterfly, then the warps in warp order (blockReduce's order, so each
/// head gets the bits it would alone), with one pair of block barriers for all.
/// `slots`: kMaxGroup * kWarps floats of shared memory (the value partials'
/// region: kWarps * D floats, D >= 8).
template <typename Op>
__device__ __forceinline__ void blockReduceHeads(float (&v)[kMaxGroup], uint32_t heads, Op op,
                                                 float *slots) {
#pragma unroll
  for (uint32_t r = 0; r < kMaxGroup; ++r)
    if (r < heads) {
      v[r] = warpReduce(v[r], op);
      if (laneId() == 0)
        slots[r * kWarps + warpId()] = v[r];
    }
  blockBarrier();
#pragma unroll
  for (uint32_t r = 0; r < kMaxGroup; ++r)
    if (r < heads) {
      float acc = slots[r * kWarps];
#pragma unroll 8
      for (uint32_t w = 1; w < kWarps; ++w)
        acc = op(acc, slots[r * kWarps + w]);
      v[r] = acc;
    }
  blockBarrier();
}

/// Step 3 for every head of the group at once: m[r] = max over the task's
/// positions of s_j, l[r] = sum exp(s_j - m[r]); every thread gets them.
__device__ void softmaxStats(const AttentionTask &at, uint32_t heads, float (&m)[kMaxGroup],
                             float (&l)[kMaxGroup], float *slots) {
  const uint32_t first = at.g * heads;
#pragma unroll
  for (uint32_t r = 0; r < kMaxGroup; ++r) {
    m[r] = kNegativeInfinity;
    l[r] = 0;
  }
  for (int32_t j = at.jb + int32_t(threadIdx.x); j < at.je; j += int32_t(kThreads))
#pragma unroll
    for (uint32_t r = 0; r < kMaxGroup; ++r)
      if (r < heads)
        m[r] = fmaxf(m[r], at.scores(first + r)[j]);
  blockReduceHeads(m, heads, MaxOp{}, slots);
  for (int32_t j = at.jb + int32_t(threadIdx.x); j < at.je; j += int32_t(kThreads))
#pragma unroll
    for (uint32_t r = 0; r < kMaxGroup; ++r)
      if (r < heads)
        l[r] += expf(at.scores(first + r)[j] - m[r]);
  blockReduceHeads(l, heads, SumOp{}, slots);
}

/// v[r] with a run-time r, without indexing the array (which would move it to
/// local memory).
__device__ __forceinline__ float pick(const float (&v)[kMaxGroup], uint32_t r) {
  float x = v[0];
#pragma unroll
  for (uint32_t k = 1; k < kMaxGroup; ++k)
    if (k == r)
      x = v[k];
  return x;
}

/// Step 4 for heads [first, first + heads) of the group, whose statistics are
/// m[at + r], l[at + r]: out(first + r)[d] = sum over the positions of
/// exp(s_j - m[at + r]) / l[at + r] * V[j][d]. The heads must divide the
/// warps: warps [r * W, (r + 1) * W) (W = kWarps / heads) take head r, lane
/// groups of L = D/8 lanes take positions in turn, a butterfly adds a warp's
/// groups, then head r's warps are added in warp order. Ends with a block
/// barrier.
template <typename Out>
__device__ void attendHeads(const AttentionTask &at, uint32_t first, uint32_t heads,
                            const float (&m)[kMaxGroup], const float (&l)[kMaxGroup],
                            uint32_t statsAt, Out out, float *warpPartials) {
  const uint32_t d = at.geo.headDim;
  const uint32_t warpsPerHead = kWarps / heads, lanes = at.lanes();
  const uint32_t r = warpId() / warpsPerHead;
  const uint32_t local = threadIdx.x - r * warpsPerHead * kWarpSize;
  const uint32_t groups = warpsPerHead * kWarpSize / lanes;
  const uint32_t group = local / lanes, lane = local % lanes;
  const float mr = pick(m, statsAt + r), lr = pick(l, statsAt + r);
  // Pointer walks, so that the loop's only address math is two adds.
  const int32_t j0 = at.jb + int32_t(group);
  const uint64_t rowStep = uint64_t(groups) * at.geo.kvRows();
  const uint16_t *v = at.vCache + uint64_t(j0) * at.geo.kvRows() + at.g * d + lane * kVector;
  const float *score = at.scores(first + r) + j0;
  float acc[kVector] = {};
  // kLongRowsAhead positions' loads in flight together, added in position
  // order.
#pragma unroll 1
  for (int32_t j = j0; j < at.je; j += int32_t(groups * kLongRowsAhead),
               v += rowStep * kLongRowsAhead, score += groups * kLongRowsAhead) {
    float w[kLongRowsAhead];
    Bf16x8 row[kLongRowsAhead];
#pragma unroll
    for (uint32_t u = 0; u < kLongRowsAhead; ++u)
      if (j + int32_t(u * groups) < at.je) {
        w[u] = expf(score[u * groups] - mr) / lr;
        row[u] = loadArenaBf16x8(v + u * rowStep);
      }
#pragma unroll
    for (uint32_t u = 0; u < kLongRowsAhead; ++u)
      if (j + int32_t(u * groups) < at.je)
#pragma unroll
        for (uint32_t e = 0; e < kVector; ++e)
          acc[e] = fmaf(w[u], row[u].at(e), acc[e]);
  }
#pragma unroll
  for (uint32_t e = 0; e < kVector; ++e)
    acc[e] = warpReduce(acc[e], SumOp{}, lanes);
  if (laneId() < lanes) {
#pragma unroll
    for (uint32_t e = 0; e < kVector; ++e)
      warpPartials[warpId() * d + lane * kVector + e] = acc[e];
  }
  blockBarrier();
  for (uint32_t i = threadIdx.x; i < heads * d; i += kThreads) {
    const uint32_t h = i / d, k = i % d;
    const float *p = warpPartials + h * warpsPerHead * d + k;
    float sum = p[0];
    for (uint32_t w = 1; w < warpsPerHead; ++w)
      sum += p[w * d];
    out(first + h)[k] = sum;
  }
  blockBarrier();
}

/// One lane group's online softmax over its positions (steps 2s and 3s): the
/// largest score so far, the sum of exp(s - m) and the lane's 8 sums of
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

/// Steps 2s and 3s (short mode): the group's attention from the rotated
/// queries `qs`, the rounded key `kNow` and value `vNow` of position pos and the
/// caches' rows before it, into partials[0]. `state`: kWarps * (D + 2) floats.
/// Ends with a block barrier.
__device__ void attendShort(const AttentionTask &at, const Step &step, float scale,
                            const float *qs, const float *kNow, const float *vNow,
                            float *state, uint32_t stateStride) {
  const uint32_t d = at.geo.headDim, heads = at.group, lanes = at.lanes();
  const uint32_t warpsPerHead = kWarps / heads;
  const uint32_t r = warpId() / warpsPerHead;
  const uint32_t local = threadIdx.x - r * warpsPerHead * kWarpSize;
  const uint32_t groups = warpsPerHead * kWarpSize / lanes;
  const uint32_t group = local / lanes, lane = local % lanes;
  OnlineSoftmax acc;
  if (r < heads) { // Whole warps: the idle ones skip the loop together.
    // The query from shared memory at each use: in registers it would spill
    // the Plain worker's 64.
    const float *q = qs + r * d + lane * kVector;
    const uint64_t row = at.geo.kvRows();
    const uint16_t *kCache = at.kCache + at.g * d + lane * kVector;
    const uint16_t *vCache = at.vCache + at.g * d + lane * kVector;
    // Slot u holds the cache rows of the group's position u of each round:
    // kShortRowsAhead positions' loads in flight together, each issued a
    // round ahead (one at a time, each was a dependent round trip through L2:
    // 1.9 us of the 1B's task at context 2, docs/PERFORMANCE.md). A slot past
    // je is computed on, never added.
    Bf16x8 kRows[kShortRowsAhead] = {}, vRows[kShortRowsAhead] = {};
    auto fetch = [&](int32_t j, uint32_t u) {
      if (j < at.je && j != step.pos) {
        kRows[u] = loadArenaBf16x8(kCache + uint64_t(j) * row);
        vRows[u] = loadArenaBf16x8(vCache + uint64_t(j) * row);
      }
    };
    const int32_t round = int32_t(kShortRowsAhead * groups);
#pragma unroll
    for (uint32_t u = 0; u < kShortRowsAhead; ++u)
      fetch(at.jb + int32_t(group + u * groups), u);
    // Every group of a warp runs the same trip count (the butterfly needs
    // whole warps); a group past je folds in nothing.
#pragma unroll 1
    for (int32_t base = at.jb; base < at.je; base += round) {
#pragma unroll
      for (uint32_t u = 0; u < kShortRowsAhead; ++u) {
        const int32_t j = base + int32_t(group + u * groups);
        float k8[kVector], v8[kVector];
#pragma unroll
        for (uint32_t e = 0; e < kVector; ++e) { // Position pos: from the task's own.
          k8[e] = j == step.pos ? kNow[lane * kVector + e] : kRows[u].at(e);
          v8[e] = j == step.pos ? vNow[lane * kVector + e] : vRows[u].at(e);
        }
        fetch(j + round, u);
        float p = 0;
#pragma unroll
        for (uint32_t e = 0; e < kVector; ++e)
          p = fmaf(k8[e], q[e], p);
        p = groupSum(p, lanes);
        if (j < at.je)
          acc.add(scale * p, v8);
      }
    }
  }
  for (uint32_t offset = lanes; offset < kWarpSize; offset *= 2)
    acc.mergeLane(offset);
  if (r < heads && laneId() < lanes) {
    float *mine = state + warpId() * stateStride;
#pragma unroll
    for (uint32_t e = 0; e < kVector; ++e)
      mine[lane * kVector + e] = acc.v[e];
    if (lane == 0) {
      mine[d] = acc.m;
      mine[d + 1] = acc.l;
    }
  }
  blockBarrier();
  const uint32_t first = at.g * heads;
  for (uint32_t i = threadIdx.x; i < heads * d; i += kThreads) {
    const uint32_t h = i / d, k = i % d;
    const float *w = state + h * warpsPerHead * stateStride;
    float top = kNegativeInfinity;
    for (uint32_t x = 0; x < warpsPerHead; ++x)
      top = fmaxf(top, w[x * stateStride + d]);
    float l = 0, sum = 0;
    for (uint32_t x = 0; x < warpsPerHead; ++x) {
      const float f = expf(w[x * stateStride + d] - top); // 0 for an empty warp.
      l = fmaf(w[x * stateStride + d + 1], f, l);
      sum = fmaf(w[x * stateStride + k], f, sum);
    }
    at.partials(0, first + h)[k] = sum / l;
  }
  blockBarrier();
}

/// Step 4 for every head of the group: all at once when the heads divide the
/// warps, else one head at a time (each with every warp).
template <typename Out>
__device__ void attendAllHeads(const AttentionTask &at, uint32_t heads,
                               const float (&m)[kMaxGroup], const float (&l)[kMaxGroup], Out out,
                               float *warpPartials) {
  const uint32_t first = at.g * heads;
  if (kWarps % heads == 0) {
    attendHeads(at, first, heads, m, l, 0, out, warpPartials);
    return;
  }
  for (uint32_t r = 0; r < heads; ++r)
    attendHeads(at, first + r, 1, m, l, r, out, warpPartials);
}

__device__ void runAttentionScores(const KernelArgs &a, const plan::TaskRecord &t, const Step &step,
                                   WeightStream &, const Scratch &s) {
  const AttentionTask at = attentionTask(a, t, step);
  if (!step.longMode && at.chunk != 0)
    return;
  const AttentionLayout layout = attentionLayout(at.geo);
  float *qs = s.floats + layout.qAt;
  float *kNow = s.floats + layout.kAt;
  float *vNow = s.floats + layout.vAt;
  const float *params = at.params;
  const float scale = params[0];
  const float *invFreq = params + 1;
  const uint32_t d = at.geo.headDim, half = d / 2, g = at.g, group = at.group;

  // 1. Rotate the group's queries and the key; round the key to bf16. In
  //    short mode the items past the rotation's copy position pos's value, so
  //    that its loads are in flight with the rotation's.
  const float *qkv = at.qkv;
  const uint32_t rotations = (group + 1) * half;
  const uint32_t items = rotations + (step.longMode ? 0 : d);
  for (uint32_t idx = threadIdx.x; idx < items; idx += kThreads) {
    if (idx >= rotations) {
      const uint32_t i = idx - rotations;
      vNow[i] = bf16ToFloat(floatToBf16(qkv[at.geo.qRows() + at.geo.kvRows() + g * d + i]));
      continue;
    }
    uint32_t r = idx / half, i = idx % half;
    const float *src =
        r < group ? qkv + uint64_t(g * group + r) * d : qkv + at.geo.qRows() + g * d;
    float sn, cs;
    sincosf(static_cast<float>(step.pos) * invFreq[i], &sn, &cs);
    float x0 = src[i], x1 = src[i + half];
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
  if (at.chunk == 0) {
    uint16_t *row = at.kOut + uint64_t(step.pos) * at.geo.kvRows() + g * d;
    for (uint32_t i = threadIdx.x; i < d; i += kThreads)
      row[i] = floatToBf16(kNow[i]);
  }
  if (!step.longMode) {
    attendShort(at, step, scale, qs, kNow, vNow, s.floats + layout.partialsAt,
                layout.partialsStride);
    return;
  }

  // 2. Scores (long mode). Every thread runs the same trip count (the
  //    butterflies need whole warps); a group past je computes on zeros and
  //    writes nothing.
  const uint32_t lanes = at.lanes(), groups = kThreads / lanes;
  const uint32_t grp = threadIdx.x / lanes, lane = threadIdx.x % lanes;
  const uint16_t *kCache = at.kCache + g * d + lane * kVector;
  // kLongRowsAhead positions a group, their loads in flight together.
#pragma unroll 1
  for (int32_t base = at.jb; base < at.je; base += int32_t(groups * kLongRowsAhead)) {
    Bf16x8 rows[kLongRowsAhead] = {};
#pragma unroll
    for (uint32_t u = 0; u < kLongRowsAhead; ++u) {
      const int32_t j = base + int32_t(u * groups + grp);
      if (j < at.je && j != step.pos)
        rows[u] = loadArenaBf16x8(kCache + uint64_t(j) * at.geo.kvRows());
    }
#pragma unroll
    for (uint32_t u = 0; u < kLongRowsAhead; ++u) {
      const int32_t j = base + int32_t(u * groups + grp);
      float k8[kVector] = {};
      if (j < at.je && j != step.pos) {
#pragma unroll
        for (uint32_t e = 0; e < kVector; ++e)
          k8[e] = rows[u].at(e);
      } else if (j < at.je) { // Position pos: the rounded key, never the cache.
#pragma unroll
        for (uint32_t e = 0; e < kVector; ++e)
          k8[e] = kNow[lane * kVector + e];
      }
      // Every head's lane sum first, then their butterflies side by side:
      // one head after another, each waited for the last's shuffles.
      float p[kMaxGroup];
#pragma unroll
      for (uint32_t r = 0; r < kMaxGroup; ++r) {
        const float *q = qs + (r < group ? r : 0) * d + lane * kVector;
        p[r] = 0;
#pragma unroll
        for (uint32_t e = 0; e < kVector; ++e)
          p[r] = fmaf(k8[e], q[e], p[r]);
      }
#pragma unroll
      for (uint32_t r = 0; r < kMaxGroup; ++r)
        p[r] = groupSum(p[r], lanes);
#pragma unroll
      for (uint32_t r = 0; r < kMaxGroup; ++r)
        if (r < group && j < at.je && lane == 0)
          at.scores(g * group + r)[j] = scale * p[r];
    }
  }
  blockBarrier();

  // 3. The softmax statistics of every head at once, stored as the chunk's.
  float m[kMaxGroup], l[kMaxGroup];
  softmaxStats(at, group, m, l, s.floats + layout.partialsAt);
  if (threadIdx.x == 0)
    for (uint32_t r = 0; r < group; ++r) {
      at.stats(at.chunk, g * group + r)[0] = pick(m, r);
      at.stats(at.chunk, g * group + r)[1] = pick(l, r);
    }
}

__device__ void runAttentionValues(const KernelArgs &a, const plan::TaskRecord &t, const Step &step,
                                   WeightStream &, const Scratch &s) {
  if (!step.longMode)
    return;
  const AttentionTask at = attentionTask(a, t, step);
  float *warpPartials = s.floats + attentionLayout(at.geo).partialsAt;
  const uint32_t group = at.group;
  float m[kMaxGroup], l[kMaxGroup];
#pragma unroll
  for (uint32_t r = 0; r < kMaxGroup; ++r) {
    m[r] = kNegativeInfinity;
    l[r] = 0;
    if (r < group) {
      // A pointer walk: one add per chunk, where the layout's 64-bit index
      // math sat between the loads (0.9 µs of the 1B's task at context 4096,
      // docs/PERFORMANCE.md).
      const float *first = at.stats(0, at.g * group + r);
      const uint32_t stride = at.workspaceLayout.statsStride(), chunks = at.chunks();
      const float *st = first;
      for (uint32_t c = 0; c < chunks; ++c, st += stride)
        m[r] = fmaxf(m[r], st[0]);
      st = first;
      for (uint32_t c = 0; c < chunks; ++c, st += stride)
        l[r] += st[1] * expf(st[0] - m[r]);
    }
  }
  attendAllHeads(at, group, m, l, [&](uint32_t h) { return at.partials(at.chunk, h); },
                 warpPartials);
}

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_ATTENTION_CUH
