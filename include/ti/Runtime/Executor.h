//===- Executor.h - What every backend that runs a plan offers --*- C++ -*-===//
//
// One interface for the CPU executor (the reference) and the CUDA executor:
// launches of the token loop (Launch.h), the logits of the last step, the
// sequence's state, the time of the last launch and, where the backend can,
// the trace of a step. Generation (Generate.h), the benchmark (ti/Bench) and
// the tools use this interface only; ti/Backends/Backends.h opens the backend
// a user asks for.
//
// Ownership and threads: an executor shares its LoadedPlan and owns its
// memory (host or device); one call at a time, not thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef TI_RUNTIME_EXECUTOR_H
#define TI_RUNTIME_EXECUTOR_H

#include "ti/Plan/TaskRecord.h"
#include "ti/Runtime/Launch.h"
#include "ti/Runtime/TraceEvent.h"
#include "ti/Runtime/WorkerMode.h"
#include "ti/Support/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ti {

class Executor {
public:
  virtual ~Executor() = default;

  /// "cpu" or "cuda".
  virtual const char *backend() const = 0;
  /// What it runs on, for reports: "NVIDIA H200", "CPU, 16 threads".
  virtual std::string device() const = 0;

  /// Runs one launch (Launch.h). Invalid arguments and backend failures are
  /// errors; a non-finite logit is reported in the returned state's `error`.
  virtual StatusOr<plan::StepState> launch(const LaunchArgs &args) = 0;
  /// How long the last launch took, in milliseconds, measured the backend's
  /// best way: CUDA events around the kernel on the GPU, the host's clock
  /// around the launch on the CPU. An error before the first launch.
  virtual StatusOr<double> lastLaunchMilliseconds() const = 0;
  /// The logits of the last step run (vocab floats).
  virtual StatusOr<std::vector<float>> logits() const = 0;

  /// Forgets the sequence: zeroes the arena (the K/V cache included).
  virtual Status reset() = 0;
  /// The sequence's state: a copy of the arena (the K/V cache and the rest).
  virtual StatusOr<std::vector<uint8_t>> saveArena() const = 0;
  /// Puts back a state saveArena() gave, from an executor of the same plan
  /// (of either backend: the arena's bytes mean the same on both).
  virtual Status restoreArena(const std::vector<uint8_t> &arena) = 0;

  /// Tracing: when on, each later launch records one of its steps (the
  /// second, or the only one) on every worker; trace() gives the last
  /// launch's events, one list per worker, in time order. A backend that
  /// cannot trace says so in one line.
  virtual Status setTrace(bool on) = 0;
  virtual StatusOr<std::vector<std::vector<TraceEvent>>> trace() const = 0;

  /// The worker mode of later launches; a backend or plan that has no such
  /// mode says so in one line. Full by default.
  virtual Status setWorkerMode(WorkerMode mode) = 0;
};

} // namespace ti

#endif // TI_RUNTIME_EXECUTOR_H
