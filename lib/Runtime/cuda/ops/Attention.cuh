//===- Attention.cuh - Scores, softmax and values of one kv head -*- CUDA -*-===//
//
// A task covers the G query heads of kv head g and, in long mode, the
// positions [c*ctx/C, (c+1)*ctx/C) of its chunk c (all of [0, ctx) in short
// mode, chunk 0 only). Work is split by position: a group of L = D/8 lanes
// takes one position at a time, lane i of the group the 16-byte vector i of
// its K or V row; groups take positions jb + group, + 1024/L, ...
//
// 1. RoPE: the block rotates the G queries and the key (pairs (i, i + D/2) by
//    float(pos) * invFreq[i], precise sincosf) into shared memory; the key is
//    rounded to bf16 there, and the chunk-0 task writes it to K cache row pos.
//    Position pos always uses that rounded key from shared memory.
// 2. Scores: per position, each lane's 8 products per head are added across
//    the group (xor butterfly); lane 0 of the group writes scale * q.k to the
//    workspace's scores[h][j].
// 3. Per head, block reductions give m = max s_j and l = sum exp(s_j - m). Long
//    mode stores (m, l) as the chunk's stats; short mode goes on to 4 at once.
// 4. Values: each group adds exp(s_j - m) / l * V[j] over its positions into 8
//    sums per lane; the groups of a warp are added by a butterfly, the warps in
//    warp order through shared memory.
//
// AttentionValues (long mode only) takes M and L over the chunks' stats (every
// thread computes them the same way, chunks in order) and runs step 4 over its
// chunk's positions into partials[c][h].
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_ATTENTION_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_ATTENTION_CUH

#include "Common.cuh"

namespace ti::cuda {

/// One attention task: which kv head and chunk, and its positions. The model's
/// sizes are read from the kernel parameters where needed (they cost no
/// registers there).
struct AttentionTask {
  const ModelDims &m;
  uint32_t g, chunk, chunks;
  int32_t jb, je;   // The task's positions.
  float *workspace; // f32 at out[0]: scores [heads][maxContext], stats, partials.

  __device__ uint32_t lanes() const { return m.headDim / kVector; } // Per position.
  __device__ float *scores(uint32_t h) const { return workspace + uint64_t(h) * m.maxContext; }
  __device__ float *stats(uint32_t c, uint32_t h) const {
    return workspace + uint64_t(m.heads) * m.maxContext + (uint64_t(c) * m.heads + h) * 2;
  }
  __device__ float *partials(uint32_t c, uint32_t h) const {
    return workspace + uint64_t(m.heads) * m.maxContext + uint64_t(chunks) * m.heads * 2 +
           (uint64_t(c) * m.heads + h) * m.headDim;
  }
};

__device__ AttentionTask attentionTask(const KernelArgs &a, const plan::TaskRecord &t,
                                       const Step &step) {
  const uint32_t chunk = t.aux[1] & 0xffffu, chunks = t.aux[1] >> 16;
  const int32_t ctx = step.pos + 1;
  return AttentionTask{a.model,
                       t.aux[0],
                       chunk,
                       chunks,
                       step.longMode ? int32_t(int64_t(chunk) * ctx / chunks) : 0,
                       step.longMode ? int32_t(int64_t(chunk + 1) * ctx / chunks) : ctx,
                       arenaF32(a, t.out[0])};
}

/// Step 4: out[d] = sum over j in [jb, je) of exp(s_j - m) / l * V[j][d] for
/// query head h (global index). Ends with a block barrier.
__device__ void attendValues(const KernelArgs &a, const plan::TaskRecord &t,
                             const AttentionTask &at, uint32_t h, float m, float l, float *out,
                             float *warpPartials) {
  const uint32_t lanes = at.lanes(), groups = kThreads / lanes;
  const uint32_t group = threadIdx.x / lanes, lane = threadIdx.x % lanes;
  const uint16_t *v = arenaBf16(a, t.in[2]) + at.g * at.m.headDim + lane * kVector;
  const float *scores = at.scores(h);
  float acc[kVector] = {};
#pragma unroll 1
  for (int32_t j = at.jb + int32_t(group); j < at.je; j += int32_t(groups)) {
    float w = expf(scores[j] - m) / l;
    Bf16x8 row = loadArenaBf16x8(v + uint64_t(j) * at.m.kvRows());
#pragma unroll
    for (uint32_t e = 0; e < kVector; ++e)
      acc[e] = fmaf(w, row.at(e), acc[e]);
  }
#pragma unroll
  for (uint32_t e = 0; e < kVector; ++e)
    acc[e] = warpReduce(acc[e], SumOp{}, lanes);
  if (laneId() < lanes) {
#pragma unroll
    for (uint32_t e = 0; e < kVector; ++e)
      warpPartials[warpId() * at.m.headDim + lane * kVector + e] = acc[e];
  }
  blockBarrier();
  for (uint32_t d = threadIdx.x; d < at.m.headDim; d += kThreads) {
    float sum = warpPartials[d];
#pragma unroll 8
    for (uint32_t w = 1; w < kWarps; ++w)
      sum += warpPartials[w * at.m.headDim + d];
    out[d] = sum;
  }
  blockBarrier();
}

__device__ void runAttentionScores(const KernelArgs &a, const plan::TaskRecord &t, const Step &step,
                                   const Scratch &s) {
  const AttentionTask at = attentionTask(a, t, step);
  if (!step.longMode && at.chunk != 0)
    return;
  const AttentionLayout layout = attentionLayout(a.model);
  float *qs = s.floats + layout.qAt;
  float *kNow = s.floats + layout.kAt;
  const float *params = a.params + t.param;
  const float scale = params[0];
  const float *invFreq = params + 1;
  const uint32_t d = a.model.headDim, half = d / 2, g = at.g, group = a.model.group();

  // 1. Rotate the group's queries and the key; round the key to bf16.
  const float *qkv = arenaF32(a, t.in[0]);
  for (uint32_t idx = threadIdx.x; idx < (group + 1) * half; idx += kThreads) {
    uint32_t r = idx / half, i = idx % half;
    const float *src =
        r < group ? qkv + uint64_t(g * group + r) * d : qkv + a.model.qRows() + g * d;
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
    uint16_t *row = arenaBf16(a, t.out[1]) + uint64_t(step.pos) * a.model.kvRows() + g * d;
    for (uint32_t i = threadIdx.x; i < d; i += kThreads)
      row[i] = floatToBf16(kNow[i]);
  }

  // 2. Scores. Every thread runs the same trip count (the butterflies need
  //    whole warps); a group past je computes on zeros and writes nothing.
  const uint32_t lanes = at.lanes(), groups = kThreads / lanes;
  const uint32_t grp = threadIdx.x / lanes, lane = threadIdx.x % lanes;
  const uint16_t *kCache = arenaBf16(a, t.in[1]) + g * d + lane * kVector;
#pragma unroll 1
  for (int32_t base = at.jb; base < at.je; base += int32_t(groups)) {
    const int32_t j = base + int32_t(grp);
    float k8[kVector] = {};
    if (j < at.je && j != step.pos) {
      Bf16x8 row = loadArenaBf16x8(kCache + uint64_t(j) * a.model.kvRows());
#pragma unroll
      for (uint32_t e = 0; e < kVector; ++e)
        k8[e] = row.at(e);
    } else if (j < at.je) { // Position pos: the rounded key, never the cache.
#pragma unroll
      for (uint32_t e = 0; e < kVector; ++e)
        k8[e] = kNow[lane * kVector + e];
    }
#pragma unroll 1
    for (uint32_t r = 0; r < group; ++r) {
      const float *q = qs + r * d + lane * kVector;
      float p = 0;
#pragma unroll
      for (uint32_t e = 0; e < kVector; ++e)
        p = fmaf(k8[e], q[e], p);
      p = groupSum(p, lanes);
      if (j < at.je && lane == 0)
        at.scores(g * group + r)[j] = scale * p;
    }
  }
  blockBarrier();

  // 3. and 4. Per head: softmax statistics, then (short mode) the values.
  float *warpPartials = s.floats + layout.partialsAt;
  for (uint32_t r = 0; r < group; ++r) {
    const uint32_t h = g * group + r;
    const float *scores = at.scores(h);
    float m = kNegativeInfinity;
    for (int32_t j = at.jb + int32_t(threadIdx.x); j < at.je; j += int32_t(kThreads))
      m = fmaxf(m, scores[j]);
    m = blockReduce(m, MaxOp{}, s);
    float l = 0;
    for (int32_t j = at.jb + int32_t(threadIdx.x); j < at.je; j += int32_t(kThreads))
      l += expf(scores[j] - m);
    l = blockReduce(l, SumOp{}, s);
    if (step.longMode) {
      if (threadIdx.x == 0) {
        at.stats(at.chunk, h)[0] = m;
        at.stats(at.chunk, h)[1] = l;
      }
      continue;
    }
    attendValues(a, t, at, h, m, l, at.partials(0, h), warpPartials);
  }
}

__device__ void runAttentionValues(const KernelArgs &a, const plan::TaskRecord &t, const Step &step,
                                   const Scratch &s) {
  if (!step.longMode)
    return;
  const AttentionTask at = attentionTask(a, t, step);
  float *warpPartials = s.floats + attentionLayout(a.model).partialsAt;
  for (uint32_t r = 0; r < a.model.group(); ++r) {
    const uint32_t h = at.g * a.model.group() + r;
    float m = kNegativeInfinity;
    for (uint32_t c = 0; c < at.chunks; ++c)
      m = fmaxf(m, at.stats(c, h)[0]);
    float l = 0;
    for (uint32_t c = 0; c < at.chunks; ++c) {
      const float *st = at.stats(c, h);
      l += st[1] * expf(st[0] - m);
    }
    attendValues(a, t, at, h, m, l, at.partials(at.chunk, h), warpPartials);
  }
}

} // namespace ti::cuda

#endif // TI_LIB_RUNTIME_CUDA_OPS_ATTENTION_CUH
