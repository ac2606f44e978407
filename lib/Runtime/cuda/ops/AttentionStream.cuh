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
// Each warp works for one head of the group: W/G warps a head (W warps; the
// warps past G*(W/G) idle), the head's warps taking 32 positions of a block in
// turn, and keeps its own online softmax: no block barrier until the end
// (docs/PERFORMANCE.md, step 12: six barriers and the shared maxima of the
// block-wide form cost about 10 us a task). Per block:
// 1. Scores (K stage). Lane l scores its positions: q_h against the K row,
//    the row's vectors from the lane's own rotation (so that the lanes read
//    different banks), two at a time into two sums, two of its positions at
//    once (one q load for both), times the scale. The warp raises
//    its running maximum m by the block's (shuffles), rescales its sums by
//    exp(m_old - m), and writes the weights w = exp(s - m) to shared memory.
// 2. Values (V stage). The warp's lanes take R = 32 / L positions at a time,
//    L = D/8 lanes a position, lane l the 16-byte vector c = l mod L of
//    position l / L's value row: w * V[j][8c .. 8c + 8) into its eight sums. (A lane
//    a position's D/32 dimensions took a warp-wide step of about 30
//    instructions a position: 85% of the task, ncu in docs/PERFORMANCE.md,
//    step 13.)
// At the end each warp adds its lanes' sums of a vector (shuffles), its sums,
// m and sum of weights go to shared memory, and
// the head's warps merge in warp order: the chunk's partials (sums over the
// sum of weights) and stats (m, l), or in short mode (the plan's
// short_mma_context: TaskRecord.h, streamsKvAt) the heads' outputs; the
// one-pass loop's results
// (Attention.cuh) summed in another fixed order. Every exp is computed once
// per position and head, and no thread waits on a global load.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_ATTENTIONSTREAM_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_ATTENTIONSTREAM_CUH

#include "AttentionTask.cuh"
#include "Common.cuh"

TI_WORKER_NAMESPACE_BEGIN
#if TI_WORKER_STREAM

/// The segments of a block: `rows` K or V rows of headDim bf16 (the offset is
/// the producer's business; consumers only walk the stages).
__device__ __forceinline__ plan::StreamSegment kvBlockSegment(uint32_t rows, uint32_t headDim) {
  return plan::StreamSegment{0, rows, headDim * 2};
}

/// A lane's positions in one block: blocks of at most kThreads positions
/// (kvBlockRows) over at least kWarps / kMaxGroup warps a head (the verifier's
/// max_query_heads_per_kv_head is kMaxGroup).
constexpr uint32_t kMaxLaneRounds = kThreads / kWarpSize / (kWarps / kMaxGroup);
static_assert(kWarps % kMaxGroup == 0 &&
                  kMaxLaneRounds * (kWarps / kMaxGroup) * kWarpSize >= kThreads,
              "a head's warps cover a block of kThreads positions");

/// Where a warp works: its head of the group (the heads past the group's have
/// none), and which of the head's warps it is.
struct HeadWarp {
  uint32_t head, part, parts; // parts: the warps of a head.
  uint32_t rowShift;          // log2(L): L = headDim / 8 lanes share a value row.
  __device__ bool busy(uint32_t group) const { return head < group; }
  /// The lane's position of round k in a block (the warps of a head take 32
  /// positions in turn).
  __device__ uint32_t position(uint32_t k, uint32_t lane) const {
    return (k * parts + part) * kWarpSize + lane;
  }
};

/// A warp's online softmax over its positions: the running maximum (the same
/// in all lanes), the lane's share of the sum of the weights, and the lane's
/// sums of its value vector (lane mod L) over its positions.
struct WarpSoftmax {
  float m = kNegativeInfinity, l = 0;
  float sums[kVector] = {};
};

/// Eight bf16, 16 bytes as loaded, as floats.
__device__ __forceinline__ void bf16x8Floats(const uint4 &raw, float (&out)[kVector]) {
  const Bf16x8 b{{raw.x, raw.y, raw.z, raw.w}};
#pragma unroll
  for (uint32_t i = 0; i < kVector; ++i)
    out[i] = b.at(i);
}

/// Eight floats of a bf16 row in a stage.
__device__ __forceinline__ void stageVector(const uint8_t *row, uint32_t v, float (&out)[kVector]) {
  bf16x8Floats(*reinterpret_cast<const uint4 *>(row + v * 16), out);
}

/// Eight floats of a row kept as floats in shared memory (position pos's).
__device__ __forceinline__ void sharedVector(const float *row, uint32_t v, float (&out)[kVector]) {
  const float4 lo = *reinterpret_cast<const float4 *>(row + v * kVector);
  const float4 hi = *reinterpret_cast<const float4 *>(row + v * kVector + 4);
  out[0] = lo.x, out[1] = lo.y, out[2] = lo.z, out[3] = lo.w;
  out[4] = hi.x, out[5] = hi.y, out[6] = hi.z, out[7] = hi.w;
}

/// A block's rows as the consumers see them: rows [0, count) in a stage of
/// the ring, then, if the block has one more, position pos's rotated key and
/// value (floats in shared memory). Position pos takes separate code: as one
/// row loader with a branch per vector, both loads ran for every row (ncu).
struct KvBlock {
  const uint8_t *stage; // K or V rows, rowBytes apart (null for no cached row).
  uint32_t rowBytes, count;
  const float *now; // Position pos's key (scores) or value (values).
};

/// q . row for kRows bf16 rows of `vectors` 16-byte vectors (a power of two)
/// at once, from the lane's own rotation (p + n mod vectors: the lanes of a
/// warp read different banks; rows a multiple of `vectors` positions apart
/// share it, and their q loads), two vectors at a time into two sums a row
/// (their loads issued together: one vector at a time, each waited for its
/// load). Each row's sums are those of kRows = 1, bit for bit.
template <uint32_t kRows>
__device__ __forceinline__ void scoreStageRows(const float *q, const uint8_t *const (&rows)[kRows],
                                               uint32_t vectors, uint32_t p,
                                               float (&out)[kRows]) {
  const uint32_t mask = vectors - 1;
  float acc[kRows][2] = {};
#pragma unroll 1
  for (uint32_t n = 0; n < vectors; n += 2) {
    const uint32_t v[2] = {(p + n) & mask, (p + n + 1) & mask}; // The same for one vector.
    float x[kRows][2][kVector];
#pragma unroll
    for (uint32_t r = 0; r < kRows; ++r)
#pragma unroll
      for (uint32_t i = 0; i < 2; ++i)
        stageVector(rows[r], v[i], x[r][i]);
#pragma unroll
    for (uint32_t i = 0; i < 2; ++i) {
      if (i == 1 && vectors == 1)
        break;
      float y[kVector];
      sharedVector(q, v[i], y);
#pragma unroll
      for (uint32_t r = 0; r < kRows; ++r)
#pragma unroll
        for (uint32_t e = 0; e < kVector; ++e)
          acc[r][i] = fmaf(x[r][i][e], y[e], acc[r][i]);
    }
  }
#pragma unroll
  for (uint32_t r = 0; r < kRows; ++r)
    out[r] = acc[r][0] + acc[r][1];
}

/// q . position pos's key (floats), vector by vector in order.
__device__ __forceinline__ float scoreNow(const float *q, const float *key, uint32_t vectors) {
  float acc = 0;
#pragma unroll 1
  for (uint32_t v = 0; v < vectors; ++v) {
    float x[kVector], y[kVector];
    sharedVector(key, v, x);
    sharedVector(q, v, y);
#pragma unroll
    for (uint32_t e = 0; e < kVector; ++e)
      acc = fmaf(x[e], y[e], acc);
  }
  return acc;
}

/// Step 1 of a block of `rows` positions for the warp's head: each lane
/// scores its positions (q against the key), the warp raises its maximum by
/// theirs (shuffles) and rescales its sums; the weights exp(s - m) go to
/// weights[p] in shared memory (registers held across the V stage's wait
/// made ptxas spill).
__device__ __forceinline__ void scoreRows(const float *q, uint32_t vectors, float scale,
                                          uint32_t rows, const KvBlock &block, const HeadWarp &hw,
                                          WarpSoftmax &st, float *weights) {
  const uint32_t lane = laneId();
  float s[kMaxLaneRounds], top = kNegativeInfinity;
  static_assert(kMaxLaneRounds % 2 == 0, "rounds in pairs");
#pragma unroll
  for (uint32_t k = 0; k < kMaxLaneRounds; k += 2) {
    // Two rounds' positions together where both are the stage's (p1 > p0,
    // parts * 32 apart: a multiple of `vectors`, so one rotation): two
    // independent chains, one q load for both.
    const uint32_t p0 = hw.position(k, lane), p1 = hw.position(k + 1, lane);
    if (p1 < block.count) {
      const uint8_t *const pair[2] = {block.stage + p0 * block.rowBytes,
                                      block.stage + p1 * block.rowBytes};
      float dots[2];
      scoreStageRows<2>(q, pair, vectors, p0, dots);
      s[k] = scale * dots[0];
      s[k + 1] = scale * dots[1];
      top = fmaxf(top, fmaxf(s[k], s[k + 1]));
      continue;
    }
#pragma unroll
    for (uint32_t j = k; j < k + 2; ++j) {
      const uint32_t p = hw.position(j, lane);
      s[j] = kNegativeInfinity;
      if (p >= rows)
        continue;
      if (p < block.count) {
        const uint8_t *const one[1] = {block.stage + p * block.rowBytes};
        float dot[1];
        scoreStageRows<1>(q, one, vectors, p, dot);
        s[j] = scale * dot[0];
      } else {
        s[j] = scale * scoreNow(q, block.now, vectors);
      }
      top = fmaxf(top, s[j]);
    }
  }
  top = fmaxf(st.m, warpReduce(top, MaxOp{}));
  if (top == kNegativeInfinity) { // No position yet: nothing to weigh.
#pragma unroll
    for (uint32_t k = 0; k < kMaxLaneRounds; ++k)
      if (hw.position(k, lane) < rows)
        weights[hw.position(k, lane)] = 0;
    warpBarrier();
    return;
  }
  const float rescale = expf(st.m - top); // 0 while st.m is -inf.
  st.m = top;
  st.l *= rescale;
#pragma unroll
  for (uint32_t i = 0; i < kVector; ++i)
    st.sums[i] *= rescale;
#pragma unroll
  for (uint32_t k = 0; k < kMaxLaneRounds; ++k) {
    const uint32_t p = hw.position(k, lane);
    if (p >= rows)
      continue;
    const float w = expf(s[k] - top);
    weights[p] = w;
    st.l += w;
  }
  warpBarrier(); // The value pass reads every lane's weights.
}

/// Step 2: the warp's positions' values, weighted: lane l takes the
/// positions l / L, + R, ... of each of the warp's 32-position groups, its
/// vector `mine` of each (weights[p] from step 1); position pos, the block's
/// row `count` if it has one, after the cached rows of its group.
__device__ __forceinline__ void addValues(uint32_t rows, const KvBlock &block, uint32_t mine,
                                          const HeadWarp &hw, WarpSoftmax &st,
                                          const float *weights) {
  const uint32_t sub = laneId() >> hw.rowShift, rowsAPass = kWarpSize >> hw.rowShift;
  auto add = [&](float w, const float (&x)[kVector]) {
#pragma unroll
    for (uint32_t i = 0; i < kVector; ++i)
      st.sums[i] = fmaf(w, x[i], st.sums[i]);
  };
#pragma unroll
  for (uint32_t k = 0; k < kMaxLaneRounds; ++k) {
    const uint32_t first = hw.position(k, 0);
    if (first >= rows) // The same in the whole warp.
      break;
    const uint32_t n = min(rows - first, kWarpSize);
    const uint32_t cached = block.count > first ? min(block.count - first, n) : 0u;
#pragma unroll 2
    for (uint32_t j = sub; j < cached; j += rowsAPass) {
      float x[kVector];
      stageVector(block.stage + (first + j) * block.rowBytes, mine, x);
      add(weights[first + j], x);
    }
    if (n > cached && (cached & (rowsAPass - 1)) == sub) { // Row `count`: position pos.
      float x[kVector];
      sharedVector(block.now, mine, x);
      add(weights[first + cached], x);
    }
  }
  warpBarrier(); // Every lane has read the weights the next block overwrites.
}

/// The end of both streamed forms (here and AttentionStreamMma.cuh): the
/// `warps` states (d sums, m, l; shared memory) of each of the group's heads
/// merged in warp order, head h's state x at states + h * headStride + x *
/// warpStride, into the chunk's partials (the sums over their weight) and
/// stats (m, l), or, in short mode (the task's attention is the whole
/// context's), into the heads' outputs (the sums over their weight). An
/// empty state (m = -inf) weighs nothing.
__device__ __forceinline__ void storeChunkStates(const AttentionTask &at, const float *states,
                                                 uint32_t d, uint32_t group, uint32_t warps,
                                                 uint32_t headStride, uint32_t warpStride,
                                                 bool longMode) {
  const uint32_t first = at.g * group;
  for (uint32_t i = threadIdx.x; i < group * d; i += kThreads) {
    const uint32_t h = i / d, k = i % d;
    const float *theirs = states + h * headStride;
    float top = kNegativeInfinity;
    for (uint32_t x = 0; x < warps; ++x)
      top = fmaxf(top, theirs[x * warpStride + d]);
    float sum = 0, weight = 0;
    for (uint32_t x = 0; x < warps; ++x) {
      const float m = theirs[x * warpStride + d];
      const float f = m == kNegativeInfinity ? 0.0f : expf(m - top);
      sum = fmaf(theirs[x * warpStride + k], f, sum);
      weight = fmaf(theirs[x * warpStride + d + 1], f, weight);
    }
    if (!longMode) { // The heads' outputs.
      at.result.store(uint64_t(first + h) * d + k, sum / weight);
      continue;
    }
    at.result.store(at.partials(first + h) + k, sum / weight); // Long mode: the workspace.
    if (k == 0) {
      at.result.store(at.stats(first + h), top);
      at.result.store(at.stats(first + h) + 1, weight);
    }
  }
}

/// The task's attention over its streamed rows and position pos, into the
/// chunk's partials and stats, or in short mode the heads' outputs (the
/// header's steps). Ends with a block barrier.
__device__ void attendStreamed(const AttentionTask &at, const Step &step, float scale,
                               const float *qs, const float *kNow, const float *vNow,
                               const AttentionLayout &layout, float *shared, WeightStream &ws) {
  const uint32_t d = at.geo.headDim, group = at.group, rowBytes = d * 2, vectors = d / kVector;
  const plan::KvBlocks blocks = plan::kvBlocks(at.chunk, at.geo.chunks, step.pos, step.longMode,
                                               ws.stageBytes(), d, kThreads);
  const uint32_t blockRows = blocks.blockRows;
  const uint32_t parts = kWarps / group, lane = laneId();
  // L = d / 8 lanes a value row: a power of two up to 32 (the verifier's
  // rule for stream_kv, plan::kvRowsStreamable).
  const uint32_t rowShift = __ffs(vectors) - 1;
  const HeadWarp hw{warpId() / parts, warpId() % parts, parts, rowShift};
  const bool busy = hw.busy(group);
  const uint32_t mine = lane & (vectors - 1); // The lane's vector of a value row.
  const float *q = qs + (busy ? hw.head : 0) * d;
  WarpSoftmax st;
  // The head's weights of a block, position by position ([group][P]).
  float *weights = shared + layout.weightsAt + (busy ? hw.head : 0) * blockRows;
  // Position pos joins the last block where it has room (a chunk of at most
  // P positions is one block), else it is a block of its own.
  const bool hasNow = at.je > step.pos;
  bool nowDone = false;
#pragma unroll 1
  for (int32_t base = blocks.begin; base < blocks.end; base += int32_t(blockRows)) {
    const uint32_t count = blocks.rowsAt(base);
    const bool withNow = hasNow && base + int32_t(count) == blocks.end && count < blockRows;
    const uint32_t rows = count + (withNow ? 1u : 0u);
    ws.consume(kvBlockSegment(count, d), [&](uint32_t, uint32_t, const uint8_t *stage) {
      if (busy)
        scoreRows(q, vectors, scale, rows, KvBlock{stage, rowBytes, count, kNow}, hw, st,
                  weights);
    });
    ws.consume(kvBlockSegment(count, d), [&](uint32_t, uint32_t, const uint8_t *stage) {
      if (busy)
        addValues(rows, KvBlock{stage, rowBytes, count, vNow}, mine, hw, st, weights);
    });
    nowDone = nowDone || withNow;
  }
  if (hasNow && !nowDone && busy) { // Position pos alone.
    scoreRows(q, vectors, scale, 1, KvBlock{nullptr, rowBytes, 0, kNow}, hw, st, weights);
    addValues(1, KvBlock{nullptr, rowBytes, 0, vNow}, mine, hw, st, weights);
  }
  // Each warp's (sums, m, l) to shared memory, then the head's warps merged in
  // warp order: the chunk's partials (the sums over l) and stats (m, l), or
  // in short mode the heads' outputs.
  const uint32_t stride = layout.stateStride; // d + 2
  float *states = shared + layout.statesAt;
  if (busy) {
    const float l = warpReduce(st.l, SumOp{});
    // The lanes with the same vector (lane mod L) add their sums in a fixed
    // order; every one of them gets the vector's.
#pragma unroll
    for (uint32_t i = 0; i < kVector; ++i)
      st.sums[i] = warpReduce(st.sums[i], SumOp{}, vectors);
    float *ours = states + warpId() * stride;
    if (lane < vectors)
#pragma unroll
      for (uint32_t i = 0; i < kVector; ++i)
        ours[lane * kVector + i] = st.sums[i];
    if (lane == 0) {
      ours[d] = st.m;
      ours[d + 1] = l;
    }
  }
  blockBarrier();
  storeChunkStates(at, states, d, group, parts, parts * stride, stride, step.longMode);
  blockBarrier();
}

/// StreamOnly (WorkerMode.h): the task's K/V stages, released unread.
__device__ void skipStreamedKv(const plan::TaskRecord &t, const Step &step, WeightStream &ws) {
  const plan::HeadGeometry geo = t.geometry;
  const plan::KvBlocks blocks = plan::kvBlocks(t.aux[1], geo.chunks, step.pos, step.longMode,
                                               ws.stageBytes(), geo.headDim, kThreads);
  for (int32_t base = blocks.begin; base < blocks.end; base += int32_t(blocks.blockRows))
    for (uint32_t k = 0; k < 2; ++k)
      ws.consume(kvBlockSegment(blocks.rowsAt(base), geo.headDim),
                 [](uint32_t, uint32_t, const uint8_t *) {});
}

#endif
TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_ATTENTIONSTREAM_CUH
