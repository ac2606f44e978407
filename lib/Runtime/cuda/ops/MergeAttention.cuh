//===- MergeAttention.cuh - The attention chunks merged into its output -*- CUDA -*-===//
//
// Long mode only (TaskRecord.h, MergeAttention): thread i of the task takes
// vector i of its rows (8 values of one head), merges that vector of every
// chunk's partials by the chunks' statistics of its head in chunk order
// (Common.cuh: mergeChunks), and writes the 8 values to the attention's
// output, tagged where the plan tags it. Once per layer, where every output
// projection task used to merge all chunks of all heads (128 KB from L2 a
// task for the 1B: about 4 us a layer, docs/PERFORMANCE.md, step 14). In
// short mode the attention's chunk 0 wrote the output: nothing to do.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_MERGEATTENTION_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_MERGEATTENTION_CUH

#include "Common.cuh"

TI_WORKER_NAMESPACE_BEGIN

__device__ void runMergeAttention(const KernelArgs &a, const plan::TaskRecord &t,
                                  const Step &step, WeightStream &ws, const Scratch &) {
  if (!step.longMode) {
    ws.inputsReady(); // It needs none.
    return;
  }
  const plan::HeadGeometry geo = t.geometry;
  const plan::AttentionWorkspace layout = plan::AttentionWorkspace::of(geo);
  // The workspace is never tagged (TaskRecord.h): plain floats. (Read
  // through an operand that could be tagged, the merge compiled with tagged
  // loads and the worker spilled, docs/PERFORMANCE.md, step 20.)
  const float *workspace = arenaF32(a, t.in[0]);
  const F32Out y = out0(a, t, step);
  const uint32_t q = t.aux[0]; // A chunk's partials: Q floats.
#pragma unroll 1
  for (uint32_t v = t.rowBegin / kVector + threadIdx.x; v < t.rowEnd / kVector; v += kThreads) {
    const uint32_t head = v * kVector / geo.headDim;
    float x[kVector];
    mergeChunks<kMergeBatch>(workspace, v * kVector, q, layout.stats(0, head),
                             layout.statsStride(), geo.chunks, x);
#pragma unroll
    for (uint32_t e = 0; e < kVector; ++e)
      y.store(v * kVector + e, x[e]);
  }
  ws.inputsReady();
}

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_MERGEATTENTION_CUH
