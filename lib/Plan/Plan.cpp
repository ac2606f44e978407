//===- Plan.cpp - A decode plan in memory ---------------------------------===//
#include "ti/Plan/Plan.h"

#include "ti/Support/Fnv1a.h"

#include <algorithm>

using namespace ti::plan;

const char *ti::plan::opcodeName(uint16_t opcode) {
  switch (opcode) {
#define TI_OPCODE(Name, Value, Spelling, Kind)                                                     \
  case Value:                                                                                      \
    return Spelling;
#include "ti/Plan/Opcodes.def"
  }
  return nullptr;
}

OpcodeKind ti::plan::opcodeKind(Opcode opcode) {
  switch (opcode) {
#define TI_OPCODE(Name, Value, Spelling, Kind)                                                     \
  case Opcode::Name:                                                                               \
    return OpcodeKind::Kind;
#include "ti/Plan/Opcodes.def"
  }
  return OpcodeKind::Control;
}

const char *ti::plan::opcodeKindName(OpcodeKind kind) {
  switch (kind) {
  case OpcodeKind::Control: return "control";
  case OpcodeKind::Gather: return "gather";
  case OpcodeKind::Stream: return "stream";
  case OpcodeKind::Attention: return "attention";
  case OpcodeKind::Reduce: return "reduce";
  }
  return "?";
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
  case BarrierKind::Tagged: return "tagged";
  }
  return "unknown";
}

const char *ti::plan::executionModelName(ExecutionModel model) {
  switch (model) {
  case ExecutionModel::Plain: return "plain";
  case ExecutionModel::Stream: return "stream";
  }
  return nullptr;
}

uint32_t Plan::attentionChunks() const {
  uint32_t most = 1;
  for (const TaskRecord &t : tasks)
    if (t.opcode == uint16_t(Opcode::Attention))
      most = std::max<uint32_t>(most, t.geometry.chunks);
  return most;
}

const Buffer *Plan::findBuffer(BufferKind kind) const {
  for (const Buffer &b : buffers)
    if (b.kind == kind)
      return &b;
  return nullptr;
}

uint64_t ti::plan::layoutHash(const std::vector<PackedTensor> &weights, uint64_t weightsBytes) {
  Fnv1a f;
  auto u64 = [&](uint64_t v) { f.value(v); };
  u64(weightsBytes);
  u64(weights.size());
  for (const PackedTensor &t : weights) {
    f.string(t.name);
    u64(t.offset);
    u64(t.bytes);
    u64(t.segments.size());
    for (const WeightSegment &s : t.segments) {
      f.string(s.checkpoint);
      u64(s.sourceShape.size());
      for (uint64_t d : s.sourceShape)
        u64(d);
      u64(s.rowBegin);
      u64(s.rowEnd);
      u64(s.colBegin);
      u64(s.colEnd);
      u64(s.transposed);
      // Only where set: the layouts made before tiles existed keep their hash.
      if (s.tiled)
        f.string("tiled");
    }
  }
  return f.hash();
}
