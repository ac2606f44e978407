//===- PlaceBarriers.cpp - The barrier after each wave (place-barriers) ---===//
//
// Each stage is one wave. A grid barrier after a wave costs about a microsecond
// plus the fill and drain around it, so a barrier is placed only where a later
// wave really depends on this one, and only in the mode where it does.
//
// 1. Describe each stage's accesses at buffer granularity: which buffers it
//    reads and writes, whether only in long mode (the attention values stage,
//    which in short mode does nothing), and whether the access is private to
//    its worker (each worker's copy of the token).
// 2. Keep, per mode (short, long), the accesses made since that mode's last
//    barrier: the open phase. Two accesses conflict if they touch the same
//    buffer, at least one writes, and they are not both worker-private.
//    K/V-cache history reads do not conflict with this step's writes of the
//    current row (the plan verifier checks that row by row).
// 3. Before stage B: if B conflicts with the short-mode open phase, the wave
//    before B ends with a Grid barrier (both phases close); else if it
//    conflicts with the long-mode phase only, with GridIfLong (the long phase
//    closes); else with none. Then B's accesses join both open phases.
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
using plan::BufferKind;

namespace {

struct Access {
  int buffer;
  bool write;
  bool longOnly;
  bool workerPrivate;
};

std::vector<Access> accessesOf(const Module &m, const Stage &s) {
  std::vector<Access> a;
  auto read = [&](const Slice &sl, bool longOnly = false, bool priv = false) {
    if (sl.valid())
      a.push_back(Access{sl.buffer, false, longOnly, priv});
  };
  auto write = [&](const Slice &sl, bool longOnly = false, bool priv = false) {
    if (sl.valid())
      a.push_back(Access{sl.buffer, true, longOnly, priv});
  };
  switch (s.kind) {
  case StageKind::Select:
    read(s.input);
    read(s.input2);
    write(s.output, false, /*priv=*/true);
    write(s.output2);
    break;
  case StageKind::Embed:
    read(s.input, false, /*priv=*/true);
    write(s.output);
    break;
  case StageKind::AttentionScores:
    read(s.input);
    // K history (rows < pos) was written by earlier steps; the current row is
    // this stage's own write. The V cache's current row comes from the QKV
    // wave, so that read is a real dependency.
    read(s.input3);
    write(s.output);
    write(s.output2);
    break;
  case StageKind::AttentionValues:
    read(s.output, /*longOnly=*/true);
    read(s.input3, /*longOnly=*/true);
    write(s.output, /*longOnly=*/true);
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

bool conflicts(const Access &a, const Access &b) {
  return a.buffer == b.buffer && (a.write || b.write) && !(a.workerPrivate && b.workerPrivate);
}

class PlaceBarriers : public Pass {
public:
  PlaceBarriers() : Pass(PassId::PlaceBarriers) {}

  bool run(Module &m, DiagnosticEngine &diags) override {
    std::vector<Access> openShort, openLong;
    for (size_t i = 0; i < m.stages.size(); ++i) {
      std::vector<Access> mine = accessesOf(m, m.stages[i]);
      bool needShort = false, needLong = false;
      for (const Access &a : mine) {
        for (const Access &o : openShort)
          needShort |= !a.longOnly && !o.longOnly && conflicts(a, o);
        for (const Access &o : openLong)
          needLong |= conflicts(a, o);
      }
      if (i > 0) {
        BarrierKind &before = m.stages[i - 1].barrier;
        if (needShort) {
          before = BarrierKind::Grid;
          openShort.clear();
          openLong.clear();
        } else if (needLong) {
          before = BarrierKind::GridIfLong;
          openLong.clear();
        } else {
          before = BarrierKind::None;
        }
        count(plan::barrierKindName(before));
      }
      openShort.insert(openShort.end(), mine.begin(), mine.end());
      openLong.insert(openLong.end(), mine.begin(), mine.end());
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
