//===- Sync.cuh - Every synchronisation of the worker -----------*- CUDA -*-===//
//
// The only file of the worker that orders memory. Ops call blockBarrier()
// between their phases; the token loop calls GridBarrier::sync() where the
// plan puts a grid barrier. Nothing else fences, uses atomics or volatile.
//
// The grid barrier is a monotonic arrival counter in global memory, zeroed by
// the host before each launch (all workers are co-resident: cooperative
// launch). Barrier number b (1-based) of the launch completes when the counter
// reaches b * workers:
//   1. every thread of the block finishes its writes; a block barrier
//      (bar.sync) orders them before thread 0's next operation;
//   2. thread 0 adds 1 with release semantics at device scope: the block's
//      writes happen before the arrival;
//   3. thread 0 spins on an acquire load at device scope until every worker
//      has arrived: every other block's writes happen before what follows;
//   4. a block barrier passes that on to the block's other threads.
// bar.sync is morally strong at block scope and the release/acquire pair at
// device scope, so (PTX memory model, causality order) every write before a
// barrier is visible to every read after it, in every block.
//
// Comparisons use a signed difference, so the counter may wrap.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_SYNC_CUH
#define TI_LIB_RUNTIME_CUDA_SYNC_CUH

#include <cuda/atomic>

#include <cstdint>

namespace ti::cuda {

/// All threads of the block: execution and block-scope memory ordering.
__device__ __forceinline__ void blockBarrier() { __syncthreads(); }

/// The grid barrier. Only thread 0 of a block touches the counter, so the
/// arrivals it waits for live in shared memory (`arrivals`, thread 0's alone),
/// not in a register held across the whole token loop.
class GridBarrier {
public:
  __device__ GridBarrier(uint32_t *counter, uint32_t *arrivals)
      : counter_(counter), arrivals_(arrivals) {
    if (threadIdx.x == 0)
      *arrivals_ = 0;
  }

  /// Every thread of every worker calls this; it returns when all have.
  __device__ void sync() {
    blockBarrier();
    if (threadIdx.x == 0) {
      const uint32_t target = *arrivals_ + gridDim.x;
      *arrivals_ = target;
      ::cuda::atomic_ref<uint32_t, ::cuda::thread_scope_device> counter(*counter_);
      counter.fetch_add(1u, ::cuda::memory_order_release);
      while (static_cast<int32_t>(counter.load(::cuda::memory_order_acquire) - target) < 0) {
      }
    }
    blockBarrier();
  }

private:
  uint32_t *counter_;
  uint32_t *arrivals_; // Shared memory: arrivals that completed the last barrier.
};

} // namespace ti::cuda

#endif // TI_LIB_RUNTIME_CUDA_SYNC_CUH
