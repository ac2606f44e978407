//===- GateUp.cuh - The MLP's first half: silu(gate) * up -------*- CUDA -*-===//
//
// Units u of [rowBegin, rowEnd), n of them; `weight` holds the task's gate
// rows, then its up rows, each bf16 [n][K] (TaskRecord.h).
// 1. x' (the input, RMS-normalised when the task has a norm) into shared
//    memory (Common.cuh: loadNormalizedInput).
// 2. Plain: warp w takes units w, w + kWarps, ..., its gate and up rows
//    together (Common.cuh: forEachActivation). Stream: the gate rows, then the up rows,
//    through the ring, row u of either for warp u mod kWarps
//    (forEachStreamedRowDot): lane 0 keeps gate[u] in shared memory and, at
//    the up row, writes y[u] = silu(gate[u]) * up[u] itself, so no warp waits
//    for another.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_GATEUP_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_GATEUP_CUH

#include "Common.cuh"
#include "Gemv.cuh"

TI_WORKER_NAMESPACE_BEGIN

#if TI_WORKER_STREAM
__device__ void runGateUp(const KernelArgs &a, const plan::TaskRecord &t, const Step &step,
                          WeightStream &ws, const Scratch &s) {
  const uint32_t k = t.aux[0];
  float *xs = s.floats;
  float *gate = s.floats + plan::alignFloats(k); // [n], lane 0 of unit u's warp only.
  loadNormalizedInput(a, t, step, ws, k, xs, s);
  const F32Out y = out0(a, t, step);
  const uint32_t begin = t.rowBegin;
  float *partials = s.floats + rowPartialsAt(t);
  forEachStreamedRowDot(ws, plan::streamSegment(t, 0), xs, partials, [&](uint32_t u, float g) {
    if (laneId() == 0)
      gate[u] = g;
  });
  forEachStreamedRowDot(ws, plan::streamSegment(t, 1), xs, partials, [&](uint32_t u, float up) {
    if (laneId() == 0)
      y.store(begin + u, siluTimes(gate[u], up));
  });
}
#else
/// runGemv's body: its prologue, then forEachActivation (Gemv.cuh), so that
/// the Plain worker keeps the one inlined copy of the input's prologue that
/// it has registers for (a second made it spill, 64 registers a thread).
__device__ void runGateUp(const KernelArgs &a, const plan::TaskRecord &t, const Step &step,
                          WeightStream &ws, const Scratch &s) {
  runGemv(a, t, step, ws, s);
}
#endif

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_GATEUP_CUH
