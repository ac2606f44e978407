//===- Ffn.cuh - A slice of the MLP: gate, up, SiLU, down -------*- CUDA -*-===//
//
// Units u of [rowBegin, rowEnd), n of them; `weight` holds gate rows, up rows
// and the down projection's columns transposed, each bf16 [n][H].
// 1. x' (RMS-normalised input) into shared memory.
// 2. act[u] = silu(gate[u].x') * (up[u].x'): warp w takes units w, w + 32, ...
//    (Common.cuh: forEachActivation), act[] in shared memory.
// (The Stream worker takes steps 2 and 3 from the ring: streamedFfn.)
// 3. out[j] = sum_u act[u] * down[u][j] for every j < H: thread (group q,
//    vector v) adds units q, q + G, ... into the 8 columns of vector v, reading
//    each down row as consecutive 16-byte vectors across the warp. With fewer
//    than 1024 vectors per row, G = 1024 / (H/8) groups split the units and
//    their sums are added in group order through shared memory; with more,
//    one group covers the row in passes of 1024 vectors.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_FFN_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_FFN_CUH

#include "Common.cuh"

TI_WORKER_NAMESPACE_BEGIN

/// Step 3's end: thread (group q, vector v) leaves its 8 column sums in
/// out (one group) or in partials[q] (several); then the groups' sums are
/// added in group order into out.
__device__ __forceinline__ void storeDownColumns(const float (&acc)[kVector], uint32_t grp,
                                                 uint32_t v, const FfnLayout &layout,
                                                 float *partials, float *out) {
  float *dst = layout.groups > 1 ? partials + grp * layout.hidden : out;
#pragma unroll
  for (uint32_t e = 0; e < kVector; ++e)
    dst[v * kVector + e] = acc[e];
}
__device__ __forceinline__ void addDownGroups(const FfnLayout &layout, const float *partials,
                                              float *out) {
  if (layout.groups <= 1)
    return;
  blockBarrier();
  for (uint32_t j = threadIdx.x; j < layout.hidden; j += kThreads) {
    float sum = partials[j];
    for (uint32_t q = 1; q < layout.groups; ++q)
      sum += partials[q * layout.hidden + j];
    out[j] = sum;
  }
}

#if TI_WORKER_STREAM
/// Steps 2 and 3 from the ring: the gate, up and down segments in turn. Gate
/// row u and up row u go to the same warp (u mod kWarps), so its lane 0 forms
/// act[u] without waiting for another warp; the down rows need every act[]
/// (a block barrier). Thread (group q, vector v) adds the units u = q mod G of
/// each stage into its 8 columns (and, for rows of more vectors than
/// threads, those of vectors v + kThreads, ...), in unit order, across the
/// stages.
__device__ void streamedFfn(const KernelArgs &a, const plan::TaskRecord &t, WeightStream &ws,
                            const FfnLayout &layout, float *xs, float *act, float *partials,
                            float *rowPartials) {
  forEachStreamedRowDot(ws, plan::streamSegment(t, 0), xs, rowPartials, [&](uint32_t u, float g) {
    if (laneId() == 0)
      act[u] = g;
  });
  forEachStreamedRowDot(ws, plan::streamSegment(t, 1), xs, rowPartials, [&](uint32_t u, float up) {
    if (laneId() == 0) {
      act[u] = siluTimes(act[u], up);
    }
  });
  blockBarrier();

  const uint32_t h = layout.hidden, vectors = layout.vectors, groups = layout.groups;
  const uint32_t grp = threadIdx.x / vectors, v = threadIdx.x % vectors;
  // Rows of more vectors than threads (one group) are covered in passes: the
  // thread's vectors v, v + kThreads, ... (at most kFfnColumnPasses).
  const uint32_t passes = (vectors + kThreads - 1) / kThreads;
  const plan::StreamSegment down = plan::streamSegment(t, 2);
  float acc[kFfnColumnPasses][kVector] = {};
  ws.consume(down, [&](uint32_t first, uint32_t rows, const uint8_t *data) {
    if (grp >= groups)
      return;
    const SharedCursor w(data + v * kVectorBytes);
#pragma unroll 2
    for (uint32_t j = (grp + groups - first % groups) % groups; j < rows; j += groups) {
      const float x = act[first + j];
#pragma unroll
      for (uint32_t p = 0; p < kFfnColumnPasses; ++p)
        if (p < passes && v + p * kThreads < vectors) {
          const Bf16x8 d = w.load(j * down.rowBytes + p * kThreads * kVectorBytes);
#pragma unroll
          for (uint32_t e = 0; e < kVector; ++e)
            acc[p][e] = fmaf(x, d.at(e), acc[p][e]);
        }
    }
  });
  float *out = arenaF32(a, t.out[0]) + uint64_t(t.aux[1]) * h;
  if (grp < groups)
#pragma unroll
    for (uint32_t p = 0; p < kFfnColumnPasses; ++p)
      if (p < passes && v + p * kThreads < vectors)
        storeDownColumns(acc[p], grp, v + p * kThreads, layout, partials, out);
  addDownGroups(layout, partials, out);
}
#endif

__device__ void runFfnPartial(const KernelArgs &a, const plan::TaskRecord &t, const Step &step,
                              WeightStream &ws, const Scratch &s) {
  const uint32_t h = t.aux[0], n = t.rowEnd - t.rowBegin;
  const FfnLayout layout = ffnLayout(h, n);
  float *xs = s.floats + layout.xAt;
  float *act = s.floats + layout.actAt;
  float *partials = s.floats + layout.partialsAt;
  loadNormalizedInput(a, t, step, ws, h, xs, s);

#if TI_WORKER_STREAM
  streamedFfn(a, t, ws, layout, xs, act, partials, s.floats + rowPartialsAt(t));
#else
  // 2. The activations.
  const uint64_t rowBytes = uint64_t(h) * kWeightBytes;
  const uint64_t gate = t.weight, up = gate + n * rowBytes, down = up + n * rowBytes;
  const uint32_t vectors = layout.vectors;
  forEachActivation(ws, gate, up, n, vectors, xs, [&](uint32_t u, float v) { act[u] = v; });
  blockBarrier();

  // 3. The down projection's partial sums.
  float *out = arenaF32(a, t.out[0]) + uint64_t(t.aux[1]) * h;
  const uint32_t groups = layout.groups;
  const uint32_t span = groups > 1 ? vectors : kThreads; // Vectors per pass.
  const uint32_t grp = threadIdx.x / span;
  for (uint32_t v0 = 0; v0 < vectors; v0 += span) {
    const uint32_t v = v0 + threadIdx.x % span;
    float acc[kVector] = {};
    if (grp < groups && v < vectors) {
#pragma unroll 2
      for (uint32_t u = grp; u < n; u += groups) {
        Bf16x8 w = ws.load(down + u * rowBytes + uint64_t(v) * kVectorBytes);
        float x = act[u];
#pragma unroll
        for (uint32_t e = 0; e < kVector; ++e)
          acc[e] = fmaf(x, w.at(e), acc[e]);
      }
      storeDownColumns(acc, grp, v, layout, partials, out);
    }
  }
  addDownGroups(layout, partials, out);
#endif
}

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_FFN_CUH
