//===- KernelArgs.h - Everything the worker kernel is given ------*- C++ -*-===//
//
// The one parameter of the worker kernel, passed by value (__grid_constant__):
// device pointers to the plan's immutable tables and to the two device
// allocations (weights data, arena), the plan's few global facts (its max
// context; each task carries its own layer's geometry), and the launch's own
// arguments. Plain C++ so that the host executor (which fills it) and the
// kernel (which reads it) share it.
//
// Ownership: the pointers are the executor's device allocations; the kernel
// only borrows them for one launch.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_KERNELARGS_H
#define TI_LIB_RUNTIME_CUDA_KERNELARGS_H

#include "Config.cuh"

#include "ti/Plan/TaskRecord.h"
#include "ti/Runtime/Launch.h"
#include "ti/Runtime/Select.h"
#include "ti/Runtime/TraceEvent.h"

#include <cstdint>

namespace ti::cuda {

struct KernelArgs {
  // The plan, immutable during a launch.
  const plan::TaskRecord *tasks; // Sorted by (worker, wave).
  const uint32_t *workerBegin;   // [workers + 1]: worker w runs tasks [begin[w], begin[w+1]).
  const uint8_t *waveBarriers;   // [waveCount]: plan::BarrierKind after each wave.
  const float *params;           // Plan::params.
  const uint8_t *weights;        // The weights data section (read only).
  uint32_t waveCount;

  // Mutable device memory.
  uint8_t *arena;           // The plan's arena (activations, caches, slots).
  uint32_t *barrierCounter; // The grid barrier's arrival counter, zeroed per launch.

  // The weight stream (Stream plans; Execution.h): the ring at the start of
  // the dynamic shared memory, the worker's schedule and the tasks' scratch
  // after it.
  uint32_t stageBytes;
  uint32_t stages;
  uint32_t inFlightStages;
  uint32_t handOffInFlightStages; // For a wave the consumers have not begun.
  uint32_t rowPartBytes;          // Longer streamed rows are cut into parts (0: whole).
  uint32_t copiesEvictFirst;      // The copies' L2 policy (StreamConfig::copiesEvictFirst).
  uint32_t kvCopiesUnhinted;      // The K/V rows' copies without it (StreamConfig::kvCopiesUnhinted).

  // The worker's schedule (the waves' barrier kinds; its task records come
  // through a window in static shared memory, Schedule.cuh) in dynamic shared
  // memory, before the tasks' scratch (WorkerLayout.h): its bytes.
  uint32_t scheduleBytes;

  uint32_t maxContext;   // Rows of every K/V cache (the workspaces' row length).
  uint32_t splitContext; // ctx above this is long mode.
  uint32_t streamKvContext; // And above this, kFlagStreamKv tasks stream K/V rows.
  uint32_t shortMmaContext; // And short mode above this (0: never) streams them too.

  // SelectToken's operands (arena byte offsets) and the recording worker.
  uint64_t candidatesOffset;
  uint32_t candidateCount;
  uint64_t tokenSlotsOffset;
  uint64_t stepStateOffset;
  uint32_t recordWorker;

  LaunchArgs launch;
  uint32_t tagBase; // Step s's tagged values carry tagBase + s (ti/Plan/Tagged.h).
  SelectParams select;
  uint32_t mode; // ti::WorkerMode (Executor.h): Full, or a diagnostic.

  // Tracing (TraceEvent.h); `trace` null: off. Thread 0 of worker w records
  // step `traceStep`'s events at trace[w * traceCapacity ...] and their count
  // at traceCounts[w].
  TraceEvent *trace;
  uint32_t *traceCounts;
  uint32_t traceCapacity;
  int32_t traceStep;
};

// Kernel parameters are limited to 4 KiB on every supported GPU (larger needs
// CUDA 12.1+ and Volta+ and costs launch time).
static_assert(sizeof(KernelArgs) <= 4096, "KernelArgs is passed by value");

/// The worker kernel's entry, for cudaLaunchCooperativeKernel and the
/// function-attribute queries: the kernel without the tracer, or, `traced`,
/// the instantiation that records traces (the untraced one in a build with
/// TI_WORKER_TRACE off). The Plain worker is defined in Worker.cu, the Stream
/// worker (sm_90 only) in StreamWorker.cu.
const void *workerEntry(bool traced = false);
const void *streamWorkerEntry(bool traced = false);

} // namespace ti::cuda

#endif // TI_LIB_RUNTIME_CUDA_KERNELARGS_H
