//===- Bandwidth.cu - A GPU's streaming-read bandwidth --------------------===//
//
// The floor every later benchmark is compared with (bytes per token over this
// bandwidth), so each choice here is made to measure the memory, not the
// kernel, and to be reproducible:
//
// 1. The buffer: one cudaMalloc of options.bytes, 2.5 GiB by default: more
//    than 40 times the L2 of every supported GPU (the H200's is at most 60
//    MiB), so L2 cannot serve it. A launch reads the buffer front to back;
//    what L2 still holds at its end is the buffer's tail, which the next
//    launch reads last, long after evicting it.
// 2. The fill: once, before any timing, by a kernel that writes a hash of each
//    vector's index: every page is committed and touched, and the data are not
//    zeros, so no zero-page or compression shortcut can make reading cheaper.
// 3. The read kernel has the worker's shape: one 1024-thread block per SM
//    (grid = the SM count). Each thread issues 4 independent 16-byte loads
//    per iteration (__ldg of uint4: ld.global.nc.v4.u32), a grid's width
//    apart, so a warp's load is 512 contiguous bytes and each SM keeps 64 KiB
//    in flight, several times what latency times bandwidth needs; the loop
//    strides over the buffer 4 grid widths at a time (the tail one vector at
//    a time). Each thread XOR-folds what it read into one word and stores the
//    word only if it equals a value given at launch: the compiler cannot
//    prove the store dead, so every load stays; it (almost) never happens,
//    so it costs nothing.
// 4. Timing: options.warmups untimed launches (clocks up, TLBs warm), then
//    options.repetitions launches back to back on one stream, each between
//    two CUDA events. Each gives bytes / seconds / 1e9 GB/s; the median is
//    the result (one slow launch does not move it), min and max show the
//    spread. The events bracket the kernel on the GPU, so the host's launch
//    cost is not counted; the kernel's start and drain (a few microseconds
//    against about 0.6 ms for 2.5 GiB on an H200) are, conservatively.
//
// Every CUDA failure is a one-line Status; the buffer, events and stream are
// released on every path.
//
//===----------------------------------------------------------------------===//
#include "ti/Runtime/CudaBandwidth.h"

#include "CudaCheck.h"
#include "ti/Bench/Statistics.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

using namespace ti;

namespace {

constexpr int kBlockThreads = 1024;
/// Independent 16-byte loads each thread has in flight.
constexpr int kLoads = 4;
/// Below this a launch is too short to time against its own start-up.
constexpr uint64_t kMinBytes = 64ull << 20;

__global__ void __launch_bounds__(kBlockThreads, 1) fillKernel(uint4 *data, uint64_t vectors) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += stride) {
    uint32_t h = (uint32_t(i) ^ uint32_t(i >> 32)) * 0x9e3779b9u;
    h ^= h >> 15;
    data[i] = make_uint4(h, h * 0x85ebca6bu, h * 0xc2b2ae35u, h * 0x27d4eb2fu);
  }
}

__global__ void __launch_bounds__(kBlockThreads, 1)
    readKernel(const uint4 *__restrict__ data, uint64_t vectors, uint32_t key, uint32_t *sink) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  uint32_t fold = 0;
  for (; i + (kLoads - 1) * stride < vectors; i += kLoads * stride) {
    uint4 v[kLoads];
#pragma unroll
    for (int k = 0; k < kLoads; ++k)
      v[k] = __ldg(data + i + k * stride);
#pragma unroll
    for (int k = 0; k < kLoads; ++k)
      fold ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
  }
  for (; i < vectors; i += stride) {
    const uint4 v = __ldg(data + i);
    fold ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (fold == key)
    *sink = fold;
}

/// Everything the measurement allocates, released on every path.
struct Resources {
  uint4 *data = nullptr;
  uint32_t *sink = nullptr;
  cudaStream_t stream = nullptr;
  std::vector<cudaEvent_t> events;

  ~Resources() {
    for (cudaEvent_t e : events)
      if (e)
        cudaEventDestroy(e);
    if (stream)
      cudaStreamDestroy(stream);
    cudaFree(data);
    cudaFree(sink);
  }
};

} // namespace

StatusOr<BandwidthResult> ti::measureStreamingBandwidth(int device,
                                                        const BandwidthOptions &options) {
  if (options.repetitions < 1 || options.warmups < 0)
    return Status::error("bandwidth: at least one timed repetition and no negative warm-ups");
  if (options.bytes < kMinBytes)
    return Status::error("bandwidth: the buffer must be at least " +
                         std::to_string(kMinBytes >> 20) + " MiB, not " +
                         std::to_string(options.bytes) + " bytes");
  if (Status s = cuda::selectDevice(device); !s.ok())
    return s;
  cudaDeviceProp prop;
  TI_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int blocksPerSm = 0;
  TI_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocksPerSm, readKernel, kBlockThreads, 0));
  if (blocksPerSm < 1)
    return Status::error("bandwidth: a 1024-thread read block cannot run on GPU " +
                         std::to_string(device));

  BandwidthResult r;
  r.bytes = options.bytes / sizeof(uint4) * sizeof(uint4);
  r.l2Bytes = uint64_t(prop.l2CacheSize);
  r.blocks = prop.multiProcessorCount;
  r.threads = kBlockThreads;
  r.repetitions = options.repetitions;
  const uint64_t vectors = r.bytes / sizeof(uint4);

  Resources res;
  if (Status s = cuda::allocateOnDevice(reinterpret_cast<void **>(&res.data), r.bytes, device,
                                        "bandwidth");
      !s.ok())
    return s;
  TI_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&res.sink), sizeof(uint32_t)));
  TI_CUDA_CHECK(cudaStreamCreateWithFlags(&res.stream, cudaStreamNonBlocking));
  res.events.resize(2 * size_t(options.repetitions), nullptr);
  for (cudaEvent_t &e : res.events)
    TI_CUDA_CHECK(cudaEventCreate(&e));

  const dim3 grid(r.blocks), block(kBlockThreads);
  // Never the fold of the fill pattern in practice; the compiler cannot know.
  const uint32_t key = 0x6a09e667u;
  fillKernel<<<grid, block, 0, res.stream>>>(res.data, vectors);
  TI_CUDA_CHECK(cudaGetLastError());
  for (int i = 0; i < options.warmups; ++i)
    readKernel<<<grid, block, 0, res.stream>>>(res.data, vectors, key, res.sink);
  TI_CUDA_CHECK(cudaGetLastError());
  TI_CUDA_CHECK(cudaStreamSynchronize(res.stream));
  for (int i = 0; i < options.repetitions; ++i) {
    TI_CUDA_CHECK(cudaEventRecord(res.events[2 * i], res.stream));
    readKernel<<<grid, block, 0, res.stream>>>(res.data, vectors, key, res.sink);
    TI_CUDA_CHECK(cudaGetLastError());
    TI_CUDA_CHECK(cudaEventRecord(res.events[2 * i + 1], res.stream));
  }
  TI_CUDA_CHECK(cudaStreamSynchronize(res.stream));

  for (int i = 0; i < options.repetitions; ++i) {
    float ms = 0;
    TI_CUDA_CHECK(cudaEventElapsedTime(&ms, res.events[2 * i], res.events[2 * i + 1]));
    if (!(ms > 0))
      return Status::error("bandwidth: a timed launch took no measurable time");
    r.samples.push_back(double(r.bytes) / (double(ms) * 1e-3) / 1e9);
  }
  r.medianGBs = bench::median(r.samples);
  r.minGBs = *std::min_element(r.samples.begin(), r.samples.end());
  r.maxGBs = *std::max_element(r.samples.begin(), r.samples.end());
  return r;
}
