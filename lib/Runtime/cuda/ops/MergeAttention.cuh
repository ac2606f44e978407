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
//    trip a chunk, step 8).
// 2. Thread i folds value i of its head over the chunks in chunk order, the
//    largest max so far the reference, earlier sums rescaled when it grows
//    (the operations and their order the output projection's merge had, so
//    the values are the same bits), and writes it to the output, tagged
//    where the plan tags it.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_MERGEATTENTION_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_MERGEATTENTION_CUH

#include "Common.cuh"

TI_WORKER_NAMESPACE_BEGIN

/// Step 1 for one kind of row: `rows` rows of `columns` pairs, row c's pair
/// r at element first + c * rowStride + 2r of `in`, into dst[c][2 * columns]
/// (shared memory). With fewer columns than threads, the spare threads take
/// other rows of the same columns, so that every thread has loads in flight.
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
  float *parts = s.floats;                     // [chunks][values]
  float *stats = s.floats + chunks * values;   // [chunks][heads][2]: (max, sum)
  stageRows(in, layout.partials(0, h0), values / 2, layout.partials(1, 0), chunks, parts);
  stageRows(in, layout.stats(0, h0), heads, layout.statsStride(), chunks, stats);
  blockBarrier();
  ws.inputsReady();
  const F32Out y = out0(a, t, step);
#pragma unroll 1
  for (uint32_t i = threadIdx.x; i < values; i += kThreads) {
    const uint32_t h = i / d;
    float m = kNegativeInfinity, l = 0, x = 0;
#pragma unroll 1
    for (uint32_t c = 0; c < chunks; ++c) {
      const float2 st = reinterpret_cast<const float2 *>(stats + c * 2 * heads)[h];
      const float top = fmaxf(m, st.x);
      const float mine = expf(m - top); // 0 for the first chunk (m = -inf).
      const float other = st.y * expf(st.x - top);
      l = fmaf(l, mine, other);
      x = fmaf(other, parts[c * values + i], x * mine);
      m = top;
    }
    y.store(t.rowBegin + i, x / l);
  }
}

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_MERGEATTENTION_CUH
