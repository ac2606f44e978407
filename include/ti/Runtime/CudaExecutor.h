//===- CudaExecutor.h - Runs a plan on one NVIDIA GPU -----------*- C++ -*-===//
//
// The CUDA backend: the plan's tables, its weights and a zeroed arena are
// uploaded once; each launch is ONE cooperative launch of the persistent
// worker kernel (one 1024-thread block per worker, one worker per SM) that
// runs the whole token loop of Launch.h on the device, with the same opcodes
// as CpuExecutor. Results are bit-identical from run to run (fixed reduction
// orders, no atomics in arithmetic); they match the CPU within rounding.
//
// create() refuses, with one line, a GPU the plan cannot run on: no GPU, a
// target arch other than the device's compute capability, more workers than
// SMs, a worker that cannot be co-resident one block per SM with the shared
// memory the plan needs, a plan made for another worker binary (fingerprint),
// or a plan the kernel does not support (see checkKernelSupport).
//
// Ownership: shares the LoadedPlan (and so its weights mapping, read only at
// creation); owns its device memory and stream, released by the destructor.
// One launch at a time: not thread-safe. Uses the CUDA device it was created
// on (it makes it current in each call).
//
//===----------------------------------------------------------------------===//
#ifndef TI_RUNTIME_CUDAEXECUTOR_H
#define TI_RUNTIME_CUDAEXECUTOR_H

#include "ti/Runtime/Launch.h"
#include "ti/Runtime/LoadedPlan.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ti {

/// What the worker kernel looks like on a device (for the probe and reports).
struct WorkerAttributes {
  int registers = 0;             // Per thread.
  size_t localBytes = 0;         // Local memory per thread (stack frame; spills show here).
  size_t staticSharedBytes = 0;  // Per block, besides the dynamic shared memory.
  size_t dynamicSharedBytes = 0; // What the occupancy below was computed with.
  int maxThreadsPerBlock = 0;
  int binaryVersion = 0; // The cubin's arch (90 = sm_90) the device runs.
  int ptxVersion = 0;
  int blocksPerSm = 0; // Co-resident 1024-thread blocks per SM (must be >= 1).
};

/// The device facts a target file needs.
struct CudaDeviceInfo {
  std::string name; // "NVIDIA H200"
  std::string arch; // "sm_90"
  int smCount = 0;
  size_t sharedPerBlockOptin = 0;
};

class CudaExecutor {
public:
  /// Uploads `plan` to GPU `device`, or says in one line why it cannot run there.
  static StatusOr<std::unique_ptr<CudaExecutor>> create(std::shared_ptr<const LoadedPlan> plan,
                                                        int device = 0);
  ~CudaExecutor();
  CudaExecutor(const CudaExecutor &) = delete;
  CudaExecutor &operator=(const CudaExecutor &) = delete;

  /// Runs one launch (Launch.h). Invalid arguments and CUDA failures are
  /// errors; a non-finite logit is reported in the returned state's `error`.
  StatusOr<plan::StepState> launch(const LaunchArgs &args);

  /// The logits of the last step run (vocab floats), copied from the device.
  StatusOr<std::vector<float>> logits() const;
  /// Forgets the sequence: zeroes the arena (K/V cache included).
  Status reset();

  /// The worker's attributes on this executor's device, with its plan's
  /// dynamic shared memory.
  const WorkerAttributes &workerAttributes() const;
  /// Dynamic shared memory per block this plan's tasks need (bytes).
  size_t dynamicSharedBytes() const;

  /// GPUs visible to this process; 0 when there is none or no driver.
  static int deviceCount();
  static StatusOr<CudaDeviceInfo> deviceInfo(int device = 0);
  /// The worker's attributes on `device` with `dynamicSharedBytes` of dynamic
  /// shared memory per block.
  static StatusOr<WorkerAttributes> workerAttributes(int device, size_t dynamicSharedBytes);
  /// A hash (16 hex digits) identifying the worker binary on `device`: FNV-1a
  /// over (a) a SHA-256 that CMake computed of the worker's sources (every file
  /// under lib/Runtime/cuda that the kernel includes, and the plan headers it
  /// shares), the nvcc version, the CUDA architectures and flags it was built
  /// with, and (b) the kernel's attributes on the device: registers, local,
  /// static shared and constant bytes, max threads, binary and PTX versions.
  /// It does not hash the machine code itself: the runtime API gives no access
  /// to it. Empty on error.
  static std::string kernelFingerprint(int device = 0);

private:
  CudaExecutor();
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// Checks that the worker kernel supports `plan` (alignments and sizes it
/// assumes for its 16-byte loads): one line on the first problem.
Status checkKernelSupport(const plan::Plan &plan);

} // namespace ti

#endif // TI_RUNTIME_CUDAEXECUTOR_H
