//===- TaskIR.h - Stages, tasks and waves: the compiler's plan --*- C++ -*-===//
//
// The task IR sits between the Graph IR and the plan file. It is a list of
// *stages* in execution order. A stage is one kind of work over a range of rows
// (output rows of a GEMV, columns of the embedding, intermediate units of the
// FFN): lowering makes one per graph op (or per group of matmuls that share an
// input), the fusion passes merge and reshape them, balance-rows cuts each into
// tasks, place-barriers decides the barrier after each stage's wave, and
// assign-workers places every task on a worker (one per SM). Codegen then turns
// the module into a plan::Plan.
//
// Buffers are named arena arrays; activations are f32 and referenced by slices
// (a buffer and an element range), so a stacked GEMV's output can feed q, k and
// v separately. Weights are referenced by their index in the Graph IR.
//
// Ownership: a Module owns everything in it and refers to its Graph, which must
// outlive it. Not thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef TI_IR_TASKIR_H
#define TI_IR_TASKIR_H

#include "ti/IR/Graph.h"
#include "ti/Plan/Plan.h"
#include "ti/Target/Target.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ti::tir {

constexpr int kNoBuffer = -1;

struct Buffer {
  std::string name;
  plan::BufferKind kind = plan::BufferKind::Activation;
  uint64_t bytes = 0;
  uint64_t offset = plan::kNone; // In the arena; set by layout-buffers.
  bool tagged = false; // Tagged f32 elements (ti/Plan/Tagged.h); set by tag-hand-offs.
};

/// Elements [offset, offset + length) of a buffer (f32 unless the kind says
/// otherwise).
struct Slice {
  int buffer = kNoBuffer;
  uint64_t offset = 0;
  uint64_t length = 0;
  bool valid() const { return buffer != kNoBuffer; }
};

/// Rows [rowBegin, rowEnd) of a graph weight (a matrix or a vector).
struct WeightRows {
  unsigned weight = 0; // Index into Graph::weights.
  uint64_t rowBegin = 0, rowEnd = 0;
  uint64_t rows() const { return rowEnd - rowBegin; }
};

enum class StageKind : uint8_t {
  Select,          // Combine the previous step's candidates into this step's token.
  Embed,           // Gather the token's row of the embedding.
  RmsNorm,         // Removed by fuse-norms.
  Gemv,            // y = W x over stacked matrices (+ fused norm and epilogues).
  Rope,            // Removed by fuse-epilogues (into Attention).
  Attention,       // Replaced by split-attention.
  AttentionChunks, // Attention over chunks of the context, one task per (kv head, chunk).
  MergeAttention,  // Long mode: the chunks' partials merged into the attention's output.
  SiluMul,         // Removed by fuse-epilogues (into the gate/up Gemv).
  Add,             // Removed by fuse-epilogues (a residual of a Gemv).
  Argmax,          // Removed by fuse-epilogues (candidates of the lm_head).
  FfnPartial,
  ReduceResidual,
  LmHead,
};
const char *stageKindName(StageKind kind);
struct Stage;
/// The opcode of a stage's tasks (a SiLU*up Gemv's is GateUp), or false for
/// a kind that the passes fuse away before the plan has tasks.
bool stageOpcode(const Stage &s, plan::Opcode &opcode);

/// One task of a stage, after balance-rows (rows) and assign-workers (worker).
struct Task {
  Task() = default;
  Task(uint64_t rowBegin, uint64_t rowEnd) : rowBegin(rowBegin), rowEnd(rowEnd) {}
  uint64_t rowBegin = 0, rowEnd = 0;
  int worker = -1;
  uint32_t aux0 = 0, aux1 = 0; // Stage-specific (kv head, chunk, partial slot).
  // Set by layout: the task's contiguous weight stream.
  int packed = -1; // Index into Module::packed.
  uint64_t weightOffset = 0, weightBytes = 0; // Within the weights data.
  uint64_t rows() const { return rowEnd - rowBegin; }
};

struct Stage {
  explicit Stage(StageKind kind = StageKind::Gemv) : kind(kind) {}
  StageKind kind;
  std::string name; // "L3.q+k+v"
  int layer = -1;
  llvm::SMLoc loc; // The graph op it came from.

  // Operands. Which ones a kind uses is documented at each pass.
  Slice input, input2, input3, residual, output, output2, output3;
  /// Stacked matrices, in row order (Gemv, LmHead), or gate/up/down (FFN).
  std::vector<WeightRows> matrix;
  uint64_t cols = 0;          // K, the input length of the matrix rows.
  int norm = -1;              // Graph weight of a fused RMSNorm scale.
  double eps = 0;
  // Epilogues.
  bool siluMul = false;       // Gemv over [gate; up]: writes silu(gate) * up.
  bool vCacheWrite = false;   // Gemv: rows >= vRowBegin go to the V cache (output2).
  uint64_t vRowBegin = 0;
  bool tiled = false;         // Gemv: weights in octet tiles (tile-weights).
  // Attention.
  unsigned heads = 0, kvHeads = 0, headDim = 0, chunks = 1;
  double scale = 0;
  std::vector<float> ropeInvFreq; // head_dim/2 inverse frequencies, scaling applied.
  bool hasRope = false;

  /// The units balance-rows splits: rows, columns or intermediate units.
  uint64_t units = 0;
  std::vector<Task> tasks;
  plan::BarrierKind barrier = plan::BarrierKind::Grid; // After this stage's wave.
};

struct Module {
  const Graph *graph = nullptr;
  Target target;
  uint32_t maxContext = 0;
  std::vector<Buffer> buffers;
  std::vector<Stage> stages;
  /// Set by layout: the packed weights in streaming order, and for each graph
  /// weight packed whole (norm scales, the embedding) its packed tensor.
  std::vector<plan::PackedTensor> packed;
  std::vector<int> wholePacked;
  uint64_t weightsBytes = 0;
  uint64_t arenaBytes = 0;
  /// Set by plan-stream: the weight stream of a Stream target (Execution.h).
  plan::StreamConfig stream;

  int addBuffer(std::string name, plan::BufferKind kind, uint64_t bytes);
  /// Index of the first buffer of `kind`, or kNoBuffer.
  int findBuffer(plan::BufferKind kind) const;
};

/// `--emit=task-ir` and `--print-after`: one stage per block, one task per line.
void printModule(const Module &module, llvm::raw_ostream &os);

} // namespace ti::tir

#endif // TI_IR_TASKIR_H
