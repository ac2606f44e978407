//===- Embed.cuh - The embedding row of this worker's token -----*- CUDA -*-===//
//
// x[h] = table[token][h] for h in [rowBegin, rowEnd). A thread per 16-byte
// vector of the row; the vectors at the range's ends are loaded whole (they lie
// inside the token's row, hidden being a multiple of 8) and only the task's
// elements are written.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_EMBED_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_EMBED_CUH

#include "Common.cuh"

TI_WORKER_NAMESPACE_BEGIN

__device__ void runEmbed(const KernelArgs &a, const plan::TaskRecord &t, const Step &step,
                         WeightStream &ws, const Scratch &) {
  const int32_t token = reinterpret_cast<const int32_t *>(a.arena + t.in[0])[t.worker];
  const uint32_t hidden = t.aux[0], begin = t.rowBegin, end = t.rowEnd;
  const uint64_t row = t.weight + uint64_t(token) * hidden * kWeightBytes;
  const F32Out x = out0(a, t, step);
  ws.inputsReady(); // Its token is the worker's own.
  for (uint32_t v = begin / kVector + threadIdx.x; v * kVector < end; v += kThreads) {
    Bf16x8 w = ws.load(row + uint64_t(v) * kVectorBytes);
#pragma unroll
    for (uint32_t e = 0; e < kVector; ++e) {
      uint32_t h = v * kVector + e;
      if (h >= begin && h < end)
        x.store(h, w.at(e));
    }
  }
}

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_EMBED_CUH
