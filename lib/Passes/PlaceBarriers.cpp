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
// 3. Before stage B: if B conflicts with the open phase, the wave before B
//    ends with a Grid barrier and the phase closes, unless every conflict is
//    a read of a tagged buffer (tag-hand-offs) after its write: then Tagged,
//    no barrier, and the phase stays open (tags order nothing else). With no
//    conflict, None. Then B's accesses join the open phase. (Every stage acts in both step modes, so
//    the plan's GridIfLong, a barrier in long mode only, is never needed.)
// 4. The last wave ends with a Grid barrier: it closes the step.
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

struct Access {
  int buffer;
  bool write;
  bool workerPrivate;
  bool tagged = false; // Its buffer is tagged (tag-hand-offs).
};

std::vector<Access> untaggedAccessesOf(const Stage &s) {
  std::vector<Access> a;
  auto read = [&](const Slice &sl, bool priv = false) {
    if (sl.valid())
      a.push_back(Access{sl.buffer, false, priv});
  };
  auto write = [&](const Slice &sl, bool priv = false) {
    if (sl.valid())
      a.push_back(Access{sl.buffer, true, priv});
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
    // nothing in this step.
    write(s.output);
    write(s.output2);
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

bool conflicts(const Access &a, const Access &b) {
  return a.buffer == b.buffer && (a.write || b.write) && !(a.workerPrivate && b.workerPrivate);
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
    std::vector<Access> open;
    for (size_t i = 0; i < m.stages.size(); ++i) {
      std::vector<Access> mine = accessesOf(m, m.stages[i]);
      bool need = false, tagged = false;
      for (const Access &a : mine)
        for (const Access &o : open)
          if (conflicts(a, o))
            (taggedHandOff(a, o) ? tagged : need) = true;
      if (i > 0) {
        BarrierKind &before = m.stages[i - 1].barrier;
        before = need ? BarrierKind::Grid : tagged ? BarrierKind::Tagged : BarrierKind::None;
        if (need)
          open.clear();
        count(plan::barrierKindName(before));
      }
      open.insert(open.end(), mine.begin(), mine.end());
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
