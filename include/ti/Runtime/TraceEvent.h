//===- TraceEvent.h - What a traced worker records --------------*- C++ -*-===//
//
// One interval of one worker's step, timed with the GPU's global timer (ns,
// one clock for every SM): a task (from its first instruction to the block
// barrier after it), the part of a task before its inputs had come, a grid
// barrier (from arrival to release), or the step's token selection. Written
// by thread 0 of each worker when a launch is traced (CudaExecutor::setTrace),
// read back by the host, turned into Chrome/Perfetto trace JSON by
// ti/Runtime/Trace.h.
//
//===----------------------------------------------------------------------===//
#ifndef TI_RUNTIME_TRACEEVENT_H
#define TI_RUNTIME_TRACEEVENT_H

#include <cstdint>

namespace ti {

enum class TraceKind : uint32_t {
  Task = 0,        // index: the task's position in Plan::tasks.
  GridBarrier = 1, // index: the wave the barrier closes (waveCount: the step's closing barrier).
  Select = 2,      // index: the step.
  // index: a task, as Task's; from the task's start to when thread 0 passed
  // WeightStream::inputsReady (its inputs waited for and loaded, and their
  // norm or rotations done). Recorded just before that task's Task event by
  // every task but nop and select_token (they have no inputs), except in the
  // stream-only mode (which runs no task).
  TaskInputs = 3,
};

struct TraceEvent {
  uint64_t begin = 0, end = 0; // Global timer, ns.
  uint32_t kind = 0;           // TraceKind
  uint32_t index = 0;
};
static_assert(sizeof(TraceEvent) == 24, "the device writes this layout");

} // namespace ti

#endif // TI_RUNTIME_TRACEEVENT_H
