//===- SplitAttention.cpp - Attention over chunks of the context (split-attention)
//
// Attention reads the K/V cache, which grows with the context: at short context
// one task per K/V head can do it in one pass, at long context that leaves most
// workers idle while a few stream the cache. So each Attention becomes one
// stage of tasks over C chunks of the context (flash decoding):
//
// 1. C = workers / kv_heads (at least 1): the most chunks that still give each
//    (kv head, chunk) pair a worker of its own. The post's 20 workers and 8 K/V
//    heads give its 2 chunks (16 tasks). C is capped by the split context so
//    that every chunk of a long-mode step holds at least one position.
// 2. AttentionChunks: one task per (kv head, chunk), one pass over its
//    positions' keys and values. In short mode (context <= the target's split
//    context) chunk 0 does the whole attention and the other chunks do
//    nothing; in long mode each chunk attends over its own positions and
//    writes its output with its softmax statistics (max, sum).
// 3. In short mode chunk 0 writes the attention's output whole; in long mode
//    the chunks write their partial outputs and statistics to a workspace,
//    and a MergeAttention stage right after merges them by their statistics,
//    in a fixed order, into the output (its tasks do nothing in short mode).
//    So the consumer of the output (the Wo GEMV) reads one vector in both
//    modes. With grid hand-offs only the merge's read of the workspace needs
//    a grid barrier, in long mode (place-barriers: grid_if_long); with tagged
//    hand-offs (tag-hand-offs) the workspace and the output are tagged, and
//    no grid barrier follows either wave. Behind a grid barrier in every mode
//    the 1B was 1.9% slower at context 1 (docs/PERFORMANCE.md, step 20); with
//    every output projection task merging all chunks itself, its wave took
//    about 4 us a layer more above 128 positions (step 14).
// 4. The merge: one task per kv head (its group's heads), on the last
//    workers (assign-workers), which the weight waves leave idle or least
//    busy: its loads do not wait behind a full ring's copies.
//
// Each layer has its own attention workspace (partials, statistics), so that
// every element of a step has exactly one writer. The scores never leave the
// task: a pass that wrote them for a second wave to weight the values cost a
// grid barrier and a wave per layer (docs/PERFORMANCE.md, step 5).
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
      const plan::AttentionWorkspace ws{attn.heads, attn.headDim, chunks};
      const uint64_t bytes = ws.elements() * plan::kActivationBytes;
      std::string prefix = attn.layer >= 0 ? "L" + std::to_string(attn.layer) + "." : "";
      int workspace =
          m.addBuffer(prefix + "attention_workspace", plan::BufferKind::AttentionWorkspace, bytes);

      Stage merge;
      merge.kind = StageKind::MergeAttention;
      merge.name = attn.name + "_merge";
      merge.layer = attn.layer;
      merge.loc = attn.loc;
      merge.input = Slice{workspace, 0, ws.elements()};
      merge.output = attn.output;
      merge.heads = attn.heads;
      merge.kvHeads = attn.kvHeads;
      merge.headDim = attn.headDim;
      merge.chunks = chunks;
      merge.units = q;

      Stage chunked = std::move(attn);
      chunked.kind = StageKind::AttentionChunks;
      chunked.chunks = chunks;
      chunked.units = uint64_t(chunked.kvHeads) * chunks;
      chunked.input2 = chunked.output2; // The K cache (history read; row pos written).
      chunked.input3 = chunked.output3; // The V cache.
      // output stays the attention's output (short mode).
      chunked.output2 = Slice{workspace, 0, ws.elements()}; // Long mode.
      chunked.output3 = Slice();
      out.push_back(std::move(chunked));
      out.push_back(std::move(merge));
      count("attentions-split");
      count("attention-tasks", uint64_t(chunks) * attn.kvHeads);
    }
    m.stages = std::move(out);
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> ti::createSplitAttentionPass() { return std::make_unique<SplitAttention>(); }
