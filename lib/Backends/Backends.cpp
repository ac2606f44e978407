//===- Backends.cpp - The executor a user asks for ------------------------===//
#include "ti/Backends/Backends.h"

#include "ti/Bench/HostBandwidth.h"
#include "ti/Runtime/CpuExecutor.h"
#ifdef TI_HAVE_CUDA
#include "ti/Runtime/CudaBandwidth.h"
#include "ti/Runtime/CudaExecutor.h"
#endif

namespace ti {

bool cudaBackendBuilt() {
#ifdef TI_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

StatusOr<std::string> resolveBackend(const std::string &choice) {
  if (choice == "cpu")
    return std::string("cpu");
  if (choice != "cuda" && choice != "auto")
    return Status::error("unknown backend '" + choice + "' (auto, cuda or cpu)");
#ifdef TI_HAVE_CUDA
  if (choice == "cuda" || CudaExecutor::deviceCount() > 0)
    return std::string("cuda");
#else
  if (choice == "cuda")
    return Status::error("this build has no CUDA backend (configure with -DTI_ENABLE_CUDA=ON)");
#endif
  return std::string("cpu");
}

StatusOr<std::unique_ptr<Executor>> openExecutor(std::shared_ptr<const LoadedPlan> plan,
                                                 const BackendOptions &options) {
  auto backend = resolveBackend(options.choice);
  if (!backend)
    return backend.status();
#ifdef TI_HAVE_CUDA
  if (*backend == "cuda") {
    auto created = CudaExecutor::create(std::move(plan), options.device);
    if (!created)
      return created.status();
    return std::unique_ptr<Executor>(std::move(*created));
  }
#endif
  return std::unique_ptr<Executor>(std::make_unique<CpuExecutor>(std::move(plan), options.threads));
}

Status reopenExecutor(std::unique_ptr<Executor> &executor, std::shared_ptr<const LoadedPlan> plan,
                      const BackendOptions &options) {
  auto arena = executor->saveArena();
  if (!arena)
    return arena.status();
  BackendOptions same = options;
  same.choice = executor->backend();
  executor.reset(); // Free the old memory before taking new.
  auto fresh = openExecutor(std::move(plan), same);
  if (!fresh)
    return fresh.status();
  executor = std::move(*fresh);
  return executor->restoreArena(*arena);
}

StatusOr<BandwidthRun> measureBandwidth(const std::string &backend, const BackendOptions &options,
                                        uint64_t bytes, int repetitions) {
#ifdef TI_HAVE_CUDA
  if (backend == "cuda") {
    BandwidthOptions bw;
    if (bytes)
      bw.bytes = bytes;
    bw.repetitions = repetitions;
    auto measured = measureStreamingBandwidth(options.device, bw);
    if (!measured)
      return measured.status();
    return BandwidthRun{measured->samples, measured->bytes};
  }
#endif
  if (backend != "cpu")
    return Status::error("no bandwidth measurement for backend '" + backend + "'");
  const uint64_t hostBytes = bytes ? bytes : 256ull << 20;
  return BandwidthRun{bench::measureHostBandwidth(hostBytes, options.threads, repetitions),
                      hostBytes};
}

} // namespace ti
