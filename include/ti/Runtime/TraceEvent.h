//===- TraceEvent.h - What a traced worker records --------------*- C++ -*-===//
//
// One interval of one worker's step, timed with the GPU's global timer (ns,
// one clock for every SM): a task (from its first instruction to the block
// barrier after it), a grid barrier (from arrival to release), or the step's
// token selection. Written by thread 0 of each worker when a launch is traced
// (CudaExecutor::setTrace), read back by the host, turned into Chrome/Perfetto
// trace JSON by ti/Runtime/Trace.h.
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
};

struct TraceEvent {
  uint64_t begin = 0, end = 0; // Global timer, ns.
  uint32_t kind = 0;           // TraceKind
  uint32_t index = 0;
};
static_assert(sizeof(TraceEvent) == 24, "the device writes this layout");

} // namespace ti

#endif // TI_RUNTIME_TRACEEVENT_H
