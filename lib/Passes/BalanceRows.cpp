//===- BalanceRows.cpp - Cut stages into equal-byte tasks (balance-rows) --===//
//
// A wave ends at a grid barrier, so it lasts as long as its slowest worker:
// what must be equal across workers is the bytes each streams, not the number
// of rows or tasks. Rows are whole (a split row would need a second writer and
// a reduction), so with U units of b bytes over n tasks the tasks carry
// floor(U/n) or ceil(U/n) units, and the imbalance is
//     (ceil(U/n)*b + c) / (floor(U/n)*b + c) - 1
// where c is what every task reads regardless (a fused norm's scale).
//
// 1. Per stage, pick the number of tasks n: the largest n <= workers whose
//    imbalance is within the target's tolerance. With 3,072 QKV rows on 132
//    SMs that is 128 tasks of 24 rows (132 tasks would mix 23 and 24 rows: 4%).
//    Idle workers cost the plain worker nothing (half the chip saturates HBM:
//    docs/PERFORMANCE.md, "What the H200's memory gives"); the stream worker's
//    per-SM rate is capped by its copies in flight, and the 1B's FFN on 132
//    workers (62-63 units, a 2% tolerance) measured 1.1% faster per token.
//    On the post's 20 SMs it is 20 tasks of 153/154.
// 2. Give task k the units [k*U/n, (k+1)*U/n) (rounded down), so the larger
//    tasks are spread evenly.
// 3. Stages whose tasks are not row ranges: Select (one task per worker) and
//    attention (one per (kv head, chunk)).
//
//===----------------------------------------------------------------------===//
#include "ti/Passes/Passes.h"

#include <algorithm>

using namespace ti;
using namespace ti::tir;

namespace {

/// Bytes a task streams per unit of the stage, and the bytes every task reads.
std::pair<uint64_t, uint64_t> unitBytes(const Module &m, const Stage &s) {
  const uint64_t w = plan::kWeightBytes;
  uint64_t norm = s.norm >= 0 ? s.cols * w : 0;
  switch (s.kind) {
  case StageKind::Embed: return {2, 0};
  case StageKind::Gemv:
  case StageKind::LmHead: return {s.cols * w, norm};
  case StageKind::FfnPartial: return {3 * s.cols * w, norm};
  case StageKind::ReduceResidual: return {4, 0}; // No weights: balance the partials read.
  default: return {1, 0};
  }
}

class BalanceRows : public Pass {
public:
  BalanceRows() : Pass(PassId::BalanceRows) {}

  bool run(Module &m, DiagnosticEngine &diags) override {
    const unsigned workers = m.target.workers;
    const double tolerance = m.target.balanceTolerance;
    unsigned ffnTasks = 0;
    unsigned lmHeadTasks = 0;
    for (Stage &s : m.stages) {
      s.tasks.clear();
      switch (s.kind) {
      case StageKind::Select:
        for (unsigned w = 0; w < workers; ++w)
          s.tasks.push_back(Task(w, w + 1));
        continue;
      case StageKind::AttentionScores:
      case StageKind::AttentionValues:
        for (unsigned g = 0; g < s.kvHeads; ++g)
          for (unsigned c = 0; c < s.chunks; ++c) {
            Task t(g, g + 1);
            t.aux0 = g;
            t.aux1 = c;
            s.tasks.push_back(t);
          }
        continue;
      case StageKind::Embed:
      case StageKind::Gemv:
      case StageKind::LmHead:
      case StageKind::FfnPartial:
      case StageKind::ReduceResidual:
        break;
      default:
        diags.error(s.loc, "stage '" + s.name + "' (" + stageKindName(s.kind) +
                               ") was not fused into a neighbour; the plan has no task for it");
        return false;
      }

      auto [b, c] = unitBytes(m, s);
      uint64_t units = s.units;
      uint64_t n = std::min<uint64_t>(workers, units);
      for (; n > 1; --n) {
        uint64_t lo = units / n, hi = (units + n - 1) / n;
        double imbalance = double(hi * b + c) / double(lo * b + c) - 1;
        if (imbalance <= tolerance)
          break;
      }
      for (uint64_t k = 0; k < n; ++k) {
        Task t(k * units / n, (k + 1) * units / n);
        s.tasks.push_back(t);
      }
      if (s.kind == StageKind::FfnPartial) {
        for (size_t k = 0; k < s.tasks.size(); ++k)
          s.tasks[k].aux1 = k; // Its partial slot.
        ffnTasks = s.tasks.size();
      }
      if (s.kind == StageKind::ReduceResidual)
        for (Task &t : s.tasks)
          t.aux1 = ffnTasks; // The partials it sums: the FFN stage just before.
      if (s.kind == StageKind::LmHead)
        for (Task &t : s.tasks)
          t.aux1 = lmHeadTasks++; // Its candidate slot.
      count("tasks", s.tasks.size());
      if (n < std::min<uint64_t>(workers, units))
        count("stages-with-idle-workers");
    }
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> ti::createBalanceRowsPass() { return std::make_unique<BalanceRows>(); }
