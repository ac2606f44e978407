//===- RelaxedAccess.cuh - Relaxed loads and stores at device scope -*- CUDA -*-===//
//
// The accesses through which SMs hand values to each other without a fence:
// 8-byte stores and 8- or 16-byte loads, relaxed at device scope, so that a
// load is served by L2 (a weak load may be served from the SM's L1 and see a
// stale line forever) and each 8-byte word is single-copy atomic (a 16-byte
// load is two such words). The Stream worker's tagged values (Sync.cuh) and
// `tirun probe`'s measurements of what they cost (HandOff.cu, InputRead.cu)
// use these; they depend on no execution model.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_RELAXEDACCESS_CUH
#define TI_LIB_RUNTIME_CUDA_RELAXEDACCESS_CUH

#include <cstdint>

namespace ti::cuda {

__device__ __forceinline__ void storeRelaxed(uint64_t *at, uint64_t v) {
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(at), "l"(v) : "memory");
}

__device__ __forceinline__ uint64_t loadRelaxed(const uint64_t *at) {
  uint64_t v;
  asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(at) : "memory");
  return v;
}

/// Two words at `at` (16-byte aligned), each single-copy atomic.
__device__ __forceinline__ ulonglong2 loadRelaxedPair(const uint64_t *at) {
  ulonglong2 v;
  asm volatile("ld.relaxed.gpu.global.v2.b64 {%0, %1}, [%2];"
               : "=l"(v.x), "=l"(v.y)
               : "l"(at)
               : "memory");
  return v;
}

} // namespace ti::cuda

#endif // TI_LIB_RUNTIME_CUDA_RELAXEDACCESS_CUH
