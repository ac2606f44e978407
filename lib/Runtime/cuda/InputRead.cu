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
//    flight); 16 pairs a thread in flight; the worker's way again with one
//    SM reading while the others only wait, which is the read without L2
//    serving the same lines to every SM at once; and, on sm_90 and later,
//    four ways behind bulk copies in flight from memory into the block's
//    shared memory (CopyLoad.cuh), as the stream worker's producer keeps
//    them while its consumers read: every SM reading and copying, in rounds
//    and with 16 pairs in flight; one SM reading while every other SM
//    copies; and one SM reading while it alone copies. The last two say
//    whose copies a read waits behind: its own SM's, whose bytes land
//    through the same port, or everyone's, queued in L2 before memory.
// 3. The timing: one block per SM, 256 reading threads and a warp whose
//    first lane copies in the copying way, launched cooperatively; before
//    each read every block's readers meet at a grid barrier (a counter in
//    global memory), so that the SMs read together as a wave's workers do;
//    each reading block's thread 0 takes %globaltimer after a barrier of the
//    readers before the loads and after one behind them. options.repetitions
//    reads of each vector and way in one launch; the result is the median
//    over every reading SM and repetition. After the last read the readers
//    meet once more and block 0 raises the stop word that ends the copies.
//
// Every CUDA failure is a one-line Status; everything is released on every
// path.
//
//===----------------------------------------------------------------------===//
#include "ti/Runtime/CudaInputRead.h"

#include "CopyLoad.cuh"
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

/// The reading threads of a block, and the block: a warp more, whose first
/// lane copies in the copying way.
constexpr uint32_t kThreads = 256;
constexpr uint32_t kBlockThreads = kThreads + 32;
/// The worker's pairs a thread a round (loadScaledInput's kInputPairs).
constexpr uint32_t kRoundPairs = 4;
/// Pairs a thread in flight in the batched way.
constexpr uint32_t kBatchPairs = 16;

enum Way : int {
  kRounds,
  kPipelined,
  kBatched,
  kAlone,
  kCopying,        // Every SM reads in rounds and copies.
  kCopyingBatched, // Every SM reads 16 pairs at a time and copies.
  kOthersCopying,  // SM 0 reads in rounds; every other SM copies.
  kOwnCopying,     // SM 0 reads in rounds and copies; the others wait.
  kWays
};

/// Whether `way` keeps bulk copies in flight at all, and on block b.
__host__ __device__ constexpr bool copiesIn(int way) { return way >= kCopying; }
__device__ __forceinline__ bool copiesOn(int way, uint32_t b) {
  return way == kOthersCopying ? b != 0 : way == kOwnCopying ? b == 0 : copiesIn(way);
}
/// Whether only block 0 reads in `way`.
__host__ __device__ constexpr bool readsAlone(int way) {
  return way == kAlone || way == kOthersCopying || way == kOwnCopying;
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
  if (way == kBatched || way == kCopyingBatched)
    return readInBatches<kBatchPairs>(vec, pairs, tag);
  if (way != kPipelined) // The others: the worker's way.
    return readInBatches<kRoundPairs>(vec, pairs, tag);
  // Two buffers taking turns, so that no register copy waits for a round's
  // loads: round r + 1 is issued before round r is waited for.
  float sum = 0;
  ulonglong2 a[kRoundPairs], b[kRoundPairs];
  auto count = [&](uint32_t r) { return min(kRoundPairs, pairs - r); };
  issue(vec, 0, count(0), a);
#pragma unroll 1
  for (uint32_t r = 0; r < pairs; r += 2 * kRoundPairs) {
    const uint32_t second = r + kRoundPairs, third = r + 2 * kRoundPairs;
    if (second < pairs)
      issue(vec, second, count(second), b);
    sum += finish(vec, r, count(r), tag, a);
    if (second >= pairs)
      break;
    if (third < pairs)
      issue(vec, third, count(third), a);
    sum += finish(vec, second, count(second), tag, b);
  }
  return sum;
}

/// The reading threads of the block (the copying warp never joins).
__device__ __forceinline__ void readersBarrier() {
  asm volatile("bar.sync 1, %0;" ::"n"(kThreads) : "memory");
}

/// Every block's readers, the `round`th time (1-based): a monotonic
/// counter, zeroed before the launch.
__device__ void gridBarrier(unsigned *arrivals, unsigned round) {
  readersBarrier();
  if (threadIdx.x == 0) {
    ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_device> counter(*arrivals);
    counter.fetch_add(1, ::cuda::memory_order_release);
    // A pause between looks: the one-SM-alone way's other SMs wait here
    // while it reads, and their polls should not load L2.
    while (counter.load(::cuda::memory_order_acquire) < round * gridDim.x)
      __nanosleep(64);
  }
  readersBarrier();
}

/// The words the blocks share, each in a line of its own.
struct Words {
  alignas(128) unsigned arrivals;
  alignas(128) uint64_t stop; // Raised once every block has read.
  alignas(128) unsigned long long copyStartNs; // The copying way's (all ones first).
  alignas(128) unsigned long long copied;
  alignas(128) unsigned long long copyEndNs;
};

/// The copying way's load (CopyLoad.cuh).
struct CopyArgs {
  const void *data;
  uint64_t bytes;
  uint32_t stageBytes;
  int stages;
};

__global__ void __launch_bounds__(kBlockThreads, 1)
    inputReadKernel(const uint64_t *vec, uint32_t pairsPerThread, int way, int repetitions,
                    uint32_t tag, Words *words, unsigned long long *durations, CopyArgs copy,
                    float key, float *sink) {
  if (threadIdx.x >= kThreads) { // The copying warp.
    if (copiesOn(way, blockIdx.x) && threadIdx.x == kThreads)
      ti::cuda::copyUntilStopped(copy.data, copy.bytes, copy.stageBytes, copy.stages,
                                 &words->stop, &words->copyStartNs, &words->copied,
                                 &words->copyEndNs);
    return;
  }
  const bool reads = !readsAlone(way) || blockIdx.x == 0;
  float fold = 0;
  for (int rep = 0; rep < repetitions; ++rep) {
    gridBarrier(&words->arrivals, unsigned(rep) + 1);
    if (!reads)
      continue;
    const unsigned long long start = ti::cuda::globalTimer();
    fold += readVector(vec, pairsPerThread, way, tag);
    readersBarrier();
    if (threadIdx.x == 0)
      durations[size_t(rep) * gridDim.x + blockIdx.x] = ti::cuda::globalTimer() - start;
  }
  // Every block has read: the copies may stop.
  gridBarrier(&words->arrivals, unsigned(repetitions) + 1);
  if (blockIdx.x == 0 && threadIdx.x == 0)
    ti::cuda::storeRelaxed(&words->stop, 1);
  if (fold == key)
    *sink = fold;
}

/// Everything the measurement allocates, released on every path.
struct Resources {
  uint64_t *vec = nullptr;
  Words *words = nullptr;
  unsigned long long *durations = nullptr;
  float *sink = nullptr;
  void *copyData = nullptr;
  ~Resources() {
    cudaFree(vec);
    cudaFree(words);
    cudaFree(durations);
    cudaFree(sink);
    cudaFree(copyData);
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
  if (Status s = cuda::checkCopyRing(options.copyStages, options.copyStageBytes, "input read");
      !s.ok())
    return s;
  if (options.copyBytes < (64ull << 20))
    return Status::error("input read: the copied buffer must be at least 64 MiB");
  if (Status s = cuda::selectDevice(device); !s.ok())
    return s;
  cudaDeviceProp prop;
  TI_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  if (!prop.cooperativeLaunch)
    return Status::error("input read: GPU " + std::to_string(device) +
                         " cannot launch cooperatively (every block at once)");
  // The copying way needs the bulk-copy engine (sm_90 on) and room for the ring.
  const size_t ringBytes = size_t(options.copyStages) * options.copyStageBytes;
  auto ring = cuda::allowCopyRing(inputReadKernel, prop, device, ringBytes, "input read");
  if (!ring)
    return ring.status();
  const bool copies = *ring;
  int blocksPerSm = 0;
  TI_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocksPerSm, inputReadKernel, kBlockThreads, copies ? ringBytes : 0));
  if (blocksPerSm < 1)
    return Status::error("input read: an SM cannot run one " + std::to_string(kBlockThreads) +
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
  TI_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&res.words), sizeof(Words)));
  TI_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&res.durations),
                           durationCount * sizeof(unsigned long long)));
  TI_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&res.sink), sizeof(float)));
  TI_CUDA_CHECK(cudaMemcpy(res.vec, host.data(), host.size() * sizeof(uint64_t),
                           cudaMemcpyHostToDevice));
  CopyArgs copy{nullptr, options.copyBytes / 16 * 16, options.copyStageBytes,
                options.copyStages};
  if (copies) {
    if (Status s = cuda::allocateOnDevice(&res.copyData, copy.bytes, device, "input read");
        !s.ok())
      return s;
    TI_CUDA_CHECK(cudaMemset(res.copyData, 0x5a, copy.bytes)); // Every page committed.
    copy.data = res.copyData;
  }

  std::vector<InputReadResult> results;
  for (uint32_t k : options.lengths) {
    InputReadResult r;
    r.length = k;
    // Where each way's time goes, and a copying way's bandwidth.
    struct Fields {
      double *ns, *gbs;
    };
    const Fields ways[kWays] = {{&r.roundsNs, nullptr},
                                {&r.pipelinedNs, nullptr},
                                {&r.batchedNs, nullptr},
                                {&r.aloneNs, nullptr},
                                {&r.copyingNs, &r.copyingGBs},
                                {&r.copyingBatchedNs, &r.copyingBatchedGBs},
                                {&r.othersCopyingNs, &r.othersCopyingGBs},
                                {&r.ownCopyingNs, &r.ownCopyingGBs}};
    for (int way = kRounds; way < kWays; ++way) {
      if (copiesIn(way) && !copies)
        continue;
      TI_CUDA_CHECK(cudaMemset(res.words, 0, sizeof(Words)));
      TI_CUDA_CHECK(cudaMemset(&res.words->copyStartNs, 0xff, sizeof(res.words->copyStartNs)));
      TI_CUDA_CHECK(cudaMemset(res.durations, 0, durationCount * sizeof(unsigned long long)));
      uint32_t pairsPerThread = k / 2 / kThreads;
      int w = way, reps = options.repetitions;
      uint32_t t = tag;
      float key = -1.0f; // The values are never negative: their sum is not -1.
      void *args[] = {&res.vec, &pairsPerThread, &w,   &reps,    &t,
                      &res.words, &res.durations, &copy, &key, &res.sink};
      TI_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void *>(inputReadKernel),
                                                dim3(sms), dim3(kBlockThreads), args,
                                                copiesIn(way) ? ringBytes : 0, nullptr));
      TI_CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<unsigned long long> back(durationCount);
      TI_CUDA_CHECK(cudaMemcpy(back.data(), res.durations,
                               durationCount * sizeof(unsigned long long),
                               cudaMemcpyDeviceToHost));
      std::vector<double> ns;
      const int readers = readsAlone(way) ? 1 : sms;
      for (int rep = 0; rep < options.repetitions; ++rep)
        for (int b = 0; b < readers; ++b)
          ns.push_back(double(back[size_t(rep) * sms + b]));
      *ways[way].ns = bench::median(ns);
      if (*ways[way].ns <= 0)
        return Status::error("input read: a read took no measurable time");
      if (copiesIn(way)) { // The copies' bytes over their time, GB/s.
        Words back;
        TI_CUDA_CHECK(cudaMemcpy(&back, res.words, sizeof(Words), cudaMemcpyDeviceToHost));
        if (back.copyEndNs <= back.copyStartNs)
          return Status::error("input read: the copies took no measurable time");
        *ways[way].gbs = double(back.copied) / double(back.copyEndNs - back.copyStartNs);
      }
    }
    r.copiesMeasured = copies;
    results.push_back(r);
  }
  return results;
}
