//===- SplitAttention.cpp - Attention into scores and values (split-attention)
//
// Attention reads the K/V cache, which grows with the context: at short context
// one task per K/V head can do it in one pass, at long context that leaves most
// workers idle while a few stream the cache. So each Attention becomes two
// stages over C chunks of the context (the post's "scores" and "values" waves):
//
// 1. C = workers / kv_heads (at least 1): the most chunks that still give each
//    (kv head, chunk) pair a worker of its own. The post's 20 workers and 8 K/V
//    heads give its 2 chunks (16 tasks). C is capped by the split context so
//    that every chunk of a long-mode step holds at least one position.
// 2. AttentionScores: one task per (kv head, chunk). In short mode (context <=
//    the target's split context) chunk 0 does the whole attention in one pass
//    and the other chunks do nothing; in long mode each chunk computes its
//    scores and their softmax statistics.
// 3. AttentionValues: the same tasks; in long mode each combines the statistics
//    of all chunks and sums its chunk's values into a partial output. Only in
//    long mode does it read what the scores wave wrote, which is why
//    place-barriers can make that barrier conditional.
// 4. The consumer of the attention's output (the Wo GEMV) reads the C partial
//    outputs instead and sums them (merge_chunks), in a fixed order.
//
// Each layer has its own attention workspace (scores, statistics, partials),
// so that every element of a step has exactly one writer (1 MB per layer for
// Llama 3.2 1B at 8,192 positions).
//
//===----------------------------------------------------------------------===//
#include "StageUses.h"

#include "ti/Passes/Passes.h"
#include "ti/Plan/AttentionLayout.h"

#include <algorithm>

using namespace ti;
using namespace ti::tir;

namespace {

class SplitAttention : public Pass {
public:
  SplitAttention() : Pass(PassId::SplitAttention) {}

  bool run(Module &m, DiagnosticEngine &diags) override {
    std::vector<Stage> out;
    for (unsigned i = 0; i < m.stages.size(); ++i) {
      Stage &attn = m.stages[i];
      if (attn.kind != StageKind::Attention) {
        out.push_back(std::move(attn));
        continue;
      }
      if (!attn.hasRope) {
        diags.error(attn.loc, "attention without a fused RoPE is not supported: the plan's "
                              "attention tasks rotate q and k themselves");
        return false;
      }
      const uint64_t q = uint64_t(attn.heads) * attn.headDim,
                     kv = uint64_t(attn.kvHeads) * attn.headDim;
      // The task record addresses q, k and v from one base: [q | k | v].
      if (attn.input2.buffer != attn.input.buffer || attn.input2.offset != attn.input.offset + q ||
          attn.input3.buffer != attn.input.buffer || attn.input3.offset != attn.input.offset + q + kv) {
        diags.error(attn.loc, "attention needs q, k and v stacked in that order in one "
                              "buffer (one matmul group)");
        return false;
      }
      unsigned chunks = std::max(1u, m.target.workers / attn.kvHeads);
      chunks = std::min(chunks, m.target.attentionSplitContext);
      chunks = std::min(chunks, 0xffffu); // A task's geometry holds 16 bits.
      const plan::AttentionWorkspace ws{attn.heads, attn.headDim, chunks, m.maxContext};
      const uint64_t bytes = ws.elements() * plan::kActivationBytes;
      std::string prefix = attn.layer >= 0 ? "L" + std::to_string(attn.layer) + "." : "";
      int workspace =
          m.addBuffer(prefix + "attention_workspace", plan::BufferKind::AttentionWorkspace, bytes);

      // Redirect the attention's readers to the partial outputs.
      for (unsigned r : readersOf(m, attn.output.buffer)) {
        Stage &s = m.stages[r];
        if (s.kind != StageKind::Gemv || !sameSlice(s.input, attn.output) || s.norm >= 0) {
          diags.error(s.loc, "the attention output must feed one GEMV (the output "
                             "projection), which sums the chunks' partial outputs");
          return false;
        }
        s.input = Slice{workspace, ws.partials(0, 0), q};
        s.mergeChunks = true;
        s.chunks = chunks;
      }

      Stage base = std::move(attn);
      base.chunks = chunks;
      base.units = uint64_t(base.kvHeads) * chunks;
      base.input2 = base.output2; // The K cache (history read; row pos written).
      base.input3 = base.output3; // The V cache.
      base.output = Slice{workspace, 0, ws.elements()};
      base.output3 = Slice();
      Stage values = base;
      base.kind = StageKind::AttentionScores;
      base.name += ".scores";
      values.kind = StageKind::AttentionValues;
      values.name += ".values";
      values.output2 = Slice();
      out.push_back(std::move(base));
      out.push_back(std::move(values));
      count("attentions-split");
      count("attention-tasks", 2 * uint64_t(chunks) * attn.kvHeads);
    }
    m.stages = std::move(out);
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> ti::createSplitAttentionPass() { return std::make_unique<SplitAttention>(); }
