//===- Reduce.cuh - Residual plus the FFN partial sums ----------*- CUDA -*-===//
//
// x[r] = residual[r] + (sum over p = 0..P-1, in order, of partials[p*H + r])
// for r in [rowBegin, rowEnd), exactly as CpuOps.cpp adds them. When the
// task's P x rows partials fit the shared scratch, the whole block first copies
// them there (every load in flight at once: one round trip to L2 instead of
// one per few partials), then a thread per row adds them in order; otherwise
// a thread per row reads them from global memory.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_REDUCE_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_REDUCE_CUH

#include "Common.cuh"

TI_WORKER_NAMESPACE_BEGIN

__device__ void runReduceResidual(const KernelArgs &a, const plan::TaskRecord &t, const Step &,
                                  WeightStream &ws, const Scratch &s) {
  ws.inputsReady(); // Plain reads behind a grid barrier: they are here.
  const uint32_t h = t.aux[0], parts = t.aux[1];
  const uint32_t rows = t.rowEnd - t.rowBegin;
  const float *partials = arenaF32(a, t.in[0]);
  const float *residual = arenaF32(a, t.in[1]);
  float *x = arenaF32(a, t.out[0]);
  if (uint64_t(parts) * rows <= kReduceStagedFloats) {
    float *staged = s.floats; // [parts][rows]
    for (uint32_t i = threadIdx.x; i < parts * rows; i += kThreads) {
      const uint32_t p = i / rows, r = i % rows;
      staged[i] = partials[uint64_t(p) * h + t.rowBegin + r];
    }
    blockBarrier();
    for (uint32_t r = threadIdx.x; r < rows; r += kThreads) {
      float sum = 0;
      for (uint32_t p = 0; p < parts; ++p)
        sum += staged[p * rows + r];
      x[t.rowBegin + r] = residual[t.rowBegin + r] + sum;
    }
    return;
  }
  for (uint32_t r = t.rowBegin + threadIdx.x; r < t.rowEnd; r += kThreads) {
    float sum = 0;
    for (uint32_t p = 0; p < parts; ++p)
      sum += partials[uint64_t(p) * h + r];
    x[r] = residual[r] + sum;
  }
}

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_REDUCE_CUH
