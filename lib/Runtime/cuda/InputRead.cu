//===- InputRead.cu - What reading a task's input costs -------------------===//
//
// The cost of a stream worker task's first act, reading its input vector
// from L2 (CudaInputRead.h says why it matters), measured in the worker's
// way and two others:
//
// 1. The vector: K values as tagged 8-byte words (the value's bits, the tag
//    above them), read as the worker reads them: 16-byte relaxed loads at
//    device scope, pair p (values 2p, 2p + 1) by thread p mod 256 of a
//    256-thread block, a round's loads all issued before any tag is looked
//    at and every late pair reloaded until its tag is the expected one (here
//    it always is at once). Every value is added into a fold that is stored
//    only if it equals an impossible key, so that no load is dead.
// 2. The ways: rounds of 4 pairs a thread, each waited for before the next
//    is issued (ops/Common.cuh: loadScaledInput); the same with the next
//    round's loads issued before this round is waited for (two rounds in
//    flight); 16 pairs a thread in flight; and the worker's way again with
//    one SM reading while the others only wait, which is the read without L2
//    serving the same lines to every SM at once.
// 3. The timing: one 256-thread block per SM, launched cooperatively; before
//    each read every block meets at a grid barrier (a counter in global
//    memory), so that the SMs read together as a wave's workers do; each
//    reading block's thread 0 takes %globaltimer after a block barrier
//    before the loads and after one behind them. options.repetitions reads
//    of each vector and way in one launch; the result is the median over
//    every reading SM and repetition.
//
// Every CUDA failure is a one-line Status; everything is released on every
// path.
//
//===----------------------------------------------------------------------===//
#include "ti/Runtime/CudaInputRead.h"

#include "CudaCheck.h"
#include "RelaxedAccess.cuh"
#include "ti/Bench/Statistics.h"

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <string>

using namespace ti;

namespace {

constexpr uint32_t kThreads = 256;
/// The worker's pairs a thread a round (loadScaledInput's kInputPairs).
constexpr uint32_t kRoundPairs = 4;
/// Pairs a thread in flight in the batched way.
constexpr uint32_t kBatchPairs = 16;

enum Way : int { kRounds, kPipelined, kBatched, kAlone, kWays };

__device__ __forceinline__ unsigned long long globalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ bool tagged(ulonglong2 v, uint32_t tag) {
  return uint32_t(v.x >> 32) == tag && uint32_t(v.y >> 32) == tag;
}

/// Issues the loads of this thread's pairs first .. first + count - 1 (of
/// its own, counted in rounds of the block).
template <uint32_t B>
__device__ __forceinline__ void issue(const uint64_t *vec, uint32_t first, uint32_t count,
                                      ulonglong2 (&v)[B]) {
#pragma unroll
  for (uint32_t j = 0; j < B; ++j)
    if (j < count)
      v[j] = ti::cuda::loadRelaxedPair(vec + 2 * (threadIdx.x + (first + j) * kThreads));
}

/// Waits until every issued pair carries `tag` (late ones reloaded each
/// round), then adds their values.
template <uint32_t B>
__device__ __forceinline__ float finish(const uint64_t *vec, uint32_t first, uint32_t count,
                                        uint32_t tag, ulonglong2 (&v)[B]) {
  for (;;) {
    bool ready = true;
#pragma unroll
    for (uint32_t j = 0; j < B; ++j)
      ready = ready && (j >= count || tagged(v[j], tag));
    if (ready)
      break;
#pragma unroll
    for (uint32_t j = 0; j < B; ++j)
      if (j < count && !tagged(v[j], tag))
        v[j] = ti::cuda::loadRelaxedPair(vec + 2 * (threadIdx.x + (first + j) * kThreads));
  }
  float sum = 0;
#pragma unroll
  for (uint32_t j = 0; j < B; ++j)
    if (j < count)
      sum += __uint_as_float(uint32_t(v[j].x)) + __uint_as_float(uint32_t(v[j].y));
  return sum;
}

/// This thread's `pairs` pairs read B at a time, each batch waited for
/// before the next is issued; the sum of their values.
template <uint32_t B>
__device__ float readInBatches(const uint64_t *vec, uint32_t pairs, uint32_t tag) {
  float sum = 0;
#pragma unroll 1
  for (uint32_t r = 0; r < pairs; r += B) {
    ulonglong2 v[B];
    const uint32_t count = min(B, pairs - r);
    issue(vec, r, count, v);
    sum += finish(vec, r, count, tag, v);
  }
  return sum;
}

/// This thread's `pairs` pairs read in `way`; the sum of their values.
__device__ float readVector(const uint64_t *vec, uint32_t pairs, int way, uint32_t tag) {
  if (way == kBatched)
    return readInBatches<kBatchPairs>(vec, pairs, tag);
  if (way != kPipelined) // kRounds, kAlone: the worker's way.
    return readInBatches<kRoundPairs>(vec, pairs, tag);
  float sum = 0;
  ulonglong2 cur[kRoundPairs] = {}, next[kRoundPairs] = {};
  issue(vec, 0, min(kRoundPairs, pairs), cur);
#pragma unroll 1
  for (uint32_t r = 0; r < pairs; r += kRoundPairs) {
    const uint32_t after = r + kRoundPairs;
    if (after < pairs)
      issue(vec, after, min(kRoundPairs, pairs - after), next);
    sum += finish(vec, r, min(kRoundPairs, pairs - r), tag, cur);
#pragma unroll
    for (uint32_t j = 0; j < kRoundPairs; ++j)
      cur[j] = next[j];
  }
  return sum;
}

/// Every block of the grid, the `round`th time (1-based): a monotonic
/// counter, zeroed before the launch.
__device__ void gridBarrier(unsigned *arrivals, unsigned round) {
  __syncthreads();
  if (threadIdx.x == 0) {
    ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_device> counter(*arrivals);
    counter.fetch_add(1, ::cuda::memory_order_release);
    while (counter.load(::cuda::memory_order_acquire) < round * gridDim.x) {
    }
  }
  __syncthreads();
}

__global__ void __launch_bounds__(kThreads, 1)
    inputReadKernel(const uint64_t *vec, uint32_t pairsPerThread, int way, int repetitions,
                    uint32_t tag, unsigned *arrivals, unsigned long long *durations,
                    float key, float *sink) {
  const bool reads = way != kAlone || blockIdx.x == 0;
  float fold = 0;
  for (int rep = 0; rep < repetitions; ++rep) {
    gridBarrier(arrivals, unsigned(rep) + 1);
    if (!reads)
      continue;
    const unsigned long long start = globalTimer();
    fold += readVector(vec, pairsPerThread, way, tag);
    __syncthreads();
    if (threadIdx.x == 0)
      durations[size_t(rep) * gridDim.x + blockIdx.x] = globalTimer() - start;
  }
  if (fold == key)
    *sink = fold;
}

/// Everything the measurement allocates, released on every path.
struct Resources {
  uint64_t *vec = nullptr;
  unsigned *arrivals = nullptr;
  unsigned long long *durations = nullptr;
  float *sink = nullptr;
  ~Resources() {
    cudaFree(vec);
    cudaFree(arrivals);
    cudaFree(durations);
    cudaFree(sink);
  }
};

} // namespace

StatusOr<std::vector<InputReadResult>> ti::measureInputRead(int device,
                                                            const InputReadOptions &options) {
  if (options.repetitions < 1 || options.lengths.empty())
    return Status::error("input read: at least one length and one repetition");
  uint32_t longest = 0;
  for (uint32_t k : options.lengths) {
    if (k == 0 || k % (2 * kThreads) != 0)
      return Status::error("input read: a length of " + std::to_string(k) +
                           " values is not a positive multiple of " +
                           std::to_string(2 * kThreads));
    longest = std::max(longest, k);
  }
  if (Status s = cuda::selectDevice(device); !s.ok())
    return s;
  cudaDeviceProp prop;
  TI_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  if (!prop.cooperativeLaunch)
    return Status::error("input read: GPU " + std::to_string(device) +
                         " cannot launch cooperatively (every block at once)");
  int blocksPerSm = 0;
  TI_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocksPerSm, inputReadKernel, kThreads, 0));
  if (blocksPerSm < 1)
    return Status::error("input read: an SM cannot run one " + std::to_string(kThreads) +
                         "-thread block");
  const int sms = prop.multiProcessorCount;

  // The longest vector, every value tagged; shorter ones read its start.
  const uint32_t tag = 0x5eedu;
  std::vector<uint64_t> host(longest);
  for (size_t i = 0; i < host.size(); ++i) {
    const float value = float(i % 7) * 0.5f;
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    host[i] = (uint64_t(tag) << 32) | bits;
  }
  Resources res;
  const size_t durationCount = size_t(options.repetitions) * sms;
  TI_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&res.vec), host.size() * sizeof(uint64_t)));
  TI_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&res.arrivals), sizeof(unsigned)));
  TI_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&res.durations),
                           durationCount * sizeof(unsigned long long)));
  TI_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&res.sink), sizeof(float)));
  TI_CUDA_CHECK(cudaMemcpy(res.vec, host.data(), host.size() * sizeof(uint64_t),
                           cudaMemcpyHostToDevice));

  std::vector<InputReadResult> results;
  for (uint32_t k : options.lengths) {
    InputReadResult r;
    r.length = k;
    double *ways[kWays] = {&r.roundsNs, &r.pipelinedNs, &r.batchedNs, &r.aloneNs};
    for (int way = kRounds; way < kWays; ++way) {
      TI_CUDA_CHECK(cudaMemset(res.arrivals, 0, sizeof(unsigned)));
      TI_CUDA_CHECK(cudaMemset(res.durations, 0, durationCount * sizeof(unsigned long long)));
      uint32_t pairsPerThread = k / 2 / kThreads;
      int w = way, reps = options.repetitions;
      uint32_t t = tag;
      float key = -1.0f; // The values are never negative: their sum is not -1.
      void *args[] = {&res.vec, &pairsPerThread, &w, &reps, &t, &res.arrivals, &res.durations,
                      &key, &res.sink};
      TI_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void *>(inputReadKernel),
                                                dim3(sms), dim3(kThreads), args, 0, nullptr));
      TI_CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<unsigned long long> back(durationCount);
      TI_CUDA_CHECK(cudaMemcpy(back.data(), res.durations,
                               durationCount * sizeof(unsigned long long),
                               cudaMemcpyDeviceToHost));
      std::vector<double> ns;
      const int readers = way == kAlone ? 1 : sms;
      for (int rep = 0; rep < options.repetitions; ++rep)
        for (int b = 0; b < readers; ++b)
          ns.push_back(double(back[size_t(rep) * sms + b]));
      *ways[way] = bench::median(ns);
      if (*ways[way] <= 0)
        return Status::error("input read: a read took no measurable time");
    }
    results.push_back(r);
  }
  return results;
}
