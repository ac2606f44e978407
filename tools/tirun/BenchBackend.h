//===- BenchBackend.h - The executor tirun bench measures -------*- C++ -*-===//
//
// The GPU (CudaExecutor, timed with CUDA events, floor from the GPU's
// streaming-read bandwidth) or, where there is none or when asked, the CPU
// executor (host clock, floor from the host's bandwidth), behind one struct.
//
//===----------------------------------------------------------------------===//
#ifndef TI_TOOLS_TIRUN_BENCHBACKEND_H
#define TI_TOOLS_TIRUN_BENCHBACKEND_H

#include "ti/Bench/DecodeBench.h"
#include "ti/Runtime/LoadedPlan.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ti::tirun {

struct BandwidthRun {
  std::vector<double> gbs; // One sample per timed read of the buffer.
  uint64_t bytes = 0;      // The buffer.
};

struct BenchBackend {
  std::string kind;   // "cuda" or "cpu"
  std::string device; // "NVIDIA H200" or "CPU, 2 threads"
  bench::BenchExecutor executor;
  /// Measures the bandwidth the floor divides by, in this process.
  std::function<StatusOr<BandwidthRun>()> bandwidth;
  /// Runs one launch with tracing on and returns its trace as Chrome/Perfetto
  /// JSON (ti/Runtime/Trace.h); empty on the CPU, which cannot trace.
  std::function<StatusOr<std::string>(const LaunchArgs &)> tracedLaunch;
  /// Replaces the executor by a fresh one: the plan and weights loaded into
  /// new device (or host) memory, the arena (the K/V cache and the rest)
  /// copied over, so the sequence goes on where it was. Where the weights land in
  /// memory moves a token's time by a few tenths of a percent from one load
  /// to the next, more than the variation within one, so a benchmark's
  /// interval is taken over several loads (docs/benchmarking.md).
  std::function<Status()> reopen;
};

struct BackendOptions {
  std::string choice = "auto"; // auto, cuda, cpu
  unsigned threads = 0;        // CPU: 0 = all.
  uint64_t bandwidthBytes = 0; // 0: 2.5 GiB on a GPU, 256 MiB on the CPU.
  int bandwidthReps = 20;
};

/// The backend `options.choice` names (auto: the GPU when there is one), or
/// one line saying why it cannot run the plan.
StatusOr<BenchBackend> openBackend(std::shared_ptr<const LoadedPlan> plan,
                                   const BackendOptions &options);

} // namespace ti::tirun

#endif // TI_TOOLS_TIRUN_BENCHBACKEND_H
