//===- WeightStream.cuh - How ops read weight bytes -------------*- CUDA -*-===//
//
// The one interface through which tasks read the weights data, and in the
// Stream worker the ring through which attention tasks with kFlagStreamKv
// also read their cached K/V rows (from the arena: WeightProducer::fillKv).
//
// Random access by byte offset (both models): each load issued by the thread
// that uses it. The Plain worker reads everything this way; the Stream worker
// only what is not streamed (the embedding row, chosen by the token, and the
// norm scales, a few KB that every worker of a wave shares in L2).
//
// The ring (Stream worker, ti/Plan/Execution.h): the producer lane's
// WeightProducer copies every streamed segment of the worker's tasks, step
// after step, into the next free stage; the consumers' WeightStream::consume
// walks the same segments stage by stage in the same order, so both sides
// agree on every stage from the plan and the step's position alone (a
// streamed attention task's K/V blocks depend on it: AttentionStream.cuh,
// AttentionStreamMma.cuh).
//
// The contract an op keeps:
//   - beginTask(t) before its first load of task t, endTask() after its last
//     (every thread of the block calls both);
//   - loads name 16-byte aligned offsets inside the task's weight slices
//     (`weight` .. + weightBytes, and its norm scale);
//   - the returned values are the bytes of the weights data as uploaded.
//
// Today: plain 16-byte non-coherent global loads (ld.global.nc, not allocated
// in L1: each weight byte is read once per step), issued by the consuming
// thread itself; beginTask/endTask do nothing.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_WEIGHTSTREAM_CUH
#define TI_LIB_RUNTIME_CUDA_WEIGHTSTREAM_CUH

#include "Config.cuh"
#include "Schedule.cuh"
#include "Sync.cuh"
#include "TraceMarks.cuh"

#include "ti/Plan/AttentionLayout.h"
#include "ti/Plan/Execution.h"
#include "ti/Plan/TaskRecord.h"
#include "ti/Plan/WeightTiles.h"

#include <cstdint>

TI_WORKER_NAMESPACE_BEGIN

/// Eight bf16 values, as loaded: element 2i in the low half of word i.
/// Element `high` (0: the low half, 1: the high) of a word of two bf16,
/// widened to float (exact).
__device__ __forceinline__ float bf16OfWord(uint32_t word, uint32_t high) {
  return __uint_as_float(high ? (word & 0xffff0000u) : (word << 16));
}

struct Bf16x8 {
  uint32_t w[4];
  /// Element e (0..7) widened to float (exact).
  __device__ __forceinline__ float at(uint32_t e) const { return bf16OfWord(w[e / 2], e & 1); }
};
static_assert(sizeof(Bf16x8) == 16);

/// A position in the weights data that a thread reads forward from: loads at
/// small constant distances, then a step forward (the distances become the
/// load instructions' immediate offsets).
class WeightCursor {
public:
  WeightCursor() = default;
  __device__ explicit WeightCursor(const uint8_t *at) : at_(at) {}

  /// The 8 bf16 at `distance` bytes past the cursor (16-byte aligned).
  __device__ __forceinline__ Bf16x8 load(uint32_t distance = 0) const {
    Bf16x8 v;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3])
        : "l"(at_ + distance));
    return v;
  }
  __device__ __forceinline__ void advance(uint64_t bytes) { at_ += bytes; }

private:
  const uint8_t *at_ = nullptr;
};

/// A position in a stage of the ring: the 8 bf16 at constant distances past
/// it (shared-memory loads, 16-byte aligned).
class SharedCursor {
public:
  __device__ explicit SharedCursor(const uint8_t *at) : at_(at) {}
  __device__ __forceinline__ Bf16x8 load(uint32_t distance = 0) const {
    const uint4 v = *reinterpret_cast<const uint4 *>(at_ + distance);
    return Bf16x8{{v.x, v.y, v.z, v.w}};
  }

private:
  const uint8_t *at_;
};

#if TI_WORKER_STREAM
/// The ring's stages and their barriers, in the worker's shared memory.
struct Ring {
  uint8_t *stages;     // stages x stageBytes, 16-byte aligned.
  StageBarrier *full;  // [stages]
  StageBarrier *empty; // [stages]
  uint32_t stageBytes, count;

  __device__ uint8_t *stage(uint32_t i) const { return stages + i * stageBytes; }
  /// The first byte past the ring (the worker's schedule starts there).
  __device__ uint8_t *end() const { return stages + uint64_t(stageBytes) * count; }
};

/// A walk over the ring's stages in fill order: the stage, and the parity of
/// the barrier phase its current fill completes.
struct RingPosition {
  uint32_t stage = 0, parity = 0;
  __device__ void advance(uint32_t count) {
    if (++stage == count) {
      stage = 0;
      parity ^= 1;
    }
  }
};
#endif

class WeightStream {
public:
#if TI_WORKER_STREAM
  /// `waits` false: the stages are read without waiting for them or
  /// releasing them (WorkerMode::ComputeOnly, where nothing fills the ring).
  /// `marksInputs`: inputsReady() stamps traceInputsAt. The worker passes
  /// its kernel's kTraced, a constant once the ops are inlined (they are:
  /// runTask), so false compiles the stamp to nothing; a template parameter
  /// would make every op a template for one branch.
  __device__ WeightStream(const uint8_t *weights, const Ring &ring, uint32_t rowPartBytes,
                          bool waits, bool marksInputs)
      : base_(weights), marksInputs_(marksInputs), ring_(ring), rowPartBytes_(rowPartBytes),
        waits_(waits) {}
#else
  __device__ WeightStream(const uint8_t *weights, bool marksInputs)
      : base_(weights), marksInputs_(marksInputs) {}
#endif

  __device__ void beginTask(const plan::TaskRecord &) {}
  __device__ void endTask() {}

#if TI_WORKER_STREAM
  /// The consumers' wave for the producer's throttle (Sync.cuh, ConsumerWave)
  /// once the wave's inputs are here: after a tagged hand-off the consumers
  /// begin a wave before its inputs exist, and the copies a published wave
  /// allows would sit in front of their polls. Thread 0 publishes `wave` at
  /// the next inputsReady(), or at once with `now`.
  __device__ void beginWave(ConsumerWave &consumerWave, uint32_t wave, bool now) {
    if (threadIdx.x != 0)
      return;
    consumerWave_ = &consumerWave;
    pendingWave_ = wave;
    pending_ = !now;
    if (now)
      consumerWave.publish(wave);
  }
  /// Every consumer thread, once its task has every input it waits for.
  __device__ __forceinline__ void inputsReady() {
    stampInputs();
    if (threadIdx.x == 0 && pending_) {
      consumerWave_->publish(pendingWave_);
      pending_ = false;
    }
  }
#else
  __device__ __forceinline__ void inputsReady() { stampInputs(); }
#endif

#if TI_WORKER_STREAM
  /// Every consumer thread, for every streamed segment of its tasks in order:
  /// per stage of `s`, waits for it to land, calls body(first, rows, data)
  /// (rows [first, first + rows) of the segment at `data`, in shared memory),
  /// then releases the stage.
  template <typename Body>
  __device__ __forceinline__ void consume(const plan::StreamSegment &s, Body body) {
    const uint32_t per = plan::rowsPerStage(s, ring_.stageBytes);
#pragma unroll 1
    for (uint32_t first = 0; first < s.rows; first += per) {
      if (waits_)
        ring_.full[at_.stage].wait(at_.parity);
      body(first, min(per, s.rows - first), ring_.stage(at_.stage));
      // Every consumer thread releases its own reads of the stage (an
      // arrive releases only the arriving thread's accesses).
      if (waits_)
        ring_.empty[at_.stage].arrive();
      at_.advance(ring_.count);
    }
  }

  /// Every consumer thread, for every tiled segment of a kFlagTiledWeights
  /// task in order (WeightTiles.h): per octet of `s`, per piece of it (one
  /// stage each), waits for it to land, calls body(octet, first, bytes,
  /// data) (the piece's bytes, starting `first` bytes into the octet, at
  /// `data` in shared memory) and releases the stage.
  template <typename Body>
  __device__ __forceinline__ void consumeTiled(const plan::StreamSegment &s, Body body) {
    const uint32_t octet = plan::octetBytes(s.rowBytes);
#pragma unroll 1
    for (uint32_t o = 0; o < s.rows / plan::kTileRows; ++o)
#pragma unroll 1
      for (uint32_t first = 0; first < octet; first += ring_.stageBytes) {
        if (waits_)
          ring_.full[at_.stage].wait(at_.parity);
        body(o, first, plan::tiledPieceBytes(octet, first, ring_.stageBytes),
             ring_.stage(at_.stage));
        if (waits_)
          ring_.empty[at_.stage].arrive();
        at_.advance(ring_.count);
      }
  }

  /// The bytes of a part of a streamed row: longer rows are cut into parts
  /// (Execution.h: StreamConfig::rowPartBytes; 0: whole rows).
  __device__ uint32_t rowPartBytes() const { return rowPartBytes_; }

  /// The ring's stage size (the K/V blocks of the streamed attention fit one).
  __device__ uint32_t stageBytes() const { return ring_.stageBytes; }

  /// Releases task t's stages unread (WorkerMode::StreamOnly).
  __device__ void skip(const plan::TaskRecord &t) {
    const uint32_t segments = plan::streamSegmentCount(static_cast<plan::Opcode>(t.opcode));
    for (uint32_t k = 0; k < segments; ++k) {
      if (t.flags & plan::kFlagTiledWeights)
        consumeTiled(plan::streamSegment(t, k), [](uint32_t, uint32_t, uint32_t, const uint8_t *) {});
      else
        consume(plan::streamSegment(t, k), [](uint32_t, uint32_t, const uint8_t *) {});
    }
  }
#endif

  /// A cursor at byte `offset` of the weights data (a multiple of 16).
  __device__ __forceinline__ WeightCursor at(uint64_t offset) const {
    return WeightCursor(base_ + offset);
  }
  /// The 8 bf16 at byte `offset` of the weights data (a multiple of 16).
  __device__ __forceinline__ Bf16x8 load(uint64_t offset) const { return at(offset).load(); }
  /// The 2 bf16 at byte `offset` of the weights data (a multiple of 4), the
  /// lower element in the lower half.
  __device__ __forceinline__ uint32_t loadWord(uint64_t offset) const {
    uint32_t w;
    asm("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(w) : "l"(base_ + offset));
    return w;
  }

private:
  /// The tracer's mark: thread 0's first arrival in the task.
  __device__ __forceinline__ void stampInputs() {
    if (marksInputs_ && threadIdx.x == 0 && traceInputsAt == 0)
      traceInputsAt = globalTimer();
  }

  const uint8_t *base_;
  bool marksInputs_;
#if TI_WORKER_STREAM
  Ring ring_;
  uint32_t rowPartBytes_;
  bool waits_;
  RingPosition at_; // The next stage this thread consumes.
  // Thread 0's: the wave to publish at inputsReady(), if pending_.
  ConsumerWave *consumerWave_ = nullptr;
  uint32_t pendingWave_ = 0;
  bool pending_ = false;
#endif
};

#if TI_WORKER_STREAM
/// The producer: one thread of the producer warpgroup. It fills the ring with the
/// streamed segments of the worker's `count` tasks (its schedule), for every
/// step of the launch, never waiting for anything but a free stage and the cap
/// on copies in flight (the plan's hand-off cap for a stage of a wave the
/// consumers have not begun, `consumerWave`); it stops early when the
/// consumers raise `stop`. Before it returns, every copy it issued has landed
/// (the block's shared memory must outlive them).
class WeightProducer {
public:
  /// What the producer needs to stream kFlagStreamKv attention tasks' K/V
  /// rows: the arena that holds the caches, their rows, the contexts that
  /// decide which steps stream (TaskRecord.h: streamsKvAt), and the launch's
  /// first position (the steps decode startPos, startPos + 1, ...).
  struct KvStreamArgs {
    const uint8_t *arena;
    uint32_t maxContext, splitContext, streamKvContext, shortMmaContext;
    int32_t startPos;
  };

  /// `evictFirst`: every copy marks what it reads evict-first in L2
  /// (StreamConfig::copiesEvictFirst), but the K/V rows' copies where
  /// `kvUnhinted` (StreamConfig::kvCopiesUnhinted).
  __device__ WeightProducer(const uint8_t *weights, const Ring &ring, uint32_t inFlight,
                            uint32_t handOffInFlight, bool evictFirst, bool kvUnhinted,
                            ConsumerSignal &stop, ConsumerWave &consumerWave,
                            const KvStreamArgs &kv)
      : base_(weights), ring_(ring), inFlight_(inFlight), handOffInFlight_(handOffInFlight),
        evictFirst_(evictFirst), kvEvictFirst_(evictFirst && !kvUnhinted),
        policy_(evictFirst ? evictFirstPolicy() : 0), stop_(stop), consumerWave_(consumerWave),
        kv_(kv) {}

  /// `tasks`: the worker's `count` records in global memory, read through a
  /// window of the producer's own in `slots` (Schedule.cuh).
  __device__ void run(const plan::TaskRecord *tasks, uint32_t count, WindowSlots &slots,
                      uint32_t waves, int32_t steps) {
    ScheduleWindow<true> window(tasks, count, slots);
    window.prime();
    fillSteps(window, count, waves, steps);
    window.finish();
    drain();
  }

private:
  /// Every task's streamed segments, every step; false once stopped.
  __device__ bool fillSteps(ScheduleWindow<true> &window, uint32_t count, uint32_t waves,
                            int32_t steps) {
    uint32_t k = 0; // Tasks begun: record k is the window's.
    for (int32_t step = 0; step < steps; ++step)
      for (uint32_t i = 0; i < count; ++i, ++k) {
        if (k > 0)
          window.endTask(); // Record k has landed.
        window.beginTask(k);
        const plan::TaskRecord &t = window.at(k);
        const uint32_t wave = uint32_t(step) * waves + t.wave;
        if (t.flags & plan::kFlagStreamKv) {
          if (!fillKv(t, step, waves, wave))
            return false;
          continue;
        }
        const uint32_t segments = plan::streamSegmentCount(static_cast<plan::Opcode>(t.opcode));
        const bool tiled = t.flags & plan::kFlagTiledWeights;
        for (uint32_t j = 0; j < segments; ++j) {
          const plan::StreamSegment seg = plan::streamSegment(t, j);
          if (!(tiled ? fillTiled(seg, wave) : fill(seg, wave)))
            return false;
        }
      }
    return true;
  }

  /// Waits for phase `parity` of `barrier`, or returns false once stopped.
  __device__ bool waitUnlessStopped(StageBarrier &barrier, uint32_t parity) {
    while (!barrier.tryWait(parity))
      if (stop_.raised())
        return false;
    return true;
  }

  /// Whether the consumers have begun launch wave `wave` (the word is read
  /// only until they have: it only grows).
  __device__ bool reached(uint32_t wave) {
    if (wave > reached_)
      reached_ = consumerWave_.read();
    return wave <= reached_;
  }

  /// Waits until one more copy, for launch wave `wave`, may start: fewer than
  /// the cap issued and not known to have landed, the cap being
  /// handOffInFlight_ while the consumers have not begun that wave and
  /// inFlight_ once they have. Copies are confirmed in issue order (landed_
  /// counts them, landedAt_ is the next one's stage and parity), so a poll
  /// costs one barrier test. Since never more than the cap (at most the
  /// ring's depth) are unconfirmed, the next one's stage holds it or its
  /// completed fill, never a later copy. False once stopped.
  __device__ bool waitForCopySlot(uint32_t wave) {
    for (;;) {
      // A plan that caps nothing more ahead of the consumers needs not look.
      const bool ahead = handOffInFlight_ != inFlight_ && !reached(wave);
      const uint32_t cap = ahead ? handOffInFlight_ : inFlight_;
      while (landed_ < issued_ && issued_ - landed_ >= cap &&
             ring_.full[landedAt_.stage].tryWait(landedAt_.parity)) {
        ++landed_;
        landedAt_.advance(ring_.count);
      }
      if (issued_ - landed_ < cap)
        return true;
      if (stop_.raised())
        return false;
      if (ahead && cap == 0) // Until a hand-off ends: poll its word gently.
        __nanosleep(kPausePollNanoseconds);
    }
  }

  /// Copies segment `s`, of launch wave `wave`, into the next stages.
  __device__ bool fill(const plan::StreamSegment &s, uint32_t wave) {
    return fillFrom(base_, s, wave, evictFirst_);
  }

  /// Copies tiled segment `s` (WeightTiles.h), of launch wave `wave`, into
  /// the next stages: octet after octet, each in pieces of a stage, as
  /// WeightStream::consumeTiled takes them.
  __device__ bool fillTiled(const plan::StreamSegment &s, uint32_t wave) {
    const uint32_t octet = plan::octetBytes(s.rowBytes);
    const uint8_t *src = base_ + s.offset;
    for (uint32_t o = 0; o < s.rows / plan::kTileRows; ++o, src += octet)
      for (uint32_t first = 0; first < octet; first += ring_.stageBytes)
        if (!copyStage(src + first, plan::tiledPieceBytes(octet, first, ring_.stageBytes), wave,
                       evictFirst_))
          return false;
    return true;
  }

  /// Attention task t's cached K/V rows at launch step `step`
  /// (ops/AttentionStream.cuh and AttentionStreamMma.cuh walk the same blocks): [begin, min(end, pos))
  /// of its kv head, kvBlockRows at a time, a block's K rows then its V rows.
  /// Earlier steps' tasks, on any worker, wrote them with ordinary stores;
  /// the grid barrier that ends a step orders those before the next, so the
  /// producer, which may run a step ahead of its consumers (a whole step of
  /// a small model fits the ring), first waits until they have begun this
  /// step (ConsumerWave: release, acquire), and the proxy fence then orders
  /// the stores before the bulk copies, which read through the async proxy.
  /// False once stopped.
  __device__ bool fillKv(const plan::TaskRecord &t, int32_t step, uint32_t waves,
                         uint32_t wave) {
    const plan::HeadGeometry geo = t.geometry;
    const int32_t pos = kv_.startPos + step;
    const uint32_t ctx = uint32_t(pos + 1);
    if (!plan::streamsKvRows(t.flags, plan::streamsKvAt(ctx, kv_.splitContext,
                                                        kv_.streamKvContext,
                                                        kv_.shortMmaContext)))
      return true;
    const plan::KvBlocks blocks = plan::kvBlocks(t.aux[1], geo.chunks, pos, ctx > kv_.splitContext,
                                                 ring_.stageBytes, geo.headDim, kThreads);
    if (blocks.count() == 0)
      return true;
    const uint32_t rowBytes = 2u * geo.headDim;
    const uint64_t head = 2 * plan::KvCacheLayout::of(geo, kv_.maxContext).row(0, t.aux[0]);
    while (!reached(uint32_t(step) * waves)) {
      if (stop_.raised())
        return false;
      __nanosleep(kPausePollNanoseconds);
    }
    fenceGenericBeforeBulkCopies();
    for (int32_t base = blocks.begin; base < blocks.end; base += int32_t(blocks.blockRows)) {
      const uint32_t count = blocks.rowsAt(base);
      const uint64_t at = head + uint64_t(base) * rowBytes;
      if (!fillFrom(kv_.arena, plan::StreamSegment{t.in[1] + at, count, rowBytes}, wave,
                    kvEvictFirst_) ||
          !fillFrom(kv_.arena, plan::StreamSegment{t.in[2] + at, count, rowBytes}, wave,
                    kvEvictFirst_))
        return false;
    }
    return true;
  }

  /// Copies segment `s` of the data at `base`, of launch wave `wave`, into
  /// the next stages, evict-first in L2 where `evictFirst`.
  __device__ bool fillFrom(const uint8_t *base, const plan::StreamSegment &s, uint32_t wave,
                           bool evictFirst) {
    const uint32_t per = plan::rowsPerStage(s, ring_.stageBytes);
    for (uint32_t first = 0; first < s.rows; first += per)
      if (!copyStage(base + s.offset + uint64_t(first) * s.rowBytes,
                     min(per, s.rows - first) * s.rowBytes, wave, evictFirst))
        return false;
    return true;
  }

  /// Copies `bytes` at `src`, of launch wave `wave`, into the next stage,
  /// evict-first in L2 where `evictFirst`.
  __device__ bool copyStage(const uint8_t *src, uint32_t bytes, uint32_t wave, bool evictFirst) {
    // The stage is free once every consumer thread released its previous fill
    // (a fresh barrier's phase of the other parity counts as complete).
    if (!waitUnlessStopped(ring_.empty[at_.stage], at_.parity ^ 1))
      return false;
    if (!waitForCopySlot(wave))
      return false;
    StageBarrier &full = ring_.full[at_.stage];
    full.arriveExpectingBytes(bytes);
    if (evictFirst)
      full.bulkCopy(ring_.stage(at_.stage), src, bytes, policy_);
    else
      full.bulkCopy(ring_.stage(at_.stage), src, bytes);
    ++issued_;
    at_.advance(ring_.count);
    return true;
  }

  /// Waits for the copies still in flight (the last `count` at most).
  __device__ void drain() {
    for (uint64_t j = issued_ > ring_.count ? issued_ - ring_.count : 0; j < issued_; ++j)
      ring_.full[j % ring_.count].wait(uint32_t(j / ring_.count) & 1);
  }

  const uint8_t *base_;
  Ring ring_;
  uint32_t inFlight_, handOffInFlight_;
  bool evictFirst_, kvEvictFirst_; // The weights' copies' hint, and the K/V rows'.
  uint64_t policy_; // The copies' L2 policy where evictFirst_.
  ConsumerSignal &stop_;
  ConsumerWave &consumerWave_;
  KvStreamArgs kv_;
  uint32_t reached_ = 0; // The consumers' launch wave, as last read.
  RingPosition at_;
  uint64_t issued_ = 0;
  uint64_t landed_ = 0;    // Copies confirmed landed, in issue order.
  RingPosition landedAt_;  // Copy landed_'s stage and parity.
};
#endif

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_WEIGHTSTREAM_CUH
