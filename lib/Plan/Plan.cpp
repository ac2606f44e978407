//===- Plan.cpp - A decode plan in memory ---------------------------------===//
#include "ti/Plan/Plan.h"

#include <cstring>

using namespace ti::plan;

const char *ti::plan::opcodeName(uint16_t opcode) {
  switch (opcode) {
#define TI_OPCODE(Name, Value, Spelling)                                        \
  case Value:                                                                  \
    return Spelling;
#include "ti/Plan/Opcodes.def"
  }
  return nullptr;
}

const char *ti::plan::bufferKindName(BufferKind kind) {
  switch (kind) {
  case BufferKind::Activation: return "activation";
  case BufferKind::Logits: return "logits";
  case BufferKind::Partials: return "partials";
  case BufferKind::KCache: return "k_cache";
  case BufferKind::VCache: return "v_cache";
  case BufferKind::AttentionWorkspace: return "attention_workspace";
  case BufferKind::Candidates: return "candidates";
  case BufferKind::TokenSlots: return "token_slots";
  case BufferKind::Prompt: return "prompt";
  case BufferKind::StepState: return "step_state";
  }
  return "unknown";
}

const char *ti::plan::barrierKindName(BarrierKind kind) {
  switch (kind) {
  case BarrierKind::None: return "none";
  case BarrierKind::Grid: return "grid";
  case BarrierKind::GridIfLong: return "grid_if_long";
  }
  return "unknown";
}

const Buffer *Plan::findBuffer(BufferKind kind) const {
  for (const Buffer &b : buffers)
    if (b.kind == kind)
      return &b;
  return nullptr;
}

namespace {
struct Fnv1a {
  uint64_t h = 0xcbf29ce484222325ull;
  void bytes(const void *p, size_t n) {
    const auto *c = static_cast<const unsigned char *>(p);
    for (size_t i = 0; i < n; ++i) {
      h ^= c[i];
      h *= 0x100000001b3ull;
    }
  }
  void u64(uint64_t v) { bytes(&v, sizeof v); } // Little-endian hosts only.
  void str(const std::string &s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
};
} // namespace

uint64_t ti::plan::layoutHash(const std::vector<PackedTensor> &weights, uint64_t weightsBytes) {
  Fnv1a f;
  f.u64(weightsBytes);
  f.u64(weights.size());
  for (const PackedTensor &t : weights) {
    f.str(t.name);
    f.u64(t.offset);
    f.u64(t.bytes);
    f.u64(t.segments.size());
    for (const WeightSegment &s : t.segments) {
      f.str(s.checkpoint);
      f.u64(s.sourceShape.size());
      for (uint64_t d : s.sourceShape)
        f.u64(d);
      f.u64(s.rowBegin);
      f.u64(s.rowEnd);
      f.u64(s.colBegin);
      f.u64(s.colEnd);
      f.u64(s.transposed);
    }
  }
  return f.h;
}
