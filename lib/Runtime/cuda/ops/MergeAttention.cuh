//===- MergeAttention.cuh - The attention chunks merged into its output -*- CUDA -*-===//
//
// Long mode only (TaskRecord.h, MergeAttention); in short mode the
// attention's chunk 0 wrote the output, and the task does nothing. Once per
// layer, where every output projection task used to merge all chunks of all
// heads (128 KB from L2 a task for the 1B: about 4 us a layer,
// docs/PERFORMANCE.md, step 14).
//
// 1. The block copies every chunk's partials and statistics of the task's
//    heads into shared memory, pairs of values, each thread's loads of a
//    round issued together (F32In::loadPairs): tagged ones are re-polled in
//    that round, so that the copy ends about one round trip after the last
//    chunk lands (one chunk after another, the tagged merge took a round
//    trip a chunk, step 8). In the stream worker a thread's pair of
//    statistics is issued before its partials and waited for after them (in
//    a round of its own, it took one more round trip: step 30).
// 2. Thread j < chunks x heads takes chunk c's weight of head h, l_c *
//    exp(m_c - m) with m the largest of the head's maxima (0 for an empty
//    chunk), into shared memory: each weight once. (Each value's thread
//    computed all of its head's: for the 1B, 16 exps a thread and each
//    weight 64 times, in a task that spends 1.3 us after its inputs on an
//    H100, docs/PERFORMANCE.md, step 37.)
// 3. Thread i takes value i of its head: the sum of the weights and the
//    weighted sum of the chunks' partials over it, in chunk order (the CPU
//    executor's order); the result goes to the output, tagged where the plan
//    tags it. (The running form, which rescaled the sums whenever the maximum
//    grew, chained 16 exps and loads in a row: about 0.7 us of the 1B's merge
//    task.)
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_MERGEATTENTION_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_MERGEATTENTION_CUH

#include "Common.cuh"

TI_WORKER_NAMESPACE_BEGIN

/// `rows` rows of `columns` pairs, row c's pair r at element first + c *
/// rowStride + 2r of `in`, into dst[c][2 * columns] (shared memory). With
/// fewer columns than threads, the spare threads take other rows of the same
/// columns, so that every thread has loads in flight.
__device__ __forceinline__ void stageRows(const F32In &in, uint64_t first, uint32_t columns,
                                          uint64_t rowStride, uint32_t rows, float *dst) {
  // Pairs a thread has in flight together: the Plain worker's 64 registers
  // hold fewer (8 spilled there).
  constexpr uint32_t kRound = kStreamed ? 8 : 2;
  const uint32_t g = columns >= kThreads ? 1u : kThreads / columns; // Row groups.
#pragma unroll 1
  for (uint32_t u = threadIdx.x; u < columns * g; u += kThreads) {
    const uint32_t r = u % columns;
#pragma unroll 1
    for (uint32_t c0 = u / columns; c0 < rows; c0 += kRound * g) {
      const uint32_t count = min(kRound, (rows - c0 + g - 1) / g);
      float2 x[kRound];
      in.loadPairs<kRound>(first + c0 * rowStride + 2 * r, g * rowStride, count, x);
#pragma unroll
      for (uint32_t j = 0; j < kRound; ++j)
        if (j < count)
          reinterpret_cast<float2 *>(dst + (c0 + j * g) * 2 * columns)[r] = x[j];
    }
  }
}

/// Step 1: chunk c's partials of the task's `values` (heads x headDim from
/// head h0) into parts[c][values] and its (max, sum) of each head into
/// stats[c][heads] (pairs): thread i's pair of statistics (i < chunks x
/// heads) issued before its partials' rounds and waited for after them.
__device__ __forceinline__ void stageChunks(const F32In &in, const plan::AttentionWorkspace &layout,
                                           uint32_t h0, uint32_t values, uint32_t heads,
                                           uint32_t chunks, float *parts, float *stats) {
  if constexpr (!kStreamed) {
    // The plain worker's 64 registers do not hold the early pair beside a
    // round (12 bytes spilled): its statistics take a round of their own.
    stageRows(in, layout.partials(0, h0), values / 2, layout.partials(1, 0), chunks, parts);
    stageRows(in, layout.stats(0, h0), heads, layout.statsStride(), chunks, stats);
    return;
  }
  const uint32_t i = threadIdx.x;
  const bool hasStats = i < chunks * heads;
  const uint64_t statsAt = layout.stats(i / heads, h0 + i % heads);
  const ulonglong2 issued = hasStats ? in.issuePair(statsAt) : ulonglong2{};
  stageRows(in, layout.partials(0, h0), values / 2, layout.partials(1, 0), chunks, parts);
  if (hasStats) // Stats pair i is chunk i / heads's of head i mod heads.
    reinterpret_cast<float2 *>(stats)[i] = in.finishPair(statsAt, issued);
  // (A thread's stats past kThreads pairs: a second round, as stageRows's.)
  for (uint32_t k = i + kThreads; k < chunks * heads; k += kThreads) {
    const uint64_t at = layout.stats(k / heads, h0 + k % heads);
    reinterpret_cast<float2 *>(stats)[k] = in.finishPair(at, in.issuePair(at));
  }
}

__device__ void runMergeAttention(const KernelArgs &a, const plan::TaskRecord &t,
                                  const Step &step, WeightStream &ws, const Scratch &s) {
  if (!step.longMode) {
    ws.inputsReady(); // It needs none.
    return;
  }
  const plan::HeadGeometry geo = t.geometry;
  const plan::AttentionWorkspace layout = plan::AttentionWorkspace::of(geo);
  const uint32_t chunks = geo.chunks, d = geo.headDim;
  const uint32_t h0 = t.rowBegin / d, values = t.rowEnd - t.rowBegin, heads = values / d;
  const F32In in = in0(a, t, step);
  const plan::MergeLayout regions = plan::mergeLayout(chunks, values, heads);
  float *parts = s.floats + regions.partsAt;     // [chunks][values]
  float *stats = s.floats + regions.statsAt;     // [chunks][heads][2]: (max, sum)
  float *weights = s.floats + regions.weightsAt; // [chunks][heads]
  stageChunks(in, layout, h0, values, heads, chunks, parts, stats);
  blockBarrier();
  ws.inputsReady();
  const float2 *st = reinterpret_cast<const float2 *>(stats); // Chunk c, head h: st[c * heads + h].
#pragma unroll 1
  for (uint32_t j = threadIdx.x; j < chunks * heads; j += kThreads) {
    const uint32_t h = j % heads;
    float top = kNegativeInfinity;
#pragma unroll 8
    for (uint32_t c = 0; c < chunks; ++c)
      top = fmaxf(top, st[c * heads + h].x);
    const float2 mc = st[j];
    weights[j] = mc.x == kNegativeInfinity ? 0.0f : mc.y * expf(mc.x - top); // Empty: 0.
  }
  blockBarrier();
  const F32Out y = out0(a, t, step);
#pragma unroll 1
  for (uint32_t i = threadIdx.x; i < values; i += kThreads) {
    const float *w = weights + i / d; // Chunk c's: w[c * heads].
    float l = 0, x = 0;
#pragma unroll 4
    for (uint32_t c = 0; c < chunks; ++c) {
      const float f = w[c * heads];
      l += f;
      x = fmaf(f, parts[c * values + i], x);
    }
    y.store(t.rowBegin + i, x / l);
  }
}

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_MERGEATTENTION_CUH
