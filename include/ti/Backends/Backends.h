//===- Backends.h - The executor a user asks for ------------------*- C++ -*-===//
//
// The one place that knows which backends this build has: it opens the CPU
// executor or, in a build with CUDA, the CUDA executor, behind the Executor
// interface, and measures the streaming-read bandwidth of the memory that
// backend reads its weights from (the floor's denominator). The tools choose
// a backend by name and never see which one they got beyond Executor.
//
//===----------------------------------------------------------------------===//
#ifndef TI_BACKENDS_BACKENDS_H
#define TI_BACKENDS_BACKENDS_H

#include "ti/Runtime/Executor.h"
#include "ti/Runtime/LoadedPlan.h"
#include "ti/Support/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ti {

struct BackendOptions {
  /// "auto" (the GPU when there is one), "cuda" or "cpu".
  std::string choice = "auto";
  unsigned threads = 0; // CPU: 0 = one per hardware thread.
  int device = 0;       // CUDA: the GPU.
};

/// Whether this build has the CUDA backend.
bool cudaBackendBuilt();

/// "cuda" or "cpu" for `choice` (auto: "cuda" when a GPU is visible), or one
/// line saying why not (cuda in a build without CUDA, an unknown name).
StatusOr<std::string> resolveBackend(const std::string &choice);

/// The executor of the backend `options` names, with `plan` loaded into it,
/// or one line saying why it cannot run the plan.
StatusOr<std::unique_ptr<Executor>> openExecutor(std::shared_ptr<const LoadedPlan> plan,
                                                 const BackendOptions &options);

/// Replaces `executor` by a fresh one of the same backend: the plan and
/// weights loaded into new memory, the arena (the K/V cache and the rest)
/// copied over, so the sequence goes on where it was. The old executor's
/// memory is freed before the new one takes its own.
Status reopenExecutor(std::unique_ptr<Executor> &executor, std::shared_ptr<const LoadedPlan> plan,
                      const BackendOptions &options);

struct BandwidthRun {
  std::vector<double> gbs; // One sample per timed read of the buffer (1 GB = 1e9 bytes).
  uint64_t bytes = 0;      // The buffer.
};

/// The streaming-read bandwidth of `backend`'s memory, measured now: GPU
/// memory for "cuda" (default buffer 2.5 GiB), the host's for "cpu" (256 MiB,
/// `options.threads` threads); `bytes` = 0 takes the default.
StatusOr<BandwidthRun> measureBandwidth(const std::string &backend, const BackendOptions &options,
                                        uint64_t bytes, int repetitions);

} // namespace ti

#endif // TI_BACKENDS_BACKENDS_H
