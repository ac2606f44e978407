//===- Gemv.cuh - y = W x' with its fused prologue and epilogues -*- CUDA -*-===//
//
// 1. The block builds x' in shared memory: the input, RMS-normalised when
//    the task has a norm (Common.cuh: loadNormalizedInput).
// 2. Plain: warp w computes rows rowBegin + w, + 32, ..., two rows at a time,
//    its lanes streaming 16-byte vectors of both (forEachRowDot, Common.cuh).
//    Stream: the rows arrive through the ring, row i for warp i mod kWarps
//    (forEachStreamedRowDot).
// (A kFlagTiledWeights task runs TiledGemv.cuh's form instead: Worker.cu.)
// 3. Lane 0 writes y[i] (+ residual[i], kFlagResidual; either may be tagged,
//    Common.cuh: F32In, F32Out) and, for rows >= aux[1] with kFlagVCache,
//    bf16(y[i]) to row pos of the V cache (AttentionLayout.h: KvCacheLayout).
//    The task's row j is warp j mod kWarps's in both workers, so before step
//    1 lane l of warp w loads the residual of the warp's row w + l*kWarps:
//    loaded after the dot, it was a dependent round trip at the end of every
//    task.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_GEMV_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_GEMV_CUH

#include "Common.cuh"

TI_WORKER_NAMESPACE_BEGIN

__device__ void runGemv(const KernelArgs &a, const plan::TaskRecord &t, const Step &step,
                        WeightStream &ws, const Scratch &s) {
  const uint32_t k = t.aux[0], flags = t.flags;
  float *xs = s.floats;

  const uint32_t begin = t.rowBegin, end = t.rowEnd;
  const bool hasResidual = flags & plan::kFlagResidual;
  const F32In residual = in1(a, t, step);
  // The Stream worker issues it before the input's loads and waits for it
  // after them: one round trip for both (the residual was written waves ago).
  // The Plain worker, at 64 registers, waits for it first (holding it across
  // the input spilled).
  const uint32_t earlyRow = begin + warpId() + laneId() * kWarps;
  const bool hasEarly = hasResidual && earlyRow < end;
  float early = 0;
  uint64_t earlyIssued = 0;
  if (hasEarly) {
    if constexpr (kStreamed)
      earlyIssued = residual.issue(earlyRow);
    else
      early = residual.load1(earlyRow);
  }
  loadNormalizedInput(a, t, step, ws, k, xs, s);
  if (kStreamed && hasEarly)
    early = residual.finish(earlyRow, earlyIssued);
#if !TI_WORKER_STREAM
  if (static_cast<plan::Opcode>(t.opcode) == plan::Opcode::GateUp) { // GateUp.cuh
    const uint32_t n = end - begin;
    const F32Out y = out0(a, t, step);
    const uint64_t up = t.weight + uint64_t(n) * k * kWeightBytes;
    forEachActivation(ws, t.weight, up, n, k / kVector, xs,
                      [&](uint32_t u, float v) { y.store(begin + u, v); });
    return;
  }
#endif

  const uint32_t vectors = k / kVector;
  const F32Out y = out0(a, t, step);
  const uint32_t vFirst = (flags & plan::kFlagVCache) ? t.aux[1] : ~0u;
  uint16_t *vCache = (flags & plan::kFlagVCache) ? arenaBf16(a, t.out[1]) : nullptr;
  const plan::KvCacheLayout cache = plan::KvCacheLayout::of(t.geometry, a.maxContext);
  auto emit = [&](uint32_t i, float v) { // On every lane of the warp.
    const uint32_t n = (i - begin) / kWarps; // The warp's n-th row.
    const float added = hasResidual ? __shfl_sync(0xffffffffu, early, n % kWarpSize) : 0.0f;
    if (laneId() == 0) {
      if (hasResidual)
        v = (n < kWarpSize ? added : residual.load1(i)) + v;
      y.store(i, v);
      if (i >= vFirst)
        vCache[cache.at(step.pos, i - vFirst)] = floatToBf16(v);
    }
  };
  forEachTaskRowDot(ws, t, vectors, xs, s, emit);
}

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_GEMV_CUH
