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
// Which workers stay idle in a wave does not matter for bandwidth (half the
// chip saturates HBM), so no rotation is attempted.
//
//===----------------------------------------------------------------------===//
#include "ti/Passes/Passes.h"

using namespace ti;
using namespace ti::tir;

namespace {

class AssignWorkers : public Pass {
public:
  AssignWorkers() : Pass(PassId::AssignWorkers) {}

  bool run(Module &m, DiagnosticEngine &diags) override {
    for (Stage &s : m.stages) {
      const size_t n = s.tasks.size(), workers = m.target.workers;
      const size_t first = s.kind == StageKind::MergeAttention && n < workers ? workers - n : 0;
      for (size_t k = 0; k < n; ++k)
        s.tasks[k].worker = static_cast<int>((first + k) % workers);
      if (s.tasks.size() > m.target.workers)
        count("stages-with-several-tasks-per-worker");
    }
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> ti::createAssignWorkersPass() { return std::make_unique<AssignWorkers>(); }
