//===- TagHandOffs.cpp - Which buffers hand off by tags (tag-hand-offs) ---===//
//
// A grid barrier after a wave costs its slowest worker's arrival, a release,
// an acquire poll and then each reader's first load: on the H200 about 1.8 µs
// from the last arrival to the first departure after a GEMV wave
// (docs/PERFORMANCE.md, step 7). A tagged buffer (ti/Plan/Tagged.h) folds all
// of it into the reader's own load: each element carries the tag of the step
// that wrote it, and the reader waits until the tags match. Tags order a read
// after its write only; place-barriers still puts a grid barrier wherever
// anything else needs one.
//
// With the target's hand-offs "tags":
// 1. A buffer may be tagged if it is an activation or an attention workspace,
//    not a graph output, some stage touches it, and every stage that touches it does so through an
//    operand whose executors read or write tagged values: Embed's output;
//    a Gemv's (GateUp's) input, residual and output; LmHead's input; an
//    attention's q|k|v input, its output (which it writes in short mode,
//    its merge in long mode) and its workspace (long mode's chunk partials,
//    which only the merge reads: a kv head's a task, so the tagged pairs'
//    bytes cost little, where every output projection task merging all
//    chunks took 2.7 times as long tagged, docs/PERFORMANCE.md, step 8).
// 2. Mark those buffers tagged and double their bytes (kTaggedBytes per
//    element): codegen gives the tasks' operands the kFlagTagged* flags and
//    byte offsets from it.
// With "grid", nothing changes.
//
//===----------------------------------------------------------------------===//
#include "ti/Passes/Passes.h"

#include "StageUses.h"

#include "ti/Plan/Tagged.h"

using namespace ti;
using namespace ti::tir;

namespace {

/// The slices of a stage whose executors take tagged values (step 1), and
/// every other slice it has.
void slicesOf(const Stage &s, std::vector<const Slice *> &taggable,
              std::vector<const Slice *> &plain) {
  std::vector<const Slice *> all{&s.input,  &s.input2, &s.input3, &s.residual,
                                 &s.output, &s.output2, &s.output3};
  std::vector<const Slice *> can;
  switch (s.kind) {
  case StageKind::Embed: can = {&s.output}; break;
  case StageKind::Gemv: can = {&s.input, &s.residual, &s.output}; break;
  case StageKind::LmHead: can = {&s.input}; break;
  case StageKind::AttentionChunks: can = {&s.input, &s.output, &s.output2}; break;
  case StageKind::MergeAttention: can = {&s.input, &s.output}; break;
  default: break;
  }
  for (const Slice *sl : all) {
    if (!sl->valid())
      continue;
    bool ok = false;
    for (const Slice *c : can)
      ok |= c == sl;
    (ok ? taggable : plain).push_back(sl);
  }
}

class TagHandOffs : public Pass {
public:
  TagHandOffs() : Pass(PassId::TagHandOffs) {}

  bool run(Module &m, DiagnosticEngine &) override {
    if (m.target.handOffs != HandOffs::Tags)
      return true;
    std::vector<bool> may(m.buffers.size());
    for (size_t b = 0; b < m.buffers.size(); ++b) {
      const plan::BufferKind kind = m.buffers[b].kind;
      may[b] = (kind == plan::BufferKind::Activation ||
                kind == plan::BufferKind::AttentionWorkspace) &&
               !isGraphOutput(m, int(b));
    }
    std::vector<bool> used(m.buffers.size());
    for (const Stage &s : m.stages) {
      std::vector<const Slice *> taggable, plain;
      slicesOf(s, taggable, plain);
      for (const Slice *sl : taggable)
        used[sl->buffer] = true;
      for (const Slice *sl : plain)
        may[sl->buffer] = false;
    }
    for (size_t b = 0; b < m.buffers.size(); ++b)
      may[b] = may[b] && used[b];
    for (size_t b = 0; b < m.buffers.size(); ++b) {
      if (!may[b] || m.buffers[b].tagged)
        continue;
      m.buffers[b].tagged = true;
      m.buffers[b].bytes = m.buffers[b].bytes / plan::kActivationBytes * plan::kTaggedBytes;
      count("buffers-tagged");
    }
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> ti::createTagHandOffsPass() { return std::make_unique<TagHandOffs>(); }
