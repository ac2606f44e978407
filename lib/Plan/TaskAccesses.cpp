//===- TaskAccesses.cpp - What each task reads and writes -----------------===//
//
// One function per opcode family, each a transcription of its paragraph in
// TaskRecord.h. Where the spec leaves the exact bytes to run time (positions
// inside a chunk, the rows of a token), the access is the conservative
// superset, as TaskAccesses.h explains. Offsets come from an untrusted plan, so
// every sum and product saturates: an absurd range then fails the verifier's
// bounds check instead of wrapping into a valid one.
//
//===----------------------------------------------------------------------===//
#include "ti/Plan/TaskAccesses.h"

#include "ti/Plan/AttentionLayout.h"
#include "ti/Plan/Tagged.h"

#include <algorithm>

using namespace ti::plan;

namespace {

constexpr uint64_t kSaturated = ~uint64_t(0);

uint64_t add(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? kSaturated : r;
}
uint64_t mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}

// Element sizes (TaskRecord.h), short: every access below multiplies by one.
constexpr uint64_t kW = kWeightBytes, kC = kCacheBytes, kA = kActivationBytes, kT = kTokenBytes;

/// Appends the accesses of one task; the helpers name the buffer kinds each
/// operand may live in, which the verifier checks.
class AccessListBuilder {
public:
  AccessListBuilder(const Plan &plan, const TaskRecord &task, StepMode mode,
                    std::vector<Access> &out)
      : plan(plan), t(task), isLong(mode == StepMode::Long), out(out),
        eIn0(elementBytes(Operand::In0)), eIn1(elementBytes(Operand::In1)),
        eOut0(elementBytes(Operand::Out0)) {}

  void run();

private:
  /// Whether the record's flags make an operand tagged (TaskRecord.h).
  bool taggedOperand(Operand op) const {
    switch (op) {
    case Operand::In0: return t.flags & kFlagTaggedIn0;
    case Operand::In1: return t.flags & kFlagTaggedIn1;
    case Operand::Out0: return t.flags & kFlagTaggedOut0;
    case Operand::Out1: return t.flags & kFlagTaggedOut1;
    default: return false;
    }
  }
  /// The bytes of an f32 operand's element: tagged (Tagged.h) or plain.
  uint64_t elementBytes(Operand op) const { return taggedOperand(op) ? kTaggedBytes : kA; }

  /// [begin, begin + bytes), saturating. A range of some bytes whose start
  /// itself saturated (an offset past 2^64: a mutated plan's out[1] of
  /// 2^64 - 4 plus its candidate's index) would read as empty and escape
  /// every bounds check; it begins just below its end instead, where no
  /// tensor or buffer reaches.
  static void setRange(Access &a, uint64_t begin, uint64_t bytes) {
    a.end = add(begin, bytes);
    a.begin = bytes != 0 && begin == kSaturated ? kSaturated - 1 : begin;
  }
  void weights(Operand op, uint64_t begin, uint64_t bytes) {
    Access a;
    a.space = Space::Weights;
    a.operand = op;
    setRange(a, begin, bytes);
    out.push_back(a);
  }
  void plain(Operand op, bool write, uint64_t begin, uint64_t bytes, BufferKind kind) {
    Access a;
    a.operand = op;
    a.write = write;
    setRange(a, begin, bytes);
    a.expectedKinds = kindBit(kind);
    a.tagged = taggedOperand(op);
    out.push_back(a);
  }
  void cache(AccessKind kind, Operand op, bool write, uint64_t base, uint64_t colBegin,
             uint64_t colEnd, BufferKind bufferKind, bool inclusive = false) {
    Access a;
    a.kind = kind;
    a.operand = op;
    a.write = write;
    a.begin = colBegin;
    a.end = colEnd;
    a.cacheBase = base;
    a.rowBytes = mul(t.geometry.kvRows(), kC); // KV bf16 values.
    a.rows = plan.model.maxContext;
    a.includesCurrentRow = inclusive;
    a.expectedKinds = kindBit(bufferKind);
    out.push_back(a);
  }

  void selectToken();
  void embed();
  void gemv(bool lmHead);
  void attention();
  void mergeAttention();
  void gateUp();
  void ffnPartial();
  void reduceResidual();

  const Plan &plan;
  const TaskRecord &t;
  bool isLong;
  std::vector<Access> &out;
  uint64_t eIn0, eIn1, eOut0; // elementBytes of each f32 operand.
};

void AccessListBuilder::selectToken() {
  plain(Operand::In0, false, t.in[0], mul(t.aux[0], sizeof(Candidate)), BufferKind::Candidates);
  plain(Operand::In1, false, t.in[1], kT * kMaxStepsPerLaunch, BufferKind::Prompt);
  plain(Operand::Out0, true, add(t.out[0], kT * t.worker), kT, BufferKind::TokenSlots);
  if (t.flags & kFlagRecord)
    plain(Operand::Out1, true, t.out[1], sizeof(StepState), BufferKind::StepState);
}

void AccessListBuilder::embed() {
  // The row read depends on the token: the whole table is the access.
  weights(Operand::Weight, t.weight, mul(mul(t.aux[1], t.aux[0]), kW));
  plain(Operand::In0, false, add(t.in[0], kT * t.worker), kT, BufferKind::TokenSlots);
  plain(Operand::Out0, true, add(t.out[0], eOut0 * t.rowBegin), eOut0 * (t.rowEnd - t.rowBegin),
        BufferKind::Activation);
}

void AccessListBuilder::gemv(bool lmHead) {
  uint64_t k = t.aux[0], rows = t.rowEnd - t.rowBegin;
  weights(Operand::Weight, t.weight, mul(mul(rows, k), kW));
  if (t.norm != kNone)
    weights(Operand::Norm, t.norm, mul(k, kW));
  plain(Operand::In0, false, t.in[0], mul(k, eIn0), BufferKind::Activation);
  if (!lmHead && (t.flags & kFlagResidual))
    plain(Operand::In1, false, add(t.in[1], eIn1 * t.rowBegin), eIn1 * rows,
          BufferKind::Activation);
  plain(Operand::Out0, true, add(t.out[0], eOut0 * t.rowBegin), eOut0 * rows,
        lmHead ? BufferKind::Logits : BufferKind::Activation);
  if (lmHead) {
    plain(Operand::Out1, true, add(t.out[1], mul(t.aux[1], sizeof(Candidate))), sizeof(Candidate),
          BufferKind::Candidates);
  } else if (t.flags & kFlagVCache) {
    // Rows >= aux[1] are the v part; they go to V cache columns i - aux[1].
    uint64_t first = std::max<uint64_t>(t.rowBegin, t.aux[1]);
    if (first < t.rowEnd)
      cache(AccessKind::CacheRow, Operand::Out1, true, t.out[1], kC * (first - t.aux[1]),
            kC * (uint64_t(t.rowEnd) - t.aux[1]), BufferKind::VCache);
  }
}

void AccessListBuilder::attention() {
  const HeadGeometry &geo = t.geometry;
  const uint64_t d = geo.headDim, g = t.aux[0], group = geo.group(); // D, g, G
  const uint64_t c = t.aux[1];
  const uint32_t firstHead = uint32_t(g * group);
  if (!isLong && c != 0)
    return; // Short mode: chunk 0 does the whole attention.
  const AttentionWorkspace ws = AttentionWorkspace::of(geo);
  // This kv head's columns of a cache row, in bytes.
  const uint64_t colBegin = kC * g * d, colEnd = kC * (g + 1) * d;
  const uint64_t eOut1 = elementBytes(Operand::Out1);
  auto at = [&](uint64_t element) { return add(t.out[1], mul(element, eOut1)); };
  // q of the group's heads, and k and v of head g, from the stacked q|k|v
  // vector (every chunk is assumed to read them: chunk 0 stores k, the chunk
  // of position pos uses both).
  const uint64_t q = geo.qRows(), kv = geo.kvRows();
  plain(Operand::In0, false, add(t.in[0], firstHead * d * eIn0), group * d * eIn0,
        BufferKind::Activation);
  plain(Operand::In0, false, add(t.in[0], (q + g * d) * eIn0), d * eIn0, BufferKind::Activation);
  plain(Operand::In0, false, add(t.in[0], (q + kv + g * d) * eIn0), d * eIn0,
        BufferKind::Activation);
  // Keys and values before pos come from the caches; those at pos from in[0],
  // never from row pos of either cache.
  cache(AccessKind::CacheHistory, Operand::In1, false, t.in[1], colBegin, colEnd,
        BufferKind::KCache);
  if (c == 0)
    cache(AccessKind::CacheRow, Operand::In1, true, t.in[1], colBegin, colEnd,
          BufferKind::KCache);
  cache(AccessKind::CacheHistory, Operand::In2, false, t.in[2], colBegin, colEnd,
        BufferKind::VCache);
  if (!isLong) { // The group's heads of the output.
    plain(Operand::Out0, true, add(t.out[0], firstHead * d * eOut0), group * d * eOut0,
          BufferKind::Activation);
    return;
  }
  plain(Operand::Out1, true, at(ws.partials(uint32_t(c), firstHead)), group * d * eOut1,
        BufferKind::AttentionWorkspace);
  plain(Operand::Out1, true, at(ws.stats(uint32_t(c), firstHead)), group * 2 * eOut1,
        BufferKind::AttentionWorkspace);
}

void AccessListBuilder::mergeAttention() {
  if (!isLong)
    return; // Short mode: the attention's chunk 0 wrote the output.
  // Every chunk's partials and stats (the rows' heads' among them: the
  // conservative superset), then the task's rows of the output.
  plain(Operand::In0, false, t.in[0], mul(AttentionWorkspace::of(t.geometry).elements(), eIn0),
        BufferKind::AttentionWorkspace);
  plain(Operand::Out0, true, add(t.out[0], mul(eOut0, t.rowBegin)),
        mul(eOut0, uint64_t(t.rowEnd) - t.rowBegin), BufferKind::Activation);
}

void AccessListBuilder::gateUp() {
  uint64_t k = t.aux[0], rows = t.rowEnd - t.rowBegin;
  // Gate rows, then up rows (Execution.h: streamSegmentCount).
  weights(Operand::Weight, t.weight, mul(mul(streamSegmentCount(Opcode::GateUp) * rows, k), kW));
  if (t.norm != kNone)
    weights(Operand::Norm, t.norm, mul(k, kW));
  plain(Operand::In0, false, t.in[0], mul(k, eIn0), BufferKind::Activation);
  plain(Operand::Out0, true, add(t.out[0], eOut0 * t.rowBegin), eOut0 * rows,
        BufferKind::Activation);
}

void AccessListBuilder::ffnPartial() {
  uint64_t h = t.aux[0], n = t.rowEnd - t.rowBegin;
  weights(Operand::Weight, t.weight, mul(mul(streamSegmentCount(Opcode::FfnPartial) * n, h), kW));
  weights(Operand::Norm, t.norm, mul(h, kW));
  plain(Operand::In0, false, t.in[0], mul(h, kA), BufferKind::Activation);
  plain(Operand::Out0, true, add(t.out[0], mul(mul(t.aux[1], h), kA)), mul(h, kA),
        BufferKind::Partials);
}

void AccessListBuilder::reduceResidual() {
  uint64_t h = t.aux[0], rows = t.rowEnd - t.rowBegin;
  for (uint64_t p = 0; p < t.aux[1]; ++p)
    plain(Operand::In0, false, add(t.in[0], mul(add(mul(p, h), t.rowBegin), kA)), kA * rows,
          BufferKind::Partials);
  plain(Operand::In1, false, add(t.in[1], kA * t.rowBegin), kA * rows, BufferKind::Activation);
  plain(Operand::Out0, true, add(t.out[0], kA * t.rowBegin), kA * rows, BufferKind::Activation);
}

void AccessListBuilder::run() {
  switch (static_cast<Opcode>(t.opcode)) {
  case Opcode::Nop: return;
  case Opcode::SelectToken: return selectToken();
  case Opcode::Embed: return embed();
  case Opcode::Gemv: return gemv(false);
  case Opcode::LmHead: return gemv(true);
  case Opcode::Attention: return attention();
  case Opcode::MergeAttention: return mergeAttention();
  case Opcode::GateUp: return gateUp();
  case Opcode::FfnPartial: return ffnPartial();
  case Opcode::ReduceResidual: return reduceResidual();
  }
}

} // namespace

const char *ti::plan::stepModeName(StepMode mode) {
  return mode == StepMode::Short ? "short" : "long";
}

const char *ti::plan::operandName(Operand operand) {
  switch (operand) {
  case Operand::Weight: return "weight";
  case Operand::Norm: return "norm";
  case Operand::In0: return "in[0]";
  case Operand::In1: return "in[1]";
  case Operand::In2: return "in[2]";
  case Operand::Out0: return "out[0]";
  case Operand::Out1: return "out[1]";
  }
  return "?";
}

uint64_t Access::extentBegin() const {
  if (kind == AccessKind::CacheRow || kind == AccessKind::CacheHistory) {
    // As setRange: some bytes past a saturated start are not an empty range.
    const uint64_t at = add(cacheBase, begin);
    return at == kSaturated && end > begin && rows != 0 ? kSaturated - 1 : at;
  }
  return begin;
}

uint64_t Access::extentEnd() const {
  if (kind == AccessKind::CacheRow || kind == AccessKind::CacheHistory)
    return add(add(cacheBase, mul(rows ? rows - 1 : 0, rowBytes)), end);
  return end;
}

void ti::plan::appendTaskAccesses(const Plan &plan, const TaskRecord &task, StepMode mode,
                                  std::vector<Access> &out) {
  AccessListBuilder(plan, task, mode, out).run();
}
