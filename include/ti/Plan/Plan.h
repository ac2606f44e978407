//===- Plan.h - A decode plan in memory -------------------------*- C++ -*-===//
//
// Everything the runtime needs to run one decode step per iteration of its token
// loop: the model's sizes, the target it was made for, the packed weights layout
// (which weights.bin must match), the arena's buffers, the waves and their
// barriers, and the tasks. The compiler builds one (Codegen), PlanFile writes and
// reads it as a FlatBuffer (schema/plan.fbs), the plan verifier checks it, and
// both executors run it. No LLVM here: the runtime links this.
//
// Ownership: a Plan is a value; it owns all its vectors. Not thread-safe to
// mutate; safe to read from several threads.
//
//===----------------------------------------------------------------------===//
#ifndef TI_PLAN_PLAN_H
#define TI_PLAN_PLAN_H

#include "ti/Plan/Execution.h"
#include "ti/Plan/TaskRecord.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ti::plan {

/// Bumped on any change a reader of the previous version would misread.
constexpr uint32_t kFormatVersion = 5;
/// The FlatBuffers file identifier (4 bytes).
constexpr const char *kFileIdentifier = "TIPL";
/// Every packed tensor starts at a multiple of this in the weights data.
constexpr uint64_t kWeightAlignment = 256;
/// Every arena buffer starts at a multiple of this.
constexpr uint64_t kArenaAlignment = 256;
/// Every offset a task record names (weight, norm, in[], out[]) is a multiple
/// of this: the workers load operands in 16-byte vectors.
constexpr uint64_t kOperandAlignment = 16;

struct ModelInfo {
  std::string name;
  uint32_t vocab = 0, hidden = 0, ffn = 0, layers = 0;
  /// The first layer's attention shape, to describe the model: every task
  /// carries its own layer's (TaskRecord::geometry), and nothing that runs or
  /// checks a plan reads these.
  uint32_t heads = 0, kvHeads = 0, headDim = 0;
  uint32_t maxContext = 0; // Positions the K/V cache holds.
  int32_t bos = -1;
  std::vector<int32_t> eos;
  double rmsEps = 0;
};

struct TargetInfo {
  std::string name;       // "h200", "rtx3050", or a probed GPU's name.
  std::string arch;       // "sm_90"
  uint32_t workers = 0;   // One block per SM.
  uint32_t threadsPerWorker = 0;
  uint32_t maxRegisters = 0;
  double bandwidthGBs = 0; // Streaming read, for the floor.
  /// A hash of the worker kernel's machine code, or empty: the plan was made
  /// for no particular binary (the built-in targets carry none yet).
  std::string workerFingerprint;
};

struct AttentionConfig {
  uint32_t splitContext = 0; // ctx above this runs in long (chunked) mode.
  // kFlagStreamKv attention tasks stream their cached K/V rows from ctx above
  // this (and above splitContext: TaskRecord.h, streamsKvAt).
  uint32_t streamKvContext = 0;
  // And short-mode steps at ctx above this (0: never) stream them too, to
  // score them on the tensor cores (TaskRecord.h: streamsKvAt).
  uint32_t shortMmaContext = 0;
};

/// A block of a checkpoint tensor: rows [rowBegin, rowEnd) x cols [colBegin,
/// colEnd) of `checkpoint`, stored row-major, transposed (column-major), or
/// in octet tiles (WeightTiles.h; never also transposed).
struct WeightSegment {
  std::string checkpoint;
  std::vector<uint64_t> sourceShape; // The checkpoint tensor's shape.
  uint64_t rowBegin = 0, rowEnd = 0, colBegin = 0, colEnd = 0;
  bool transposed = false;
  bool tiled = false;

  uint64_t elements() const { return (rowEnd - rowBegin) * (colEnd - colBegin); }
};

/// A tensor of the weights data: its segments stored back to back, in bf16.
struct PackedTensor {
  std::string name;
  uint64_t offset = 0; // In the weights data; a multiple of kWeightAlignment.
  uint64_t bytes = 0;
  std::vector<WeightSegment> segments;
};

enum class BufferKind : uint8_t {
  Activation = 0,   // f32 vectors of one step.
  Logits = 1,       // f32[vocab], the step's result.
  Partials = 2,     // f32 partial sums (FFN).
  KCache = 3,       // bf16[kvHeads][maxContext][headDim] per layer (KvCacheLayout); carried.
  VCache = 4,
  AttentionWorkspace = 5,
  Candidates = 6,   // Candidate per lm_head task; carried to the next step.
  TokenSlots = 7,   // int32 per worker: each worker's copy of the token.
  Prompt = 8,       // int32[kMaxStepsPerLaunch], written by the host.
  StepState = 9,    // StepState, read by the host.
};
const char *bufferKindName(BufferKind kind);

struct Buffer {
  std::string name;
  BufferKind kind = BufferKind::Activation;
  uint64_t offset = 0; // In the arena.
  uint64_t bytes = 0;
  /// Its elements are tagged f32 (Tagged.h): 8 bytes each, the value and the
  /// step's tag. Activation and AttentionWorkspace buffers only.
  bool tagged = false;
};

enum class BarrierKind : uint8_t {
  None = 0,              // No barrier after this wave: nothing after it needs one.
  Grid = 1,              // A grid barrier after this wave.
  GridIfLong = 2,        // A grid barrier only in long mode (ctx > splitContext).
  Tagged = 3,            // No barrier: later waves wait for this one's tagged values.
};
const char *barrierKindName(BarrierKind kind);

struct Wave {
  std::string name;   // "layer3.qkv"
  BarrierKind barrier = BarrierKind::Grid; // After the wave.
};

struct Plan {
  uint32_t formatVersion = kFormatVersion;
  ModelInfo model;
  TargetInfo target;
  AttentionConfig attention;

  std::vector<PackedTensor> weights;
  uint64_t weightsBytes = 0; // Size of the weights data.
  uint64_t layoutHash = 0;   // layoutHash(weights, weightsBytes); weights.bin repeats it.

  std::vector<Buffer> buffers;
  uint64_t arenaBytes = 0;

  std::vector<Wave> waves;
  /// Sorted by (worker, wave); a worker's tasks in one wave run in this order.
  std::vector<TaskRecord> tasks;
  std::vector<float> params;
  /// How the worker executes the plan (Execution.h).
  StreamConfig stream;

  /// The buffer of a kind that occurs once (Logits, Candidates, ...), or null.
  const Buffer *findBuffer(BufferKind kind) const;
  /// The most chunks any attention task splits the context into (each
  /// layer's are its tasks' geometry.chunks); 1 in a plan without attention.
  uint32_t attentionChunks() const;
};

/// FNV-1a over every field of the layout, in order: what a weights file must
/// match to be read with this plan.
uint64_t layoutHash(const std::vector<PackedTensor> &weights, uint64_t weightsBytes);

} // namespace ti::plan

#endif // TI_PLAN_PLAN_H
