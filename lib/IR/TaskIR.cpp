//===- TaskIR.cpp - Stages, tasks and waves: the compiler's plan ----------===//
#include "ti/IR/TaskIR.h"

#include "ti/IR/Printer.h"

using namespace ti;
using namespace ti::tir;

const char *tir::stageKindName(StageKind kind) {
  switch (kind) {
  case StageKind::Select: return "select";
  case StageKind::Embed: return "embed";
  case StageKind::RmsNorm: return "rmsnorm";
  case StageKind::Gemv: return "gemv";
  case StageKind::Rope: return "rope";
  case StageKind::Attention: return "attention";
  case StageKind::AttentionChunks: return "attention_chunks";
  case StageKind::MergeAttention: return "merge_attention";
  case StageKind::SiluMul: return "silu_mul";
  case StageKind::Add: return "add";
  case StageKind::Argmax: return "argmax";
  case StageKind::FfnPartial: return "ffn_partial";
  case StageKind::ReduceResidual: return "reduce_residual";
  case StageKind::LmHead: return "lm_head";
  }
  return "?";
}

bool tir::stageOpcode(const Stage &s, plan::Opcode &opcode) {
  switch (s.kind) {
  case StageKind::Select: opcode = plan::Opcode::SelectToken; return true;
  case StageKind::Embed: opcode = plan::Opcode::Embed; return true;
  case StageKind::Gemv:
    opcode = s.siluMul ? plan::Opcode::GateUp : plan::Opcode::Gemv;
    return true;
  case StageKind::LmHead: opcode = plan::Opcode::LmHead; return true;
  case StageKind::AttentionChunks: opcode = plan::Opcode::Attention; return true;
  case StageKind::MergeAttention: opcode = plan::Opcode::MergeAttention; return true;
  case StageKind::FfnPartial: opcode = plan::Opcode::FfnPartial; return true;
  case StageKind::ReduceResidual: opcode = plan::Opcode::ReduceResidual; return true;
  case StageKind::RmsNorm:
  case StageKind::Rope:
  case StageKind::Attention:
  case StageKind::SiluMul:
  case StageKind::Add:
  case StageKind::Argmax: return false;
  }
  return false;
}

int Module::addBuffer(std::string name, plan::BufferKind kind, uint64_t bytes) {
  buffers.push_back(Buffer{std::move(name), kind, bytes, plan::kNone});
  return static_cast<int>(buffers.size()) - 1;
}

int Module::findBuffer(plan::BufferKind kind) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].kind == kind)
      return static_cast<int>(i);
  return kNoBuffer;
}

static void printSlice(const Module &m, const Slice &s, llvm::raw_ostream &os) {
  os << m.buffers[s.buffer].name << '[' << s.offset << ':' << s.offset + s.length << ']';
}

void tir::printModule(const Module &m, llvm::raw_ostream &os) {
  os << "module " << (m.graph ? m.graph->name : "?") << " target=" << m.target.name
     << " workers=" << m.target.workers << " max_context=" << m.maxContext << '\n';
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    const Buffer &b = m.buffers[i];
    os << "  buffer " << b.name << ' ' << plan::bufferKindName(b.kind)
       << (b.tagged ? " tagged" : "") << " bytes=" << b.bytes;
    if (b.offset != plan::kNone)
      os << " offset=" << b.offset;
    os << '\n';
  }
  for (const plan::PackedTensor &p : m.packed)
    os << "  packed " << p.name << " offset=" << p.offset << " bytes=" << p.bytes
       << " segments=" << p.segments.size() << '\n';
  for (const Stage &s : m.stages) {
    os << "  stage " << s.name << ' ' << stageKindName(s.kind);
    if (s.layer >= 0)
      os << " layer=" << s.layer;
    os << " units=" << s.units;
    auto slice = [&](const char *label, const Slice &sl) {
      if (!sl.valid())
        return;
      os << ' ' << label << '=';
      printSlice(m, sl, os);
    };
    slice("in", s.input);
    slice("in2", s.input2);
    slice("in3", s.input3);
    slice("residual", s.residual);
    slice("out", s.output);
    slice("out2", s.output2);
    slice("out3", s.output3);
    if (!s.matrix.empty()) {
      os << " matrix=";
      for (size_t i = 0; i < s.matrix.size(); ++i) {
        const WeightRows &w = s.matrix[i];
        os << (i ? "+" : "") << '@' << m.graph->weights[w.weight].name << '[' << w.rowBegin
           << ':' << w.rowEnd << ']';
      }
      os << " cols=" << s.cols;
    }
    if (s.norm >= 0)
      os << " norm=@" << m.graph->weights[s.norm].name << " eps=" << AttrValue::ofFloat(s.eps).str();
    if (s.siluMul)
      os << " silu_mul";
    if (s.vCacheWrite)
      os << " v_cache_from_row=" << s.vRowBegin;
    if (s.tiled)
      os << " tiled";
    if (s.heads)
      os << " heads=" << s.heads << " kv_heads=" << s.kvHeads << " head_dim=" << s.headDim;
    if (s.kind == StageKind::AttentionChunks || s.kind == StageKind::MergeAttention)
      os << " chunks=" << s.chunks;
    if (s.hasRope)
      os << " rope";
    os << " barrier=" << plan::barrierKindName(s.barrier) << '\n';
    for (const Task &t : s.tasks) {
      os << "    task rows=[" << t.rowBegin << ", " << t.rowEnd << ")";
      if (t.worker >= 0)
        os << " worker=" << t.worker;
      if (s.kind == StageKind::AttentionChunks)
        os << " kv_head=" << t.aux0 << " chunk=" << t.aux1;
      if (t.packed >= 0)
        os << " weights=" << m.packed[t.packed].name << '+' << t.weightOffset - m.packed[t.packed].offset
           << '/' << t.weightBytes;
      os << '\n';
    }
  }
}
