//===- CpuOps.h - The opcodes' arithmetic on the CPU ------------*- C++ -*-===//
//
// One function per opcode family, each executing one task exactly as
// TaskRecord.h specifies. Reductions run in a fixed order (dot products in
// eight lanes combined pairwise, sums over chunks and partials in index order),
// so a task's result does not depend on anything but its inputs.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CPUOPS_H
#define TI_LIB_RUNTIME_CPUOPS_H

#include "ti/Plan/Plan.h"

#include <atomic>
#include <cstdint>

namespace ti::cpu {

/// The first task that read a tagged value of another step (thread-safe).
class TagCheck {
public:
  void report(const plan::TaskRecord &t) {
    const plan::TaskRecord *none = nullptr;
    first_.compare_exchange_strong(none, &t);
  }
  /// The task, or null; clear() forgets it.
  const plan::TaskRecord *first() const { return first_.load(); }
  void clear() { first_.store(nullptr); }

private:
  std::atomic<const plan::TaskRecord *> first_{nullptr};
};

/// What a task needs besides its record: where things are, and the step.
struct TaskContext {
  const plan::Plan *plan;
  const uint8_t *weights; // The weights data section.
  uint8_t *arena;
  int32_t pos;            // The step's position.
  bool longMode;          // ctx > the plan's split context.
  uint32_t tag;           // The step's tag (Tagged.h).
  TagCheck *tagCheck;     // Where a read of another step's tag is reported.
};

// One per line of Opcodes.def: the executor's dispatch calls run<Name>.
void runNop(const TaskContext &c, const plan::TaskRecord &t);
/// Nothing: the executor's step loop runs selection itself (Select.h), for
/// every worker at once, before the step's waves.
void runSelectToken(const TaskContext &c, const plan::TaskRecord &t);
void runEmbed(const TaskContext &c, const plan::TaskRecord &t);
void runGemv(const TaskContext &c, const plan::TaskRecord &t);
void runLmHead(const TaskContext &c, const plan::TaskRecord &t);
void runAttention(const TaskContext &c, const plan::TaskRecord &t);
void runMergeAttention(const TaskContext &c, const plan::TaskRecord &t);
void runFfnPartial(const TaskContext &c, const plan::TaskRecord &t);
void runReduceResidual(const TaskContext &c, const plan::TaskRecord &t);
void runGateUp(const TaskContext &c, const plan::TaskRecord &t);

} // namespace ti::cpu

#endif // TI_LIB_RUNTIME_CPUOPS_H
