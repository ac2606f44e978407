//===- Sync.cuh - Every synchronisation of the worker -----------*- CUDA -*-===//
//
// The only file of the worker that orders memory (with what it includes and
// tirun probe shares: the mbarrier class, StageBarrier.cuh, and the relaxed
// accesses, RelaxedAccess.cuh). Ops call blockBarrier()
// between their phases and read and write tagged values through it; the
// token loop calls GridBarrier::sync() where the plan puts a grid barrier.
// Nothing else fences, uses atomics or volatile.
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
// In the Stream worker (Config.cuh: kStreamed) "the block" is its consumer
// warps: blockBarrier() is named barrier 1 over kThreads threads, which the
// producer warpgroup never joins. The ring's stages are handed over with an
// mbarrier pair each (StageBarrier.cuh): `full` completes when the producer's
// bulk copy has landed (one arrival that also expects the copy's bytes, then
// the copy's completion), `empty` when every consumer thread has released
// the stage (one arrival each, after its last read: an arrive releases only
// the arriving thread's own accesses, and compute-sanitizer's racecheck
// flags one lane's release for its warp). An mbarrier's phases
// alternate in parity; a waiter names the parity of the phase it waits for.
// The copy's completion makes its bytes visible to the threads that observe
// the phase complete; a consumer's arrive orders its reads of the stage
// before the producer's next copy into it (both at CTA scope). The consumers
// tell the producer two things through words in shared memory: that the
// launch has stopped (ConsumerSignal, which orders nothing), and which wave
// of the launch they run (ConsumerWave, a release / acquire pair: the K/V
// rows the producer copies were stored before the step the wave names).
//
// Tagged values (ti/Plan/Tagged.h) hand a wave's outputs to later waves
// without a grid barrier: the writer stores each (value, tag) pair with one
// 8-byte relaxed store at device scope, the reader loads pairs with relaxed
// loads at device scope (16 bytes: two pairs, each single-copy atomic) until
// every tag is its step's. Relaxed at device scope, because a weak load may
// be served from the SM's L1 and see a stale line forever. The tag comes with
// its value, so the reader needs no fence and no counter; a tagged read
// orders nothing but itself (the plan verifier puts grid barriers wherever
// anything else must be ordered).
//
// The task records' window (Schedule.cuh) copies words from global to shared
// memory with `cp.async`: each thread's copies form groups, and once the
// thread has waited for a group (cp.async.wait_group) its words are visible
// to it; a block barrier after the wait passes them on to the block. The
// wait carries a memory clobber, so that no read of shared memory moves
// above it.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_SYNC_CUH
#define TI_LIB_RUNTIME_CUDA_SYNC_CUH

#include "Config.cuh"
#include "RelaxedAccess.cuh"
#include "StageBarrier.cuh"

#include "ti/Plan/Tagged.h"

#include <cuda/atomic>

#include <cstdint>

TI_WORKER_NAMESPACE_BEGIN

/// The lanes of one warp: execution and memory ordering among them (a lane's
/// shared-memory writes seen by the others; the lanes need not be converged).
__device__ __forceinline__ void warpBarrier() { __syncwarp(); }

/// All threads that run tasks (the Plain worker's block, the Stream worker's
/// consumer warps): execution and block-scope memory ordering.
__device__ __forceinline__ void blockBarrier() {
  if constexpr (kStreamed)
    asm volatile("bar.sync 1, %0;" ::"n"(kThreads) : "memory");
  else
    __syncthreads();
}

#if TI_WORKER_STREAM
/// Orders the global memory this thread has seen written by ordinary
/// (generic-proxy) stores, its own or, through an acquire, other threads',
/// before the bulk copies (async proxy) it issues next: the producer's
/// copies of K/V rows that earlier steps of the launch wrote.
__device__ __forceinline__ void fenceGenericBeforeBulkCopies() {
  asm volatile("fence.proxy.async.global;" ::: "memory");
}

/// An L2 cache policy under which every line an access brings in is evicted
/// first (for bytes read once in a step).
__device__ __forceinline__ uint64_t evictFirstPolicy() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

/// A word from the consumers (one thread raises it) that the producer polls:
/// that the launch has stopped (a step's selection said so), while the
/// producer waits for a stage the consumers will never release. Every access
/// is a shared-memory atomic: the word orders nothing, but plain accesses from
/// two warps are a race (compute-sanitizer's racecheck reports them).
class ConsumerSignal {
public:
  __device__ void clear() { atomicExch(&flag_, 0u); }
  __device__ void raise() { atomicExch(&flag_, 1u); }
  __device__ bool raised() { return atomicOr(&flag_, 0u) != 0; }

private:
  uint32_t flag_;
};

/// The wave of the launch the consumers run, step * waves + wave (one thread
/// publishes it as each wave begins, after the barrier before it, or after a
/// tagged hand-off once the wave's inputs are here: WeightStream::inputsReady):
/// the producer starts at most the plan's hand-off copies for a later wave, so
/// that an SM's copies in flight, which delay its own stores, barrier
/// arrival and polls, are few while its consumers finish a wave and hand
/// off. The publication releases what the publishing thread has seen (at a
/// step's first wave: every store before the grid barrier that ended the
/// step before), and the producer's read acquires it: the producer copies a
/// step's K/V rows, which earlier steps wrote, only after reading that the
/// consumers began the step (WeightProducer::fillKv).
class ConsumerWave {
public:
  // Atomics with the orderings (a plain st.release / ld.acquire orders the
  // same but compute-sanitizer's racecheck reports the pair as a race).
  __device__ void publish(uint32_t wave) {
    // The exchange returns the old value into `wave`, which nobody reads.
    asm volatile("atom.release.cta.shared::cta.exch.b32 %0, [%1], %0;"
                 : "+r"(wave)
                 : "r"(sharedAddress(&wave_))
                 : "memory");
  }
  __device__ uint32_t read() {
    uint32_t wave;
    asm volatile("atom.acquire.cta.shared::cta.or.b32 %0, [%1], 0;"
                 : "=r"(wave)
                 : "r"(sharedAddress(&wave_))
                 : "memory");
    return wave;
  }

private:
  uint32_t wave_;
};
#endif

/// The tag a step's tagged values carry, and whether its readers wait for it
/// (not in the diagnostic modes that drop the dependencies: WorkerMode.h).
struct StepTag {
  uint32_t tag;
  bool wait;
};

__device__ __forceinline__ void storeTagged(uint64_t *at, float value, uint32_t tag) {
  storeRelaxed(at, plan::packTagged(value, tag));
}

/// `v`, loaded from `at`, once its tag is the step's (reloaded until).
__device__ __forceinline__ uint64_t waitForTag(const uint64_t *at, uint64_t v, StepTag step) {
  while (step.wait && plan::tagOf(v) != step.tag)
    v = loadRelaxed(at);
  return v;
}

/// Whether both values of a pair carry the step's tag.
__device__ __forceinline__ bool hasTags(ulonglong2 v, StepTag step) {
  return plan::tagOf(v.x) == step.tag && plan::tagOf(v.y) == step.tag;
}

/// The pair at `at`, loaded as v, once both its values carry the step's tag.
__device__ __forceinline__ ulonglong2 waitForTags(const uint64_t *at, ulonglong2 v, StepTag step) {
  while (step.wait && !hasTags(v, step))
    v = loadRelaxedPair(at);
  return v;
}

/// The tagged pairs at pairAt(j), j < count <= B (16-byte aligned), once each
/// carries the step's tag: all loads issued before any tag is looked at,
/// every late pair reloaded in each round (reloading one late pair after
/// another cost a round trip each). Pairs past count are zero.
template <uint32_t B, typename PairAt>
__device__ __forceinline__ void loadTaggedPairsWhere(PairAt pairAt, uint32_t count, StepTag step,
                                                     float2 (&out)[B]) {
  ulonglong2 v[B];
#pragma unroll
  for (uint32_t j = 0; j < B; ++j)
    v[j] = j < count ? loadRelaxedPair(pairAt(j))
                     : ulonglong2{uint64_t(step.tag) << 32, uint64_t(step.tag) << 32};
  while (step.wait) {
    bool ready = true;
#pragma unroll
    for (uint32_t j = 0; j < B; ++j)
      ready = ready && hasTags(v[j], step);
    if (ready)
      break;
#pragma unroll
    for (uint32_t j = 0; j < B; ++j)
      if (j < count && !hasTags(v[j], step))
        v[j] = loadRelaxedPair(pairAt(j));
  }
#pragma unroll
  for (uint32_t j = 0; j < B; ++j)
    out[j] = float2{plan::valueOf(v[j].x), plan::valueOf(v[j].y)};
}

/// loadTaggedPairsWhere for the pairs at `at` + j * `stride` elements.
template <uint32_t B>
__device__ __forceinline__ void loadTaggedPairs(const uint64_t *at, uint64_t stride, uint32_t count,
                                                StepTag step, float2 (&out)[B]) {
  loadTaggedPairsWhere<B>([&](uint32_t j) { return at + j * stride; }, count, step, out);
}

/// N (2, 4 or 8) tagged values at `at` (16-byte aligned) once each carries
/// the step's tag: loadTaggedPairs over its N/2 consecutive pairs, so that
/// the wait ends about one round trip after the last value lands.
template <uint32_t N>
__device__ __forceinline__ void loadTagged(const uint64_t *at, StepTag step, float (&out)[N]) {
  static_assert(N == 2 || N == 4 || N == 8, "whole 16-byte pairs");
  float2 two[N / 2];
  loadTaggedPairs<N / 2>(at, 2, N / 2, step, two);
#pragma unroll
  for (uint32_t i = 0; i < N / 2; ++i) {
    out[2 * i] = two[i].x;
    out[2 * i + 1] = two[i].y;
  }
}

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

/// An 8-byte copy from global `src` to shared `dst` that holds no register
/// while it flies, in the calling thread's open copy group.
__device__ __forceinline__ void copyWordAsync(uint64_t *dst, const uint64_t *src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(
                   static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
               "l"(__cvta_generic_to_global(src))
               : "memory");
}
/// Closes the calling thread's open copy group.
__device__ __forceinline__ void commitCopies() { asm volatile("cp.async.commit_group;" ::: "memory"); }
/// Every copy group of the calling thread but the newest kPending has landed
/// and is visible to it.
template <int kPending> __device__ __forceinline__ void waitCopies() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_SYNC_CUH
