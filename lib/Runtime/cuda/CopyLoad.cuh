//===- CopyLoad.cuh - An SM streaming memory as the stream worker does -*- CUDA -*-===//
//
// A load for `tirun probe`'s measurements (HandOff.cu, InputRead.cu): one
// thread of a block keeps `stages` bulk copies of `stageBytes` in flight
// from a buffer into a ring in the block's dynamic shared memory, each
// completing an mbarrier (StageBarrier.cuh), and reissues a stage as soon as
// its copy lands, as the stream worker's producer does while its consumers
// work. SM b copies stages b, b + n, ... of the buffer (n blocks), so that no
// two SMs copy the same bytes in a pass and every copy comes from memory.
// The thread takes its start into the minimum `copyStart` (%globaltimer),
// looks at a stop word every kCopyRoundsBetweenPolls rounds of copies (a
// copy a stage each), waits for its copies in flight once it is raised,
// then adds its bytes to `copied` and its end to the maximum `copyEnd`: the
// bytes over the time from the first start to the last end are the load's
// bandwidth. Unlike the worker's producer it gives its copies no L2 cache
// policy. Compiled to nothing below sm_90 (no bulk-copy engine): callers
// measure with it only when their kernel's code is sm_90's or later
// (allowCopyRing, which also makes room for the ring).
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_COPYLOAD_CUH
#define TI_LIB_RUNTIME_CUDA_COPYLOAD_CUH

#include "CudaCheck.h"
#include "RelaxedAccess.cuh"
#include "StageBarrier.cuh"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace ti::cuda {

/// The ring's stages at most (their mbarriers are static shared memory).
constexpr int kMaxCopyStages = 8;
/// Rounds of copies (a copy a stage each) between two looks at the stop word.
constexpr int kCopyRoundsBetweenPolls = 64;

__device__ __forceinline__ unsigned long long globalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// One thread's copies of `bytes` at `data` (16-byte aligned; stageBytes a
/// multiple of 16 and at most bytes, stages at most kMaxCopyStages), until
/// `stop` is raised; every copy has landed when it returns.
__device__ inline void copyUntilStopped(const void *data, uint64_t bytes, uint32_t stageBytes,
                                        int stages, const uint64_t *stop,
                                        unsigned long long *copyStart,
                                        unsigned long long *copied,
                                        unsigned long long *copyEnd) {
#if __CUDA_ARCH__ >= 900
  atomicMin(copyStart, globalTimer());
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ StageBarrier full[kMaxCopyStages];
  for (int s = 0; s < stages; ++s)
    full[s].init(1);
  StageBarrier::initFence();
  const char *source = static_cast<const char *>(data);
  const uint64_t slices = bytes / stageBytes;
  uint64_t slice = blockIdx.x % slices;
  auto issue = [&](int s) {
    full[s].arriveExpectingBytes(stageBytes);
    full[s].bulkCopy(ring + size_t(s) * stageBytes, source + slice * stageBytes, stageBytes);
    slice = (slice + gridDim.x) % slices;
  };
  for (int s = 0; s < stages; ++s)
    issue(s);
  unsigned long long copies = stages;
  uint32_t parity = 0; // Of the phase each stage's copy in flight completes.
  for (bool stopped = false; !stopped;) {
#pragma unroll 1
    for (int round = 0; round < kCopyRoundsBetweenPolls; ++round) {
      for (int s = 0; s < stages; ++s) {
        full[s].wait(parity);
        issue(s);
      }
      parity ^= 1;
      copies += stages;
    }
    stopped = loadRelaxed(stop) != 0;
  }
  for (int s = 0; s < stages; ++s)
    full[s].wait(parity);
  atomicAdd(copied, copies * stageBytes);
  atomicMax(copyEnd, globalTimer());
#else
  (void)data, (void)bytes, (void)stageBytes, (void)stages, (void)stop, (void)copyStart,
      (void)copied, (void)copyEnd;
#endif
}

/// The ring a measurement asks for: 1 to kMaxCopyStages stages, each a
/// positive multiple of 16 bytes (`what` names the measurement).
inline Status checkCopyRing(int stages, uint32_t stageBytes, const std::string &what) {
  if (stages < 1 || stages > kMaxCopyStages || stageBytes < 16 || stageBytes % 16 != 0)
    return Status::error(what + ": the ring of bulk copies needs 1 to " +
                         std::to_string(kMaxCopyStages) +
                         " stages, each a positive multiple of 16 bytes");
  return Status();
}

/// Readies `kernel` for a ring of `ringBytes` in its dynamic shared memory
/// on GPU `device` (current, `prop` its properties): false where the GPU or
/// the kernel's code, as this GPU runs it, lacks the bulk-copy engine (code
/// JIT-compiled from PTX older than sm_90 copies nothing): measure without
/// copies; an error where the ring does not fit beside the kernel's static
/// shared memory; else true, the kernel allowed that much dynamic shared
/// memory.
template <typename Kernel>
StatusOr<bool> allowCopyRing(Kernel kernel, const cudaDeviceProp &prop, int device,
                             size_t ringBytes, const std::string &what) {
  cudaFuncAttributes attributes;
  TI_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  if (prop.major < 9 || attributes.ptxVersion < 90 || attributes.binaryVersion < 90)
    return false;
  if (ringBytes + attributes.sharedSizeBytes > size_t(prop.sharedMemPerBlockOptin))
    return Status::error(what + ": a " + std::to_string(ringBytes) +
                         "-byte ring of bulk copies does not fit GPU " + std::to_string(device) +
                         "'s shared memory");
  TI_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(ringBytes)));
  return true;
}

} // namespace ti::cuda

#endif // TI_LIB_RUNTIME_CUDA_COPYLOAD_CUH
