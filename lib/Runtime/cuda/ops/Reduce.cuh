//===- Reduce.cuh - Residual plus the FFN partial sums ----------*- CUDA -*-===//
//
// x[r] = residual[r] + (sum over p = 0..P-1, in order, of partials[p*H + r])
// for r in [rowBegin, rowEnd): a thread per row, the P partials added in
// order, exactly as CpuOps.cpp does.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_REDUCE_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_REDUCE_CUH

#include "Common.cuh"

namespace ti::cuda {

__device__ void runReduceResidual(const KernelArgs &a, const plan::TaskRecord &t) {
  const uint32_t h = t.aux[0], parts = t.aux[1];
  const float *partials = arenaF32(a, t.in[0]);
  const float *residual = arenaF32(a, t.in[1]);
  float *x = arenaF32(a, t.out[0]);
  for (uint32_t r = t.rowBegin + threadIdx.x; r < t.rowEnd; r += kThreads) {
    float sum = 0;
    for (uint32_t p = 0; p < parts; ++p)
      sum += partials[uint64_t(p) * h + r];
    x[r] = residual[r] + sum;
  }
}

} // namespace ti::cuda

#endif // TI_LIB_RUNTIME_CUDA_OPS_REDUCE_CUH
