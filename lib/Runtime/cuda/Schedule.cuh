//===- Schedule.cuh - The worker's task records, a window ahead -*- CUDA -*-===//
//
// A worker runs its tasks [first, last) of the plan's task array in order,
// every step of the launch, and every op reads its task's record (104 bytes,
// TaskRecord.h) many times. Read through L2 each record costs a dependent
// round trip behind the weight stream's copies (0.5 us a task,
// docs/PERFORMANCE.md, step 2), so the worker kept its whole schedule in
// shared memory: 10 KB for Llama 3.2 1B, 20 KB for Llama 3.1 8B, beside a
// ring that holds a worker's share of HBM for only 4.6 us on the H200 and
// could use that space as stages.
//
// ScheduleWindow keeps only a window of the records in shared memory instead,
// fetched ahead with asynchronous copies (`cp.async`, no registers held while
// they fly), so that a record is in shared memory before its task begins:
// 1. The window has kWindowSlots slots; record k of the launch (k counts the
//    tasks the worker has begun, over every step; it is task k mod count of
//    the worker's list) lies in slot k mod kWindowSlots.
// 2. Before the first task, records 0 and 1 are fetched and record 0 waited
//    for. When task k begins, record k + 2 is fetched; before the block
//    barrier that ends task k, record k + 1 is waited for (the copy of k + 2
//    may still fly). So a record has had a whole task to land before it is
//    waited for, and the slot a copy writes held record k - 1, which no one
//    reads any more.
// 3. Each of the record's kRecordWords 8-byte words is copied by one thread
//    (threads 0 .. kRecordWords - 1 of the consumers, each with its own copy
//    groups) and made visible to the others by the block barrier after its
//    wait (Sync.cuh: copyWordAsync, waitCopies). The producer (one thread,
//    WeightStream.cuh) runs the same window over its own slots, copying
//    every word itself.
// The waves' barrier kinds (a byte a wave) stay in dynamic shared memory
// (WorkerLayout.h: scheduleBytesFor).
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_SCHEDULE_CUH
#define TI_LIB_RUNTIME_CUDA_SCHEDULE_CUH

#include "Config.cuh"
#include "Sync.cuh"

#include "ti/Plan/TaskRecord.h"

TI_WORKER_NAMESPACE_BEGIN

/// Slots of a window: the record running, the next and the one after (their
/// copies in flight until the end of the running task and the next).
constexpr uint32_t kWindowSlots = 3;
constexpr uint32_t kRecordWords = sizeof(plan::TaskRecord) / 8;
static_assert(sizeof(plan::TaskRecord) % 8 == 0, "a record is copied in 8-byte words");

/// The shared memory a window takes (in StaticShared).
struct WindowSlots {
  plan::TaskRecord records[kWindowSlots];
};

/// A window over the worker's `count` records at `tasks` (global memory).
/// kAllWords: the calling thread copies every word of a record (the
/// producer's one thread); otherwise thread i < kRecordWords copies word i
/// and the other threads copy nothing (the consumers).
template <bool kAllWords> class ScheduleWindow {
public:
  __device__ ScheduleWindow(const plan::TaskRecord *tasks, uint32_t count, WindowSlots &slots)
      : tasks_(tasks), slots_(slots), count_(count) {}

  /// Before the first task (item 2): records 0 and 1 fetched, 0 landed for this thread's
  /// words (for the consumers, a block barrier must follow before they read it).
  __device__ void prime() {
    fetch(0);
    fetch(1);
    endTask();
  }

  /// Task k's record (landed and, for the consumers, behind a block barrier).
  __device__ const plan::TaskRecord &at(uint32_t k) const {
    return slots_.records[k % kWindowSlots];
  }

  /// As task k begins: record k + 2's copy starts.
  __device__ void beginTask(uint32_t k) { fetch(k + 2); }

  /// Before the block barrier that ends task k: record k + 1 has landed
  /// (every copy group of this thread but the newest).
  __device__ void endTask() {
    if (copies())
      waitCopies<1>();
  }

  /// Before the thread exits: none of its copies is still in flight (the
  /// block's shared memory must outlive them).
  __device__ void finish() {
    if (copies())
      waitCopies<0>();
  }

private:
  __device__ bool copies() const { return count_ != 0 && (kAllWords || threadIdx.x < kRecordWords); }

  /// Record k (task k mod count) into its slot, this thread's words, as one copy group.
  __device__ void fetch(uint32_t k) {
    if (!copies())
      return;
    const auto *src = reinterpret_cast<const uint64_t *>(tasks_ + k % count_);
    auto *dst = reinterpret_cast<uint64_t *>(&slots_.records[k % kWindowSlots]);
    if (kAllWords) {
#pragma unroll
      for (uint32_t w = 0; w < kRecordWords; ++w)
        copyWordAsync(dst + w, src + w);
    } else {
      copyWordAsync(dst + threadIdx.x, src + threadIdx.x);
    }
    commitCopies();
  }

  const plan::TaskRecord *tasks_;
  WindowSlots &slots_;
  uint32_t count_;
};

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_SCHEDULE_CUH
