//===- AssignWorkers.cpp - Every task to a worker (assign-workers) --------===//
//
// Tasks of one wave run in parallel, one worker (SM) each; a worker with more
// than one task in a wave runs them one after another.
//
// 1. Task k of a stage goes to worker k mod workers (balance-rows makes at most
//    one task per worker, so this is one each).
// 2. Select is the exception that proves the rule: its task k must run on
//    worker k, since each worker needs its own copy of the token.
// 3. The attention's merge (MergeAttention, n tasks) goes to the last n
//    workers: rule 1 fills the weight waves from worker 0, so the last ones
//    stream the least (on the H200 the 1B's 128-task waves leave 128-131
//    idle), and a merge's loads from L2 wait behind its worker's copies in
//    flight.
//
// 4. With the target's spread_weight_waves (balance-rows gave a weight stage a
//    task for every worker, some larger by an octet), a weight stage's tasks
//    go largest first to the workers that have streamed the fewest bytes so
//    far in the step (ties: the lower worker), so that no worker carries the
//    larger tasks of every wave (for a stream whose rate per worker is capped
//    by its copies in flight; the H200's is HBM-bound, and the built-in
//    targets leave it off: docs/PERFORMANCE.md, step 23). Without it, which
//    workers stay idle in a wave does not matter for bandwidth (half the chip
//    saturates HBM with plain loads), and no rotation is attempted.
//
//===----------------------------------------------------------------------===//
#include "StageBytes.h"

#include "ti/Passes/Passes.h"

#include <algorithm>
#include <numeric>
#include <vector>

using namespace ti;
using namespace ti::tir;

namespace {

class AssignWorkers : public Pass {
public:
  AssignWorkers() : Pass(PassId::AssignWorkers) {}

  bool run(Module &m, DiagnosticEngine &diags) override {
    std::vector<uint64_t> streamed(m.target.workers, 0);
    for (Stage &s : m.stages) {
      if (m.target.spreadWeightWaves && streamsWeights(s) && s.tasks.size() <= m.target.workers) {
        placeByBytesStreamed(s, streamed);
        count("stages-placed-by-bytes");
        continue;
      }
      const size_t n = s.tasks.size(), workers = m.target.workers;
      const size_t first = s.kind == StageKind::MergeAttention && n < workers ? workers - n : 0;
      for (size_t k = 0; k < n; ++k)
        s.tasks[k].worker = static_cast<int>((first + k) % workers);
      if (s.tasks.size() > m.target.workers)
        count("stages-with-several-tasks-per-worker");
      if (streamsWeights(s))
        for (const Task &t : s.tasks)
          streamed[t.worker] += taskWeightBytes(s, t);
    }
    return true;
  }

private:
  /// Rule 4: the largest tasks to the workers that have streamed least.
  static void placeByBytesStreamed(Stage &s, std::vector<uint64_t> &streamed) {
    std::vector<size_t> tasks(s.tasks.size()), workers(streamed.size());
    std::iota(tasks.begin(), tasks.end(), 0);
    std::iota(workers.begin(), workers.end(), 0);
    auto bytes = [&](size_t k) { return taskWeightBytes(s, s.tasks[k]); };
    std::stable_sort(tasks.begin(), tasks.end(), [&](size_t a, size_t b) { return bytes(a) > bytes(b); });
    std::stable_sort(workers.begin(), workers.end(),
                     [&](size_t a, size_t b) { return streamed[a] < streamed[b]; });
    for (size_t i = 0; i < tasks.size(); ++i) {
      s.tasks[tasks[i]].worker = static_cast<int>(workers[i]);
      streamed[workers[i]] += bytes(tasks[i]);
    }
  }
};

} // namespace

std::unique_ptr<Pass> ti::createAssignWorkersPass() { return std::make_unique<AssignWorkers>(); }
