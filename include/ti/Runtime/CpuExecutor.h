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

#include "ti/Runtime/Launch.h"
#include "ti/Runtime/LoadedPlan.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace ti {

class CpuExecutor {
public:
  /// `threads` = 0: one per hardware thread.
  explicit CpuExecutor(std::shared_ptr<const LoadedPlan> plan, unsigned threads = 0);
  ~CpuExecutor();
  CpuExecutor(const CpuExecutor &) = delete;
  CpuExecutor &operator=(const CpuExecutor &) = delete;

  /// Runs one launch (Launch.h). Invalid arguments are an error; a non-finite
  /// logit is reported in the returned state's `error`.
  StatusOr<plan::StepState> launch(const LaunchArgs &args);

  /// The logits of the last step run (vocab floats).
  const float *logits() const;
  /// Forgets the sequence: zeroes the arena (K/V cache included).
  void reset();
  /// The sequence's state: a copy of the arena (the K/V cache and the rest).
  std::vector<uint8_t> saveArena() const;
  /// Puts back a state saveArena() gave, from an executor of the same plan.
  Status restoreArena(const std::vector<uint8_t> &arena);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace ti

#endif // TI_RUNTIME_CPUEXECUTOR_H
