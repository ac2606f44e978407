//===- BenchBackend.cpp - The executor tirun bench measures ---------------===//
#include "BenchBackend.h"

#include "ti/Bench/HostBandwidth.h"
#include "ti/Runtime/CpuExecutor.h"
#include "ti/Runtime/Trace.h"
#ifdef TI_HAVE_CUDA
#include "ti/Runtime/CudaBandwidth.h"
#include "ti/Runtime/CudaExecutor.h"
#endif

#include <chrono>
#include <thread>

namespace ti::tirun {

namespace {

#ifdef TI_HAVE_CUDA
StatusOr<BenchBackend> openGpu(std::shared_ptr<const LoadedPlan> plan,
                               const BackendOptions &options) {
  auto info = CudaExecutor::deviceInfo(0);
  if (!info)
    return info.status();
  // The executor lives in a slot that reopen() refills; every function below
  // reaches it through the slot, and the functions keep the slot alive.
  auto slot = std::make_shared<std::unique_ptr<CudaExecutor>>();
  auto create = [plan, slot]() -> Status {
    std::vector<uint8_t> arena;
    if (*slot) {
      auto saved = (*slot)->saveArena();
      if (!saved)
        return saved.status();
      arena = std::move(*saved);
      slot->reset(); // Free the old device memory before taking new.
    }
    auto created = CudaExecutor::create(plan);
    if (!created)
      return created.status();
    *slot = std::move(*created);
    return arena.empty() ? Status() : (*slot)->restoreArena(arena);
  };
  if (Status s = create(); !s.ok())
    return s;
  BenchBackend b;
  b.kind = "cuda";
  b.device = info->name;
  b.reopen = create;
  b.executor.launch = [slot](const LaunchArgs &a) { return (*slot)->launch(a); };
  b.executor.timedLaunch = [slot](const LaunchArgs &a) -> StatusOr<double> {
    auto state = (*slot)->launch(a);
    if (!state)
      return state.status();
    if (state->error)
      return Status::error("the step produced non-finite logits");
    return (*slot)->lastKernelMilliseconds();
  };
  b.executor.logits = [slot] { return (*slot)->logits(); };
  const plan::Plan *p = &plan->plan;
  b.tracedLaunch = [slot, p](const LaunchArgs &a) -> StatusOr<std::string> {
    CudaExecutor &g = **slot;
    if (Status s = g.setTrace(true); !s.ok())
      return s;
    auto state = g.launch(a);
    auto events = g.trace();
    if (Status s = g.setTrace(false); !s.ok())
      return s;
    if (!state)
      return state.status();
    if (!events)
      return events.status();
    return traceToChromeJson(*p, *events);
  };
  BandwidthOptions bw;
  if (options.bandwidthBytes)
    bw.bytes = options.bandwidthBytes;
  bw.repetitions = options.bandwidthReps;
  b.bandwidth = [bw]() -> StatusOr<BandwidthRun> {
    auto measured = measureStreamingBandwidth(0, bw);
    if (!measured)
      return measured.status();
    return BandwidthRun{measured->samples, measured->bytes};
  };
  return b;
}
#endif

BenchBackend openCpu(std::shared_ptr<const LoadedPlan> plan, const BackendOptions &options) {
  auto slot = std::make_shared<std::unique_ptr<CpuExecutor>>(
      std::make_unique<CpuExecutor>(plan, options.threads));
  const unsigned threads =
      options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  const uint32_t vocab = plan->plan.model.vocab;
  BenchBackend b;
  b.kind = "cpu";
  b.device = "CPU, " + std::to_string(threads) + " threads";
  b.reopen = [plan, slot, threads = options.threads]() -> Status {
    std::vector<uint8_t> arena = (*slot)->saveArena();
    slot->reset();
    *slot = std::make_unique<CpuExecutor>(plan, threads);
    return (*slot)->restoreArena(arena);
  };
  b.executor.launch = [slot](const LaunchArgs &a) { return (*slot)->launch(a); };
  b.executor.timedLaunch = [slot](const LaunchArgs &a) -> StatusOr<double> {
    auto start = std::chrono::steady_clock::now();
    auto state = (*slot)->launch(a);
    auto end = std::chrono::steady_clock::now();
    if (!state)
      return state.status();
    if (state->error)
      return Status::error("the step produced non-finite logits");
    return std::chrono::duration<double, std::milli>(end - start).count();
  };
  b.executor.logits = [slot, vocab]() -> StatusOr<std::vector<float>> {
    const float *logits = (*slot)->logits();
    return std::vector<float>(logits, logits + vocab);
  };
  const uint64_t bytes = options.bandwidthBytes ? options.bandwidthBytes : 256ull << 20;
  const int reps = options.bandwidthReps;
  b.bandwidth = [bytes, threads, reps]() -> StatusOr<BandwidthRun> {
    return BandwidthRun{bench::measureHostBandwidth(bytes, threads, reps), bytes};
  };
  return b;
}

} // namespace

StatusOr<BenchBackend> openBackend(std::shared_ptr<const LoadedPlan> plan,
                                   const BackendOptions &options) {
#ifdef TI_HAVE_CUDA
  if (options.choice == "cuda" || (options.choice == "auto" && CudaExecutor::deviceCount() > 0))
    return openGpu(std::move(plan), options);
#else
  if (options.choice == "cuda")
    return Status::error("this tirun was built without CUDA (configure with -DTI_ENABLE_CUDA=ON)");
#endif
  return openCpu(std::move(plan), options);
}

} // namespace ti::tirun
