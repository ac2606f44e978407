//===- PlaceBarriers.cpp - The barrier after each wave (place-barriers) ---===//
//
// Each stage is one wave. A grid barrier after a wave costs about a microsecond
// plus the fill and drain around it, so a barrier is placed only where a later
// wave really depends on this one.
//
// 1. Describe each stage's accesses at buffer granularity: which buffers it
//    reads and writes, and whether the access is private to its worker (each
//    worker's copy of the token).
// 2. Keep the accesses made since the last barrier: the open phase. Two
//    accesses conflict if they touch the same buffer, at least one writes, and
//    they are not both worker-private. K/V-cache history reads do not conflict
//    with this step's writes of the current row (the plan verifier checks that
//    row by row).
// 3. An access happens in short steps, long steps or both: a chunked
//    attention writes its output in short mode and its workspace in long
//    mode, and its merge reads the workspace and writes the output in long
//    mode only (split-attention); every other access is in both. Each mode has its own open phase, and
//    two accesses conflict only in a mode they share.
// 4. Before stage B, in each mode: if B conflicts with the mode's open
//    phase, that mode needs a barrier, unless every conflict is a read of a
//    tagged buffer (tag-hand-offs) after its write: then its tags order it
//    (tags order nothing else). The wave before B ends with a Grid barrier
//    if a short step needs one (both phases close), else with GridIfLong if
//    a long step does (the long phase closes), else Tagged if tags order a
//    conflict, else None. Then B's accesses join the open phases.
// 5. The last wave ends with a Grid barrier: it closes the step.
//
// The plan verifier re-derives every access from the task records and checks
// the result byte by byte; this pass only has to be right, not exact.
//
//===----------------------------------------------------------------------===//
#include "ti/Passes/Passes.h"

using namespace ti;
using namespace ti::tir;
using plan::BarrierKind;

namespace {

// The step modes an access happens in (a bit each).
enum Modes : uint8_t { kShort = 1, kLong = 2, kBoth = kShort | kLong };

struct Access {
  int buffer;
  bool write;
  bool workerPrivate;
  uint8_t modes = kBoth;
  bool tagged = false; // Its buffer is tagged (tag-hand-offs).
};

std::vector<Access> untaggedAccessesOf(const Stage &s) {
  std::vector<Access> a;
  auto read = [&](const Slice &sl, bool priv = false, uint8_t modes = kBoth) {
    if (sl.valid())
      a.push_back(Access{sl.buffer, false, priv, modes});
  };
  auto write = [&](const Slice &sl, bool priv = false, uint8_t modes = kBoth) {
    if (sl.valid())
      a.push_back(Access{sl.buffer, true, priv, modes});
  };
  switch (s.kind) {
  case StageKind::Select:
    read(s.input);
    read(s.input2);
    write(s.output, /*priv=*/true);
    write(s.output2);
    break;
  case StageKind::Embed:
    read(s.input, /*priv=*/true);
    write(s.output);
    break;
  case StageKind::AttentionChunks:
    read(s.input);
    // K and V history (rows < pos) was written by earlier steps; position
    // pos's key and value come from the q|k|v input (TaskRecord.h), so the
    // row pos that this stage (K) and the q+k+v GEMV (V) write is read by
    // nothing in this step. The output in short mode, the workspace in long
    // mode.
    write(s.output, false, kShort);
    write(s.output2, false, kLong);
    break;
  case StageKind::MergeAttention: // Long mode only.
    read(s.input, false, kLong);
    write(s.output, false, kLong);
    break;
  default:
    read(s.input);
    read(s.input2);
    read(s.residual);
    write(s.output);
    write(s.output2);
    break;
  }
  return a;
}

std::vector<Access> accessesOf(const Module &m, const Stage &s) {
  std::vector<Access> a = untaggedAccessesOf(s);
  for (Access &x : a)
    x.tagged = m.buffers[x.buffer].tagged;
  return a;
}

bool conflicts(const Access &a, const Access &b, uint8_t mode) {
  return (a.modes & mode) && (b.modes & mode) && a.buffer == b.buffer && (a.write || b.write) &&
         !(a.workerPrivate && b.workerPrivate);
}

/// A conflict of a later access with an earlier one that the tags order: a
/// read of a tagged buffer after its write.
bool taggedHandOff(const Access &later, const Access &earlier) {
  return later.tagged && !later.write && earlier.write;
}

class PlaceBarriers : public Pass {
public:
  PlaceBarriers() : Pass(PassId::PlaceBarriers) {}

  bool run(Module &m, DiagnosticEngine &diags) override {
    std::vector<Access> open[2]; // The short and the long phase.
    const uint8_t modes[2] = {kShort, kLong};
    for (size_t i = 0; i < m.stages.size(); ++i) {
      std::vector<Access> mine = accessesOf(m, m.stages[i]);
      bool need[2] = {false, false}, tagged = false;
      for (int k = 0; k < 2; ++k)
        for (const Access &a : mine)
          for (const Access &o : open[k])
            if (conflicts(a, o, modes[k]))
              (taggedHandOff(a, o) ? tagged : need[k]) = true;
      if (i > 0) {
        BarrierKind &before = m.stages[i - 1].barrier;
        before = need[0]   ? BarrierKind::Grid
                 : need[1] ? BarrierKind::GridIfLong
                 : tagged  ? BarrierKind::Tagged
                           : BarrierKind::None;
        if (need[0])
          open[0].clear();
        if (need[0] || need[1])
          open[1].clear();
        count(plan::barrierKindName(before));
      }
      for (int k = 0; k < 2; ++k)
        for (const Access &a : mine)
          if (a.modes & modes[k])
            open[k].push_back(a);
    }
    if (!m.stages.empty()) {
      m.stages.back().barrier = BarrierKind::Grid;
      count("grid");
    }
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> ti::createPlaceBarriersPass() { return std::make_unique<PlaceBarriers>(); }
