//===- HandOff.cu - What one hand-off through L2 costs ---------------------===//
//
// The floor under every tagged hand-off of the stream worker, measured the
// way the worker hands off (CudaHandOff.h says why it matters):
//
// 1. The pair: thread 0 of block 0 (the pinger) and thread 0 of block P (the
//    ponger), one 256-thread block per SM, the grid the SM count, launched
//    cooperatively so that every block runs at once (a ponger that never
//    started would hang the pinger). The pinger stores r to one 8-byte slot
//    (st.relaxed.gpu, as the worker's tagged stores) and polls another
//    (ld.relaxed.gpu, as its readers) until the ponger has stored r back;
//    the ponger polls the first slot until it reads r. Each slot has an L2
//    line of its own. options.warmupRounds untimed round trips, then
//    options.rounds timed by the pinger's %globaltimer: one hand-off is the
//    time over twice the rounds.
// 2. The load: none (the other blocks return at once); the other SMs
//    streaming a buffer of options.streamBytes (far more than L2) with
//    16-byte loads, 16 in flight a thread (64 KiB an SM, which saturates
//    HBM: Bandwidth.cu), as the worker's producers keep copying during a
//    hand-off; and the same with the two SMs' own other warps streaming too,
//    as a worker's own copies sit in front of its stores and polls. On GPUs
//    with the bulk-copy engine (sm_90 on), the same two loads again made the
//    way the Stream worker's producer streams: one thread an SM (thread 32,
//    beside the pair's thread 0) keeps options.bulkStages bulk copies of
//    options.bulkStageBytes in flight into a ring in shared memory
//    (CopyLoad.cuh); whether a bulk copy in flight delays the SM's own
//    relaxed store or poll is what the last load tells. The streaming
//    threads poll a stop slot (one lane a warp every 64 rounds of loads, the
//    copying thread every 64 rounds of copies) that the pinger raises when
//    it is done; their start times go to a minimum, the bytes they read to
//    a counter and their stop times to a maximum: the bytes over the time
//    from the first start to the last stop are the load's bandwidth,
//    reported beside the latency it came with.
// 3. Pairs: block 0 with blocks 1, n/4, n/2, 3n/4 and n - 1, since the
//    distance between two SMs through the crossbar and L2's partitions is
//    not the same for every pair; options.repetitions launches of each pair
//    and load, their median, then the median over the pairs.
//
// Every CUDA failure is a one-line Status; everything is released on every
// path.
//
//===----------------------------------------------------------------------===//
#include "ti/Runtime/CudaHandOff.h"

#include "CudaCheck.h"
#include "CopyLoad.cuh"
#include "RelaxedAccess.cuh"
#include "ti/Bench/Statistics.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace ti;

namespace {

constexpr int kThreads = 256;
/// Independent 16-byte loads a streaming thread has in flight: 64 KiB an SM.
constexpr int kStreamLoads = 16;
/// Rounds of loads between two looks at the stop slot.
constexpr int kRoundsBetweenPolls = 64;
/// The thread of a block that bulk-copies (warp 1's first lane: thread 0 of
/// the pair's blocks is the pinger or the ponger).
constexpr unsigned kCopyingThread = 32;

enum Load : int { kIdle, kOthersStream, kAllStream, kOthersBulk, kAllBulk, kLoads };

__host__ __device__ constexpr bool isBulk(int load) { return load == kOthersBulk || load == kAllBulk; }

/// The slots, each in a 256-byte line of its own.
struct Slots {
  uint64_t ping[32], pong[32], stop[32]; // Relaxed accesses only.
  unsigned long long elapsedNs[32];
  unsigned long long streamStartNs[32]; // The first streaming thread's start (all ones first).
  unsigned long long streamedBytes[32];
  unsigned long long streamEndNs[32]; // When the last streaming thread stopped.
};

/// Reads the buffer round and round until the stop slot is raised; the fold
/// is stored only if it equals `key`, so that no load is dead code.
__device__ void streamUntilStopped(const uint4 *__restrict__ data, uint64_t vectors,
                                   const uint64_t *stop, unsigned long long *streamStart,
                                   unsigned long long *streamed, unsigned long long *streamEnd,
                                   uint32_t key, uint32_t *sink) {
  if (threadIdx.x % 32 == 0)
    atomicMin(streamStart, cuda::globalTimer());
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  uint32_t fold = 0;
  unsigned long long rounds = 0;
  for (;; rounds += kRoundsBetweenPolls) {
#pragma unroll 1
    for (int round = 0; round < kRoundsBetweenPolls; ++round) {
      uint4 v[kStreamLoads];
#pragma unroll
      for (int k = 0; k < kStreamLoads; ++k) {
        uint64_t j = i + k * stride;
        if (j >= vectors)
          j -= vectors;
        v[k] = __ldg(data + j);
      }
#pragma unroll
      for (int k = 0; k < kStreamLoads; ++k)
        fold ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
      i += kStreamLoads * stride;
      if (i >= vectors)
        i -= vectors;
    }
    const unsigned long long stopped = threadIdx.x % 32 == 0 ? cuda::loadRelaxed(stop) : 0;
    if (__shfl_sync(0xffffffffu, stopped, 0))
      break;
  }
  if (threadIdx.x % 32 == 0) { // The warp's bytes and end: what the load was.
    atomicAdd(streamed, (rounds + kRoundsBetweenPolls) * 32 * kStreamLoads * sizeof(uint4));
    atomicMax(streamEnd, cuda::globalTimer());
  }
  if (fold == key)
    *sink = fold;
}

__global__ void __launch_bounds__(kThreads, 1)
    handOffKernel(Slots *slots, int partner, int warmup, int rounds, int load,
                  const uint4 *__restrict__ data, uint64_t vectors, uint32_t stageBytes,
                  int stages, uint32_t key, uint32_t *sink) {
  const bool pinger = blockIdx.x == 0, ponger = blockIdx.x == unsigned(partner);
  if (pinger || ponger) {
    if (threadIdx.x == 0) {
      const int total = warmup + rounds;
      if (pinger) {
        unsigned long long start = cuda::globalTimer();
        for (int r = 1; r <= total; ++r) {
          if (r == warmup + 1)
            start = cuda::globalTimer();
          cuda::storeRelaxed(slots->ping, r);
          while (cuda::loadRelaxed(slots->pong) != static_cast<uint64_t>(r)) {
          }
        }
        const unsigned long long end = cuda::globalTimer();
        slots->elapsedNs[0] = end - start;
        cuda::storeRelaxed(slots->stop, 1);
      } else {
        for (int r = 1; r <= total; ++r) {
          while (cuda::loadRelaxed(slots->ping) != static_cast<uint64_t>(r)) {
          }
          cuda::storeRelaxed(slots->pong, r);
        }
      }
      return;
    }
    if (load != kAllStream && load != kAllBulk)
      return;
  } else if (load == kIdle) {
    return;
  }
  if (isBulk(load)) {
    if (threadIdx.x == kCopyingThread)
      cuda::copyUntilStopped(data, vectors * sizeof(uint4), stageBytes, stages, slots->stop,
                             slots->streamStartNs, slots->streamedBytes, slots->streamEndNs);
  } else if (threadIdx.x >= 32 || !(pinger || ponger)) { // Warp 0 is the pair's alone.
    streamUntilStopped(data, vectors, slots->stop, slots->streamStartNs, slots->streamedBytes,
                       slots->streamEndNs, key, sink);
  }
}

/// Everything the measurement allocates, released on every path.
struct Resources {
  uint4 *data = nullptr;
  Slots *slots = nullptr;
  uint32_t *sink = nullptr;
  cudaStream_t stream = nullptr;

  ~Resources() {
    if (stream)
      cudaStreamDestroy(stream);
    cudaFree(data);
    cudaFree(slots);
    cudaFree(sink);
  }
};

} // namespace

StatusOr<HandOffResult> ti::measureHandOff(int device, const HandOffOptions &options) {
  if (options.rounds < 1 || options.warmupRounds < 0 || options.repetitions < 1)
    return Status::error("hand-off: at least one timed round and repetition, no negative warm-up");
  if (options.streamBytes < (64ull << 20))
    return Status::error("hand-off: the streamed buffer must be at least 64 MiB");
  if (Status s = cuda::checkCopyRing(options.bulkStages, options.bulkStageBytes, "hand-off");
      !s.ok())
    return s;
  if (Status s = cuda::selectDevice(device); !s.ok())
    return s;
  cudaDeviceProp prop;
  TI_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  if (!prop.cooperativeLaunch)
    return Status::error("hand-off: GPU " + std::to_string(device) +
                         " cannot launch cooperatively (every block at once)");
  const int sms = prop.multiProcessorCount;
  // The bulk-copy loads need the engine (sm_90 on) and room for the ring.
  const size_t ringBytes = size_t(options.bulkStages) * options.bulkStageBytes;
  auto ring = cuda::allowCopyRing(handOffKernel, prop, device, ringBytes, "hand-off");
  if (!ring)
    return ring.status();
  const bool bulk = *ring;
  int blocksPerSm = 0;
  TI_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocksPerSm, handOffKernel, kThreads,
                                                              bulk ? ringBytes : 0));
  if (blocksPerSm < 1 || sms < 2)
    return Status::error("hand-off: needs two SMs that each run a " + std::to_string(kThreads) +
                         "-thread block");

  Resources res;
  const uint64_t bytes = options.streamBytes / sizeof(uint4) * sizeof(uint4);
  uint64_t vectors = bytes / sizeof(uint4);
  if (Status s = cuda::allocateOnDevice(reinterpret_cast<void **>(&res.data), bytes, device,
                                        "hand-off");
      !s.ok())
    return s;
  TI_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&res.slots), sizeof(Slots)));
  TI_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&res.sink), sizeof(uint32_t)));
  TI_CUDA_CHECK(cudaStreamCreateWithFlags(&res.stream, cudaStreamNonBlocking));
  // Every page committed, and not zeros.
  TI_CUDA_CHECK(cudaMemsetAsync(res.data, 0x5a, bytes, res.stream));

  std::vector<int> partners;
  for (int p : {1, sms / 4, sms / 2, 3 * sms / 4, sms - 1})
    if (p > 0 && p < sms && std::find(partners.begin(), partners.end(), p) == partners.end())
      partners.push_back(p);

  // Never the fold of the buffer in practice; the compiler cannot know.
  uint32_t key = 0x6a09e667u;
  int warmup = options.warmupRounds, rounds = options.rounds;
  uint32_t stageBytes = options.bulkStageBytes;
  int stages = options.bulkStages;
  HandOffResult r;
  // Indexed by Load.
  double *results[kLoads] = {&r.idleNs, &r.othersStreamNs, &r.allStreamNs, &r.othersBulkNs,
                             &r.allBulkNs};
  double *streamRates[kLoads] = {nullptr, &r.othersStreamGBs, &r.allStreamGBs, &r.othersBulkGBs,
                                 &r.allBulkGBs};
  for (int load = kIdle; load < kLoads; ++load) {
    if (isBulk(load) && !bulk)
      continue;
    const size_t dynamicShared = isBulk(load) ? ringBytes : 0;
    std::vector<double> perPair, rates;
    for (int partner : partners) {
      std::vector<double> launches;
      for (int rep = 0; rep < options.repetitions; ++rep) {
        TI_CUDA_CHECK(cudaMemsetAsync(res.slots, 0, sizeof(Slots), res.stream));
        TI_CUDA_CHECK(cudaMemsetAsync(res.slots->streamStartNs, 0xff,
                                      sizeof(res.slots->streamStartNs), res.stream));
        void *args[] = {&res.slots, &partner,    &warmup, &rounds, &load,    &res.data,
                        &vectors,   &stageBytes, &stages, &key,    &res.sink};
        TI_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void *>(handOffKernel),
                                                  dim3(sms), dim3(kThreads), args, dynamicShared,
                                                  res.stream));
        Slots back;
        TI_CUDA_CHECK(cudaMemcpyAsync(&back, res.slots, sizeof(Slots), cudaMemcpyDeviceToHost,
                                      res.stream));
        TI_CUDA_CHECK(cudaStreamSynchronize(res.stream));
        if (back.elapsedNs[0] == 0)
          return Status::error("hand-off: a timed launch took no measurable time");
        launches.push_back(double(back.elapsedNs[0]) / (2.0 * rounds));
        if (load != kIdle) { // The bytes over the time from the first start to the last stop.
          if (back.streamEndNs[0] <= back.streamStartNs[0])
            return Status::error("hand-off: a load's streaming took no measurable time");
          rates.push_back(double(back.streamedBytes[0]) /
                          double(back.streamEndNs[0] - back.streamStartNs[0])); // GB/s
        }
      }
      perPair.push_back(bench::median(launches));
    }
    *results[load] = bench::median(perPair);
    if (load != kIdle)
      *streamRates[load] = bench::median(rates);
  }
  r.bulkMeasured = bulk;
  r.pairs = int(partners.size());
  r.rounds = rounds;
  return r;
}
