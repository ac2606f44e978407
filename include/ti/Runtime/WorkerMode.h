//===- WorkerMode.h - What the worker does of each step ----------*- C++ -*-===//
//
// Plain C++ shared by the executors (Executor.h) and the CUDA worker, which
// reads it from its kernel arguments.
//
//===----------------------------------------------------------------------===//
#ifndef TI_RUNTIME_WORKERMODE_H
#define TI_RUNTIME_WORKERMODE_H

#include <cstdint>

namespace ti {

/// What the worker does of each step: everything (Full), or a diagnostic
/// that exposes the mechanism (bench only; the results are not the model's):
/// NoDependencies runs every task but no grid barrier; StreamOnly (Stream
/// plans) runs no task at all, the consumers releasing the weight stream's
/// stages unread, with no grid barrier either; ComputeOnly (Stream plans) is
/// its converse: the producer copies nothing, and the consumers run every
/// task without grid barriers on stages they neither wait for nor release
/// (zeroed once per launch), so its times are the consumers' alone.
enum class WorkerMode : uint32_t {
  Full = 0,
  NoDependencies = 1,
  StreamOnly = 2,
  ComputeOnly = 3,
};
/// "full", "no-dependencies", "stream-only", "compute-only".
const char *workerModeName(WorkerMode mode);

} // namespace ti

#endif // TI_RUNTIME_WORKERMODE_H
