//===- WorkerLayout.h - A task's share of a worker's shared memory -*- C++ -*-===//
//
// The dynamic shared memory each task of a plan needs in the worker: one float
// array, reused by every task of a worker (a block barrier separates tasks),
// carved per opcode into regions, each 16-byte aligned:
//
//   Gemv             x'[K]
//   LmHead           x'[K], reused for the warps' best rows (3 words each)
//   GateUp           x'[K] | gate[n] (the gate rows' dot products)
//   FfnPartial       x'[H] | act[n] | down partials[G][H] (G > 1)
//   Attention        q'[group * D] | k'[D] | v[D] | states[warps][heads a lane, or
//                    the group][D + 2] | weights[group][threads] or
//                    [threads][4] (Stream plans: the streamed forms', attentionLayout)
//   ReduceResidual   partials[P][rows] (when they fit kReduceStagedFloats)
//   MergeAttention   partials[chunks][values] | (max, sum)[chunks][heads] |
//                    weights[chunks][heads] (mergeLayout)
//
// and then, in a Stream plan whose rows are cut into parts (Execution.h:
// StreamConfig::rowPartBytes; rowParts), the row partials: one float per part of each
// row of the task's longest streamed segment (rowPartialsFloats), at
// rowPartialsAt; a task whose weights are tiled (kFlagTiledWeights) has its
// tile partials there instead, one float per consumer warp of each row of
// each segment.
//
// One definition, host and device: the CUDA ops carve the array with it, the
// executor sizes the launch with it, and the compiler refuses a plan whose
// tasks need more than the target's worker offers (WorkerSupport.h). The
// inputs besides the task are the worker's thread count and the plan's row
// part (Execution.h).
//
// Before that array, each worker keeps the waves' barrier kinds, a byte a
// wave, copied from global memory once per launch. Its task records come
// through a window of a few slots in static shared memory, each fetched two
// tasks ahead (lib/Runtime/cuda/Schedule.cuh): read through L2 at each use
// they cost a dependent round trip at every task, behind the weight stream's
// bulk copies (docs/PERFORMANCE.md measured 0.5 us per task record), and a
// copy of the whole schedule took 10 KB (Llama 3.2 1B) to 20 KB (Llama 3.1
// 8B) of what the weight stream's ring can use.
//
//===----------------------------------------------------------------------===//
#ifndef TI_PLAN_WORKERLAYOUT_H
#define TI_PLAN_WORKERLAYOUT_H

#include "ti/Plan/Execution.h"
#include "ti/Plan/TaskRecord.h"
#include "ti/Support/HostDevice.h"

#include <cstdint>

namespace ti::plan {

/// One weight load of the worker (its vector): 16 bytes, and its elements.
constexpr uint32_t kWorkerVectorBytes = 16;
constexpr uint32_t kWorkerVector = kWorkerVectorBytes / kWeightBytes;
/// The stream worker's FFN partial keeps the down projection's columns of a
/// thread's vectors in registers across the stages: a thread covers at most
/// this many vectors of a row (hidden <= 8 * threads * this).
constexpr uint32_t kFfnColumnPasses = 4;
/// ReduceResidual stages its partials in shared memory up to this many floats
/// (32 KiB: 128 partials of 64 rows).
constexpr uint32_t kReduceStagedFloats = 8192;

/// Rounds a float count up to a 16-byte boundary.
TI_HOST_DEVICE constexpr uint32_t alignFloats(uint32_t n) { return (n + 3u) & ~3u; }

/// A worker's schedule in dynamic shared memory: one plan::BarrierKind byte
/// per wave of `waves`, rounded up to 16 bytes (the tasks' array follows it).
/// (Its task records' window is in static shared memory.)
TI_HOST_DEVICE constexpr uint32_t scheduleBytesFor(uint32_t waves) { return (waves + 15u) & ~15u; }

/// FfnPartial's down projection: `groups` sets of threads each sum every
/// groups-th unit into 8 columns per thread, then the sets are added in order.
struct FfnLayout {
  uint32_t hidden, units, vectors, groups;
  uint32_t xAt, actAt, partialsAt, floats;
};
TI_HOST_DEVICE constexpr FfnLayout ffnLayout(uint32_t hidden, uint32_t units, uint32_t threads) {
  FfnLayout l{};
  l.hidden = hidden;
  l.units = units;
  l.vectors = hidden / kWorkerVector;
  l.groups = l.vectors >= threads ? 1u : threads / l.vectors;
  l.xAt = 0;
  l.actAt = alignFloats(hidden);
  l.partialsAt = l.actAt + alignFloats(units);
  l.floats = l.partialsAt + (l.groups > 1 ? l.groups * hidden : 0u);
  return l;
}

/// The group of query heads whose online softmaxes one attention lane of the
/// Stream worker keeps together: Llama 3.2 1B's and 3.1 8B's 4 per kv head.
constexpr uint32_t kAttentionLaneGroup = 4;

/// The query heads of a group whose online softmax one attention lane keeps
/// in registers (D/8 + 2 floats a head, beside its K/V rows in flight), in a
/// worker of `threads` task threads: the Stream worker's (168 registers a
/// thread) keep a whole group of kAttentionLaneGroup, so that each K/V row is
/// loaded once; other groups, and the Plain worker's lanes (64 registers),
/// one head, the warps splitting the group's heads among them. One group
/// size only: each one the worker's chunk loop is compiled for added ~40 KB
/// of kernel code, and the code's size cost every task (docs/PERFORMANCE.md,
/// step 5).
TI_HOST_DEVICE constexpr uint32_t attentionHeadsPerLane(uint32_t threads, uint32_t group) {
  return threads <= kStreamConsumerThreads && group == kAttentionLaneGroup ? group : 1u;
}

/// The query heads of a kv head whose scores over streamed K rows one
/// `mma.sync.m16n8k16` takes: its 8 columns are each head's query as bf16
/// hi and lo (ops/AttentionStreamMma.cuh).
constexpr uint32_t kStreamedMmaHeads = 4;

/// Whether the Stream worker's streamed attention (kFlagStreamKv) scores on
/// the tensor cores (ops/AttentionStreamMma.cuh): heads of 64 or 128
/// dimensions (Llama 3.2 1B's; 3B's and 3.1 8B's), at most kStreamedMmaHeads
/// query heads a kv head. Other geometries take ops/AttentionStream.cuh.
TI_HOST_DEVICE constexpr bool streamedScoresOnTensorCores(uint32_t headDim, uint32_t group) {
  return (headDim == 64 || headDim == 128) && group >= 1 && group <= kStreamedMmaHeads;
}

/// The attention op's regions (of the task's layer's geometry): rotated
/// queries of the group, the current key and value, and each warp's online
/// softmax states, one per head its lanes keep (attentionHeadsPerLane): the
/// weighted sums of the values (D), then the running max and sum. In the
/// Stream worker, the blocks of streamed K/V rows (kFlagStreamKv) also use
/// states and a block's weights: ops/AttentionStream.cuh one state per warp
/// (D sums, the running max, the sum of the weights) and weights
/// [group][threads]; ops/AttentionStreamMma.cuh a state per warp and head of
/// the group and weights [threads][kStreamedMmaHeads].
struct AttentionLayout {
  uint32_t qAt, kAt, vAt, statesAt, stateStride, headsPerLane, weightsAt, floats;
};
TI_HOST_DEVICE constexpr AttentionLayout attentionLayout(const HeadGeometry &g, uint32_t threads) {
  AttentionLayout l{};
  const bool stream = threads <= kStreamConsumerThreads;
  const uint32_t warps = threads / 32;
  l.qAt = 0;
  l.kAt = alignFloats(g.group() * g.headDim);
  l.vAt = l.kAt + alignFloats(g.headDim);
  l.statesAt = l.vAt + alignFloats(g.headDim);
  l.stateStride = g.headDim + 2;
  l.headsPerLane = attentionHeadsPerLane(threads, g.group());
  const bool mma = stream && streamedScoresOnTensorCores(g.headDim, g.group());
  // States a warp: a head's (at least one) where lanes keep headsPerLane (<=
  // the group), every head's of the group where each warp keeps an online
  // softmax per head (AttentionStreamMma.cuh).
  const uint32_t perWarp = mma ? g.group() : l.headsPerLane;
  const uint32_t states = warps * perWarp * l.stateStride;
  l.weightsAt = l.statesAt + alignFloats(states);
  const uint32_t weights = (mma ? kStreamedMmaHeads : g.group()) * threads;
  l.floats = stream ? l.weightsAt + alignFloats(weights) : l.statesAt + states;
  return l;
}

/// The merge's regions (ops/MergeAttention.cuh) for `values` outputs of
/// `heads` heads over `chunks` attention chunks: every chunk's partials
/// [chunks][values], its (max, sum) of each head [chunks][heads][2] and each
/// chunk's weight of each head [chunks][heads].
struct MergeLayout {
  uint32_t partsAt, statsAt, weightsAt, floats;
};
TI_HOST_DEVICE constexpr MergeLayout mergeLayout(uint32_t chunks, uint32_t values, uint32_t heads) {
  MergeLayout l{};
  l.partsAt = 0;
  l.statsAt = alignFloats(chunks * values);
  l.weightsAt = l.statsAt + alignFloats(2 * chunks * heads);
  l.floats = l.weightsAt + chunks * heads;
  return l;
}

/// Floats of the op's own regions (above) for task t in a worker of `threads`.
TI_HOST_DEVICE constexpr uint32_t opFloatsFor(const TaskRecord &t, uint32_t threads) {
  switch (static_cast<Opcode>(t.opcode)) {
  case Opcode::Gemv:
    return alignFloats(t.aux[0]);
  case Opcode::LmHead: // x'[K], then the warps' best rows (3 words each).
    return alignFloats(t.aux[0]) > 3 * (threads / 32) ? alignFloats(t.aux[0]) : 3 * (threads / 32);
  case Opcode::GateUp:
    return alignFloats(t.aux[0]) + alignFloats(t.rowEnd - t.rowBegin);
  case Opcode::FfnPartial:
    return ffnLayout(t.aux[0], t.rowEnd - t.rowBegin, threads).floats;
  case Opcode::Attention:
    return attentionLayout(t.geometry, threads).floats;
  case Opcode::ReduceResidual: {
    const uint64_t staged = uint64_t(t.aux[1]) * (t.rowEnd - t.rowBegin);
    return staged <= kReduceStagedFloats ? static_cast<uint32_t>(staged) : 0u;
  }
  case Opcode::MergeAttention: {
    const uint32_t values = t.rowEnd - t.rowBegin;
    return t.geometry.headDim
               ? mergeLayout(t.geometry.chunks, values, values / t.geometry.headDim).floats
               : 0;
  }
  case Opcode::Nop:
  case Opcode::SelectToken:
  case Opcode::Embed:
    return 0;
  }
  return 0;
}

/// The most parts a streamed row is cut into: one consumer warp's each. A
/// warp keeps one part of every row it takes (its slice of x' in registers),
/// so the parts of a row are a power of two that divides the warps.
constexpr uint32_t kMaxRowParts = kStreamConsumerThreads / 32;

/// The equal parts a streamed row of `rowBytes` is cut into for parts of at
/// most `partBytes` (0: whole rows): the fewest P, a power of two, with
/// rowBytes / P <= partBytes, as long as P divides the row's 16-byte vectors
/// and kMaxRowParts (else the largest such P below it). Part p is the row's
/// vectors [p * V / P, (p + 1) * V / P), V = rowBytes / 16.
TI_HOST_DEVICE constexpr uint32_t rowParts(uint32_t rowBytes, uint32_t partBytes) {
  const uint32_t vectors = rowBytes / kWorkerVectorBytes;
  uint32_t parts = 1;
  while (partBytes && rowBytes / parts > partBytes && 2 * parts <= kMaxRowParts &&
         vectors % (2 * parts) == 0)
    parts *= 2;
  return parts;
}

/// Floats of the tile partials of a kFlagTiledWeights task (ops/TiledGemv.cuh):
/// each consumer warp's sum over its tiles of every row of every segment.
TI_HOST_DEVICE constexpr uint64_t tilePartialsFloats(const TaskRecord &t, uint32_t threads) {
  // Every segment has the task's rows (Execution.h: streamSegment).
  const uint64_t rows = uint64_t(streamSegmentCount(static_cast<Opcode>(t.opcode))) *
                        (t.rowEnd - t.rowBegin);
  return rows * (threads / 32);
}

/// Floats of row partials task t needs: rows x parts of its longest streamed
/// segment, when its rows are cut (0 otherwise); a tiled task's, its tile
/// partials; past 2^32 - 1 (a plan no worker could hold) it saturates, so the
/// shared-memory check refuses it.
TI_HOST_DEVICE constexpr uint32_t rowPartialsFloats(const TaskRecord &t, uint32_t partBytes,
                                                    uint32_t threads) {
  if (t.flags & kFlagTiledWeights) {
    const uint64_t floats = tilePartialsFloats(t, threads);
    return floats > 0xffffffffull ? 0xffffffffu : uint32_t(floats);
  }
  uint64_t most = 0;
  for (uint32_t k = 0; k < streamSegmentCount(static_cast<Opcode>(t.opcode)); ++k) {
    const StreamSegment seg = streamSegment(t, k);
    const uint32_t parts = rowParts(seg.rowBytes, partBytes);
    const uint64_t floats = parts > 1 ? uint64_t(seg.rows) * parts : 0u;
    most = floats > most ? floats : most;
  }
  return most > 0xffffffffull ? 0xffffffffu : uint32_t(most);
}

/// Where the row partials start: past the op's own regions.
TI_HOST_DEVICE constexpr uint32_t rowPartialsAt(const TaskRecord &t, uint32_t threads) {
  return alignFloats(opFloatsFor(t, threads));
}

/// Floats of dynamic shared memory one task needs in a worker of `threads`
/// whose plan cuts streamed rows into parts of `rowPartBytes` (0: whole rows).
TI_HOST_DEVICE constexpr uint32_t sharedFloatsFor(const TaskRecord &t, uint32_t threads,
                                                  uint32_t rowPartBytes) {
  const uint64_t partials = rowPartialsFloats(t, rowPartBytes, threads);
  const uint64_t floats = partials ? rowPartialsAt(t, threads) + partials : opFloatsFor(t, threads);
  return floats > 0xffffffffull ? 0xffffffffu : uint32_t(floats); // Saturates: refused.
}

} // namespace ti::plan

#endif // TI_PLAN_WORKERLAYOUT_H
