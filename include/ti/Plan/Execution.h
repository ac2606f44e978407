//===- Execution.h - How a worker executes a plan, and its weight stream -*- C++ -*-===//
//
// A plan names one of two execution models of the worker:
//
//   Plain   the TileInfer post's design: every thread of the block computes
//           and loads its own weights (16-byte loads), a grid barrier per
//           wave. Runs on every supported GPU.
//   Stream  a decoupled weight stream (sm_90): one producer lane copies the
//           worker's weight bytes for the whole step, in task order, into a
//           shared-memory ring with the bulk-copy engine, and keeps running
//           ahead across tasks, waves and steps; it waits only for a free
//           stage (and, before the K/V rows of a step, until its consumers
//           have begun that step). The consumer warps compute from the ring
//           and release each stage.
//
// The stream of a task is its weight slice cut into segments of equal rows
// (streamSegment): one for a Gemv or an LmHead (its rows of K), two for a
// GateUp (its gate rows, then its up rows), three for an FfnPartial (its gate
// rows, up rows and down columns, each of H); none for an Attention, whose
// cached K/V rows, with kFlagStreamKv, follow the step's position instead
// (AttentionLayout.h: kvBlockRows; TaskRecord.h: streamsKvAt). A stage
// holds whole rows of one segment: rowsPerStage of them, the segment's last
// stage the rest. The producer and the consumers walk the same sequence, so
// they agree on every stage without telling each other more than "full" and
// "free". The compiler (plan-stream) chooses the stage size, the ring's depth
// and the bulk copies in flight from the target; the verifier checks them
// (every row fits a stage); both executors compute the same values either way.
//
//===----------------------------------------------------------------------===//
#ifndef TI_PLAN_EXECUTION_H
#define TI_PLAN_EXECUTION_H

#include "ti/Plan/TaskRecord.h"
#include "ti/Support/HostDevice.h"

#include <cstdint>

namespace ti::plan {

enum class ExecutionModel : uint8_t {
  Plain = 0,
  Stream = 1,
};
/// "plain", "stream", or null for a value that is neither.
const char *executionModelName(ExecutionModel model);

/// Threads of each model's worker block, and of them the ones that run the
/// tasks (the shared-memory layouts of WorkerLayout.h are for these). The
/// stream worker's producer warpgroup does not run tasks: one of its lanes
/// issues the bulk copies, and its four warps exist because `setmaxnreg`
/// moves registers a warpgroup at a time. Its 8 consumer warps: with 16 a
/// thread had 96 registers, too few to keep a 4 KB row's slice of x' in
/// them, and the research ring streamed 8-10% slower (docs/PERFORMANCE.md,
/// step 4, which also has what 8 cost: long-context attention, whose loads
/// each thread issues, is slower).
constexpr uint32_t kPlainWorkerThreads = 1024;
constexpr uint32_t kStreamConsumerThreads = 256;
constexpr uint32_t kStreamProducerThreads = 128;
constexpr uint32_t kStreamWorkerThreads = kStreamConsumerThreads + kStreamProducerThreads;
/// Registers per thread that run tasks: 65536 / 1024 for the Plain worker.
/// The Stream worker's block of 384 launches with 168 a thread (65536 / 384
/// rounded down to the allocation's multiple of 8; __launch_bounds__(384, 1)
/// caps ptxas there); then the producer warpgroup gives back all but 56 of
/// its own (`setmaxnreg.dec`, sm_90a) and the consumers take them
/// (`setmaxnreg.inc`): 168 - 56 = 112 more for each of 128 producer threads
/// is 56 more for each of 256 consumers, 224 a thread (step 17 of
/// docs/PERFORMANCE.md measured what the 168 had cost).
constexpr uint32_t kPlainWorkerRegisters = 64;
constexpr uint32_t kStreamLaunchRegisters = 168;
constexpr uint32_t kStreamProducerRegisters = 56;
constexpr uint32_t kStreamWorkerRegisters = 224;
static_assert(kStreamLaunchRegisters * kStreamWorkerThreads <= 65536 &&
                  (kStreamLaunchRegisters + 8) * kStreamWorkerThreads > 65536,
              "the launch's registers fill the SM's 64K to the allocation's multiple of 8");
static_assert(kStreamProducerRegisters * kStreamProducerThreads +
                      kStreamWorkerRegisters * kStreamConsumerThreads <=
                  kStreamLaunchRegisters * kStreamWorkerThreads,
              "the consumers take no more registers than the launch allotted and the producer gave");
static_assert(kStreamProducerRegisters % 8 == 0 && kStreamWorkerRegisters % 8 == 0 &&
                  kStreamProducerRegisters >= 24 && kStreamWorkerRegisters <= 256,
              "setmaxnreg takes multiples of 8 in [24, 256]");

/// The GPU architecture the Stream worker is built for and needs (the
/// bulk-copy engine); every other GPU runs the Plain worker.
constexpr const char *kStreamArch = "sm_90";
/// Ring stages a Stream plan may have (the worker keeps a barrier pair each).
constexpr uint32_t kMaxStreamStages = 16;
/// Where the ring starts in shared memory: bulk copies into 128-byte aligned
/// stages run at full speed (measured on the H200: 16-byte aligned ones
/// streamed at 72% of the floor), and 1024 suits swizzled layouts too.
constexpr uint32_t kStreamRingAlignment = 1024;

TI_HOST_DEVICE constexpr uint32_t taskThreads(ExecutionModel model) {
  return model == ExecutionModel::Stream ? kStreamConsumerThreads : kPlainWorkerThreads;
}
TI_HOST_DEVICE constexpr uint32_t blockThreads(ExecutionModel model) {
  return model == ExecutionModel::Stream ? kStreamWorkerThreads : kPlainWorkerThreads;
}

/// The weight stream's shape; all zero in a Plain plan.
struct StreamConfig {
  ExecutionModel model = ExecutionModel::Plain;
  uint32_t stageBytes = 0;     // The capacity of one ring stage.
  uint32_t stages = 0;         // The ring's depth.
  uint32_t inFlightStages = 0; // Bulk copies issued and not yet landed, at most.
  /// The bulk copies in flight, at most, for a wave the consumers have not
  /// begun (at most inFlightStages; 0: none until they begin it): while they
  /// finish a wave and wait at its barrier, the copies in flight on their SM
  /// delay its own stores, barrier arrival and polls, and they need no stage
  /// of the next wave until the barrier ends.
  uint32_t handOffInFlightStages = 0;
  /// A streamed row longer than this is cut into equal parts of at most
  /// this many bytes where it can be (WorkerLayout.h: rowParts), each one
  /// warp's dot product, added in part order; 0: whole rows. Each warp keeps
  /// its part's slice of x' in registers: read from shared memory for every
  /// row, x' cost the consumers four times the shared-memory traffic of the
  /// weights. A stage of two 16 KB rows would also keep 2 of the 8 warps busy.
  uint32_t rowPartBytes = 0;
  /// Whether the bulk copies carry an L2 evict-first policy for what they
  /// read (`cp.async.bulk ... .L2::cache_hint`): each weight byte and K/V row
  /// a copy reads is read once in the step, so the lines the stream brings
  /// go before the hand-offs' values and the caches' rows. Values do not
  /// change either way.
  bool copiesEvictFirst = false;
  /// Where copiesEvictFirst holds: whether the copies of attention's cached
  /// K/V rows (kFlagStreamKv) go without it, so that L2 tells the two kinds
  /// of line apart. On an H100 the 8B 1.1-1.7% faster at 1,024-4,096 with
  /// it, the 1B 1.5-2.0% slower from 640 on (docs/PERFORMANCE.md, step 40):
  /// a target's choice, off in the built-in ones.
  bool kvCopiesUnhinted = false;

  TI_HOST_DEVICE constexpr uint64_t ringBytes() const { return uint64_t(stageBytes) * stages; }
  /// The shared memory the ring takes in the worker: its stages, placed at
  /// the next multiple of kStreamRingAlignment (the slack allows for that).
  TI_HOST_DEVICE constexpr uint64_t ringFootprint() const {
    return model == ExecutionModel::Plain ? 0 : ringBytes() + kStreamRingAlignment;
  }
};

/// Rows of equal length, back to back from `offset` of the weights data.
struct StreamSegment {
  uint64_t offset;
  uint32_t rows;
  uint32_t rowBytes;
};

/// The segments a task of `opcode` streams: 1 for a Gemv or an LmHead, 2 for
/// a GateUp, 3 for an FfnPartial, 0 for the opcodes that read no weight
/// matrix or read it by the token (Embed gathers one row directly).
TI_HOST_DEVICE constexpr uint32_t streamSegmentCount(Opcode opcode) {
  switch (opcode) {
  case Opcode::Gemv:
  case Opcode::LmHead: return 1;
  case Opcode::GateUp: return 2;
  case Opcode::FfnPartial: return 3;
  case Opcode::Nop:
  case Opcode::SelectToken:
  case Opcode::Embed:
  case Opcode::Attention:
  case Opcode::MergeAttention:
  case Opcode::ReduceResidual: return 0;
  }
  return 0;
}

/// Segment k of what task `t` streams (k < streamSegmentCount, in the order
/// they are consumed): its rows, after k segments of them from its weight
/// slice. Computed rather than indexed, so that a loop over a run-time k
/// keeps it in registers (a list indexed at run time went to local memory:
/// seven stores and a load on every tiled task's path).
TI_HOST_DEVICE constexpr StreamSegment streamSegment(const TaskRecord &t, uint32_t k) {
  const uint32_t rows = t.rowEnd - t.rowBegin;
  const uint32_t rowBytes = uint32_t(t.aux[0] * kWeightBytes);
  return StreamSegment{t.weight + uint64_t(k) * rows * rowBytes, rows, rowBytes};
}

/// Whole rows of `s` in one stage (a row must fit: the verifier checks).
TI_HOST_DEVICE constexpr uint32_t rowsPerStage(const StreamSegment &s, uint32_t stageBytes) {
  const uint32_t fit = stageBytes / s.rowBytes;
  return fit < s.rows ? fit : s.rows;
}

/// Stages of the ring that segment `s` fills, one after another.
TI_HOST_DEVICE constexpr uint32_t stagesOf(const StreamSegment &s, uint32_t stageBytes) {
  const uint32_t per = rowsPerStage(s, stageBytes);
  return per == 0 ? 0 : (s.rows + per - 1) / per;
}

} // namespace ti::plan

#endif // TI_PLAN_EXECUTION_H
