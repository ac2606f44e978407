//===- BalanceRows.cpp - Cut stages into equal-byte tasks (balance-rows) --===//
//
// A wave ends at a grid barrier, so it lasts as long as its slowest worker:
// what must be small is the bytes the largest task streams, not the spread of
// rows or tasks. Rows are whole (a split row would need a second writer and a
// reduction), so with U units of b bytes over n tasks the largest task carries
// ceil(U/n) units and streams ceil(U/n)*b + c bytes, where c is what every
// task reads regardless (a fused norm's scale). Over at most W workers the
// least it can stream is L = ceil(U/W)*b + c.
//
// 1. Per stage, pick the number of tasks n: the fewest whose largest task
//    streams at most (1 + tolerance) * L (the target's balance tolerance).
//    Fewer tasks at the same largest task leave workers idle at no cost to the
//    wave. On the H200's 132 SMs: 3,072 q+k+v rows take 128 tasks of 24 rows
//    (132 tasks would still have a task of 24); the 1B's 8,192 FFN units take
//    131 tasks of 62-63 (128 tasks would carry 64 each: the stream worker's
//    per-SM rate is capped by its copies in flight, so the largest task sets
//    the wave). On the post's 20 SMs q+k+v is 20 tasks of 153/154.
// 2. Give task k the units [k*U/n, (k+1)*U/n) (rounded down), so the larger
//    tasks are spread evenly.
//    A tiled stage (tile-weights) is cut the same way in units of an octet
//    (8 rows, or 8 units of a SiLU*up stage): every task's rows whole octets.
// 3. With the target's spread_weight_waves, a weight stage takes every
//    worker (all 132 on the H200: q+k+v 120 tasks of 3 octets and 12 of 2)
//    though its largest task stays the same, and assign-workers evens out
//    each worker's bytes over the step (off in the built-in targets: 0.5-1.4%
//    slower on the H200, whose stream is HBM-bound; docs/PERFORMANCE.md,
//    step 23).
// 4. Stages whose tasks are not row ranges: Select (one task per worker) and
//    attention (one per (kv head, chunk)). The attention's merge takes the
//    output rows of one kv head's group of heads a task.
//
//===----------------------------------------------------------------------===//
#include "StageBytes.h"

#include "ti/Passes/Passes.h"
#include "ti/Plan/WeightTiles.h"

#include <algorithm>

using namespace ti;
using namespace ti::tir;

namespace {

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
      case StageKind::AttentionChunks:
        for (unsigned g = 0; g < s.kvHeads; ++g)
          for (unsigned c = 0; c < s.chunks; ++c) {
            Task t(g, g + 1);
            t.aux0 = g;
            t.aux1 = c;
            s.tasks.push_back(t);
          }
        continue;
      case StageKind::MergeAttention: {
        const uint64_t group = uint64_t(s.heads / s.kvHeads) * s.headDim;
        for (unsigned g = 0; g < s.kvHeads; ++g)
          s.tasks.push_back(Task(g * group, (g + 1) * group));
        continue;
      }
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

      // A tiled stage is cut in whole octets of its rows (or of a SiLU*up
      // stage's units, whose gate and up rows are each tiled).
      const uint64_t grain = s.tiled ? plan::kTileRows : 1;
      auto [unit, c] = unitBytes(s);
      const uint64_t b = unit * grain;
      const uint64_t units = s.units / grain;
      const uint64_t most = std::min<uint64_t>(workers, units);
      const double least = double((units + most - 1) / most * b + c);
      uint64_t n = 1;
      while (n < most && double((units + n - 1) / n * b + c) > (1 + tolerance) * least)
        ++n;
      // Spread: a weight stage on every worker it can use, even where that
      // leaves its largest task as large (assign-workers then balances each
      // worker's bytes over the step).
      if (m.target.spreadWeightWaves && streamsWeights(s))
        n = most;
      for (uint64_t k = 0; k < n; ++k) {
        Task t(k * units / n * grain, (k + 1) * units / n * grain);
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
      if (n < most)
        count("stages-with-idle-workers");
    }
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> ti::createBalanceRowsPass() { return std::make_unique<BalanceRows>(); }
