//===- PlanVerifier.cpp - Semantic checks of a decode plan ----------------===//
//
// a. Structure: format version; model sizes nonzero, heads % kv_heads == 0,
//    head_dim even, the end tokens in the vocabulary and at most
//    kMaxEndTokens; at least one worker; at least one wave, known barrier
//    kinds, the last wave's barrier Grid (the step barrier). Per task, sorted
//    by (worker, wave), worker and wave in range, a known opcode, only the
//    flags its opcode takes, the fields it uses present, rows non-empty, its
//    params inside Plan::params, its geometry what its opcode and flags use
//    (and zero elsewhere) and consistent (kv_heads divides heads, head_dim
//    even, 1 <= chunks <= split context), aux values in range of it,
//    weightBytes what it streams. Errors here stop the verifier: the access
//    model needs them.
// b. Weights layout: each tensor aligned, inside the weights data, as many
//    bytes as its segments' bf16 elements, each segment inside its checkpoint
//    shape; tensors disjoint; the layout hash matches. Tiles (WeightTiles.h):
//    a kFlagTiledWeights task reads a tensor all in tiles of its K columns,
//    from an octet's start; every other task reads tensors of rows.
//    Ownership: the tasks streaming a tensor's rows read it as laid out, each
//    from its first row's bytes, every byte of the tensor once.
// c. Buffers: known kinds, aligned, inside the arena, disjoint; the one-of
//    kinds at most once; token slots and step state big enough; tagged ones
//    (Tagged.h) activations or attention workspaces only.
// d. Bounds (if b and c hold): every access of every task, in both modes (see
//    TaskAccesses.h), inside one packed tensor or one buffer of a kind its
//    operand may use, tagged exactly when the buffer is (the task's
//    kFlagTagged* flags say which operands are); a cache access starts at its
//    cache buffer and stays in a row.
// e. SelectToken: one per worker, all in wave 0, exactly one recording.
//    Layers (if b and c hold): every task of one attention workspace has the
//    same geometry, and the workspace is AttentionWorkspace's size; every K/V
//    cache holds max context rows of its tasks' row width, and every task that
//    reads or writes it has the same kv heads and head_dim (the caches are
//    head-major, AttentionLayout.h: KvCacheLayout); a MergeAttention task
//    reads the partials of a workspace whose geometry it carries (all four
//    fields), and writes whole heads of its output.
// f. Hazards (if all of the above hold), per mode over one step: the last
//    wave's grid barrier orders everything across steps. Accesses go to
//    domains: arena bytes; "row pos" of the caches.
//    Cache history needs no check: nothing in a step writes rows < pos.
//    1. Single writer: per domain, writes sorted by begin, each checked against
//       the one reaching furthest before it.
//    2. Writes chain into runs: one wave's writes tiling a range back to back.
//       For each read, the runs overlapping it (binary search; prefix maxima
//       of run ends bound the walk back). A run of another wave with an active
//       barrier between (Grid; GridIfLong in long mode only; a prefix count of
//       active barriers answers in O(1)) is fine as a whole and, if earlier,
//       covers the read. Otherwise its single writes are looked at: one in the
//       same wave is a hazard; one by another worker is a missing barrier
//       (read after write, or write after read), except that a tagged read
//       of an earlier wave's write needs none (it waits for the write's tag;
//       a write after a read is never ordered by tags); an earlier one
//       covers. Every wait of a tagged read is thus for a strictly earlier
//       wave, so the waits cannot form a cycle.
//       A valid plan thus costs O(reads x log) plus a few writes per read.
//    3. A read of a buffer not carried across steps (all but the K/V caches,
//       candidates, prompt), or of a cache's row pos, must be covered; the
//       first gap is reported.
//    Messages found in one mode only say so; a missing barrier is reported
//    once per pair of waves.
//
//===----------------------------------------------------------------------===//
#include "ti/Plan/PlanVerifier.h"
#include "ti/Plan/Tagged.h"
#include "ti/Plan/AttentionLayout.h"
#include "ti/Plan/TaskAccesses.h"
#include "ti/Plan/WeightTiles.h"
#include "ti/Plan/WorkerLayout.h"
#include "ti/Support/Hex.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

using namespace ti;
using namespace ti::plan;

namespace {

std::string num(uint64_t v) { return std::to_string(v); }

std::string hex(uint64_t v, int digits = 1) { return "0x" + hexDigits(v, digits); }

std::string span(uint64_t begin, uint64_t end) {
  return "[+" + num(begin) + ", +" + num(end - begin) + ")";
}

constexpr unsigned kBufferKinds = 10;

std::string geometryText(const HeadGeometry &g) {
  return "heads " + num(g.heads) + " over " + num(g.kvHeads) + " kv heads of dim " +
         num(g.headDim) + " in " + num(g.chunks) + " chunks";
}

bool isRowTask(Opcode op) {
  return op == Opcode::Embed || op == Opcode::Gemv || op == Opcode::GateUp ||
         op == Opcode::FfnPartial || op == Opcode::ReduceResidual || op == Opcode::LmHead ||
         op == Opcode::MergeAttention;
}

/// The access model's view of one mode: every access, with its task and (after
/// the bounds check) its buffer or tensor.
struct ModeAccesses {
  std::vector<Access> accesses;
  std::vector<uint32_t> task, home;
};

class Verifier {
public:
  Verifier(const Plan &plan, size_t maxErrors)
      : plan(plan), maxErrors(std::max<size_t>(maxErrors, 1)) {} // 0 would mean "valid".
  std::vector<std::string> run();

private:
  bool full() const { return errors.size() >= maxErrors; }
  void error(std::string message) {
    if (!full())
      errors.push_back(std::move(message));
  }
  std::string describe(size_t index) const;

  void checkHeader();
  void checkTask(size_t index);
  void checkGeometry(size_t index);
  void checkLayers();
  void checkWeights();
  void checkBuffers();
  void checkBounds(ModeAccesses &mode);
  void checkSelectTokens();
  void checkStream();
  void checkTiles();
  void checkWeightOwnership();
  std::vector<std::string> hazards(const ModeAccesses &mode, StepMode stepMode) const;

  const Plan &plan;
  size_t maxErrors;
  std::vector<std::string> errors;
  std::set<std::string> reported; // Bounds messages seen in the other mode.
  std::vector<uint32_t> tensorsByOffset, buffersByOffset;
};

std::string Verifier::describe(size_t index) const {
  const TaskRecord &t = plan.tasks[index];
  const char *op = opcodeName(t.opcode);
  std::string wave = t.wave < plan.waves.size() ? plan.waves[t.wave].name : "?";
  return "task #" + num(index) + " (" + (op ? op : "opcode " + num(t.opcode)) + " on worker " +
         num(t.worker) + ", wave " + num(t.wave) + " '" + wave + "')";
}

// --- a. Structure ---------------------------------------------------------===//

void Verifier::checkHeader() {
  if (plan.formatVersion != kFormatVersion)
    error("plan format version " + num(plan.formatVersion) + ", expected " + num(kFormatVersion));
  const ModelInfo &m = plan.model;
  std::pair<const char *, uint32_t> sizes[] = {
      {"vocab", m.vocab},      {"hidden", m.hidden},         {"ffn", m.ffn},
      {"layers", m.layers},    {"heads", m.heads},           {"kv_heads", m.kvHeads},
      {"head_dim", m.headDim}, {"max_context", m.maxContext}};
  for (auto [name, value] : sizes)
    if (value == 0)
      error(std::string("model: ") + name + " is 0");
  if (m.kvHeads && m.heads % m.kvHeads)
    error("model: " + num(m.heads) + " heads is not a multiple of " + num(m.kvHeads) + " kv heads");
  if (m.headDim % 2)
    error("model: head_dim " + num(m.headDim) + " is odd (RoPE rotates pairs)");
  if (m.eos.size() > kMaxEndTokens)
    error("model: " + num(m.eos.size()) + " end-of-sequence tokens, more than the " +
          num(kMaxEndTokens) + " a plan may name");
  for (int32_t id : m.eos)
    if (id < 0 || uint32_t(id) >= m.vocab)
      error("model: end-of-sequence token " + std::to_string(id) + " is outside the vocabulary of " +
            num(m.vocab));
  if (plan.target.workers == 0 || plan.target.workers > 0x10000)
    error("target: " + num(plan.target.workers) + " workers (1 to 65536 can be numbered)");
  if (plan.attention.splitContext == 0)
    error("attention: the split context is 0");
  if (plan.waves.empty() || plan.waves.size() > 0x10000)
    error("plan has " + num(plan.waves.size()) + " waves (1 to 65536 can be numbered)");
  for (size_t w = 0; w < plan.waves.size(); ++w)
    if (static_cast<unsigned>(plan.waves[w].barrier) > static_cast<unsigned>(BarrierKind::Tagged))
      error("wave " + num(w) + " '" + plan.waves[w].name + "' has unknown barrier kind " +
            num(static_cast<unsigned>(plan.waves[w].barrier)));
  if (!plan.waves.empty() && plan.waves.back().barrier != BarrierKind::Grid)
    error("wave " + num(plan.waves.size() - 1) + " '" + plan.waves.back().name +
          "' is the last, and its barrier is " + barrierKindName(plan.waves.back().barrier) +
          ": the step needs a grid barrier");
  checkStream();
}

/// The weight stream (Execution.h): none in a Plain plan; in a Stream plan a
/// ring the bulk-copy engine can fill (16-byte multiples), consumers of the
/// stream worker's thread count, and every streamed row within one stage,
/// at 16-byte aligned offsets.
void Verifier::checkStream() {
  const StreamConfig &st = plan.stream;
  if (st.model == ExecutionModel::Plain) {
    if (st.stageBytes || st.stages || st.inFlightStages || st.handOffInFlightStages ||
        st.rowPartBytes || st.copiesEvictFirst || st.kvCopiesUnhinted)
      error("execution: a plain plan has a weight stream (stage_bytes " + num(st.stageBytes) +
            ", stages " + num(st.stages) + ")");
    return;
  }
  if (st.stageBytes == 0 || st.stageBytes % 16)
    error("execution: stage_bytes " + num(st.stageBytes) + " is not a positive multiple of 16");
  if (st.stages < 2 || st.stages > kMaxStreamStages)
    error("execution: a ring of " + num(st.stages) + " stages (2 to " + num(kMaxStreamStages) +
          ")");
  if (st.inFlightStages == 0 || st.inFlightStages > st.stages)
    error("execution: " + num(st.inFlightStages) + " stages in flight, of a ring of " +
          num(st.stages));
  if (st.handOffInFlightStages > st.inFlightStages)
    error("execution: " + num(st.handOffInFlightStages) +
          " stages in flight during a grid barrier, more than the " + num(st.inFlightStages) +
          " of the stream");
  if (st.kvCopiesUnhinted && !st.copiesEvictFirst)
    error("execution: kv_copies_unhinted without copies_evict_first (every copy is unhinted)");
  if (st.rowPartBytes % kWorkerVectorBytes)
    error("execution: row_part_bytes " + num(st.rowPartBytes) + " is not a multiple of " +
          num(kWorkerVectorBytes) + " (the consumers' loads)");
  if (plan.target.threadsPerWorker != taskThreads(st.model))
    error("execution: a " + std::string(executionModelName(st.model)) + " plan runs tasks on " +
          num(taskThreads(st.model)) + " threads, but the target has " +
          num(plan.target.threadsPerWorker));
  if (st.stageBytes == 0)
    return;
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const uint32_t segments = streamSegmentCount(static_cast<Opcode>(plan.tasks[i].opcode));
    const bool tiled = plan.tasks[i].flags & kFlagTiledWeights;
    if (tiled && st.stageBytes % kTileBytes)
      error(describe(i) + " streams weight tiles, and a stage of " + num(st.stageBytes) +
            " bytes is not whole tiles of " + num(kTileBytes));
    for (uint32_t k = 0; k < segments; ++k) {
      const StreamSegment seg = streamSegment(plan.tasks[i], k);
      if (tiled) {
        if (!tileable(seg.rows, seg.rowBytes / kWeightBytes))
          error(describe(i) + " streams weight tiles, and its " + num(seg.rows) + " rows of " +
                num(seg.rowBytes / kWeightBytes) + " columns are not whole octets of " +
                num(kTileCols) + "-column tiles");
        continue; // Octets stream in pieces of a stage.
      }
      if (seg.rowBytes > st.stageBytes)
        error(describe(i) + " streams rows of " + num(seg.rowBytes) +
              " bytes, more than a stage's " + num(st.stageBytes));
      if (seg.rowBytes % 16 || seg.offset % 16)
        error(describe(i) + " streams from offset " + num(seg.offset) + " in rows of " +
              num(seg.rowBytes) + " bytes: the bulk copies need multiples of 16");
    }
  }
}

void Verifier::checkTask(size_t index) {
  const TaskRecord &t = plan.tasks[index];
  const ModelInfo &m = plan.model;
  std::string who = describe(index);
  if (index > 0) {
    const TaskRecord &p = plan.tasks[index - 1];
    if (std::pair(t.worker, t.wave) < std::pair(p.worker, p.wave))
      error(who + " is out of order: it follows " + describe(index - 1) +
            ", and tasks are sorted by (worker, wave)");
  }
  if (t.worker >= plan.target.workers)
    error(who + ": worker " + num(t.worker) + " is not below the target's " +
          num(plan.target.workers) + " workers");
  if (t.wave >= plan.waves.size())
    error(who + ": wave " + num(t.wave) + " is not below the plan's " + num(plan.waves.size()) +
          " waves");
  if (!opcodeName(t.opcode)) {
    error(who + " has an unknown opcode");
    return;
  }
  auto op = static_cast<Opcode>(t.opcode);

  // The tagged operands each opcode's executors implement (Tagged.h).
  constexpr uint16_t kGemvFlags = kFlagResidual | kFlagVCache | kFlagTaggedIn0 |
                                  kFlagTaggedIn1 | kFlagTaggedOut0 | kFlagTiledWeights;
  constexpr uint16_t kAttentionFlags =
      kFlagTaggedIn0 | kFlagTaggedOut0 | kFlagTaggedOut1 | kFlagStreamKv;
  uint16_t allowed = op == Opcode::SelectToken    ? kFlagRecord
                     : op == Opcode::Gemv           ? kGemvFlags
                     : op == Opcode::MergeAttention ? kFlagTaggedIn0 | kFlagTaggedOut0
                     : op == Opcode::GateUp ? kFlagTaggedIn0 | kFlagTaggedOut0 | kFlagTiledWeights
                     : op == Opcode::Attention ? kAttentionFlags
                     : op == Opcode::LmHead    ? kFlagTaggedIn0
                     : op == Opcode::Embed     ? kFlagTaggedOut0
                                               : 0;
  if (op == Opcode::Gemv && !(t.flags & kFlagResidual))
    allowed &= ~kFlagTaggedIn1;
  if (t.flags & ~kKnownFlags)
    error(who + " has unknown flags " + hex(t.flags & ~kKnownFlags));
  else if (t.flags & ~allowed)
    error(who + " has flags " + hex(t.flags & ~allowed) + " that " + opcodeName(t.opcode) +
          " does not take");
  checkGeometry(index);
  if ((t.flags & kFlagTiledWeights) && plan.stream.model != ExecutionModel::Stream)
    error(who + " reads weight tiles, which only the stream worker multiplies; the plan is " +
          executionModelName(plan.stream.model));
  // Streamed K/V rows need a stream whose stage holds a block of them.
  if ((t.flags & kFlagStreamKv) &&
      (plan.stream.model != ExecutionModel::Stream ||
       kvBlockRows(plan.stream.stageBytes, t.geometry.headDim,
                   taskThreads(ExecutionModel::Stream)) == 0))
    error(who + " streams its K/V rows (stream_kv) but " +
          (plan.stream.model != ExecutionModel::Stream
               ? std::string("the plan has no weight stream")
           : !kvRowsStreamable(t.geometry.headDim)
               ? "its head_dim " + num(t.geometry.headDim) +
                     " is not 8, 16, 32, 64, 128 or 256 (the streamed value pass)"
               : "a stage of " + num(plan.stream.stageBytes) +
                     " bytes holds fewer than 32 rows of " +
                     num(uint32_t(t.geometry.headDim) * 2) + " bytes"));
  // In short mode the streamed rows go to the tensor cores' form only: tic
  // gives a plan a short_mma_context only where every streamed head takes it
  // (the other streamed form was never run in short mode).
  if ((t.flags & kFlagStreamKv) && plan.attention.shortMmaContext != 0 &&
      !streamedScoresOnTensorCores(t.geometry.headDim, t.geometry.group()))
    error(who + " streams its K/V rows in short mode (short_mma_context " +
          num(plan.attention.shortMmaContext) + ") but its heads (head_dim " +
          num(t.geometry.headDim) + ", " + num(t.geometry.group()) +
          " a kv head) do not take the tensor cores' form");

  // The fields each opcode reads (TaskRecord.h); kNone there is a broken task.
  struct Field {
    const char *name;
    bool used;
    bool present;
    uint64_t value;
  };
  bool gemvLike = op == Opcode::Gemv || op == Opcode::LmHead || op == Opcode::GateUp;
  bool attention = op == Opcode::Attention;
  Field fields[] = {
      {"weight", gemvLike || op == Opcode::Embed || op == Opcode::FfnPartial, t.weight != kNone,
       t.weight},
      {"norm", op == Opcode::FfnPartial, t.norm != kNone, t.norm},
      {"in[0]", op != Opcode::Nop, t.in[0] != kNone, t.in[0]},
      {"in[1]",
       op == Opcode::SelectToken || attention || op == Opcode::ReduceResidual ||
           (t.flags & kFlagResidual),
       t.in[1] != kNone, t.in[1]},
      {"in[2]", attention, t.in[2] != kNone, t.in[2]},
      {"out[0]", op != Opcode::Nop, t.out[0] != kNone, t.out[0]},
      {"out[1]",
       attention || op == Opcode::LmHead ||
           (t.flags & (kFlagVCache | kFlagRecord)),
       t.out[1] != kNone, t.out[1]},
  };
  for (const Field &f : fields) {
    if (f.used && !f.present)
      error(who + " has no " + f.name);
    // The workers load operands in 16-byte vectors from these offsets: a
    // misaligned one is a fault on the GPU and undefined behaviour on the
    // CPU (the mutation test moved a reduce's in[0] by a byte, and the
    // bounds alone allowed it).
    if (f.present && f.value % kOperandAlignment != 0)
      error(who + " has " + f.name + " at " + num(f.value) + ", not a multiple of " +
            num(kOperandAlignment));
  }

  if (isRowTask(op) && t.rowBegin >= t.rowEnd) {
    error(who + " has empty rows [" + num(t.rowBegin) + ", " + num(t.rowEnd) + ")");
    return; // The row-based checks below would wrap.
  }

  uint64_t needParams = 0;
  if ((gemvLike && t.norm != kNone) || op == Opcode::FfnPartial)
    needParams = 1; // eps
  else if (attention)
    needParams = 1 + t.geometry.headDim / 2; // softmax scale, inverse frequencies
  if (needParams && t.param == kNone32)
    error(who + " has no param, and needs " + num(needParams));
  else if (needParams && t.param + needParams > plan.params.size())
    error(who + " param " + num(t.param) + " needs params[" + num(t.param) + ", " +
          num(t.param + needParams) + "), the plan has " + num(plan.params.size()));

  uint64_t rows = t.rowEnd - t.rowBegin, streams = 0;
  switch (op) {
  case Opcode::SelectToken:
    if (t.aux[0] == 0)
      error(who + " combines no candidates (aux[0] is 0)");
    break;
  case Opcode::Embed:
    if (t.aux[0] != m.hidden || t.aux[1] != m.vocab)
      error(who + " aux is (" + num(t.aux[0]) + ", " + num(t.aux[1]) +
            "), the model's (hidden, vocab) is (" + num(m.hidden) + ", " + num(m.vocab) + ")");
    else if (t.rowEnd > m.hidden)
      error(who + " rows end at " + num(t.rowEnd) + ", past hidden " + num(m.hidden));
    streams = kWeightBytes * rows;
    break;
  case Opcode::Gemv:
  case Opcode::LmHead:
  case Opcode::GateUp:
    if (t.aux[0] == 0)
      error(who + " has no columns (aux[0] is 0)");
    // A row of K per unit, a GateUp's a gate row and an up row (Execution.h).
    streams = streamSegmentCount(op) * kWeightBytes * rows * t.aux[0];
    break;
  case Opcode::Attention: {
    const HeadGeometry &g = t.geometry;
    if (g.kvHeads && t.aux[0] >= g.kvHeads)
      error(who + " kv head " + num(t.aux[0]) + " is not below its " + num(g.kvHeads));
    if (g.chunks && t.aux[1] >= g.chunks)
      error(who + " is chunk " + num(t.aux[1]) + " of its " + num(g.chunks));
    break;
  }
  case Opcode::MergeAttention: {
    // Whole heads of the output (its geometry checked below).
    const HeadGeometry &g = t.geometry;
    if (t.aux[0] != g.qRows())
      error(who + " merges an output of " + num(t.aux[0]) + " values; its geometry (" +
            geometryText(g) + ") has " + num(g.qRows()));
    else if (t.rowEnd > t.aux[0] || (g.headDim && (t.rowBegin % g.headDim || t.rowEnd % g.headDim)))
      error(who + " rows [" + num(t.rowBegin) + ", " + num(t.rowEnd) +
            ") are not whole heads of dim " + num(g.headDim) + " inside its " + num(t.aux[0]));
    break;
  }
  case Opcode::FfnPartial:
    if (t.aux[0] == 0)
      error(who + " has hidden size 0 (aux[0])");
    streams = streamSegmentCount(op) * kWeightBytes * rows * t.aux[0]; // Gate, up, down.
    break;
  case Opcode::ReduceResidual:
    if (t.aux[1] == 0)
      error(who + " sums no partials (aux[1] is 0)");
    // The access model lists each partial: more than the arena holds would
    // only fail the bounds checks after a list of that length was built.
    else if (uint64_t(t.aux[1]) * t.aux[0] * kActivationBytes > plan.arenaBytes)
      error(who + " sums " + num(t.aux[1]) + " partials of " + num(t.aux[0]) +
            " values, more than the arena's " + num(plan.arenaBytes) + " bytes hold");
    if (t.rowEnd > t.aux[0])
      error(who + " rows end at " + num(t.rowEnd) + ", past its size " + num(t.aux[0]));
    break;
  case Opcode::Nop: break;
  }
  if (t.weightBytes != streams)
    error(who + " weightBytes is " + num(t.weightBytes) + ", but it streams " + num(streams) +
          " bytes");
}

/// The geometry fields a task's opcode and flags use must be consistent, and
/// the rest zero (TaskRecord.h), so that a plan cannot carry a meaningless one.
void Verifier::checkGeometry(size_t index) {
  const TaskRecord &t = plan.tasks[index];
  const HeadGeometry &g = t.geometry;
  const auto op = static_cast<Opcode>(t.opcode);
  const bool attention = op == Opcode::Attention;
  const bool vcache = op == Opcode::Gemv && (t.flags & kFlagVCache);
  const bool merge = op == Opcode::MergeAttention;
  // The merge weights each head's chunks: it carries its attention's geometry.
  const bool usesHeads = attention || merge, usesRow = attention || vcache || merge,
             usesChunks = attention || merge;
  std::string who = describe(index);
  if ((!usesHeads && g.heads) || (!usesRow && (g.kvHeads || g.headDim)) ||
      (!usesChunks && g.chunks)) {
    error(who + " has geometry (" + geometryText(g) + ") it does not use");
    return;
  }
  if (usesHeads && (g.heads == 0 || g.kvHeads == 0 || g.heads % g.kvHeads))
    error(who + " geometry: " + num(g.heads) + " heads is not a positive multiple of " +
          num(g.kvHeads) + " kv heads");
  if (usesRow && (g.kvHeads == 0 || g.headDim == 0 || g.headDim % 2))
    error(who + " geometry: " + num(g.kvHeads) + " kv heads of dim " + num(g.headDim) +
          " (both positive, the dim even: RoPE rotates pairs)");
  if (usesChunks && (g.chunks == 0 || g.chunks > plan.attention.splitContext))
    error(who + " geometry: " + num(g.chunks) + " chunks, not 1 to the split context " +
          num(plan.attention.splitContext) + " (a long-mode chunk would be empty)");
}

// --- b. Weights layout, c. buffers ----------------------------------------===//

void Verifier::checkWeights() {
  for (const PackedTensor &t : plan.weights) {
    std::string who = "tensor '" + t.name + "'";
    if (t.segments.empty())
      error(who + " has no segments");
    if (t.offset % kWeightAlignment)
      error(who + " offset " + num(t.offset) + " is not a multiple of " + num(kWeightAlignment));
    if (t.offset > plan.weightsBytes || t.bytes > plan.weightsBytes - t.offset)
      error(who + " " + span(t.offset, t.offset + t.bytes) + " is outside the " +
            num(plan.weightsBytes) + " bytes of weights");
    uint64_t elements = 0;
    for (size_t i = 0; i < t.segments.size(); ++i) {
      const WeightSegment &s = t.segments[i];
      // A 1-D checkpoint tensor (a norm scale) is one row.
      const std::vector<uint64_t> &shape = s.sourceShape;
      uint64_t shapeRows = shape.size() == 2 ? shape[0] : 1;
      uint64_t shapeCols = shape.size() == 2 ? shape[1] : shape.size() == 1 ? shape[0] : 0;
      if (shape.empty() || shape.size() > 2 || s.rowBegin >= s.rowEnd || s.rowEnd > shapeRows ||
          s.colBegin >= s.colEnd || s.colEnd > shapeCols) {
        error(who + " segment " + num(i) + " of '" + s.checkpoint + "': rows [" + num(s.rowBegin) +
              ", " + num(s.rowEnd) + ") x cols [" + num(s.colBegin) + ", " + num(s.colEnd) +
              ") is not a block of its " + num(shape.size()) + "-D shape");
        continue;
      }
      // A hostile plan must not make the sum wrap around to a matching size.
      uint64_t segmentElements, bytes2;
      if (__builtin_mul_overflow(s.rowEnd - s.rowBegin, s.colEnd - s.colBegin, &segmentElements) ||
          __builtin_add_overflow(elements, segmentElements, &elements) ||
          __builtin_mul_overflow(elements, kWeightBytes, &bytes2)) {
        error(who + " segments hold more elements than fit in 64 bits");
        elements = UINT64_MAX / 2;
        break;
      }
    }
    if (t.bytes != kWeightBytes * elements)
      error(who + " has " + num(t.bytes) + " bytes, its segments hold " + num(elements) + " " +
            dtypeName(kWeightType) + " elements");
  }
  tensorsByOffset.resize(plan.weights.size());
  for (uint32_t i = 0; i < tensorsByOffset.size(); ++i)
    tensorsByOffset[i] = i;
  std::sort(tensorsByOffset.begin(), tensorsByOffset.end(), [&](uint32_t a, uint32_t b) {
    return plan.weights[a].offset < plan.weights[b].offset;
  });
  for (size_t i = 1; i < tensorsByOffset.size(); ++i) {
    const PackedTensor &a = plan.weights[tensorsByOffset[i - 1]];
    const PackedTensor &b = plan.weights[tensorsByOffset[i]];
    if (b.offset < a.offset + a.bytes)
      error("tensors '" + a.name + "' and '" + b.name + "' overlap");
  }
  uint64_t expected = layoutHash(plan.weights, plan.weightsBytes);
  if (plan.layoutHash != expected)
    error("layout hash " + hex(plan.layoutHash, 16) + " does not match the weights layout (" +
          hex(expected, 16) + ")");
}

void Verifier::checkBuffers() {
  const Buffer *once[kBufferKinds] = {};
  // The arena ends where its last buffer does, rounded up to the alignment:
  // the executors allocate arenaBytes, and a hostile plan's 2^64 - 1 wrapped
  // the CPU executor's rounding to a 4 KiB allocation that the buffers
  // overran (found by the mutation test's harness, which could not allocate it).
  uint64_t end = 0;
  for (const Buffer &b : plan.buffers)
    if (b.offset <= UINT64_MAX - b.bytes)
      end = std::max(end, b.offset + b.bytes);
  const uint64_t rounded = (end + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  if (plan.arenaBytes > rounded)
    error("the arena is " + num(plan.arenaBytes) + " bytes, and its buffers end at " + num(end) +
          " (at most " + num(rounded) + " with the alignment)");
  for (const Buffer &b : plan.buffers) {
    std::string who = "buffer '" + b.name + "'";
    auto kind = static_cast<unsigned>(b.kind);
    if (kind >= kBufferKinds) {
      error(who + " has unknown kind " + num(kind));
      continue;
    }
    if (b.bytes == 0)
      error(who + " is empty");
    if (b.offset % kArenaAlignment)
      error(who + " offset " + num(b.offset) + " is not a multiple of " + num(kArenaAlignment));
    if (b.offset > plan.arenaBytes || b.bytes > plan.arenaBytes - b.offset)
      error(who + " " + span(b.offset, b.offset + b.bytes) + " is outside the " +
            num(plan.arenaBytes) + "-byte arena");
    bool unique = b.kind == BufferKind::Logits || b.kind == BufferKind::Candidates ||
                  b.kind == BufferKind::TokenSlots || b.kind == BufferKind::Prompt ||
                  b.kind == BufferKind::StepState;
    if (unique && once[kind])
      error(who + " is a second " + bufferKindName(b.kind) + " buffer (the first is '" +
            once[kind]->name + "')");
    once[kind] = &b;
    uint64_t least = b.kind == BufferKind::TokenSlots  ? kTokenBytes * plan.target.workers
                     : b.kind == BufferKind::StepState ? sizeof(StepState)
                                                       : 0;
    if (b.bytes < least)
      error(who + " has " + num(b.bytes) + " bytes, a " + bufferKindName(b.kind) + " needs " +
            num(least));
    if (b.tagged && b.kind != BufferKind::Activation && b.kind != BufferKind::AttentionWorkspace)
      error(who + " is tagged, and a " + bufferKindName(b.kind) + " buffer cannot be");
  }
  buffersByOffset.resize(plan.buffers.size());
  for (uint32_t i = 0; i < buffersByOffset.size(); ++i)
    buffersByOffset[i] = i;
  std::sort(buffersByOffset.begin(), buffersByOffset.end(), [&](uint32_t a, uint32_t b) {
    return plan.buffers[a].offset < plan.buffers[b].offset;
  });
  for (size_t i = 1; i < buffersByOffset.size(); ++i) {
    const Buffer &a = plan.buffers[buffersByOffset[i - 1]];
    const Buffer &b = plan.buffers[buffersByOffset[i]];
    if (b.offset < a.offset + a.bytes)
      error("buffers '" + a.name + "' and '" + b.name + "' overlap");
  }
}

// --- d. Bounds ------------------------------------------------------------===//

/// The element of `sorted` (indices into items with .offset and .bytes) that
/// holds [begin, end), or -1.
template <typename T>
int64_t findHome(const std::vector<T> &items, const std::vector<uint32_t> &sorted, uint64_t begin,
                 uint64_t end) {
  auto it = std::upper_bound(sorted.begin(), sorted.end(), begin,
                             [&](uint64_t v, uint32_t i) { return v < items[i].offset; });
  if (it == sorted.begin())
    return -1;
  const T &home = items[*(it - 1)];
  if (end - home.offset > home.bytes)
    return -1;
  return *(it - 1);
}

/// Tiles (WeightTiles.h): a task reads tiles exactly when its weights are
/// tiled, so that no executor reads a tiled tensor as rows or rows as tiles:
/// a kFlagTiledWeights task's weight range is inside one tensor whose
/// segments are all tiled with the task's K columns, and begins at an octet
/// of one of them; any other task's weight range is in a tensor without
/// tiles.
void Verifier::checkTiles() {
  for (size_t i = 0; i < plan.tasks.size() && !full(); ++i) {
    const TaskRecord &t = plan.tasks[i];
    const auto op = static_cast<Opcode>(t.opcode);
    const bool readsRows = op == Opcode::Gemv || op == Opcode::GateUp || op == Opcode::LmHead ||
                           op == Opcode::FfnPartial || op == Opcode::Embed;
    if (!readsRows || t.weight == kNone)
      continue;
    const bool tiledTask = t.flags & kFlagTiledWeights;
    const uint64_t end = t.weight + std::max<uint64_t>(t.weightBytes, 1);
    const int64_t home = findHome(plan.weights, tensorsByOffset, t.weight, end);
    if (home < 0)
      continue; // The bounds check reports it.
    const PackedTensor &tensor = plan.weights[home];
    bool allTiled = true, anyTiled = false;
    for (const WeightSegment &s : tensor.segments) {
      allTiled &= s.tiled;
      anyTiled |= s.tiled;
    }
    if (!tiledTask) {
      if (anyTiled)
        error(describe(i) + " reads tensor '" + tensor.name +
              "' as rows, and its weights are stored in tiles");
      continue;
    }
    if (!allTiled) {
      error(describe(i) + " reads weight tiles, and tensor '" + tensor.name +
            "' is not all stored in tiles");
      continue;
    }
    // The segment the task's range begins in, and the octet there.
    uint64_t at = tensor.offset;
    bool aligned = false;
    for (const WeightSegment &s : tensor.segments) {
      const uint64_t cols = s.colEnd - s.colBegin;
      const uint64_t bytes = s.elements() * kWeightBytes;
      if (s.transposed || cols != t.aux[0]) {
        error(describe(i) + " reads tiles of " + num(t.aux[0]) + " columns, and tensor '" +
              tensor.name + "' has a segment of " + num(cols) +
              (s.transposed ? " columns stored transposed" : " columns"));
        aligned = true; // Reported.
        break;
      }
      if (t.weight < at + bytes) {
        aligned = t.weight >= at && (t.weight - at) % (kTileRows * cols * kWeightBytes) == 0;
        if (!aligned)
          error(describe(i) + " reads weight tiles from offset " + num(t.weight) +
                ", which is not an octet's start in tensor '" + tensor.name + "'");
        aligned = true;
        break;
      }
      at += bytes;
    }
    if (!aligned)
      error(describe(i) + " reads weight tiles past tensor '" + tensor.name + "'");
  }
}

/// Ownership: the tasks that stream a tensor's rows (Gemv, LmHead, GateUp,
/// FfnPartial) read it as the compiler laid it out. Each such task's weight
/// range begins where its first row's bytes are (the tensor holds its stage's
/// rows in order, each row's streamed bytes the same: weightBytes / rows), and
/// the tasks of one wave that stream a tensor read every byte of it exactly
/// once. (A graph weight used whole by several matmuls, one wave each, is one
/// packed tensor streamed by each of those waves.) So a task that reads
/// another task's rows, a row twice, or a row nobody reads is refused, though
/// every range is inside a tensor. Norm scales and the embedding's gather read
/// a tensor's bytes from many tasks: not rows.
void Verifier::checkWeightOwnership() {
  struct Range {
    uint64_t begin, end;
    size_t task;
  };
  std::map<std::pair<size_t, uint32_t>, std::vector<Range>> byTensorAndWave;
  for (size_t i = 0; i < plan.tasks.size() && !full(); ++i) {
    const TaskRecord &t = plan.tasks[i];
    const auto op = static_cast<Opcode>(t.opcode);
    if (!(op == Opcode::Gemv || op == Opcode::LmHead || op == Opcode::GateUp || op == Opcode::FfnPartial) ||
        t.weight == kNone || t.weightBytes == 0)
      continue;
    uint64_t end = 0;
    if (__builtin_add_overflow(t.weight, t.weightBytes, &end))
      continue; // The bounds check reports it.
    const int64_t home = findHome(plan.weights, tensorsByOffset, t.weight, end);
    if (home < 0)
      continue;
    const PackedTensor &tensor = plan.weights[home];
    // checkTask has made rows > 0 and weightBytes what they stream.
    const uint64_t rows = t.rowEnd - t.rowBegin, rowBytes = t.weightBytes / rows;
    const uint64_t expected = tensor.offset + uint64_t(t.rowBegin) * rowBytes;
    if (t.weight != expected) {
      error(describe(i) + " reads W" + span(t.weight, end) + " of tensor '" + tensor.name + "', and its rows [" +
            num(t.rowBegin) + ", " + num(t.rowEnd) + ") are bytes [+" + num(expected - tensor.offset) + ", +" +
            num(expected - tensor.offset + t.weightBytes) + ") of it");
      continue;
    }
    byTensorAndWave[{size_t(home), t.wave}].push_back({t.weight, end, i});
  }
  for (auto &[key, ranges] : byTensorAndWave) {
    if (full())
      break;
    const PackedTensor &tensor = plan.weights[key.first];
    const std::string who = "tensor '" + tensor.name + "' in wave " + num(key.second) + ": bytes [+";
    std::sort(ranges.begin(), ranges.end(), [](const Range &a, const Range &b) {
      return a.begin < b.begin || (a.begin == b.begin && a.task < b.task);
    });
    uint64_t at = tensor.offset;
    bool reported = false;
    for (size_t r = 0; r < ranges.size() && !reported; ++r) {
      if (ranges[r].begin > at) {
        error(who + num(at - tensor.offset) + ", +" + num(ranges[r].begin - tensor.offset) +
              ") are streamed by no task");
        reported = true;
      } else if (ranges[r].begin < at) {
        error(who + num(ranges[r].begin - tensor.offset) + ", +" + num(std::min(at, ranges[r].end) - tensor.offset) +
              ") are streamed by " + describe(ranges[r - 1].task) + " and by " + describe(ranges[r].task));
        reported = true;
      }
      at = ranges[r].end;
    }
    if (!reported && at < tensor.offset + tensor.bytes)
      error(who + num(at - tensor.offset) + ", +" + num(tensor.bytes) + ") are streamed by no task");
  }
}

void Verifier::checkBounds(ModeAccesses &mode) {
  mode.home.assign(mode.accesses.size(), 0);
  for (size_t i = 0; i < mode.accesses.size() && !full(); ++i) {
    const Access &a = mode.accesses[i];
    uint64_t begin = a.extentBegin(), end = a.extentEnd();
    if (begin >= end)
      continue;
    auto who = [&] { return describe(mode.task[i]) + " " + operandName(a.operand) + " "; };
    std::string message;
    if (a.space == Space::Weights) {
      int64_t home = findHome(plan.weights, tensorsByOffset, begin, end);
      if (home < 0)
        message = who() + "W" + span(begin, end) + " is not inside one packed tensor";
      else
        mode.home[i] = home;
    } else {
      int64_t home = findHome(plan.buffers, buffersByOffset, begin, end);
      const Buffer *b = home < 0 ? nullptr : &plan.buffers[home];
      bool isCache = a.kind == AccessKind::CacheRow || a.kind == AccessKind::CacheHistory;
      if (!b)
        message = who() + "A" + span(begin, end) + " is not inside one buffer";
      else if (!(a.expectedKinds & kindBit(b->kind)))
        message = who() + "A" + span(begin, end) + " is in buffer '" + b->name + "' (" +
                  bufferKindName(b->kind) + "), the wrong kind for this operand";
      else if (!isCache && a.tagged != b->tagged)
        message = who() + "A" + span(begin, end) + (a.tagged ? " is read or written as tagged" : " is read or written as plain f32") + " values, and buffer '" + b->name + "' " + (b->tagged ? "is tagged" : "is not tagged");
      else if (isCache && a.cacheBase != b->offset)
        message = who() + "cache at A[+" + num(a.cacheBase) + "] does not start at buffer '" +
                  b->name + "'";
      else if (isCache && a.end > a.rowBytes)
        message = who() + "bytes " + span(a.begin, a.end) + " are past the end of a " +
                  num(a.rowBytes) + "-byte cache row";
      else
        mode.home[i] = home;
    }
    if (!message.empty() && reported.insert(message).second)
      error(message);
  }
}

// --- e. SelectToken -------------------------------------------------------===//

void Verifier::checkSelectTokens() {
  std::vector<int64_t> first(plan.target.workers, -1);
  int64_t recorder = -1;
  for (size_t i = 0; i < plan.tasks.size() && !full(); ++i) {
    const TaskRecord &t = plan.tasks[i];
    if (t.opcode != static_cast<uint16_t>(Opcode::SelectToken))
      continue;
    if (t.wave != 0)
      error(describe(i) + " is not in wave 0: every worker picks the token first");
    if (first[t.worker] >= 0)
      error(describe(i) + " is a second select_token of worker " + num(t.worker) +
            " (the first is task #" + num(first[t.worker]) + ")");
    else
      first[t.worker] = i;
    if (t.flags & kFlagRecord) {
      if (recorder >= 0)
        error(describe(i) + " is a second select_token with the record flag (the first is task #" +
              num(recorder) + ")");
      else
        recorder = i;
    }
  }
  for (size_t w = 0; w < first.size(); ++w)
    if (first[w] < 0)
      error("worker " + num(w) + " has no select_token task");
  if (recorder < 0)
    error("no select_token task has the record flag: nothing writes the step state");
}

// --- e. Layers ------------------------------------------------------------===//

void Verifier::checkLayers() {
  // Each workspace's geometry: its first attention task's (all must agree).
  std::map<int64_t, std::pair<HeadGeometry, size_t>> workspaces;
  auto homeOf = [&](uint64_t offset) {
    return offset == kNone ? -1 : findHome(plan.buffers, buffersByOffset, offset, offset + 1);
  };
  auto sameGeometry = [](const HeadGeometry &a, const HeadGeometry &b) {
    return a.heads == b.heads && a.kvHeads == b.kvHeads && a.headDim == b.headDim &&
           a.chunks == b.chunks;
  };
  // Each cache's heads: its first task's kv heads and head_dim (all must
  // agree: a head-major cache's rows of one layout are scrambled in another).
  std::map<int64_t, std::pair<HeadGeometry, size_t>> caches;
  // A cache read or written with rows of `kvRows` values must hold maxContext
  // of them, laid out by the same heads as every other task's access.
  auto checkCache = [&](size_t i, const char *operand, uint64_t offset, const HeadGeometry &g) {
    int64_t home = homeOf(offset);
    if (home < 0)
      return; // The bounds check has said so.
    const Buffer &b = plan.buffers[home];
    const uint32_t kvRows = g.kvRows();
    uint64_t want = uint64_t(plan.model.maxContext) * kvRows * kCacheBytes;
    if (b.bytes != want)
      error(describe(i) + " " + operand + ": cache '" + b.name + "' has " + num(b.bytes) +
            " bytes, but " + num(plan.model.maxContext) + " rows of its " + num(kvRows) +
            " values take " + num(want));
    auto [it, first] = caches.try_emplace(home, g, i);
    const HeadGeometry &theirs = it->second.first;
    if (!first && (theirs.kvHeads != g.kvHeads || theirs.headDim != g.headDim))
      error(describe(i) + " " + operand + " and " + describe(it->second.second) +
            " lay out cache '" + b.name + "' by different heads (" + num(g.kvHeads) +
            " kv heads of dim " + num(g.headDim) + "; " + num(theirs.kvHeads) + " of dim " +
            num(theirs.headDim) + ")");
  };
  for (size_t i = 0; i < plan.tasks.size() && !full(); ++i) {
    const TaskRecord &t = plan.tasks[i];
    const auto op = static_cast<Opcode>(t.opcode);
    if (op == Opcode::Attention) {
      checkCache(i, "in[1]", t.in[1], t.geometry);
      checkCache(i, "in[2]", t.in[2], t.geometry);
      int64_t home = homeOf(t.out[1]);
      if (home < 0)
        continue;
      const Buffer &b = plan.buffers[home];
      const AttentionWorkspace ws = AttentionWorkspace::of(t.geometry);
      const uint64_t bytes = ws.elements() * (b.tagged ? kTaggedBytes : kActivationBytes);
      if (t.out[1] != b.offset || b.bytes != bytes) {
        error(describe(i) + " out[1]: workspace '" + b.name + "' [+" + num(b.offset) + ", +" +
              num(b.bytes) + ") is not the " + num(bytes) +
              " bytes from out[1] that its geometry (" + geometryText(t.geometry) + ") lays out");
        continue;
      }
      auto [it, first] = workspaces.try_emplace(home, t.geometry, i);
      if (!first && !sameGeometry(it->second.first, t.geometry))
        error(describe(i) + " and " + describe(it->second.second) + " share workspace '" +
              b.name + "' with different geometry (" + geometryText(t.geometry) + "; " +
              geometryText(it->second.first) + ")");
    } else if (op == Opcode::Gemv && (t.flags & kFlagVCache)) {
      checkCache(i, "out[1]", t.out[1], t.geometry);
    }
  }
  for (size_t i = 0; i < plan.tasks.size() && !full(); ++i) {
    const TaskRecord &t = plan.tasks[i];
    if (static_cast<Opcode>(t.opcode) != Opcode::MergeAttention)
      continue;
    int64_t home = homeOf(t.in[0]);
    auto it = workspaces.find(home);
    if (it == workspaces.end()) {
      error(describe(i) + " in[0]: merges the partials of a buffer no attention task writes");
      continue;
    }
    const HeadGeometry &g = it->second.first;
    const Buffer &b = plan.buffers[home];
    if (t.in[0] != b.offset || t.aux[0] != g.qRows() || !sameGeometry(t.geometry, g))
      error(describe(i) + " merges " + num(t.aux[0]) + " values of geometry (" +
            geometryText(t.geometry) + ") at '" + b.name + "'[+" + num(t.in[0] - b.offset) +
            "], but its partials are " + num(g.qRows()) + " values of geometry (" +
            geometryText(g) + ") at [+0] (" + describe(it->second.second) + ")");
  }
}

// --- f. Hazards -----------------------------------------------------------===//

/// One access of the hazard domains (see the header comment).
struct Item {
  uint64_t begin, end;
  uint32_t task, buffer;
  uint16_t wave, worker;
  uint32_t domain; // 0: arena bytes, 1: cache row pos.
  bool write, needsWriter;
  bool tagged; // A read that waits for the step's tags (Tagged.h).
};

/// Writes of one wave that tile a range back to back (a wave's slices of one
/// vector). A read is checked against a whole run at once, and against its
/// single writes only where no barrier orders the two waves.
struct Run {
  uint64_t begin, end;
  uint32_t first, last; // Indices into Domain::writes.
  uint16_t wave;
};

struct Domain {
  std::vector<Item> writes, reads;
  std::vector<Run> runs;
  std::vector<uint64_t> reach; // reach[i] = max end of runs[0..i].

  void index() {
    std::sort(writes.begin(), writes.end(), [](const Item &a, const Item &b) {
      return std::pair(a.begin, a.task) < std::pair(b.begin, b.task);
    });
    for (uint32_t i = 0; i < writes.size(); ++i) {
      const Item &w = writes[i];
      if (!runs.empty() && runs.back().wave == w.wave && runs.back().end == w.begin) {
        runs.back().end = w.end;
        runs.back().last = i;
      } else {
        runs.push_back({w.begin, w.end, i, i, w.wave});
      }
    }
    reach.resize(runs.size());
    for (size_t i = 0; i < runs.size(); ++i)
      reach[i] = std::max(runs[i].end, i ? reach[i - 1] : 0);
  }

  /// Calls f(run) for each run overlapping [begin, end); runs are sorted by
  /// begin, and the walk back stops where no earlier run reaches `begin`.
  template <typename F> void overlappingRuns(uint64_t begin, uint64_t end, F f) const {
    auto it = std::lower_bound(runs.begin(), runs.end(), end,
                               [](const Run &r, uint64_t v) { return r.begin < v; });
    for (size_t i = it - runs.begin(); i-- > 0 && reach[i] > begin;)
      if (runs[i].end > begin)
        f(runs[i]);
  }
  /// Calls f(write) for each write of `run` overlapping [begin, end).
  template <typename F>
  void overlappingIn(const Run &run, uint64_t begin, uint64_t end, F f) const {
    auto first = writes.begin() + run.first, last = writes.begin() + run.last + 1;
    auto it = std::partition_point(first, last, [&](const Item &w) { return w.end <= begin; });
    for (; it != last && it->begin < end; ++it)
      f(*it);
  }
};

std::vector<std::string> Verifier::hazards(const ModeAccesses &mode, StepMode stepMode) const {
  std::vector<std::string> found;
  auto report = [&](std::string message) {
    if (found.size() < maxErrors)
      found.push_back(std::move(message));
  };
  std::vector<Domain> domains(2);
  for (size_t i = 0; i < mode.accesses.size(); ++i) {
    const Access &a = mode.accesses[i];
    if (a.space != Space::Arena || a.extentBegin() >= a.extentEnd())
      continue;
    const TaskRecord &t = plan.tasks[mode.task[i]];
    BufferKind kind = plan.buffers[mode.home[i]].kind;
    bool carried = kind == BufferKind::KCache || kind == BufferKind::VCache ||
                   kind == BufferKind::Candidates || kind == BufferKind::Prompt;
    Item item{a.begin,   a.end,   mode.task[i], mode.home[i], t.wave,
              t.worker,  0,       a.write,      !carried,     a.tagged};
    switch (a.kind) {
    case AccessKind::Plain: break;
    case AccessKind::CacheHistory:
      if (!a.includesCurrentRow)
        continue; // Rows < pos: written by earlier steps, by nothing in this one.
      [[fallthrough]];
    case AccessKind::CacheRow:
      item.domain = 1;
      item.begin = a.cacheBase + a.begin;
      item.end = a.cacheBase + a.end;
      item.needsWriter = true; // Row pos is this step's.
      break;
    }
    Domain &d = domains[item.domain];
    (item.write ? d.writes : d.reads).push_back(item);
  }
  for (Domain &d : domains)
    d.index();

  auto where = [&](const Item &it, uint64_t begin, uint64_t end) {
    const Buffer &b = plan.buffers[it.buffer];
    std::string text = b.name;
    if (it.domain == 1)
      text += " row pos";
    text += span(begin - b.offset, end - b.offset);
    return text;
  };

  // 1. Single writer.
  auto bothWrite = [&](const Item &a, const Item &b) {
    const Item &x = a.task <= b.task ? a : b, &y = a.task <= b.task ? b : a;
    std::string range = where(y, std::max(a.begin, b.begin), std::min(a.end, b.end));
    if (x.task == y.task)
      report(describe(x.task) + " writes " + range + " twice");
    else
      report(describe(x.task) + " and " + describe(y.task) + " both write " + range);
  };
  for (const Domain &d : domains) {
    size_t furthest = 0;
    for (size_t i = 1; i < d.writes.size(); ++i) {
      if (d.writes[i].begin < d.writes[furthest].end)
        bothWrite(d.writes[furthest], d.writes[i]);
      if (d.writes[i].end > d.writes[furthest].end)
        furthest = i;
    }
  }

  // 2, 3. Every read against the writes it overlaps.
  std::vector<uint32_t> prefix(plan.waves.size() + 1, 0); // Active barriers before wave i.
  for (size_t w = 0; w < plan.waves.size(); ++w) {
    BarrierKind k = plan.waves[w].barrier;
    bool active =
        k == BarrierKind::Grid || (k == BarrierKind::GridIfLong && stepMode == StepMode::Long);
    prefix[w + 1] = prefix[w] + active;
  }
  auto ordered = [&](uint16_t a, uint16_t b) { return prefix[b] > prefix[a]; };
  std::set<std::pair<uint16_t, uint16_t>> missing;
  auto missingBarrier = [&](uint16_t a, uint16_t b, auto message) {
    if (missing.insert({a, b}).second)
      report(message() + ": missing barrier between wave " + num(a) + " and wave " + num(b));
  };
  std::vector<std::pair<uint64_t, uint64_t>> covered;
  for (uint32_t di = 0; di < domains.size() && found.size() < maxErrors; ++di) {
    for (const Item &r : domains[di].reads) {
      covered.clear();
      auto visit = [&](const Item &w) {
        if (w.task == r.task)
          return;
        uint64_t begin = std::max(r.begin, w.begin), end = std::min(r.end, w.end);
        if (w.wave == r.wave) {
          report(describe(w.task) + " writes " + where(r, begin, end) + " that " +
                 describe(r.task) + " of the same wave reads");
        } else if (w.wave < r.wave) {
          // A tagged read waits for the write itself; a plain one needs a
          // grid barrier between the waves.
          if (w.worker != r.worker && !r.tagged && !ordered(w.wave, r.wave))
            missingBarrier(w.wave, r.wave, [&] {
              return describe(r.task) + " reads " + where(r, begin, end) + " written by " +
                     describe(w.task);
            });
          covered.push_back({begin, end});
        } else if (w.worker != r.worker && !ordered(r.wave, w.wave)) {
          missingBarrier(r.wave, w.wave, [&] {
            return describe(w.task) + " writes " + where(r, begin, end) + " that " +
                   describe(r.task) + " reads earlier";
          });
        }
      };
      // A run in another wave, ordered with the read's by a barrier, needs no
      // look at its writes (the read's own task is in its own wave).
      const Domain &d = domains[di];
      d.overlappingRuns(r.begin, r.end, [&](const Run &run) {
        if (run.wave != r.wave && ordered(std::min(run.wave, r.wave), std::max(run.wave, r.wave))) {
          if (run.wave < r.wave)
            covered.push_back({std::max(r.begin, run.begin), std::min(r.end, run.end)});
          return;
        }
        d.overlappingIn(run, r.begin, r.end, visit);
      });
      if (!r.needsWriter)
        continue;
      std::sort(covered.begin(), covered.end());
      uint64_t at = r.begin;
      for (auto [begin, end] : covered) {
        if (begin > at)
          break;
        at = std::max(at, end);
      }
      if (at < r.end) {
        auto next = std::upper_bound(covered.begin(), covered.end(), std::pair(at, uint64_t(0)));
        uint64_t gapEnd = next == covered.end() ? r.end : std::min(r.end, next->first);
        report(describe(r.task) + " reads " + where(r, at, gapEnd) + " before any task writes it");
      }
    }
  }
  return found;
}

std::vector<std::string> Verifier::run() {
  checkHeader();
  if (!errors.empty())
    return errors; // Sizes the task checks and the access model divide by.
  for (size_t i = 0; i < plan.tasks.size() && !full(); ++i)
    checkTask(i);
  if (!errors.empty())
    return errors;

  checkWeights();
  checkBuffers();
  bool layoutOk = errors.empty();
  if (layoutOk) {
    checkTiles();
    checkWeightOwnership();
  }
  ModeAccesses modes[2];
  for (StepMode m : {StepMode::Short, StepMode::Long}) {
    ModeAccesses &mode = modes[static_cast<int>(m)];
    for (size_t i = 0; i < plan.tasks.size(); ++i) {
      appendTaskAccesses(plan, plan.tasks[i], m, mode.accesses);
      mode.task.resize(mode.accesses.size(), i);
    }
    if (layoutOk)
      checkBounds(mode);
  }
  checkSelectTokens();
  if (layoutOk && errors.empty())
    checkLayers();
  if (!errors.empty())
    return errors;

  // The same hazard in both modes is reported once, without a mode.
  std::vector<std::string> byMode[2] = {hazards(modes[0], StepMode::Short),
                                        hazards(modes[1], StepMode::Long)};
  std::set<std::string> inShort(byMode[0].begin(), byMode[0].end());
  std::set<std::string> inLong(byMode[1].begin(), byMode[1].end());
  for (const std::string &m : byMode[0])
    error(inLong.count(m) ? m : m + " (short mode)");
  for (const std::string &m : byMode[1])
    if (!inShort.count(m))
      error(m + " (long mode)");
  return errors;
}

} // namespace

Status ti::plan::verifyPlan(const Plan &plan) {
  std::vector<std::string> errors = Verifier(plan, 1).run();
  return errors.empty() ? Status() : Status::error(errors.front());
}

std::vector<std::string> ti::plan::verifyPlanAll(const Plan &plan, size_t maxErrors) {
  return Verifier(plan, maxErrors).run();
}
