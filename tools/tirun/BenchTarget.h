//===- BenchTarget.h - What tirun bench measures ----------------*- C++ -*-===//
//
// The executor being measured (either backend, ti/Backends/Backends.h), with
// what a benchmark does to it besides launching: load it afresh with the cache
// kept (where the weights land in memory moves a token's time by a few tenths
// of a percent from one load to the next, more than the variation within one,
// so a benchmark's interval is taken over several loads: docs/benchmarking.md),
// measure the streaming-read bandwidth of its memory, for the floor, and fill
// the cache and time steps in the worker mode asked (ti/Bench/DecodeBench.h).
//
//===----------------------------------------------------------------------===//
#ifndef TI_TOOLS_TIRUN_BENCHTARGET_H
#define TI_TOOLS_TIRUN_BENCHTARGET_H

#include "ti/Backends/Backends.h"
#include "ti/Bench/DecodeBench.h"

#include <cstdint>
#include <memory>

namespace ti::tirun {

struct BenchTarget {
  std::shared_ptr<const LoadedPlan> plan;
  BackendOptions options;
  uint64_t bandwidthBytes = 0; // 0: the backend's default buffer.
  int bandwidthReps = 20;
  std::unique_ptr<Executor> executor;
  WorkerMode mode = WorkerMode::Full; // Applied to every load.

  /// A fresh load of the plan on the same backend; the cache is copied over.
  Status reopen() {
    if (Status s = reopenExecutor(executor, plan, options); !s.ok())
      return s;
    return executor->setWorkerMode(mode);
  }
  /// The streaming-read bandwidth of the executor's memory, measured now.
  StatusOr<BandwidthRun> bandwidth() const {
    return measureBandwidth(executor->backend(), options, bandwidthBytes, bandwidthReps);
  }
  /// bench::fillContext in full mode whatever `mode`, then back to it: a
  /// diagnostic mode's values are not the model's, and its first non-finite
  /// logit ended the fill (past the attention split, at position 130 of the
  /// 1B).
  Status fillContext(int32_t context, int32_t from = 0) {
    if (Status s = executor->setWorkerMode(WorkerMode::Full); !s.ok())
      return s;
    Status filled = bench::fillContext(plan->plan, *executor, context, from);
    if (Status s = executor->setWorkerMode(mode); !s.ok())
      return s;
    return filled;
  }
  /// bench::timeSteps in `mode`; a diagnostic mode's non-finite logits are no
  /// error (its values are not the model's).
  StatusOr<std::vector<double>> timeSteps(int32_t context, int repetitions, int32_t steps = 1) {
    return bench::timeSteps(plan->plan, *executor, context, repetitions, steps,
                            mode == WorkerMode::Full);
  }
};

} // namespace ti::tirun

#endif // TI_TOOLS_TIRUN_BENCHTARGET_H
