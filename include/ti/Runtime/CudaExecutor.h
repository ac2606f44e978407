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
// memory the plan needs, a plan made for another worker binary or GPU (a
// target written by `tirun probe` carries the worker's fingerprint: a hash of
// its machine code, see kernelFingerprint; a plan with one runs only where this
// binary's worker has the same), or a plan that asks more than this worker can
// run on this GPU (workerLimits; tic refuses such a plan for its target
// already, so this is the last line of defence).
//
// Ownership: shares the LoadedPlan (and so its weights mapping, read only at
// creation); owns its device memory and stream, released by the destructor.
// One launch at a time: not thread-safe. Uses the CUDA device it was created
// on (it makes it current in each call).
//
//===----------------------------------------------------------------------===//
#ifndef TI_RUNTIME_CUDAEXECUTOR_H
#define TI_RUNTIME_CUDAEXECUTOR_H

#include "ti/Plan/WorkerSupport.h"
#include "ti/Runtime/Executor.h"
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
  int registersPerSm = 0; // 32-bit registers of one SM (65536 on every supported GPU).
  size_t l2Bytes = 0;
  size_t memoryBytes = 0; // Global memory.
};

/// The image of the worker a device runs: one of the cubins or PTX texts nvcc
/// embedded in this binary, with the SHA-256 the build computed of its code
/// and data (lib/Runtime/cuda/HashMachineCode.cmake).
struct WorkerImage {
  plan::ExecutionModel model = plan::ExecutionModel::Plain; // Whose worker.
  bool jit = false;      // false: a cubin; true: the driver JIT-compiles PTX.
  std::string name;      // "sm_90" (cubin) or "compute_90" (PTX).
  std::string sha256;    // 64 hex digits.
  int deviceArch = 0;    // What the device runs: 90 = sm_90 (the JIT's output arch).
  int driverVersion = 0; // cudaDriverGetVersion (the JIT's compiler), 13000 = 13.0.

  /// "sm_86 cubin 1accd23713e6", "stream worker sm_90 cubin 3b4c5d6e7f80" or
  /// "compute_90 PTX 0439fa1bf285, JIT-compiled for sm_100 by driver 13000".
  std::string describe() const;
};

class CudaExecutor final : public Executor {
public:
  /// Uploads `plan` to GPU `device`, or says in one line why it cannot run there.
  static StatusOr<std::unique_ptr<CudaExecutor>> create(std::shared_ptr<const LoadedPlan> plan,
                                                        int device = 0);
  ~CudaExecutor() override;
  CudaExecutor(const CudaExecutor &) = delete;
  CudaExecutor &operator=(const CudaExecutor &) = delete;

  const char *backend() const override { return "cuda"; }
  /// The GPU's name ("NVIDIA H200").
  std::string device() const override;

  /// Runs one launch (Launch.h). Invalid arguments and CUDA failures are
  /// errors; a non-finite logit is reported in the returned state's `error`.
  StatusOr<plan::StepState> launch(const LaunchArgs &args) override;

  /// The device time of the last launch's kernel (CUDA events around it:
  /// from the launch to the kernel's end, with the launch's latency, without
  /// the host's copies before and after). An error before the first launch.
  StatusOr<double> lastLaunchMilliseconds() const override;

  /// The logits of the last step run (vocab floats), copied from the device.
  StatusOr<std::vector<float>> logits() const override;
  Status reset() override;
  StatusOr<std::vector<uint8_t>> saveArena() const override;
  Status restoreArena(const std::vector<uint8_t> &arena) override;

  /// Tracing: when on, each later launch records its step min(1, maxSteps - 1)
  /// (step 0 also carries the launch's start) on every worker. Off by
  /// default. A traced launch runs a second instantiation of the kernel, so
  /// off costs nothing: the plain kernel has no tracer in it.
  Status setTrace(bool on) override;
  /// StreamOnly and ComputeOnly need a Stream plan.
  Status setWorkerMode(WorkerMode mode) override;
  StatusOr<std::vector<std::vector<TraceEvent>>> trace() const override;

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
  static StatusOr<WorkerAttributes>
  workerAttributes(int device, size_t dynamicSharedBytes,
                   plan::ExecutionModel model = plan::ExecutionModel::Plain);
  /// Threads of one plain-worker block, the kernel's compile-time block size
  /// (Config.cuh's kThreads): what a plain target's threads_per_worker must
  /// be (a stream target's is plan::taskThreads(Stream), ti/Plan/Execution.h).
  static uint32_t workerThreads();
  /// What this binary's worker can run on a GPU whose blocks may opt in to
  /// `optInSharedBytes` of shared memory (sharedPerBlockOptin): its thread
  /// count, query heads per kv head, head dims and load width (Config.cuh)
  /// and the shared memory left for tasks. Needs no GPU: the built-in
  /// targets' limits are held against it in a unit test, and `tirun probe`
  /// writes it into the target file.
  static plan::WorkerLimits workerLimits(size_t optInSharedBytes,
                                         plan::ExecutionModel model = plan::ExecutionModel::Plain);
  /// Which embedded image of `model`'s worker `device` runs: the cubin whose
  /// arch cudaFuncGetAttributes reports as the binary version, or, where the
  /// device has no such cubin (or CUDA_FORCE_PTX_JIT is set), the PTX of the
  /// reported PTX version, which the driver JIT-compiles. Each execution
  /// model's worker is its own object with its own images (the build hashes
  /// both: lib/Runtime/cuda/HashMachineCode.cmake).
  static StatusOr<WorkerImage> workerImage(int device = 0,
                                           plan::ExecutionModel model = plan::ExecutionModel::Plain);
  /// A hash (16 hex digits) of the worker's machine code on `device`: FNV-1a
  /// over the image workerImage() names, then over the kernel's attributes on
  /// the device (registers, local, static shared and constant bytes, max
  /// threads, binary and PTX versions). A cubin enters as "cubin", its arch and
  /// the SHA-256 the build computed of its code and data (every ELF section of
  /// the cubin the fat binary embeds but the debug ones); JIT-compiled PTX as
  /// "ptx-jit", the SHA-256 of the PTX without its debug lines, the device
  /// arch and the driver version (whose JIT makes the code). Any change of the
  /// worker's sources, flags or nvcc that changes its code changes the hash;
  /// touching a file, moving a comment or building in another directory does
  /// not (those change only the line tables). Empty on error.
  /// The Stream worker's code enters prefixed with "stream ".
  static std::string kernelFingerprint(int device = 0,
                                       plan::ExecutionModel model = plan::ExecutionModel::Plain);
  /// The same, for an image workerImage(device, model) already gave.
  static std::string kernelFingerprint(int device, const WorkerImage &image);

private:
  CudaExecutor();
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace ti

#endif // TI_RUNTIME_CUDAEXECUTOR_H
