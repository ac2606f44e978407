//===- WorkerSupport.h - What a worker can run, and what a plan asks -*- C++ -*-===//
//
// A worker kernel has limits that no plan may exceed: the query heads per kv
// head its attention keeps in registers, the head dims its lane groups cover,
// the shared memory a task may carve (WorkerLayout.h), the vector its loads
// read (every matrix's columns a multiple of it, every weight and cache
// offset aligned to it). They are target facts: a target description carries
// them (ti/Target/Target.h, from its built-in values or from `tirun probe`),
// tic refuses at compile time what its target's worker cannot run, at the
// graph's line and column, and the CUDA executor checks a plan against the
// worker it was built with, as the last line of defence.
//
//===----------------------------------------------------------------------===//
#ifndef TI_PLAN_WORKERSUPPORT_H
#define TI_PLAN_WORKERSUPPORT_H

#include "ti/Plan/Plan.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ti::plan {

struct WorkerLimits {
  uint32_t threads = 1024;  // Per worker: the shared-memory layout depends on it.
  uint32_t maxGroup = 4;    // Query heads per kv head.
  std::vector<uint32_t> headDims = {8, 16, 32, 64, 128, 256};
  /// Dynamic shared memory a task may use, in bytes (the smallest supported
  /// GPU's, sm_86: 99 KiB less the worker's 1 KiB of static shared memory).
  uint32_t sharedBytes = 99 * 1024 - 1024;
  uint32_t vectorElements = 8; // Of the weights' type: one 16-byte load.

  bool operator==(const WorkerLimits &) const = default;
};

/// A task the worker cannot run, and why, in the model's terms ("12 query
/// heads per kv head; the worker supports at most 4").
struct WorkerProblem {
  size_t task;
  std::string message;
};

/// The most tasks any one worker of `plan` runs (its tasks are sorted by
/// worker).
uint32_t mostTasksPerWorker(const Plan &plan);

/// The bytes of dynamic shared memory every worker reserves for its schedule
/// (WorkerLayout.h): the barrier kinds of the plan's waves.
uint32_t scheduleBytes(const Plan &plan);

/// The dynamic shared memory a worker of `plan` takes, by region: its weight
/// stream's ring (Stream plans; Execution.h), its schedule, and the largest
/// task's scratch (WorkerLayout.h, at the execution model's thread count; at
/// least 16 bytes).
struct WorkerSharedBytes {
  uint64_t ring = 0, schedule = 0, scratch = 0;
  uint64_t total() const { return ring + schedule + scratch; }
};
WorkerSharedBytes workerSharedBytes(const Plan &plan);

/// The tasks of `plan` that a worker with `limits` cannot run, the first
/// `maxProblems` of them, in task order.
std::vector<WorkerProblem> workerProblems(const Plan &plan, const WorkerLimits &limits,
                                          size_t maxProblems = 1);

} // namespace ti::plan

#endif // TI_PLAN_WORKERSUPPORT_H
