//===- Worker.cu - The persistent worker kernel -----------------*- CUDA -*-===//
//
// One block per SM (cooperative launch, grid = the plan's workers), 1024
// threads (the Stream worker's: 384), running the launch's token loop
// (ti/Runtime/Launch.h) exactly as CpuExecutor does:
//
// 1. Step s begins with selection: thread 0 of every worker runs selectToken()
//    over the same candidates (written by the previous step's lm_head tasks,
//    before the grid barrier that closed it), so all reach the same token and
//    the same decision to stop; the recording worker also updates the
//    StepState. Each worker writes its copy of the token to its token slot.
// 2. For each wave, the worker runs its tasks of that wave (its tasks are
//    [workerBegin[w], workerBegin[w+1]), sorted by wave), one after another
//    with a block barrier between, then the wave's barrier: None, Tagged (no
//    barrier: the readers wait for the tagged values, Sync.cuh), Grid, or
//    GridIfLong (a grid barrier only when ctx = pos + 1 > split context).
//    The barrier kinds come from the worker's schedule, the copy in shared
//    memory that every launch starts by making (WorkerLayout.h), the records
//    from a window in shared memory fetched two tasks ahead (Schedule.cuh).
// 3. A step ends with a grid barrier (the plan's last wave has one; if it did
//    not, the loop adds it), so the next selection sees every candidate.
//
// The Stream worker (StreamWorker.cu compiles this file with TI_WORKER_STREAM
// = 1) adds a producer warpgroup: at entry, after thread 0 has initialised the
// ring's barriers, the warpgroup past the consumers gives most of its
// registers to them and branches off into WeightProducer::run (one lane; the
// others exit) and never joins the consumers' barriers; the
// consumers run the loop above, taking the weight rows from the ring
// (WeightStream.cuh), tell the producer which wave they run (it starts few
// copies for a later one: Sync.cuh, ConsumerWave; after a tagged hand-off,
// once the wave's inputs have arrived) and raise the stop signal when the
// loop ends.
//
// Dispatch is a switch on the opcode generated from Opcodes.def.
// Each op family's arithmetic is in ops/<Op>.cuh; Sync.cuh owns all memory
// ordering; WeightStream.cuh all weight loads.
//
//===----------------------------------------------------------------------===//
#include "Config.cuh"
#include "KernelArgs.h"
#include "Schedule.cuh"
#include "Sync.cuh"
#include "TraceMarks.cuh"
#include "WeightStream.cuh"
#include "ops/Attention.cuh"
#include "ops/Common.cuh"
#include "ops/Embed.cuh"
#include "ops/Ffn.cuh"
#include "ops/GateUp.cuh"
#include "ops/Gemv.cuh"
#include "ops/LmHead.cuh"
#include "ops/MergeAttention.cuh"
#include "ops/Reduce.cuh"
#include "ops/TiledGemv.cuh"

#include "ti/Plan/Plan.h"
#include "ti/Runtime/WorkerMode.h"
#include "ti/Runtime/Select.h"

namespace ti::cuda {
inline namespace TI_WORKER_MODEL_NAMESPACE {
namespace {

__device__ void runNop(const KernelArgs &, const plan::TaskRecord &, const Step &, WeightStream &,
                       const Scratch &) {}

/// Nothing: the token loop runs selection itself (selectStep) at the start of
/// every step, before the waves.
__device__ void runSelectToken(const KernelArgs &, const plan::TaskRecord &, const Step &,
                               WeightStream &, const Scratch &) {}

/// run<Name> for every line of Opcodes.def: an opcode without one does not
/// compile. The loader verified the plan, so every task's opcode is one of them.
/// Inline, always: ops past NVVM's inlining budget make runTask a call, which
/// puts the WeightStream it takes by reference in local memory, and every
/// stage wait of every op then loads the ring's state from there (measured
/// with more attention code: the 1B 30% slower at context 1;
/// docs/PERFORMANCE.md, step 12).
__device__ __forceinline__ void runTask(const KernelArgs &a, const plan::TaskRecord &t,
                                        const Step &step, WeightStream &ws, const Scratch &s) {
  ws.beginTask(t);
#if TI_WORKER_STREAM
  // Gemv and GateUp tasks over weight tiles: one call site, so that the
  // kernel holds one copy of the tiled form (two made it spill).
  if (t.flags & plan::kFlagTiledWeights) {
    runTiledTask(a, t, step, ws, s);
    ws.endTask();
    return;
  }
#endif
  switch (static_cast<plan::Opcode>(t.opcode)) {
#define TI_OPCODE(Name, Value, Spelling, Kind)                                                     \
  case plan::Opcode::Name:                                                                         \
    run##Name(a, t, step, ws, s);                                                                  \
    break;
#include "ti/Plan/Opcodes.def"
  }
  ws.endTask();
}

/// Step 1: this worker's token for step s, or -1 to stop; every thread gets it.
/// Warp 0 combines the candidates (lane l takes slots l, l + 32, ... in
/// order, then a butterfly of preferred(), which gives combineCandidates'
/// choice in any grouping): the loads are in flight together, where one
/// thread's scan would wait for each in turn. Thread 0 then decides exactly as
/// CpuExecutor does (selectCombined).
__device__ int32_t selectStep(const KernelArgs &a, int32_t s, int32_t *broadcast) {
  if (warpId() == 0) {
    const auto *candidates =
        reinterpret_cast<const plan::Candidate *>(a.arena + a.candidatesOffset);
    CandidateChoice best{candidates[0], 0};
    if (s > 0) {
      for (uint32_t i = laneId(); i < a.candidateCount; i += kWarpSize)
        best = i == laneId() ? CandidateChoice{candidates[i], i}
                             : preferred(best, CandidateChoice{candidates[i], i});
      for (uint32_t offset = kWarpSize / 2; offset >= 1; offset /= 2) {
        CandidateChoice other;
        other.candidate.value = __shfl_xor_sync(0xffffffffu, best.candidate.value, offset);
        other.candidate.index = __shfl_xor_sync(0xffffffffu, best.candidate.index, offset);
        other.slot = __shfl_xor_sync(0xffffffffu, best.slot, offset);
        // A lane past the last slot (fewer than 32 candidates) holds slot 0's.
        best = preferred(best, other);
      }
    }
    if (threadIdx.x == 0) {
      auto *state = blockIdx.x == a.recordWorker
                        ? reinterpret_cast<plan::StepState *>(a.arena + a.stepStateOffset)
                        : nullptr;
      int32_t token = selectCombined(s, a.launch, a.select, best.candidate, state);
      reinterpret_cast<int32_t *>(a.arena + a.tokenSlotsOffset)[blockIdx.x] = token;
      *broadcast = token;
    }
  }
  blockBarrier();
  return *broadcast;
}

/// Copies the waves' barrier kinds (plan::BarrierKind, [waveCount]) to `at`,
/// the worker's schedule in dynamic shared memory (WorkerLayout.h); a block
/// barrier must follow before use.
__device__ const uint8_t *loadBarrierKinds(const KernelArgs &a, uint8_t *at) {
  for (uint32_t i = threadIdx.x; i < a.waveCount; i += blockDim.x)
    at[i] = a.waveBarriers[i];
  return at;
}

#if TI_WORKER_STREAM
/// The producer warpgroup keeps plan::kStreamProducerRegisters a thread and
/// returns the rest of the launch's to the SM; claimConsumerRegisters() then
/// gives them to the consumers (ti/Plan/Execution.h has the arithmetic).
/// `setmaxnreg` acts on a whole warpgroup: all four producer warps run this,
/// both consumer warpgroups the claim, which waits until the registers are
/// free. It is an sm_90a instruction: the worker's sm_90 PTX (for a driver
/// that JIT-compiles) leaves every thread the launch's 168.
__device__ __forceinline__ void releaseProducerRegisters() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(plan::kStreamProducerRegisters));
#endif
}
__device__ __forceinline__ void claimConsumerRegisters() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(plan::kStreamWorkerRegisters));
#endif
}
#endif

/// The worker's static shared memory.
struct StaticShared {
#if TI_WORKER_STREAM
  StageBarrier full[kMaxStreamStages], empty[kMaxStreamStages];
  ConsumerSignal stop;
  ConsumerWave wave;
  WindowSlots producerWindow; // The producer's task records (Schedule.cuh).
#endif
  WindowSlots window; // The consumers' task records (Schedule.cuh).
  float warpSum[kWarps]; // Block reductions.
  int32_t token;         // The step's token, from thread 0.
  uint32_t arrivals;     // The grid barrier's (thread 0 only).
  uint32_t traceCount;   // Events recorded this step (thread 0 only).
  uint64_t traceBegan;   // The open event's start (thread 0 only).
};
static_assert(sizeof(StaticShared) + sizeof(traceInputsAt) <= kStaticSharedBytes,
              "within the static shared budget (the traced kernel's mark too)");

/// Thread 0's record of one traced step, in the traced instantiation of the
/// kernel only (kEnabled); in the other every call compiles to nothing, so a
/// launch without tracing runs exactly the kernel a build without the tracer
/// would (measured in docs/PERFORMANCE.md). Its state lives in shared memory
/// (thread 0's alone) and the kernel parameters, not in registers held across
/// the step.
template <bool kEnabled> struct Tracer {
  const KernelArgs &a;
  const bool on;
  uint64_t &began;
  uint32_t &count;
  __device__ Tracer(const KernelArgs &args, int32_t step, StaticShared &shared)
      : a(args),
        on(kEnabled && args.trace != nullptr && step == args.traceStep && threadIdx.x == 0),
        began(shared.traceBegan), count(shared.traceCount) {
    if (on)
      count = 0;
  }
  __device__ __forceinline__ void begin() {
    if (on)
      began = globalTimer();
  }
  __device__ __forceinline__ void end(TraceKind kind, uint32_t index) {
    if (on)
      record(globalTimer(), kind, index);
  }
  /// A task's events: from its start to its inputs' arrival (if the task
  /// stamped it: TraceMarks.cuh), then the whole task.
  __device__ __forceinline__ void beginTask() {
    if (on) {
      traceInputsAt = 0;
      began = globalTimer();
    }
  }
  __device__ __forceinline__ void endTask(uint32_t index) {
    if (on && traceInputsAt != 0)
      record(traceInputsAt, TraceKind::TaskInputs, index);
    end(TraceKind::Task, index);
  }
  __device__ void finish() {
    if (on)
      a.traceCounts[blockIdx.x] = count;
  }

private:
  /// The event from the open one's start to `until`, while the buffer has room.
  __device__ __forceinline__ void record(uint64_t until, TraceKind kind, uint32_t index) {
    if (count < a.traceCapacity)
      a.trace[uint64_t(blockIdx.x) * a.traceCapacity + count++] =
          TraceEvent{began, until, static_cast<uint32_t>(kind), index};
  }
};

} // namespace

template <bool kTraced>
__global__ void __launch_bounds__(kBlockThreads, 1)
    workerKernel(const __grid_constant__ KernelArgs a) {
  extern __shared__ float4 dynamicShared[];
  __shared__ StaticShared shared;
  const uint32_t first = a.workerBegin[blockIdx.x], last = a.workerBegin[blockIdx.x + 1];
  // The first records' copies go out before anything else the block sets up.
  ScheduleWindow<false> window(a.tasks + first, last - first, shared.window);
  window.prime();
#if TI_WORKER_STREAM
  // The ring at the first kStreamRingAlignment boundary of the dynamic
  // shared memory (the executor allocates the slack: ringFootprint()).
  const uint32_t base = sharedAddress(dynamicShared);
  uint8_t *ringBytes = reinterpret_cast<uint8_t *>(dynamicShared) +
                       ((plan::kStreamRingAlignment - base % plan::kStreamRingAlignment) %
                        plan::kStreamRingAlignment);
  const Ring ring{ringBytes, shared.full, shared.empty, a.stageBytes, a.stages};
  uint8_t *scheduleAt = ring.end();
  const uint8_t *barrierKinds = loadBarrierKinds(a, scheduleAt);
  if (threadIdx.x == 0) {
    for (uint32_t i = 0; i < a.stages; ++i) {
      shared.full[i].init(1);
      shared.empty[i].init(kThreads);
    }
    shared.stop.clear();
    shared.wave.publish(0);
    StageBarrier::initFence();
  }
  // ComputeOnly (WorkerMode.h): nothing fills the ring; its stages hold zeros.
  const bool computeOnly = static_cast<WorkerMode>(a.mode) == WorkerMode::ComputeOnly;
  if (computeOnly)
    for (uint32_t i = threadIdx.x; i < ring.stageBytes * ring.count / 16; i += blockDim.x)
      reinterpret_cast<uint4 *>(ring.stages)[i] = uint4{};
  // The whole block, the only time: the barriers, the schedule and the
  // window's first record are ready.
  __syncthreads();
  if (threadIdx.x >= kThreads) {
    releaseProducerRegisters();
    if (threadIdx.x == kThreads && !computeOnly)
      WeightProducer(a.weights, ring, a.inFlightStages, a.handOffInFlightStages,
                     a.copiesEvictFirst != 0, a.kvCopiesUnhinted != 0, shared.stop, shared.wave,
                     WeightProducer::KvStreamArgs{a.arena, a.maxContext, a.splitContext,
                                                  a.streamKvContext, a.shortMmaContext,
                                                  a.launch.startPos})
          .run(a.tasks + first, last - first, shared.producerWindow, a.waveCount,
               a.launch.maxSteps);
    return;
  }
  claimConsumerRegisters();
  WeightStream ws(a.weights, ring, a.rowPartBytes, !computeOnly, kTraced);
#else
  uint8_t *scheduleAt = reinterpret_cast<uint8_t *>(dynamicShared);
  const uint8_t *barrierKinds = loadBarrierKinds(a, scheduleAt);
  blockBarrier();
  WeightStream ws(a.weights, kTraced);
#endif
  const Scratch scratch{reinterpret_cast<float *>(scheduleAt + a.scheduleBytes), shared.warpSum};
  GridBarrier grid(a.barrierCounter, &shared.arrivals);
  // The diagnostic modes (WorkerMode.h) drop the grid barriers; StreamOnly also
  // the tasks, whose stages the consumers release unread; ComputeOnly's
  // consumers neither wait for stages nor release them.
  const WorkerMode mode = static_cast<WorkerMode>(a.mode);
  const bool barriers = mode == WorkerMode::Full;
  const bool runTasks = !(kStreamed && mode == WorkerMode::StreamOnly);

  uint32_t k = 0; // Tasks begun in the launch: record k is the window's.
  for (int32_t s = 0;; ++s) {
    Tracer<kTraced> trace(a, s, shared);
    trace.begin();
    if (selectStep(a, s, &shared.token) < 0)
      break;
    trace.end(TraceKind::Select, s);
    // Readers wait for the tags only where the dependencies are kept.
    const uint32_t ctx = static_cast<uint32_t>(a.launch.startPos + s + 1);
    const Step step{a.launch.startPos + s, ctx > a.splitContext,
                    plan::streamsKvAt(ctx, a.splitContext, a.streamKvContext, a.shortMmaContext),
                    StepTag{plan::stepTag(a.tagBase, s), barriers}};
    uint32_t next = 0; // Into the worker's tasks.
    bool closed = false; // The last barrier of the step was a grid barrier.
    for (uint32_t wave = 0; wave < a.waveCount; ++wave) {
#if TI_WORKER_STREAM
      {
        // The producer reads the wave for its hand-off cap and before it
        // copies a step's K/V rows (WeightStream.cuh). After a grid barrier
        // the inputs are here; after tags, not yet (the wave is published
        // once they are: 1.2% faster at context 1 than at its start,
        // docs/PERFORMANCE.md, step 8).
        // A barrier in long steps only hands off by tags in short ones.
        const auto before = wave > 0 ? static_cast<plan::BarrierKind>(barrierKinds[wave - 1])
                                     : plan::BarrierKind::None;
        const bool tagged = before == plan::BarrierKind::Tagged ||
                            (before == plan::BarrierKind::GridIfLong && !step.longMode);
        ws.beginWave(shared.wave, uint32_t(s) * a.waveCount + wave, !(tagged && barriers));
      }
#endif
      for (; next < last - first && window.at(k).wave == wave; ++next, ++k) {
        const plan::TaskRecord &t = window.at(k);
        window.beginTask(k);
        trace.beginTask();
        if (runTasks)
          runTask(a, t, step, ws, scratch);
#if TI_WORKER_STREAM
        else if (plan::streamsKvRows(t.flags, step.streamKv))
          skipStreamedKv(t, step, ws);
        else
          ws.skip(t);
#endif
        window.endTask();
        blockBarrier(); // The next task reuses the shared memory; its record has landed.
        trace.endTask(first + next);
      }
      const auto kind = static_cast<plan::BarrierKind>(barrierKinds[wave]);
      closed = barriers && (kind == plan::BarrierKind::Grid ||
                            (kind == plan::BarrierKind::GridIfLong && step.longMode));
      if (closed) {
        trace.begin();
        grid.sync();
        trace.end(TraceKind::GridBarrier, wave);
      }
    }
    if (!closed && barriers) {
      trace.begin();
      grid.sync();
      trace.end(TraceKind::GridBarrier, a.waveCount);
    }
    trace.finish();
  }
  window.finish();
#if TI_WORKER_STREAM
  if (threadIdx.x == 0)
    shared.stop.raise();
#endif
}

} // namespace TI_WORKER_MODEL_NAMESPACE

#if TI_WORKER_STREAM
const void *streamWorkerEntry(bool traced)
#else
const void *workerEntry(bool traced)
#endif
{
#if TI_WORKER_TRACE
  if (traced)
    return reinterpret_cast<const void *>(&workerKernel<true>);
#endif
  (void)traced;
  return reinterpret_cast<const void *>(&workerKernel<false>);
}

} // namespace ti::cuda
