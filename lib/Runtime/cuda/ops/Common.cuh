//===- Common.cuh - What every op family uses -------------------*- CUDA -*-===//
//
// The step's facts, arena access, bf16 conversions (bit for bit those of
// ti/Support/Bf16.h), and reductions in a fixed order: a warp adds by an xor
// butterfly (every lane ends with the same value, since each level adds the
// same two numbers in either order), a block then adds its warps' results in
// warp order. The order depends only on the block size, so every run gives the
// same bits.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_COMMON_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_COMMON_CUH

#include "../Config.cuh"
#include "../KernelArgs.h"
#include "../Sync.cuh"
#include "../WeightStream.cuh"

#include "ti/Plan/AttentionLayout.h"

#include <cstdint>

TI_WORKER_NAMESPACE_BEGIN

/// The step a task runs in.
struct Step {
  int32_t pos;   // The position decoded.
  bool longMode; // ctx = pos + 1 > the plan's split context.
  bool streamKv; // kFlagStreamKv tasks stream their K/V rows (TaskRecord.h: streamsKvAt).
  StepTag tag;   // What its tagged values carry (Sync.cuh).
};

/// The worker's scratch: the dynamic shared array, and a static slot per warp
/// for block reductions.
struct Scratch {
  float *floats;  // Dynamic shared memory (Config.cuh gives each op's layout).
  float *warpSum; // [kWarps]
};

constexpr float kNegativeInfinity = -__builtin_huge_valf();

__device__ __forceinline__ uint32_t laneId() { return threadIdx.x % kWarpSize; }
__device__ __forceinline__ uint32_t warpId() { return threadIdx.x / kWarpSize; }

/// silu(gate) * up, silu(z) = z / (1 + exp(-z)): the MLP's activation.
__device__ __forceinline__ float siluTimes(float gate, float up) {
  return gate / (1.0f + expf(-gate)) * up;
}

__device__ __forceinline__ float *arenaF32(const KernelArgs &a, uint64_t offset) {
  return reinterpret_cast<float *>(a.arena + offset);
}
__device__ __forceinline__ uint16_t *arenaBf16(const KernelArgs &a, uint64_t offset) {
  return reinterpret_cast<uint16_t *>(a.arena + offset);
}

/// Exact: a bf16 is the top half of an f32.
__device__ __forceinline__ float bf16ToFloat(uint16_t b) {
  return __uint_as_float(static_cast<uint32_t>(b) << 16);
}

/// The nearest bf16, ties to even; NaN stays a quiet NaN with its sign.
__device__ __forceinline__ uint16_t floatToBf16(float f) {
  uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

/// An f32 operand in the arena that a task reads: plain, or tagged (its
/// kFlagTagged* flag; Sync.cuh waits for the step's tags). Element indices;
/// load8 at a multiple of 4.
class F32In {
public:
  __device__ F32In(const KernelArgs &a, uint64_t offset, bool tagged, StepTag tag)
      : at_(a.arena + offset), tagged_(tagged), tag_(tag) {}

  __device__ __forceinline__ void load8(uint64_t i, float (&x)[kVector]) const {
    if (tagged_) {
      loadTagged<8>(tagged() + i, tag_, x);
      return;
    }
    const float4 lo = *reinterpret_cast<const float4 *>(plain() + i);
    const float4 hi = *reinterpret_cast<const float4 *>(plain() + i + 4);
    x[0] = lo.x, x[1] = lo.y, x[2] = lo.z, x[3] = lo.w;
    x[4] = hi.x, x[5] = hi.y, x[6] = hi.z, x[7] = hi.w;
  }
  /// The 2 values at each of i + j * stride, j < B (i and stride even), all
  /// loads issued before any is waited for.
  template <uint32_t B>
  __device__ __forceinline__ void loadPairs(uint64_t i, uint64_t stride, uint32_t count,
                                            float2 (&x)[B]) const {
    if (tagged_) {
      loadTaggedPairs<B>(tagged() + i, stride, count, tag_, x);
      return;
    }
#pragma unroll
    for (uint32_t j = 0; j < B; ++j)
      x[j] = j < count ? *reinterpret_cast<const float2 *>(plain() + i + j * stride) : float2{};
  }
  /// The 2 values at each element index i[j] (even), all loads issued before
  /// any is waited for.
  template <uint32_t B>
  __device__ __forceinline__ void loadPairsAt(const uint64_t (&i)[B], float2 (&x)[B]) const {
    if (tagged_) {
      loadTaggedPairsWhere<B>([&](uint32_t j) { return tagged() + i[j]; }, B, tag_, x);
      return;
    }
#pragma unroll
    for (uint32_t j = 0; j < B; ++j)
      x[j] = *reinterpret_cast<const float2 *>(plain() + i[j]);
  }
  /// The pair at element i (even) issued, not waited for: finishPair(i,
  /// issued) gives its values, so that other loads can be in flight meanwhile.
  __device__ __forceinline__ ulonglong2 issuePair(uint64_t i) const {
    if (tagged_)
      return loadRelaxedPair(tagged() + i);
    const float2 v = *reinterpret_cast<const float2 *>(plain() + i);
    return ulonglong2{__float_as_uint(v.x), __float_as_uint(v.y)};
  }
  __device__ __forceinline__ float2 finishPair(uint64_t i, ulonglong2 issued) const {
    if (tagged_)
      issued = waitForTags(tagged() + i, issued, tag_);
    return float2{plan::valueOf(issued.x), plan::valueOf(issued.y)};
  }
  __device__ __forceinline__ float load1(uint64_t i) const { return finish(i, issue(i)); }
  /// Element i's load issued, not waited for: finish(i, issued) gives its
  /// value, so that other loads can be in flight meanwhile.
  __device__ __forceinline__ uint64_t issue(uint64_t i) const {
    return tagged_ ? loadRelaxed(tagged() + i) : __float_as_uint(plain()[i]);
  }
  __device__ __forceinline__ float finish(uint64_t i, uint64_t issued) const {
    return tagged_ ? plan::valueOf(waitForTag(tagged() + i, issued, tag_))
                   : __uint_as_float(uint32_t(issued));
  }
private:
  __device__ const float *plain() const { return reinterpret_cast<const float *>(at_); }
  __device__ const uint64_t *tagged() const { return reinterpret_cast<const uint64_t *>(at_); }
  const uint8_t *at_;
  bool tagged_;
  StepTag tag_;
};

/// An f32 operand in the arena that a task writes: plain, or tagged with the
/// step's tag.
class F32Out {
public:
  __device__ F32Out(const KernelArgs &a, uint64_t offset, bool tagged, StepTag tag)
      : at_(a.arena + offset), tagged_(tagged), tag_(tag.tag) {}

  __device__ __forceinline__ void store(uint64_t i, float v) const {
    if (tagged_)
      storeTagged(reinterpret_cast<uint64_t *>(at_) + i, v, tag_);
    else
      reinterpret_cast<float *>(at_)[i] = v;
  }

private:
  uint8_t *at_;
  bool tagged_;
  uint32_t tag_;
};

/// A task's f32 operands (TaskRecord.h's flags say which are tagged).
__device__ __forceinline__ F32In in0(const KernelArgs &a, const plan::TaskRecord &t,
                                     const Step &step) {
  return F32In(a, t.in[0], t.flags & plan::kFlagTaggedIn0, step.tag);
}
__device__ __forceinline__ F32In in1(const KernelArgs &a, const plan::TaskRecord &t,
                                     const Step &step) {
  return F32In(a, t.in[1], t.flags & plan::kFlagTaggedIn1, step.tag);
}
__device__ __forceinline__ F32Out out0(const KernelArgs &a, const plan::TaskRecord &t,
                                       const Step &step) {
  return F32Out(a, t.out[0], t.flags & plan::kFlagTaggedOut0, step.tag);
}

/// Eight bf16 from the arena (the K/V caches), 16-byte aligned. A plain load:
/// the caches are written during the launch.
__device__ __forceinline__ Bf16x8 loadArenaBf16x8(const uint16_t *p) {
  uint4 v = *reinterpret_cast<const uint4 *>(p);
  return Bf16x8{{v.x, v.y, v.z, v.w}};
}

/// Asks L2 for the lines that hold two byte ranges [a, a + bytes) and
/// [b, b + bytes) (bytes > 0), the block's threads a line each in turn, and
/// waits for nothing: a hint that starts reads from HBM early, not a load
/// (L2 is where the SMs' writes meet, so a prefetched line is never stale).
/// No line past either range: the caches' last rows end their allocation.
__device__ __forceinline__ void prefetchL2Pair(const void *a, const void *b, uint64_t bytes) {
  constexpr uintptr_t kLine = 128; // Bytes of an L2 line.
  // A range's first line, and how many lines from there hold it.
  const auto firstLine = [](const void *p) {
    return reinterpret_cast<uintptr_t>(p) & ~(kLine - 1);
  };
  const auto lines = [&](const void *p) {
    return uint32_t(((reinterpret_cast<uintptr_t>(p) + bytes - 1) & ~(kLine - 1)) - firstLine(p)) /
               kLine + 1;
  };
  const uintptr_t firstA = firstLine(a), firstB = firstLine(b);
  const uint32_t linesA = lines(a), linesB = lines(b);
  for (uint32_t i = threadIdx.x; i < linesA + linesB; i += kThreads) {
    const uintptr_t line = i < linesA ? firstA + uintptr_t(i) * kLine
                                      : firstB + uintptr_t(i - linesA) * kLine;
    asm volatile("prefetch.global.L2 [%0];" ::"l"(line));
  }
}

/// acc + sum_e w[e] * x[e], e = 0..7 in order (x = lo, hi).
__device__ __forceinline__ float dot8(const Bf16x8 &w, const float4 &lo, const float4 &hi,
                                      float acc) {
  acc = fmaf(w.at(0), lo.x, acc);
  acc = fmaf(w.at(1), lo.y, acc);
  acc = fmaf(w.at(2), lo.z, acc);
  acc = fmaf(w.at(3), lo.w, acc);
  acc = fmaf(w.at(4), hi.x, acc);
  acc = fmaf(w.at(5), hi.y, acc);
  acc = fmaf(w.at(6), hi.z, acc);
  acc = fmaf(w.at(7), hi.w, acc);
  return acc;
}

struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

/// Combines the values of the lanes whose ids differ only in bits worth
/// `lowest` or more (all 32 lanes by default; lowest = L: the lanes with the
/// same id mod L). Every such lane gets the same result.
template <typename Op>
__device__ __forceinline__ float warpReduce(float v, Op op, uint32_t lowest = 1) {
  for (uint32_t offset = kWarpSize / 2; offset >= lowest; offset /= 2)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

/// Sum over the lanes of each aligned group of `width` lanes (a power of two).
__device__ __forceinline__ float groupSum(float v, uint32_t width) {
  for (uint32_t offset = width / 2; offset >= 1; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

/// Every thread's value combined; every thread gets the result. All threads of
/// the block must call it. Ends with a block barrier (the slots are reusable).
template <typename Op>
__device__ float blockReduce(float v, Op op, const Scratch &s) {
  v = warpReduce(v, op);
  if (laneId() == 0)
    s.warpSum[warpId()] = v;
  blockBarrier();
  float r = s.warpSum[0];
#pragma unroll 8
  for (uint32_t w = 1; w < kWarps; ++w)
    r = op(r, s.warpSum[w]);
  blockBarrier();
  return r;
}

/// Two values as the words of a tiled product's B operand: bf16 hi = bf16(x)
/// and lo = bf16(x - hi) of each, the first value in the lower half.
__device__ __forceinline__ void splitBf16Pair(float x0, float x1, uint32_t &hi, uint32_t &lo) {
  const uint16_t h0 = floatToBf16(x0), h1 = floatToBf16(x1);
  const uint16_t l0 = floatToBf16(x0 - bf16ToFloat(h0));
  const uint16_t l1 = floatToBf16(x1 - bf16ToFloat(h1));
  hi = uint32_t(h0) | uint32_t(h1) << 16;
  lo = uint32_t(l0) | uint32_t(l1) << 16;
}

/// Eight values of x' at `at` (shared memory, 32 bytes, 16-byte aligned).
__device__ __forceinline__ void storeVector(float *at, const float (&x)[kVector]) {
  reinterpret_cast<float4 *>(at)[0] = float4{x[0], x[1], x[2], x[3]};
  reinterpret_cast<float4 *>(at)[1] = float4{x[4], x[5], x[6], x[7]};
}

/// x = the input vector (f32[K] at in[0], plain or tagged), normalised
/// when the task has a norm: x' = x * rsqrt(mean(x^2) + eps) * scale. Written
/// to xs[K] (shared) as floats; K must be a multiple of 8. Ends with a
/// block barrier.
__device__ void loadNormalizedInput(const KernelArgs &a, const plan::TaskRecord &t,
                                    const Step &step, WeightStream &ws, uint32_t k, float *xs,
                                    const Scratch &s) {
  const F32In in = in0(a, t, step);
  const uint64_t norm = t.norm;
  // With one vector of the row per thread (K <= 8 * kThreads), the scale's
  // load is issued first, so its latency overlaps the input's and the
  // reduction instead of following them.
  // So is eps's: after the reduction it was one more round trip.
  const bool oneVector = k / kVector <= kThreads;
  Bf16x8 early{};
  float eps = 0;
  if (norm != plan::kNone) {
    eps = a.params[t.param];
    if (oneVector && threadIdx.x < k / kVector)
      early = ws.load(norm + uint64_t(threadIdx.x) * kVectorBytes);
  }
  float squares = 0;
#pragma unroll 1
  for (uint32_t v = threadIdx.x; v < k / kVector; v += kThreads) {
    float x[kVector];
    in.load8(v * kVector, x);
#pragma unroll
    for (uint32_t e = 0; e < kVector; ++e)
      squares = fmaf(x[e], x[e], squares);
    // Without a norm these are x' already.
    storeVector(xs + v * kVector, x);
  }
  if (norm == plan::kNone) {
    blockBarrier();
    ws.inputsReady();
    return;
  }
  float total = blockReduce(squares, SumOp{}, s);
  float r = 1.0f / sqrtf(total / static_cast<float>(k) + eps);
#pragma unroll 1
  for (uint32_t v = threadIdx.x; v < k / kVector; v += kThreads) {
    const Bf16x8 scale = oneVector ? early : ws.load(norm + uint64_t(v) * kVectorBytes);
    float x[kVector];
#pragma unroll
    for (uint32_t e = 0; e < kVector; ++e)
      x[e] = xs[v * kVector + e] * r * scale.at(e);
    storeVector(xs + v * kVector, x);
  }
  blockBarrier();
  ws.inputsReady();
}

#if TI_WORKER_STREAM
/// What a tiled task's row sums are still to be multiplied by: the norm's
/// 1 / rms where loadScaledInput left it out, else 1. factor() reads the
/// warps' sums of squares that loadScaledInput left in s.warpSum: it is
/// called after a block barrier that follows them (the products' last) and
/// before the next task's reductions reuse the slots (a thread's squares
/// are its pairs', in pair order; the warps' sums in warp order, as
/// blockReduce adds them).
struct DeferredNorm {
  bool deferred;
  float eps;
  uint32_t k;
  __device__ __forceinline__ float factor(const Scratch &s) const {
    if (!deferred)
      return 1.0f;
    float total = s.warpSum[0];
#pragma unroll
    for (uint32_t w = 1; w < kWarps; ++w)
      total += s.warpSum[w];
    return 1.0f / sqrtf(total / static_cast<float>(k) + eps);
  }
};

/// A tiled task's input (ops/TiledGemv.cuh) as its products' B words at xb,
/// for each 8 values the 32 bytes their floats would take: value e as a bf16
/// pair hi + lo (hi = bf16(x), lo = bf16(x - hi)), the words hi(0,1)
/// hi(2,3) lo(0,1) lo(2,3) hi(4,5) hi(6,7) lo(4,5) lo(6,7), the lower
/// element in the lower half (the 8 bytes at 8 g are B's column g for these
/// columns, g = 0..3), with a norm's 1 / rms left out: x' = x *
/// scale, and the row sums multiplied by DeferredNorm::factor() instead
/// (a scalar of the whole row, so the products need not wait for it): no
/// block reduction and no second pass over xb stand between the input's
/// arrival and the first product. The input comes in pairs of values, pair
/// p thread p mod kThreads's, so that a warp's loads of a round read 32
/// consecutive pairs (one 16-byte pair of tagged values a lane: 512
/// contiguous bytes an instruction, where a vector a thread spread them over
/// 2 KB at a 64-byte stride; the 1B 2.5% faster at contexts 1 and 4,096,
/// docs/PERFORMANCE.md, step 18); an input without a norm (the down and
/// output projections') comes the same way, with a scale of 1. Ends with a
/// block barrier.
__device__ DeferredNorm loadScaledInput(const KernelArgs &a, const plan::TaskRecord &t,
                                        const Step &step, WeightStream &ws, uint32_t k,
                                        float *xb, const Scratch &s) {
  const uint64_t norm = t.norm;
  const bool hasNorm = norm != plan::kNone;
  // Without a norm every scale is 1 (a bf16 pair of 1.0): x * 1 is x.
  constexpr uint32_t kScaleOne = 0x3f803f80u;
  const F32In in = in0(a, t, step);
  const float eps = hasNorm ? a.params[t.param] : 0.0f;
  float squares = 0;
  // Pair p (values 2p, 2p + 1) is thread p mod kThreads's, kInputPairs of
  // them a round: each warp's loads of a round read 32 consecutive pairs.
  constexpr uint32_t kInputPairs = 4;
  uint32_t *words = reinterpret_cast<uint32_t *>(xb);
#pragma unroll 1
  for (uint32_t p0 = threadIdx.x; p0 < k / 2; p0 += kInputPairs * kThreads) {
    // The scales' loads first: their latency overlaps the input's.
    const uint32_t count = min(kInputPairs, (k / 2 - p0 + kThreads - 1) / kThreads);
    uint32_t scale[kInputPairs];
#pragma unroll
    for (uint32_t j = 0; j < kInputPairs; ++j)
      scale[j] = hasNorm && j < count
                     ? ws.loadWord(norm + uint64_t(p0 + j * kThreads) * 2 * kWeightBytes)
                     : kScaleOne;
    float2 x[kInputPairs];
    in.loadPairs<kInputPairs>(uint64_t(p0) * 2, uint64_t(kThreads) * 2, count, x);
#pragma unroll
    for (uint32_t j = 0; j < kInputPairs; ++j) {
      if (j >= count)
        continue;
      squares = fmaf(x[j].x, x[j].x, squares);
      squares = fmaf(x[j].y, x[j].y, squares);
      // The words above: pair q of a vector's 8 columns is word q (q < 2)
      // or q + 2 of its 8, bf16 hi; lo two words after.
      const uint32_t p = p0 + j * kThreads, q = p % 4;
      const float y0 = x[j].x * __uint_as_float(scale[j] << 16);
      const float y1 = x[j].y * __uint_as_float(scale[j] & 0xffff0000u);
      const uint32_t at = p / 4 * 8 + (q < 2 ? q : q + 2);
      splitBf16Pair(y0, y1, words[at], words[at + 2]);
    }
  }
  // The first half of blockReduce; factor() is the second.
  if (hasNorm) {
    squares = warpReduce(squares, SumOp{});
    if (laneId() == 0)
      s.warpSum[warpId()] = squares;
  }
  blockBarrier();
  ws.inputsReady();
  return DeferredNorm{hasNorm, eps, k};
}
#endif

/// dot(W row r, x') for kRows rows of K bf16 (byte offsets `rows[r]` in the
/// weights), by one warp, sharing the x' loads between the rows: lane l takes
/// the 16-byte vectors l, l + 32, ..., with kLoadsInFlight loads issued before
/// their first use (kLoadsInFlight / kRows per row) into separate sums; the
/// sums, then the lanes, are added in a fixed order. Every lane gets the
/// results.
template <uint32_t kRows>
__device__ __forceinline__ void warpDotRows(const WeightStream &ws, const uint64_t (&rows)[kRows],
                                            const float *xs, uint32_t vectors,
                                            float (&result)[kRows]) {
  static_assert(kRows >= 1 && kLoadsInFlight % kRows == 0, "whole loads per row");
  constexpr uint32_t kUnroll = kLoadsInFlight / kRows;
  constexpr uint32_t kStride = kWarpSize * kVector; // Elements between a lane's vectors.
  float acc[kRows][kUnroll] = {};
  WeightCursor w[kRows] = {};
#pragma unroll
  for (uint32_t r = 0; r < kRows; ++r)
    w[r] = ws.at(rows[r] + laneId() * kVectorBytes);
  const float *x = xs + laneId() * kVector;
  uint32_t v = laneId();
#pragma unroll 1
  for (; v + (kUnroll - 1) * kWarpSize < vectors; v += kUnroll * kWarpSize) {
    Bf16x8 loaded[kRows][kUnroll];
#pragma unroll
    for (uint32_t j = 0; j < kUnroll; ++j)
#pragma unroll
      for (uint32_t r = 0; r < kRows; ++r)
        loaded[r][j] = w[r].load(j * kStride * kWeightBytes);
#pragma unroll
    for (uint32_t j = 0; j < kUnroll; ++j) {
      float4 lo = *reinterpret_cast<const float4 *>(x + j * kStride);
      float4 hi = *reinterpret_cast<const float4 *>(x + j * kStride + 4);
#pragma unroll
      for (uint32_t r = 0; r < kRows; ++r)
        acc[r][j] = dot8(loaded[r][j], lo, hi, acc[r][j]);
    }
#pragma unroll
    for (uint32_t r = 0; r < kRows; ++r)
      w[r].advance(kUnroll * kStride * kWeightBytes);
    x += kUnroll * kStride;
  }
#pragma unroll 1
  for (; v < vectors; v += kWarpSize) {
    float4 lo = *reinterpret_cast<const float4 *>(x);
    float4 hi = *reinterpret_cast<const float4 *>(x + 4);
#pragma unroll
    for (uint32_t r = 0; r < kRows; ++r) {
      acc[r][0] = dot8(w[r].load(), lo, hi, acc[r][0]);
      w[r].advance(kStride * kWeightBytes);
    }
    x += kStride;
  }
#pragma unroll
  for (uint32_t r = 0; r < kRows; ++r) {
    float sum = acc[r][0];
#pragma unroll
    for (uint32_t j = 1; j < kUnroll; ++j)
      sum += acc[r][j];
    result[r] = warpReduce(sum, SumOp{});
  }
}

/// Rows [begin, end) of a row-major bf16 matrix of K = 8*vectors columns whose
/// row `begin` is at byte `weight`: warp w takes rows begin + w + 64m and
/// begin + w + 64m + 32 together (warpDotRows<2>; a missing second row repeats
/// the first, its result unused) and calls emit(row, value) on every lane.
template <typename Emit>
__device__ __forceinline__ void forEachRowDot(const WeightStream &ws, uint64_t weight,
                                              uint32_t begin, uint32_t end, uint32_t vectors,
                                              const float *xs, Emit emit) {
  const uint64_t rowBytes = uint64_t(vectors) * kVectorBytes;
  for (uint32_t i = begin + warpId(); i < end; i += 2 * kWarps) {
    const uint32_t i2 = i + kWarps < end ? i + kWarps : i;
    const uint64_t rows[2] = {weight + (i - begin) * rowBytes, weight + (i2 - begin) * rowBytes};
    float dots[2];
    warpDotRows<2>(ws, rows, xs, vectors, dots);
    emit(i, dots[0]);
    if (i2 != i)
      emit(i2, dots[1]);
  }
}

/// The MLP's activations of units [0, n) whose gate and up rows (K =
/// 8*vectors each) start at byte offsets `gate` and `up`: warp w takes units
/// w, w + kWarps, ..., both rows together (warpDotRows<2>), and lane 0 calls
/// emit(u, silu(gate[u].x') * (up[u].x')).
template <typename Emit>
__device__ __forceinline__ void forEachActivation(const WeightStream &ws, uint64_t gate,
                                                  uint64_t up, uint32_t n, uint32_t vectors,
                                                  const float *xs, Emit emit) {
  const uint64_t rowBytes = uint64_t(vectors) * kVectorBytes;
  for (uint32_t u = warpId(); u < n; u += kWarps) {
    const uint64_t rows[2] = {gate + u * rowBytes, up + u * rowBytes};
    float dots[2];
    warpDotRows<2>(ws, rows, xs, vectors, dots);
    if (laneId() == 0)
      emit(u, siluTimes(dots[0], dots[1]));
  }
}

#if TI_WORKER_STREAM
/// acc[e mod 4] += w[e] * x[e], e = 0..7 in order (x = lo, hi), if `used`;
/// else acc unchanged (the products are computed either way).
__device__ __forceinline__ void addVector(const Bf16x8 &w, const float4 &lo, const float4 &hi,
                                          bool used, float (&acc)[4]) {
  const float s0 = fmaf(w.at(4), hi.x, fmaf(w.at(0), lo.x, acc[0]));
  const float s1 = fmaf(w.at(5), hi.y, fmaf(w.at(1), lo.y, acc[1]));
  const float s2 = fmaf(w.at(6), hi.z, fmaf(w.at(2), lo.z, acc[2]));
  const float s3 = fmaf(w.at(7), hi.w, fmaf(w.at(3), lo.w, acc[3]));
  acc[0] = used ? s0 : acc[0];
  acc[1] = used ? s1 : acc[1];
  acc[2] = used ? s2 : acc[2];
  acc[3] = used ? s3 : acc[3];
}

/// One warp's slice of x' for one part of a segment's rows: lane l takes the
/// part's vectors l, l + 32, ... (vectors [first, first + count) of x'). The
/// first kSliceVectors of them stay in registers for every row the warp
/// takes, so a row costs the consumers its weights' shared-memory reads alone
/// (read from shared memory for every row, x' was four times those: two
/// 16-byte loads per weight vector, lanes 32 bytes apart); any further come
/// from xs (rows longer than the plan's parts allow).
class XSlice {
public:
  __device__ XSlice(const float *xs, uint32_t first, uint32_t count)
      : x_(xs + uint64_t(first) * kVector), count_(count) {
#pragma unroll
    for (uint32_t i = 0; i < kSliceVectors; ++i) {
      const uint32_t v = laneId() + i * kWarpSize;
      lo_[i] = v < count ? *reinterpret_cast<const float4 *>(x_ + v * kVector) : float4{};
      hi_[i] = v < count ? *reinterpret_cast<const float4 *>(x_ + v * kVector + 4) : float4{};
    }
  }

  /// dot(part, slice) for a part of `count` vectors in shared memory: lane l
  /// adds its vectors in order into four sums (element e of a vector into
  /// sum e mod 4: one dependent chain of FMAs a lane waited 4 cycles per
  /// element), then the sums as (s0 + s1) + (s2 + s3), then the lanes by the
  /// butterfly. Every lane gets the result. A batch's loads are issued
  /// together, each lane's past the part clamped to its last vector and its
  /// sums discarded: a load and its use in one branch each waited its
  /// latency.
  __device__ __forceinline__ float dot(const uint8_t *part) const {
    const SharedCursor w(part);
    // A part of exactly the slice's vectors (the 1B's and 8B's 4 KB rows and
    // parts): no clamps, nothing discarded, no tail.
    if (count_ == kSliceVectors * kWarpSize) {
      float acc[4] = {};
      Bf16x8 loaded[kSliceVectors];
#pragma unroll
      for (uint32_t i = 0; i < kSliceVectors; ++i)
        loaded[i] = w.load((laneId() + i * kWarpSize) * kVectorBytes);
#pragma unroll
      for (uint32_t i = 0; i < kSliceVectors; ++i)
        addVector(loaded[i], lo_[i], hi_[i], true, acc);
      return warpReduce((acc[0] + acc[1]) + (acc[2] + acc[3]), SumOp{});
    }
    const uint32_t last = count_ - 1;
    float acc[4] = {};
    Bf16x8 loaded[kSliceVectors];
#pragma unroll
    for (uint32_t i = 0; i < kSliceVectors; ++i)
      loaded[i] = w.load(min(laneId() + i * kWarpSize, last) * kVectorBytes);
#pragma unroll
    for (uint32_t i = 0; i < kSliceVectors; ++i)
      addVector(loaded[i], lo_[i], hi_[i], laneId() + i * kWarpSize < count_, acc);
    // The rest, kTailBatch vectors a lane at a time, x' from shared memory.
    constexpr uint32_t kTailBatch = 2;
#pragma unroll 1
    for (uint32_t v0 = kSliceVectors * kWarpSize; v0 < count_; v0 += kTailBatch * kWarpSize) {
      Bf16x8 tail[kTailBatch];
      float4 lo[kTailBatch], hi[kTailBatch];
#pragma unroll
      for (uint32_t i = 0; i < kTailBatch; ++i) {
        const uint32_t v = min(v0 + laneId() + i * kWarpSize, last);
        tail[i] = w.load(v * kVectorBytes);
        lo[i] = *reinterpret_cast<const float4 *>(x_ + v * kVector);
        hi[i] = *reinterpret_cast<const float4 *>(x_ + v * kVector + 4);
      }
#pragma unroll
      for (uint32_t i = 0; i < kTailBatch; ++i)
        addVector(tail[i], lo[i], hi[i], v0 + laneId() + i * kWarpSize < count_, acc);
    }
    return warpReduce((acc[0] + acc[1]) + (acc[2] + acc[3]), SumOp{});
  }

private:
  float4 lo_[kSliceVectors], hi_[kSliceVectors];
  const float *x_;
  uint32_t count_;
};

/// The rows of a streamed segment, through the ring, dot x'; emit(i, value)
/// on every lane of warp i mod kWarps. A row is P equal parts
/// (plan::rowParts: P divides kWarps); part p of row i is item i*P + p, warp
/// (i*P + p) mod kWarps's, so a warp always takes the same part p = warpId()
/// mod P and keeps that part's slice of x' in registers (XSlice).
///  - P = 1: row i is warp i mod kWarps's, so consecutive stages keep
///    different warps busy, and the warp emits as it goes.
///  - P > 1: lane 0 leaves the item's dot product in partials[i*P + p]
///    (shared memory, rows x P floats: WorkerLayout.h, rowPartialsAt). After
///    the last stage and a block barrier, warp i mod kWarps adds row i's
///    parts in part order and emits; a second block barrier frees partials
///    for the next segment.
template <typename Emit>
__device__ __forceinline__ void forEachStreamedRowDot(WeightStream &ws,
                                                      const plan::StreamSegment &seg,
                                                      const float *xs, float *partials,
                                                      Emit emit) {
  const uint32_t parts = plan::rowParts(seg.rowBytes, ws.rowPartBytes());
  const uint32_t partVectors = seg.rowBytes / kVectorBytes / parts;
  const uint32_t part = warpId() % parts;
  const uint32_t partShift = __ffs(parts) - 1; // parts is a power of two.
  const XSlice x(xs, part * partVectors, partVectors);
  const uint32_t partOffset = part * partVectors * kVectorBytes;
  ws.consume(seg, [&](uint32_t first, uint32_t rows, const uint8_t *data) {
    const uint32_t item0 = first * parts; // The stage's first item.
#pragma unroll 1
    for (uint32_t q = (warpId() + kWarps - item0 % kWarps) % kWarps; q < rows * parts;
         q += kWarps) {
      const uint32_t j = q >> partShift;
      const float dot = x.dot(data + j * seg.rowBytes + partOffset);
      if (parts == 1)
        emit(first + j, dot);
      else if (laneId() == 0)
        partials[item0 + q] = dot;
    }
  });
  if (parts == 1)
    return;
  blockBarrier();
#pragma unroll 1
  for (uint32_t i = warpId(); i < seg.rows; i += kWarps) {
    float sum = partials[i * parts];
    for (uint32_t p = 1; p < parts; ++p)
      sum += partials[i * parts + p];
    emit(i, sum);
  }
  blockBarrier();
}
#endif

/// Rows [rowBegin, rowEnd) of a Gemv's or LmHead's matrix (K = 8*vectors), dot
/// x': emit(row, value) on every lane of warp (row - rowBegin) mod kWarps, in
/// both workers (Gemv's residual, loaded early by that warp, relies on it).
/// The Plain
/// worker loads them itself (forEachRowDot), the Stream worker takes them from
/// the ring (forEachStreamedRowDot; its row partials in s, past the op's
/// regions).
template <typename Emit>
__device__ __forceinline__ void forEachTaskRowDot(WeightStream &ws, const plan::TaskRecord &t,
                                                  uint32_t vectors, const float *xs,
                                                  const Scratch &s, Emit emit) {
#if TI_WORKER_STREAM
  (void)vectors;
  const uint32_t begin = t.rowBegin; // Read once: the ring's waits are memory clobbers.
  forEachStreamedRowDot(ws, plan::streamSegment(t, 0), xs,
                        s.floats + rowPartialsAt(t),
                        [&](uint32_t row, float v) { emit(begin + row, v); });
#else
  (void)s;
  forEachRowDot(ws, t.weight, t.rowBegin, t.rowEnd, vectors, xs, emit);
#endif
}

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_COMMON_CUH
