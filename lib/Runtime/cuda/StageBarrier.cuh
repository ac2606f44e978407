//===- StageBarrier.cuh - A shared-memory stage and its bulk copy -*- CUDA -*-===//
//
// The mbarrier through which a bulk copy (cp.async.bulk, sm_90 on) hands a
// stage of shared memory to the threads that wait for it: the Stream
// worker's weight ring (Sync.cuh says how its stages are ordered) and the
// bulk-copy loads of `tirun probe`'s hand-off measurement (HandOff.cu). It
// depends on no execution model, so that both can use it; call it only from
// code compiled for sm_90 or later.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_STAGEBARRIER_CUH
#define TI_LIB_RUNTIME_CUDA_STAGEBARRIER_CUH

#include <cstdint>

namespace ti::cuda {

/// The shared-memory address of a generic pointer into shared memory.
__device__ __forceinline__ uint32_t sharedAddress(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/// An mbarrier (8 bytes of shared memory).
class StageBarrier {
public:
  /// One thread, before any other use; then initFence() and a block barrier.
  __device__ void init(uint32_t arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sharedAddress(&word_)),
                 "r"(arrivals)
                 : "memory");
  }
  /// Makes the initialisations visible to the bulk-copy engine.
  __device__ static void initFence() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  /// Whether the phase of parity `parity` has completed (waits a while first).
  __device__ bool tryWait(uint32_t parity) {
    uint32_t done;
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done)
                 : "r"(sharedAddress(&word_)), "r"(parity)
                 : "memory");
    return done != 0;
  }
  __device__ void wait(uint32_t parity) {
    while (!tryWait(parity)) {
    }
  }
  __device__ void arrive() {
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(
                     sharedAddress(&word_))
                 : "memory");
  }
  /// The producer's arrival, announcing that `bytes` will complete the phase.
  __device__ void arriveExpectingBytes(uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(
                     sharedAddress(&word_)),
                 "r"(bytes)
                 : "memory");
  }
  /// Copies `bytes` (a multiple of 16, both addresses 16-byte aligned) from
  /// global memory to shared memory with the bulk-copy engine; their landing
  /// completes this barrier's expected bytes.
  __device__ void bulkCopy(void *sharedDst, const void *globalSrc, uint32_t bytes) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
                 "[%0], [%1], %2, [%3];" ::"r"(sharedAddress(sharedDst)),
                 "l"(globalSrc), "r"(bytes), "r"(sharedAddress(&word_))
                 : "memory");
  }
  /// The same with an L2 cache policy for what it reads (evictFirstPolicy()).
  __device__ void bulkCopy(void *sharedDst, const void *globalSrc, uint32_t bytes,
                           uint64_t policy) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint "
                 "[%0], [%1], %2, [%3], %4;" ::"r"(sharedAddress(sharedDst)),
                 "l"(globalSrc), "r"(bytes), "r"(sharedAddress(&word_)), "l"(policy)
                 : "memory");
  }

private:
  uint64_t word_;
};

} // namespace ti::cuda

#endif // TI_LIB_RUNTIME_CUDA_STAGEBARRIER_CUH
