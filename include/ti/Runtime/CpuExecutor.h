//===- CpuExecutor.h - Runs a plan on the CPU -------------------*- C++ -*-===//
//
// The reference executor: the same plan, wave by wave, task by task, with the
// same opcodes and the same fixed reduction orders as the GPU worker, on the
// host's cores. It is what CI can run, and what the GPU is compared against.
//
// Within a wave the tasks are independent (the verifier proved it), so they run
// on a pool of threads; a wave ends when all its tasks have. Results do not
// depend on the thread count: each task's arithmetic is sequential.
//
// Ownership: shares the LoadedPlan; owns the arena (activations, K/V cache).
// One launch at a time: not thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef TI_RUNTIME_CPUEXECUTOR_H
#define TI_RUNTIME_CPUEXECUTOR_H

#include "ti/Runtime/Executor.h"
#include "ti/Runtime/LoadedPlan.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace ti {

class CpuExecutor final : public Executor {
public:
  /// `threads` = 0: one per hardware thread.
  explicit CpuExecutor(std::shared_ptr<const LoadedPlan> plan, unsigned threads = 0);
  ~CpuExecutor() override;
  CpuExecutor(const CpuExecutor &) = delete;
  CpuExecutor &operator=(const CpuExecutor &) = delete;

  const char *backend() const override { return "cpu"; }
  /// "CPU, N threads".
  std::string device() const override;

  StatusOr<plan::StepState> launch(const LaunchArgs &args) override;
  /// The host's steady clock around the last launch.
  StatusOr<double> lastLaunchMilliseconds() const override;
  StatusOr<std::vector<float>> logits() const override;
  /// The last step's logits in place (vocab floats), valid until the next launch.
  const float *logitsData() const;

  Status reset() override;
  StatusOr<std::vector<uint8_t>> saveArena() const override;
  Status restoreArena(const std::vector<uint8_t> &arena) override;

  /// The CPU records no traces: both say so.
  Status setTrace(bool on) override;
  /// Only Full: the CPU executor has no worker to take apart.
  Status setWorkerMode(WorkerMode mode) override;
  StatusOr<std::vector<std::vector<TraceEvent>>> trace() const override;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace ti

#endif // TI_RUNTIME_CPUEXECUTOR_H
