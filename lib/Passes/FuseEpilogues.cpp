//===- FuseEpilogues.cpp - Small ops into their neighbours (fuse-epilogues) ===//
//
// Each small op moves almost no bytes but, as a stage of its own, would cost a
// wave and a barrier. Each is folded into the stage next to it:
//
// 1. RoPE into attention: an Attention whose query and key come from Rope
//    stages read by nothing else takes their inverse frequencies and reads the
//    unrotated q and k (the attention task rotates them, and writes the rotated
//    key to the K cache).
// 2. The V-cache write into the QKV GEMV: when attention's value is the tail
//    rows of a Gemv's stacked output, that Gemv writes those rows to the V cache
//    as well (the post's "QKV already wrote the V row").
// 3. SiLU(gate) * up into the gate/up GEMV: a SiluMul of the two halves of one
//    stacked Gemv output read by nothing else.
// 4. Residual adds: add(a, y) where y is the whole output of a Gemv read only by
//    the add becomes the Gemv's epilogue y = a + W x.
// 5. The argmax into the lm_head: argmax over a Gemv's whole output makes that
//    Gemv an LmHead, whose tasks each leave their best (logit, row) as a
//    candidate for the next step's Select; its output becomes the logits.
//
//===----------------------------------------------------------------------===//
#include "StageUses.h"

#include "ti/Passes/Passes.h"

using namespace ti;
using namespace ti::tir;

namespace {

class FuseEpilogues : public Pass {
public:
  FuseEpilogues() : Pass(PassId::FuseEpilogues) {}

  bool run(Module &m, DiagnosticEngine &diags) override {
    dead.assign(m.stages.size(), false);
    for (unsigned i = 0; i < m.stages.size(); ++i) {
      switch (m.stages[i].kind) {
      case StageKind::Attention:
        if (!fuseRope(m, i, diags))
          return false;
        fuseVCache(m, i);
        break;
      case StageKind::SiluMul: fuseSiluMul(m, i); break;
      case StageKind::Add: fuseResidual(m, i); break;
      case StageKind::Argmax: fuseArgmax(m, i); break;
      default: break;
      }
    }
    eraseStages(m, dead);
    return true;
  }

private:
  /// The live stage whose whole output is `slice`'s buffer, or -1.
  int producerOf(const Module &m, const Slice &slice) {
    for (unsigned i = 0; i < m.stages.size(); ++i)
      if (!dead[i] && m.stages[i].output.valid() && m.stages[i].output.buffer == slice.buffer)
        return i;
    return -1;
  }

  bool fuseRope(Module &m, unsigned a, DiagnosticEngine &diags) {
    Stage &attn = m.stages[a];
    int rq = producerOf(m, attn.input), rk = producerOf(m, attn.input2);
    if (rq < 0 || rk < 0 || m.stages[rq].kind != StageKind::Rope ||
        m.stages[rk].kind != StageKind::Rope)
      return true;
    const Stage &q = m.stages[rq], &k = m.stages[rk];
    if (readersOf(m, q.output.buffer).size() != 1 || readersOf(m, k.output.buffer).size() != 1)
      return true;
    if (q.ropeInvFreq != k.ropeInvFreq || q.headDim != attn.headDim) {
      diags.error(attn.loc, "attention's query and key are rotated differently; "
                            "the plan rotates both with one RoPE");
      return false;
    }
    attn.ropeInvFreq = q.ropeInvFreq;
    attn.hasRope = true;
    attn.input = q.input;
    attn.input2 = k.input;
    dead[rq] = dead[rk] = true;
    count("rope-into-attention");
    return true;
  }

  void fuseVCache(Module &m, unsigned a) {
    Stage &attn = m.stages[a];
    int p = producerOf(m, attn.input3);
    if (p < 0 || m.stages[p].kind != StageKind::Gemv)
      return;
    Stage &qkv = m.stages[p];
    // The V rows must be the stacked output's tail: the task record says
    // "rows >= aux[1] go to the V cache".
    if (attn.input3.offset + attn.input3.length != qkv.output.offset + qkv.output.length ||
        qkv.vCacheWrite)
      return;
    qkv.vCacheWrite = true;
    qkv.vRowBegin = attn.input3.offset - qkv.output.offset;
    qkv.output2 = attn.output3;
    // A V cache row is the attention's kv_heads x head_dim values.
    qkv.kvHeads = attn.kvHeads;
    qkv.headDim = attn.headDim;
    count("v-cache-writes");
  }

  void fuseSiluMul(Module &m, unsigned i) {
    Stage &silu = m.stages[i];
    int p = producerOf(m, silu.input);
    if (p < 0 || producerOf(m, silu.input2) != p)
      return;
    Stage &gemv = m.stages[p];
    uint64_t half = gemv.output.length / 2;
    if (gemv.kind != StageKind::Gemv || gemv.siluMul || gemv.residual.valid() ||
        gemv.vCacheWrite || gemv.output.length % 2 != 0 ||
        silu.input.offset != gemv.output.offset || silu.input.length != half ||
        silu.input2.offset != gemv.output.offset + half || silu.input2.length != half ||
        readersOf(m, gemv.output.buffer).size() != 1)
      return;
    gemv.siluMul = true;
    gemv.output = silu.output;
    gemv.units = half; // A unit is a gate row and its up row.
    dead[i] = true;
    count("silu-mul-into-gemv");
  }

  void fuseResidual(Module &m, unsigned i) {
    Stage &add = m.stages[i];
    for (int side = 0; side < 2; ++side) {
      const Slice &y = side == 0 ? add.input2 : add.input;
      const Slice &other = side == 0 ? add.input : add.input2;
      int p = producerOf(m, y);
      if (p < 0)
        continue;
      Stage &gemv = m.stages[p];
      if (gemv.kind != StageKind::Gemv || gemv.residual.valid() || gemv.vCacheWrite ||
          !isWholeOutput(gemv, y) || readersOf(m, y.buffer).size() != 1 ||
          isGraphOutput(m, y.buffer))
        continue;
      gemv.residual = other;
      gemv.output = add.output;
      dead[i] = true;
      count("residual-adds");
      return;
    }
  }

  void fuseArgmax(Module &m, unsigned i) {
    Stage &argmax = m.stages[i];
    int p = producerOf(m, argmax.input);
    if (p < 0)
      return;
    Stage &gemv = m.stages[p];
    if (gemv.kind != StageKind::Gemv || gemv.residual.valid() || gemv.siluMul ||
        gemv.vCacheWrite || !isWholeOutput(gemv, argmax.input))
      return;
    gemv.kind = StageKind::LmHead;
    gemv.name = "lm_head";
    m.buffers[gemv.output.buffer].kind = plan::BufferKind::Logits;
    gemv.output2 = Slice{m.findBuffer(plan::BufferKind::Candidates), 0, 0};
    dead[i] = true;
    count("argmax-into-lm-head");
  }

  std::vector<bool> dead;
};

} // namespace

std::unique_ptr<Pass> ti::createFuseEpiloguesPass() { return std::make_unique<FuseEpilogues>(); }
