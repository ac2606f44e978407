//===- TraceMarks.cuh - What a traced worker stamps, and its clock -*- CUDA -*-===//
//
// The clock of a traced worker's events (TraceEvent.h) and the one mark it
// takes outside the worker loop's Tracer: when the open task's inputs came
// (TraceKind::TaskInputs), which WeightStream::inputsReady stamps where the
// op says so. Only the traced kernel refers to the slot (the other's
// WeightStream is built not to stamp), so only it allocates it.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_TRACEMARKS_CUH
#define TI_LIB_RUNTIME_CUDA_TRACEMARKS_CUH

#include "Config.cuh"

#include <cstdint>

TI_WORKER_NAMESPACE_BEGIN

/// The global timer (ns), the same clock on every SM.
__device__ __forceinline__ uint64_t globalTimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Thread 0's: when the open task's inputs came. The Tracer clears it at a
/// traced task's start (in other steps it keeps a stale value, never read).
__shared__ uint64_t traceInputsAt;

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_TRACEMARKS_CUH
