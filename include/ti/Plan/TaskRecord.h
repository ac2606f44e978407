//===- TaskRecord.h - One task of a plan, as the executors see it -*- C++ -*-===//
//
// A plan's tasks are an array of fixed-size records, copied to the GPU as they
// are (the FlatBuffers schema mirrors this struct field for field). This file is
// the contract between the compiler, the plan verifier, the CPU executor and the
// CUDA worker: what each opcode reads and writes, exactly.
//
// Notation. W is the weights data (the tensor section of weights.bin, bf16,
// little-endian); A is the arena, the one device allocation that holds every
// activation, partial sum, cache and slot. `weight`, `norm` are byte offsets into
// W; `in[]`, `out[]` byte offsets into A; kNone marks an unused field. `pos` is
// the position of the token being decoded (0-based) and ctx = pos + 1 the number
// of positions attended. A step is in *long* mode when ctx > the plan's
// attention split context, else in *short* mode. maxCtx is the plan's max
// context (the rows of every K/V cache). The layer's attention geometry is the
// task's own `geometry` (HeadGeometry below), never the plan's model info:
// H = geometry.heads, D = geometry.headDim, G = H / geometry.kvHeads,
// C = geometry.chunks, Q = H*D, KV = geometry.kvHeads*D.
//
// SelectToken   Reads the aux[0] candidates at in[0] (Candidate, 8 bytes each)
//               and the prompt at in[1] (int32[kMaxStepsPerLaunch]); combines
//               the candidates (largest value, lowest index on ties, NaN wins
//               and raises the error) and writes this worker's copy of the step's
//               token to int32 out[0][worker]. With kFlagRecord it also writes
//               the StepState at out[1]. Every worker runs one, so every worker
//               reaches the same token and the same decision to stop.
// Embed         x[h] = W_bf16[weight + 2*(t*aux[0] + h)] for h in [rowBegin,
//               rowEnd), t = int32 in[0][worker] (this worker's token), x f32 at
//               out[0]. aux[0] = hidden, aux[1] = vocab (the table's rows).
// Gemv          y = W x' over rows [rowBegin, rowEnd) of a row-major bf16 matrix
//               whose row rowBegin starts at `weight` (K = aux[0] columns):
//                 x  = f32[K] at in[0];
//                 x' = x * rsqrt(mean(x^2) + eps) * scale if norm != kNone
//                      (scale bf16[K] at `norm`, eps = params[param]), else x;
//                 y[i] = dot(W[i], x') (+ f32 in[1][i] with kFlagResidual),
//                      written to f32 out[0][i];
//               with kFlagVCache, rows i >= aux[1] are also written, as bf16,
//               to the V cache row `pos` at out[1], column i - aux[1]
//               (AttentionLayout.h: KvCacheLayout says where that is).
// Attention     One task per (kv head g = aux[0], chunk c = aux[1] < C).
//               in[0] = the stacked q|k|v vector (f32[Q+2KV]);
//               in[1] = this layer's K cache, in[2] its V cache (bf16
//               [kvHeads][maxCtx][D]: AttentionLayout.h, KvCacheLayout);
//               out[0] = the attention's output y (f32[Q]); out[1] = the
//               attention workspace (below), which MergeAttention reads. params[param] = the softmax scale, then D/2 RoPE
//               inverse frequencies. RoPE rotates pairs (i, i + D/2) by angle
//               float(pos) * invFreq[i]. The chunk-0 task writes bf16(rot(k_g))
//               to row pos of the K cache at in[1]; a task that needs position pos uses that
//               bf16-rounded key and bf16(v_g) of in[0] itself, and never
//               reads row pos of the caches' (the V row may equal it: the
//               q+k+v Gemv writes it, kFlagVCache).
//               Positions: [0, ctx) for task c = 0 in short mode (tasks c > 0
//               do nothing), [c*ctx/C, (c+1)*ctx/C) in long mode. For each head
//               h of group g over the task's positions j: s_j = scale * q_h.k_j,
//               m = max_j s_j, l = sum_j exp(s_j - m), o_h = sum_j exp(s_j -
//               m) / l * V[j]. In short mode chunk 0 writes y[h*D + d] = o_h
//               (the whole attention: no merge, so that y may be tagged and
//               its reader needs no grid barrier); in long mode task c writes
//               partials[c][h] = o_h and stats[c][h] = (m, l) to the
//               workspace (tagged with kFlagTaggedOut1). Its layout is
//               AttentionWorkspace (AttentionLayout.h): f32 partials
//               [C][H][D], then stats [C][H][2].
// MergeAttention  Long mode only (a short-mode task does nothing: the
//               attention's chunk 0 wrote y): rows [rowBegin, rowEnd) of the
//               attention's output y (f32 out[0], Q = aux[0] values; whole
//               heads) merged from the workspace at in[0] (tagged with
//               kFlagTaggedIn0) of the task's geometry: for each head h (y[h*D + d]), with the
//               chunks' stats (m_c, l_c) of h, M = max_c m_c, w_c = l_c *
//               exp(m_c - M), y = sum_c w_c * partials[c][h] / sum_c w_c
//               (chunks in order).
// FfnPartial    Units (intermediate rows) u in [rowBegin, rowEnd), n of them. x =
//               f32[H] at in[0] (H = aux[0]), normalised with the scale at `norm`
//               and eps = params[param]. `weight` holds three bf16 [n][H] blocks:
//               gate rows, up rows, and the down projection's columns transposed
//               (block[u][j] = W_down[j][rowBegin + u]). act[u] = silu(gate[u].x')
//               * (up[u].x'); writes f32 out[0][aux[1]*H + j] = sum_u act[u] *
//               block[u][j] for every j < H: partial number aux[1].
// ReduceResidual  x[r] = f32 in[1][r] + (sum over p = 0..P-1, in order, of
//               f32 in[0][p*H + r]) for r in [rowBegin, rowEnd); H = aux[0],
//               P = aux[1]; x written to out[0].
// GateUp        The MLP's first half: units (intermediate rows) u in [rowBegin,
//               rowEnd), n of them. x = f32[K] at in[0] (K = aux[0]), x' as in
//               Gemv (normalised when norm != kNone); `weight` holds two bf16
//               [n][K] blocks, the gate rows and the up rows of the task's
//               units; writes f32 out[0][u] = silu(gate[u].x') * (up[u].x'),
//               silu(z) = z / (1 + exp(-z)). The down projection is a Gemv
//               that reads out[0] whole.
//               With kFlagTiledWeights (Gemv and GateUp) the rows are stored
//               in octet tiles (WeightTiles.h): row j of the task's slice is
//               not at weight + j*K*2 but spread over its octet's tiles; the
//               values computed are the same.
// LmHead        A Gemv (with its norm, no flags) writing logits to f32 out[0][i],
//               and the best (value, row) of its rows to Candidate slot aux[1]
//               at out[1]: largest value, lowest row on ties; a non-finite logit
//               makes the candidate (NaN, that row).
//
// Tagged operands. With kFlagTaggedIn0, kFlagTaggedIn1, kFlagTaggedOut0 or
// kFlagTaggedOut1 the f32 vector at in[0], in[1], out[0] or out[1] is tagged (Tagged.h): element i is
// the 8 bytes at offset + 8i, the value and the tag of the step that wrote
// it; a writer stores the step's tag with each value, a reader uses an
// element once it carries the step's tag. Which opcodes take which: Embed
// out[0]; Gemv in[0], in[1] (with kFlagResidual) and out[0]; GateUp and
// Attention in[0], out[0] and out[1]; MergeAttention in[0] and out[0];
// LmHead in[0]. A tagged operand lives in a
// tagged buffer and a plain one in a plain buffer.
//
// `geometry` is all zero in the tasks that do not use it; the attention and
// MergeAttention tasks use all four fields (the merge its attention's), a
// kFlagVCache Gemv kvHeads and headDim (the V row's width).
//
//===----------------------------------------------------------------------===//
#ifndef TI_PLAN_TASKRECORD_H
#define TI_PLAN_TASKRECORD_H

#include "ti/Support/DType.h"
#include "ti/Support/HostDevice.h"

#include <cstddef>
#include <cstdint>

namespace ti::plan {

/// What the plan's data is stored as. Every element size in the compiler, the
/// verifier and both executors is bytesOf() one of these.
constexpr DType kWeightType = DType::BF16;     // weights.bin's tensors, norm scales included.
constexpr DType kCacheType = DType::BF16;      // K/V cache rows.
constexpr DType kActivationType = DType::F32;  // Activations, partials, logits, workspaces.
constexpr DType kTokenType = DType::I32;       // Token slots and the prompt.
/// Their element sizes, in bytes, as the host code multiplies by them (64-bit,
/// so that no product of a count and a size wraps at 32 bits).
constexpr uint64_t kWeightBytes = bytesOf(kWeightType);
constexpr uint64_t kCacheBytes = bytesOf(kCacheType);
constexpr uint64_t kActivationBytes = bytesOf(kActivationType);
constexpr uint64_t kTokenBytes = bytesOf(kTokenType);

enum class Opcode : uint16_t {
#define TI_OPCODE(Name, Value, Spelling, Kind) Name = Value,
#include "ti/Plan/Opcodes.def"
};

/// What a task of an opcode does with memory (Opcodes.def explains).
enum class OpcodeKind : uint8_t { Control, Gather, Stream, Attention, Reduce };

/// The spelling of an opcode ("gemv"), or nullptr for an unknown value.
const char *opcodeName(uint16_t opcode);
/// The kind of a known opcode.
OpcodeKind opcodeKind(Opcode opcode);
/// "control", "gather", "stream", "attention", "reduce".
const char *opcodeKindName(OpcodeKind kind);

constexpr uint64_t kNone = ~uint64_t(0);
constexpr uint32_t kNone32 = ~uint32_t(0);
constexpr uint32_t kMaxStepsPerLaunch = 64;
/// End-of-sequence tokens a plan may name (ModelInfo::eos); selection compares
/// the step's token with each (Select.h).
constexpr uint32_t kMaxEndTokens = 8;

/// The flags (TaskFlags.def says what each means).
enum TaskFlags : uint16_t {
#define TI_TASK_FLAG(Name, Bit, Spelling) kFlag##Name = 1 << (Bit),
#include "ti/Plan/TaskFlags.def"
};

/// Whether a step of context `ctx` streams the cached K/V rows of attention
/// tasks with kFlagStreamKv (the producer and the consumers decide alike): in
/// long mode (ctx above the split context), where each task has a chunk of
/// the positions (AttentionLayout.h: kvBlockRows a block), above the plan's
/// stream_kv_context: a streamed task's fixed cost (two stage waits) pays
/// only for long chunks (the 1B at context 128, 8 positions a chunk: 0.935
/// against 0.900 ms; at 2,048: 0.971 against 1.020, docs/PERFORMANCE.md, step
/// 13); in short mode (chunk 0 takes the whole context) above the plan's
/// short_mma_context (0: never), where the tensor cores' form over the rows
/// beats one warp a query head (AttentionShort.cuh; step 33). The tasks without the flag use the
/// one-pass loop at every step.
TI_HOST_DEVICE constexpr bool streamsKvAt(uint32_t ctx, uint32_t splitContext,
                                          uint32_t streamKvContext, uint32_t shortMmaContext) {
  return ctx > splitContext ? ctx > streamKvContext
                            : shortMmaContext != 0 && ctx > shortMmaContext;
}
TI_HOST_DEVICE constexpr bool streamsKvRows(uint32_t flags, bool streamKvStep) {
  return (flags & kFlagStreamKv) && streamKvStep;
}
constexpr uint16_t kTaggedFlags =
    kFlagTaggedIn0 | kFlagTaggedIn1 | kFlagTaggedOut0 | kFlagTaggedOut1;
constexpr uint16_t kKnownFlags = 0
#define TI_TASK_FLAG(Name, Bit, Spelling) | kFlag##Name
#include "ti/Plan/TaskFlags.def"
    ;
// No two flags share a bit: the sum of the flags is their union.
static_assert(0
#define TI_TASK_FLAG(Name, Bit, Spelling) + kFlag##Name
#include "ti/Plan/TaskFlags.def"
                  == kKnownFlags,
              "two task flags share a bit (TaskFlags.def)");

/// A layer's attention shape, as the tasks that need it carry it: layers may
/// differ, and nothing reads it from the plan's model info.
struct HeadGeometry {
  uint16_t heads;   // Query heads of the layer.
  uint16_t kvHeads; // K/V heads; divides heads.
  uint16_t headDim;
  uint16_t chunks;  // Chunks of the long mode's attention (C).

  /// Query heads per K/V head (G).
  TI_HOST_DEVICE constexpr uint32_t group() const { return kvHeads ? heads / kvHeads : 0; }
  /// Elements of the stacked q (Q) and of one K or V cache row (KV).
  TI_HOST_DEVICE constexpr uint32_t qRows() const { return uint32_t(heads) * headDim; }
  TI_HOST_DEVICE constexpr uint32_t kvRows() const { return uint32_t(kvHeads) * headDim; }
};
static_assert(sizeof(HeadGeometry) == 8);

struct TaskRecord {
  uint16_t opcode;
  uint16_t flags;
  uint16_t wave;
  uint16_t worker;
  uint32_t layer; // For printing and tracing; kNone32 outside the layers.
  uint32_t rowBegin;
  uint32_t rowEnd;
  uint32_t param; // Index into Plan::params, or kNone32.
  uint64_t weight;
  uint64_t weightBytes; // The bytes of W this task streams.
  uint64_t norm;
  uint64_t in[3];
  uint64_t out[2];
  uint32_t aux[2];
  HeadGeometry geometry;
};

// The record is copied to the device and into the FlatBuffer byte for byte.
static_assert(sizeof(TaskRecord) == 104, "TaskRecord layout is part of the plan format");
static_assert(offsetof(TaskRecord, layer) == 8);
static_assert(offsetof(TaskRecord, param) == 20);
static_assert(offsetof(TaskRecord, weight) == 24);
static_assert(offsetof(TaskRecord, norm) == 40);
static_assert(offsetof(TaskRecord, in) == 48);
static_assert(offsetof(TaskRecord, out) == 72);
static_assert(offsetof(TaskRecord, aux) == 88);
static_assert(offsetof(TaskRecord, geometry) == 96);

/// What an lm_head task leaves for SelectToken.
struct Candidate {
  float value;
  int32_t index;
};
static_assert(sizeof(Candidate) == 8);

/// What the recording SelectToken writes, and the host reads after a launch.
struct StepState {
  int32_t steps;     // Steps run in this launch.
  int32_t generated; // Tokens appended to `tokens`.
  int32_t done;      // 1 once an end-of-sequence token was generated.
  int32_t error;     // Non-zero: a non-finite logit (kErrorNonFinite).
  int32_t lastToken;
  int32_t reserved[3];
  int32_t tokens[kMaxStepsPerLaunch];
};
constexpr int32_t kErrorNonFinite = 1;
static_assert(sizeof(StepState) == 32 + 4 * kMaxStepsPerLaunch);

} // namespace ti::plan

#endif // TI_PLAN_TASKRECORD_H
