//===- LmHead.cuh - Logits and this task's best candidate -------*- CUDA -*-===//
//
// A Gemv (the same row loop, with the task's norm) that also keeps, per warp,
// the best finite logit of its rows (largest value, lowest row on ties) and
// the first non-finite row. The block combines the warps' results; the task's
// candidate is (NaN, the lowest non-finite row) if there is one, else the best
// (value, row) — what CpuOps.cpp's sequential scan gives, in any order.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_LMHEAD_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_LMHEAD_CUH

#include "Common.cuh"

TI_WORKER_NAMESPACE_BEGIN

/// The best of a set of rows, in any order of arrival.
struct BestRow {
  float value = kNegativeInfinity;
  uint32_t row = ~0u;
  uint32_t nonFinite = ~0u; // The lowest non-finite row.

  __device__ void add(float v, uint32_t i) {
    if (!isfinite(v))
      nonFinite = min(nonFinite, i);
    else if (v > value || (v == value && i < row)) {
      value = v;
      row = i;
    }
  }
  __device__ void merge(const BestRow &o) {
    nonFinite = min(nonFinite, o.nonFinite);
    if (o.row != ~0u && (o.value > value || (o.value == value && o.row < row))) {
      value = o.value;
      row = o.row;
    }
  }
};

__device__ void runLmHead(const KernelArgs &a, const plan::TaskRecord &t, const Step &step,
                          WeightStream &ws, const Scratch &s) {
  const uint32_t k = t.aux[0];
  float *xs = s.floats;
  loadNormalizedInput(a, t, step, ws, k, xs, s);

  const uint32_t vectors = k / kVector;
  float *logits = arenaF32(a, t.out[0]);
  BestRow best;
  auto emit = [&](uint32_t i, float v) {
    if (laneId() == 0)
      logits[i] = v;
    best.add(v, i);
  };
  forEachTaskRowDot(ws, t, vectors, xs, s, emit);

  // Lane 0 of each warp leaves its result in the scratch (x' is no longer read
  // once every warp is past its rows).
  blockBarrier();
  uint32_t *slots = reinterpret_cast<uint32_t *>(s.floats);
  if (laneId() == 0) {
    slots[3 * warpId()] = __float_as_uint(best.value);
    slots[3 * warpId() + 1] = best.row;
    slots[3 * warpId() + 2] = best.nonFinite;
  }
  blockBarrier();
  if (threadIdx.x == 0) {
    BestRow all;
    for (uint32_t w = 0; w < kWarps; ++w) {
      BestRow o;
      o.value = __uint_as_float(slots[3 * w]);
      o.row = slots[3 * w + 1];
      o.nonFinite = slots[3 * w + 2];
      all.merge(o);
    }
    plan::Candidate c;
    if (all.nonFinite != ~0u)
      c = plan::Candidate{__int_as_float(0x7fc00000), static_cast<int32_t>(all.nonFinite)};
    else
      c = plan::Candidate{all.value, static_cast<int32_t>(all.row)};
    reinterpret_cast<plan::Candidate *>(a.arena + t.out[1])[t.aux[1]] = c;
  }
}

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_LMHEAD_CUH
