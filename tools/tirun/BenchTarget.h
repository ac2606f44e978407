//===- BenchTarget.h - What tirun bench measures ----------------*- C++ -*-===//
//
// The executor being measured (either backend, ti/Backends/Backends.h), with
// what a benchmark does to it besides launching: load it afresh with the cache
// kept (where the weights land in memory moves a token's time by a few tenths
// of a percent from one load to the next, more than the variation within one,
// so a benchmark's interval is taken over several loads: docs/benchmarking.md),
// and measure the streaming-read bandwidth of its memory, for the floor.
//
//===----------------------------------------------------------------------===//
#ifndef TI_TOOLS_TIRUN_BENCHTARGET_H
#define TI_TOOLS_TIRUN_BENCHTARGET_H

#include "ti/Backends/Backends.h"

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
};

} // namespace ti::tirun

#endif // TI_TOOLS_TIRUN_BENCHTARGET_H
