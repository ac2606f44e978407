//===- CudaExecutor.cu - Runs a plan on one NVIDIA GPU --------------------===//
//
// 1. create(): checks the device against the plan (GPU present, arch, SM count,
//    cooperative launch, the kernel's support of the plan, shared memory,
//    occupancy of one 1024-thread block per SM, fingerprint), then uploads the
//    weights data (in chunks, from the mapping), the tasks, a CSR index of each
//    worker's tasks, the waves' barrier kinds and the params, and zeroes the
//    arena and the barrier counter.
// 2. launch(): writes the prompt into the arena's prompt buffer, zeroes the
//    StepState and the barrier counter, launches the worker cooperatively
//    (grid = the plan's workers, block = kThreads) with the LaunchArgs by
//    value, and reads the StepState back. All on one stream, one sync.
//
// Host code only; compiled by nvcc so that it shares Config.cuh's layout
// arithmetic with the kernel.
//
//===----------------------------------------------------------------------===//
#include "ti/Runtime/CudaExecutor.h"

#include "Config.cuh"
#include "CudaCheck.h"
#include "KernelArgs.h"
#include "StreamWorkerMachineCode.h"
#include "WorkerMachineCode.h"

#include "ti/Runtime/Launch.h"
#include "ti/Support/Fnv1a.h"
#include "ti/Support/Hex.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace ti;

namespace {

std::string archOf(const cudaDeviceProp &p) {
  return "sm_" + std::to_string(p.major * 10 + p.minor);
}

/// The kernel of an execution model's worker.
const void *entryFor(plan::ExecutionModel model, bool traced = false) {
  return model == plan::ExecutionModel::Stream ? cuda::streamWorkerEntry(traced)
                                               : cuda::workerEntry(traced);
}

template <typename T> Status upload(T **device, const T *host, size_t count) {
  size_t bytes = std::max<size_t>(count * sizeof(T), 16);
  TI_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(device), bytes));
  if (count)
    TI_CUDA_CHECK(cudaMemcpy(*device, host, count * sizeof(T), cudaMemcpyHostToDevice));
  return Status();
}

} // namespace

plan::WorkerLimits CudaExecutor::workerLimits(size_t optInSharedBytes,
                                              plan::ExecutionModel model) {
  plan::WorkerLimits l;
  l.threads = plan::taskThreads(model);
  l.maxGroup = cuda::kMaxGroup;
  // A lane group of head_dim / kVector lanes takes a position: a power of two
  // that fits a warp.
  l.headDims.clear();
  for (uint32_t lanes = 1; lanes <= cuda::kWarpSize; lanes *= 2)
    l.headDims.push_back(lanes * cuda::kVector);
  l.sharedBytes = optInSharedBytes > cuda::kStaticSharedBytes
                      ? uint32_t(optInSharedBytes - cuda::kStaticSharedBytes)
                      : 0;
  l.vectorElements = cuda::kVector;
  return l;
}

struct CudaExecutor::Impl {
  std::shared_ptr<const LoadedPlan> lp;
  int device = 0;
  std::string deviceName;
  cudaStream_t stream = nullptr;
  cudaEvent_t kernelStart = nullptr, kernelEnd = nullptr; // Around the last launch's kernel.
  uint8_t *weights = nullptr;
  uint8_t *arena = nullptr;
  plan::TaskRecord *tasks = nullptr;
  uint32_t *workerBegin = nullptr;
  uint8_t *waveBarriers = nullptr;
  float *params = nullptr;
  uint32_t *counter = nullptr;
  TraceEvent *traceEvents = nullptr; // [workers][traceCapacity] while tracing.
  uint32_t *traceCounts = nullptr;   // [workers]
  uint32_t traceCapacity = 0;
  size_t sharedBytes = 0;
  uint32_t workers = 0;
  cuda::KernelArgs args{}; // All but `launch` and `tagBase`, filled at creation.
  WorkerAttributes attributes;
  uint32_t nextTag = 1; // The next launch's tag base (ti/Plan/Tagged.h).

  /// Tag 0 in every tagged buffer: an arena from elsewhere may hold tags this
  /// executor is yet to use.
  Status clearTaggedBuffers() {
    for (const plan::Buffer &b : lp->plan.buffers)
      if (b.tagged)
        TI_CUDA_CHECK(cudaMemsetAsync(arena + b.offset, 0, b.bytes, stream));
    return Status();
  }

  ~Impl() {
    cudaSetDevice(device);
    for (void *p :
         {static_cast<void *>(weights), static_cast<void *>(arena), static_cast<void *>(tasks),
          static_cast<void *>(workerBegin), static_cast<void *>(waveBarriers),
          static_cast<void *>(params), static_cast<void *>(counter),
          static_cast<void *>(traceEvents), static_cast<void *>(traceCounts)})
      if (p)
        cudaFree(p);
    for (cudaEvent_t e : {kernelStart, kernelEnd})
      if (e)
        cudaEventDestroy(e);
    if (stream)
      cudaStreamDestroy(stream);
  }

  Status uploadPlan();
};

Status CudaExecutor::Impl::uploadPlan() {
  const plan::Plan &p = lp->plan;
  TI_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  TI_CUDA_CHECK(cudaEventCreate(&kernelStart));
  TI_CUDA_CHECK(cudaEventCreate(&kernelEnd));

  // The weights data, in chunks straight from the mapping.
  const uint64_t weightBytes = lp->weights->dataBytes();
  TI_CUDA_CHECK(
      cudaMalloc(reinterpret_cast<void **>(&weights), std::max<uint64_t>(weightBytes, 16)));
  constexpr uint64_t kChunk = 64ull << 20;
  for (uint64_t at = 0; at < weightBytes; at += kChunk)
    TI_CUDA_CHECK(cudaMemcpy(weights + at, lp->weights->data() + at,
                             std::min(kChunk, weightBytes - at), cudaMemcpyHostToDevice));

  TI_CUDA_CHECK(
      cudaMalloc(reinterpret_cast<void **>(&arena), std::max<uint64_t>(p.arenaBytes, 16)));
  TI_CUDA_CHECK(cudaMemset(arena, 0, std::max<uint64_t>(p.arenaBytes, 16)));
  TI_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&counter), sizeof(uint32_t)));
  TI_CUDA_CHECK(cudaMemset(counter, 0, sizeof(uint32_t)));

  // Each worker's tasks: the plan sorts them by (worker, wave).
  std::vector<uint32_t> begin(workers + 1, 0);
  for (const plan::TaskRecord &t : p.tasks)
    ++begin[t.worker + 1];
  for (uint32_t w = 0; w < workers; ++w)
    begin[w + 1] += begin[w];
  std::vector<uint8_t> barriers(p.waves.size());
  for (size_t w = 0; w < p.waves.size(); ++w)
    barriers[w] = static_cast<uint8_t>(p.waves[w].barrier);
  if (Status s = upload(&tasks, p.tasks.data(), p.tasks.size()); !s.ok())
    return s;
  if (Status s = upload(&workerBegin, begin.data(), begin.size()); !s.ok())
    return s;
  if (Status s = upload(&waveBarriers, barriers.data(), barriers.size()); !s.ok())
    return s;
  if (Status s = upload(&params, p.params.data(), p.params.size()); !s.ok())
    return s;

  int32_t recordWorker = -1;
  for (const plan::TaskRecord &t : p.tasks)
    if (plan::Opcode(t.opcode) == plan::Opcode::SelectToken && (t.flags & plan::kFlagRecord))
      recordWorker = t.worker;
  if (recordWorker < 0)
    return Status::error("the plan has no recording select_token task");
  const plan::Buffer *candidates = p.findBuffer(plan::BufferKind::Candidates);
  const plan::Buffer *slots = p.findBuffer(plan::BufferKind::TokenSlots);

  args.tasks = tasks;
  args.workerBegin = workerBegin;
  args.waveBarriers = waveBarriers;
  args.params = params;
  args.weights = weights;
  args.waveCount = static_cast<uint32_t>(p.waves.size());
  args.arena = arena;
  args.barrierCounter = counter;
  args.stageBytes = p.stream.stageBytes;
  args.stages = p.stream.stages;
  args.inFlightStages = p.stream.inFlightStages;
  args.handOffInFlightStages = p.stream.handOffInFlightStages;
  args.rowPartBytes = p.stream.rowPartBytes;
  args.copiesEvictFirst = p.stream.copiesEvictFirst;
  args.kvCopiesUnhinted = p.stream.kvCopiesUnhinted;
  args.scheduleBytes = plan::scheduleBytes(p);
  args.maxContext = p.model.maxContext;
  args.splitContext = p.attention.splitContext;
  args.streamKvContext = p.attention.streamKvContext;
  args.shortMmaContext = p.attention.shortMmaContext;
  args.candidatesOffset = candidates->offset;
  args.candidateCount = static_cast<uint32_t>(candidates->bytes / sizeof(plan::Candidate));
  args.tokenSlotsOffset = slots->offset;
  args.stepStateOffset = lp->stepStateOffset;
  args.recordWorker = static_cast<uint32_t>(recordWorker);
  args.select = lp->selectParams();
  // cudaMemset above runs asynchronously on the legacy stream; the launches
  // run on `stream`, which does not wait for it.
  TI_CUDA_CHECK(cudaDeviceSynchronize());
  return Status();
}

CudaExecutor::CudaExecutor() : impl(std::make_unique<Impl>()) {}
CudaExecutor::~CudaExecutor() = default;

int CudaExecutor::deviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError(); // Not sticky; clear it for later calls.
    return 0;
  }
  return count;
}

StatusOr<CudaDeviceInfo> CudaExecutor::deviceInfo(int device) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    return Status::error(std::string("no CUDA GPU: ") + cudaGetErrorString(e));
  if (device < 0 || device >= count)
    return Status::error("no CUDA GPU " + std::to_string(device) + " (" + std::to_string(count) +
                         " visible)");
  cudaDeviceProp prop;
  TI_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  CudaDeviceInfo info;
  info.name = prop.name;
  info.arch = archOf(prop);
  info.smCount = prop.multiProcessorCount;
  info.sharedPerBlockOptin = prop.sharedMemPerBlockOptin;
  info.registersPerSm = prop.regsPerMultiprocessor;
  info.l2Bytes = size_t(prop.l2CacheSize);
  info.memoryBytes = prop.totalGlobalMem;
  return info;
}

StatusOr<WorkerAttributes> CudaExecutor::workerAttributes(int device, size_t dynamicSharedBytes,
                                                          plan::ExecutionModel model) {
  TI_CUDA_CHECK(cudaSetDevice(device));
  const void *entry = entryFor(model);
  cudaFuncAttributes fa;
  TI_CUDA_CHECK(cudaFuncGetAttributes(&fa, entry));
  TI_CUDA_CHECK(cudaFuncSetAttribute(entry,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(dynamicSharedBytes)));
  WorkerAttributes a;
  a.registers = fa.numRegs;
  a.localBytes = fa.localSizeBytes;
  a.staticSharedBytes = fa.sharedSizeBytes;
  a.dynamicSharedBytes = dynamicSharedBytes;
  a.maxThreadsPerBlock = fa.maxThreadsPerBlock;
  a.binaryVersion = fa.binaryVersion;
  a.ptxVersion = fa.ptxVersion;
  TI_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &a.blocksPerSm, entry, int(plan::blockThreads(model)), dynamicSharedBytes));
  return a;
}

uint32_t CudaExecutor::workerThreads() { return cuda::kThreads; }

std::string WorkerImage::describe() const {
  std::string text = std::string(model == plan::ExecutionModel::Stream ? "stream worker " : "") +
                     name + (jit ? " PTX " : " cubin ") + sha256.substr(0, 12);
  if (jit)
    text += ", JIT-compiled for sm_" + std::to_string(deviceArch) + " by driver " +
            std::to_string(driverVersion);
  return text;
}

namespace {

/// CUDA_FORCE_PTX_JIT=1 makes the driver ignore every cubin; the attributes
/// then look like a cubin's (binary version = the device's arch).
bool ptxJitForced() {
  const char *v = std::getenv("CUDA_FORCE_PTX_JIT");
  return v && *v && std::strcmp(v, "0") != 0;
}

/// The image of `model`'s worker of that arch and kind, if this build has it.
const cuda::MachineCodeImage *findImage(plan::ExecutionModel model, int arch, bool ptx) {
  auto find = [&](const auto &images) -> const cuda::MachineCodeImage * {
    for (const cuda::MachineCodeImage &image : images)
      if (image.arch == arch && image.ptx == ptx)
        return &image;
    return nullptr;
  };
  return model == plan::ExecutionModel::Stream ? find(cuda::kStreamWorkerImages)
                                               : find(cuda::kWorkerImages);
}

} // namespace

StatusOr<WorkerImage> CudaExecutor::workerImage(int device, plan::ExecutionModel model) {
  TI_CUDA_CHECK(cudaSetDevice(device));
  cudaFuncAttributes fa;
  TI_CUDA_CHECK(cudaFuncGetAttributes(&fa, entryFor(model, false)));
  WorkerImage w;
  w.deviceArch = fa.binaryVersion;
  // The driver runs a cubin when one is compatible with the device (its
  // binary version names it); otherwise it JIT-compiles the newest PTX the
  // device can take, and the binary version is the JIT's target.
  const cuda::MachineCodeImage *image =
      ptxJitForced() ? nullptr : findImage(model, fa.binaryVersion, false);
  if (!image) {
    image = findImage(model, fa.ptxVersion, true);
    if (!image)
      return Status::error("the worker on GPU " + std::to_string(device) + " runs sm_" +
                           std::to_string(fa.binaryVersion) + " code from PTX " +
                           std::to_string(fa.ptxVersion) + ", an image this build did not hash");
    w.jit = true;
    TI_CUDA_CHECK(cudaDriverGetVersion(&w.driverVersion));
  }
  w.model = model;
  w.name = image->name;
  w.sha256 = image->sha256;
  return w;
}

std::string CudaExecutor::kernelFingerprint(int device, plan::ExecutionModel model) {
  auto image = workerImage(device, model);
  if (!image) {
    cudaGetLastError();
    return "";
  }
  return kernelFingerprint(device, *image);
}

std::string CudaExecutor::kernelFingerprint(int device, const WorkerImage &image) {
  cudaFuncAttributes fa;
  if (cudaSetDevice(device) != cudaSuccess ||
      cudaFuncGetAttributes(&fa, entryFor(image.model, false)) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  // The Plain worker's code enters as before the Stream worker existed, so
  // that its fingerprints stay those of the targets probed then.
  std::string code = std::string(image.model == plan::ExecutionModel::Stream ? "stream " : "") +
                     (image.jit ? "ptx-jit " : "cubin ") + image.name + " " + image.sha256;
  if (image.jit)
    code += " sm_" + std::to_string(image.deviceArch) + " driver " +
            std::to_string(image.driverVersion);
  Fnv1a h;
  h.bytes(code.data(), code.size());
  h.value(int64_t(fa.numRegs));
  h.value(uint64_t(fa.localSizeBytes));
  h.value(uint64_t(fa.sharedSizeBytes));
  h.value(uint64_t(fa.constSizeBytes));
  h.value(int64_t(fa.maxThreadsPerBlock));
  h.value(int64_t(fa.binaryVersion));
  h.value(int64_t(fa.ptxVersion));
  return hexDigits(h.hash());
}

StatusOr<std::unique_ptr<CudaExecutor>> CudaExecutor::create(std::shared_ptr<const LoadedPlan> lp,
                                                             int device) {
  const plan::Plan &p = lp->plan;
  auto info = deviceInfo(device);
  if (!info)
    return info.status();
  const std::string gpu = "GPU " + std::to_string(device) + " (" + info->name + ", " + info->arch +
                          ", " + std::to_string(info->smCount) + " SMs)";
  if (p.target.arch != info->arch)
    return Status::error("the plan was made for " + p.target.arch + " (target '" + p.target.name +
                         "'), but " + gpu + " is " + info->arch);
  if (p.target.workers > uint32_t(info->smCount))
    return Status::error("the plan has " + std::to_string(p.target.workers) + " workers, but " +
                         gpu + " has only " + std::to_string(info->smCount) + " SMs");
  const plan::ExecutionModel model = p.stream.model;
  const uint32_t threads = plan::taskThreads(model);
  if (p.target.threadsPerWorker != threads)
    return Status::error("the plan was made for " + std::to_string(p.target.threadsPerWorker) +
                         "-thread workers; the CUDA " + plan::executionModelName(model) +
                         " worker has " + std::to_string(threads));
  if (model == plan::ExecutionModel::Stream && info->arch != plan::kStreamArch)
    return Status::error(std::string("the plan's stream execution needs ") + plan::kStreamArch +
                         " (the bulk-copy engine), but " + gpu + " is " + info->arch);
  int cooperative = 0;
  TI_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  if (!cooperative)
    return Status::error(gpu + " does not support cooperative launches");
  // tic refused what its target's worker cannot run; this is the worker the
  // binary has, on this GPU.
  for (const plan::WorkerProblem &problem :
       plan::workerProblems(p, workerLimits(info->sharedPerBlockOptin, model))) {
    const plan::TaskRecord &t = p.tasks[problem.task];
    const char *op = plan::opcodeName(t.opcode);
    return Status::error("the plan's wave '" + p.waves[t.wave].name + "' (task #" +
                         std::to_string(problem.task) + ", " + (op ? op : "?") + "): " +
                         problem.message + " on " + gpu +
                         ": compile it for this worker (tirun probe, tic --target-file)");
  }

  TI_CUDA_CHECK(cudaSetDevice(device));
  cudaFuncAttributes fa;
  if (cudaError_t e = cudaFuncGetAttributes(&fa, entryFor(model)); e != cudaSuccess) {
    cudaGetLastError();
    return Status::error("the CUDA worker was not built for " + gpu + ": " + cudaGetErrorString(e));
  }
  // Within the limits checked above.
  const size_t shared = plan::workerSharedBytes(p).total();
  auto attributes = workerAttributes(device, shared, model);
  if (!attributes)
    return attributes.status();
  if (attributes->blocksPerSm < 1)
    return Status::error("the worker (" + std::to_string(attributes->registers) + " registers x " +
                         std::to_string(plan::blockThreads(model)) + " threads, " +
                         std::to_string(shared + fa.sharedSizeBytes) +
                         " bytes of shared memory) cannot be resident on an SM of " + gpu);
  // A probed target names the worker binary it was measured with; its plan
  // runs only with that machine code (the built-in targets name none).
  if (!p.target.workerFingerprint.empty()) {
    auto image = workerImage(device, model);
    if (!image)
      return image.status();
    std::string mine = kernelFingerprint(device, *image);
    if (mine.empty())
      return Status::error("cannot compute the worker's fingerprint on " + gpu);
    if (p.target.workerFingerprint != mine)
      return Status::error("the plan was made for worker " + p.target.workerFingerprint +
                           " (target '" + p.target.name + "'), but this binary's worker on " + gpu +
                           " is " + mine + " (" + image->describe() +
                           "): probe again and recompile the plan");
  }

  std::unique_ptr<CudaExecutor> e(new CudaExecutor());
  e->impl->lp = std::move(lp);
  e->impl->device = device;
  e->impl->deviceName = info->name;
  e->impl->sharedBytes = shared;
  e->impl->workers = p.target.workers;
  e->impl->attributes = *attributes;
  if (Status s = e->impl->uploadPlan(); !s.ok())
    return s;
  return StatusOr<std::unique_ptr<CudaExecutor>>(std::move(e));
}

StatusOr<plan::StepState> CudaExecutor::launch(const LaunchArgs &launchArgs) {
  Impl &m = *impl;
  const LoadedPlan &lp = *m.lp;
  if (Status s = checkLaunchArgs(launchArgs, lp.plan); !s.ok())
    return s;
  TI_CUDA_CHECK(cudaSetDevice(m.device));
  // The limit is the function's, shared by every executor of the process.
  // Tracing runs the kernel's traced instantiation; the plain one has no
  // tracer at all.
  const plan::ExecutionModel model = lp.plan.stream.model;
  const void *entry = entryFor(model, m.traceEvents != nullptr);
  TI_CUDA_CHECK(cudaFuncSetAttribute(entry, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(m.sharedBytes)));
  cuda::KernelArgs args = m.args;
  args.launch = launchArgs;
  args.tagBase = m.nextTag;
  m.nextTag += plan::kMaxStepsPerLaunch;
  if (m.traceEvents) {
    args.trace = m.traceEvents;
    args.traceCounts = m.traceCounts;
    args.traceCapacity = m.traceCapacity;
    args.traceStep = std::min(1, launchArgs.maxSteps - 1);
    TI_CUDA_CHECK(cudaMemsetAsync(m.traceCounts, 0, m.workers * sizeof(uint32_t), m.stream));
  }
  TI_CUDA_CHECK(cudaMemcpyAsync(m.arena + lp.promptOffset, launchArgs.prompt,
                                sizeof launchArgs.prompt, cudaMemcpyHostToDevice, m.stream));
  TI_CUDA_CHECK(
      cudaMemsetAsync(m.arena + lp.stepStateOffset, 0, sizeof(plan::StepState), m.stream));
  TI_CUDA_CHECK(cudaMemsetAsync(m.counter, 0, sizeof(uint32_t), m.stream));
  void *params[] = {&args};
  TI_CUDA_CHECK(cudaEventRecord(m.kernelStart, m.stream));
  TI_CUDA_CHECK(cudaLaunchCooperativeKernel(entry, dim3(m.workers),
                                            dim3(plan::blockThreads(model)), params,
                                            m.sharedBytes, m.stream));
  TI_CUDA_CHECK(cudaEventRecord(m.kernelEnd, m.stream));
  plan::StepState state;
  TI_CUDA_CHECK(cudaMemcpyAsync(&state, m.arena + lp.stepStateOffset, sizeof state,
                                cudaMemcpyDeviceToHost, m.stream));
  TI_CUDA_CHECK(cudaStreamSynchronize(m.stream));
  return state;
}

std::string CudaExecutor::device() const { return impl->deviceName; }

StatusOr<double> CudaExecutor::lastLaunchMilliseconds() const {
  TI_CUDA_CHECK(cudaSetDevice(impl->device));
  float ms = 0;
  TI_CUDA_CHECK(cudaEventElapsedTime(&ms, impl->kernelStart, impl->kernelEnd));
  return double(ms);
}

StatusOr<std::vector<float>> CudaExecutor::logits() const {
  const LoadedPlan &lp = *impl->lp;
  std::vector<float> out(lp.plan.model.vocab);
  TI_CUDA_CHECK(cudaSetDevice(impl->device));
  TI_CUDA_CHECK(cudaMemcpyAsync(out.data(), impl->arena + lp.logitsOffset,
                                out.size() * sizeof(float), cudaMemcpyDeviceToHost, impl->stream));
  TI_CUDA_CHECK(cudaStreamSynchronize(impl->stream));
  return out;
}

Status CudaExecutor::reset() {
  TI_CUDA_CHECK(cudaSetDevice(impl->device));
  TI_CUDA_CHECK(cudaMemsetAsync(impl->arena, 0, std::max<uint64_t>(impl->lp->plan.arenaBytes, 16),
                                impl->stream));
  TI_CUDA_CHECK(cudaStreamSynchronize(impl->stream));
  return Status();
}

StatusOr<std::vector<uint8_t>> CudaExecutor::saveArena() const {
  TI_CUDA_CHECK(cudaSetDevice(impl->device));
  std::vector<uint8_t> out(impl->lp->plan.arenaBytes);
  TI_CUDA_CHECK(cudaMemcpyAsync(out.data(), impl->arena, out.size(), cudaMemcpyDeviceToHost,
                                impl->stream));
  TI_CUDA_CHECK(cudaStreamSynchronize(impl->stream));
  return out;
}

Status CudaExecutor::restoreArena(const std::vector<uint8_t> &arena) {
  if (arena.size() != impl->lp->plan.arenaBytes)
    return Status::error("the saved arena has " + std::to_string(arena.size()) +
                         " bytes, the plan's has " + std::to_string(impl->lp->plan.arenaBytes));
  TI_CUDA_CHECK(cudaSetDevice(impl->device));
  TI_CUDA_CHECK(cudaMemcpyAsync(impl->arena, arena.data(), arena.size(), cudaMemcpyHostToDevice,
                                impl->stream));
  if (Status s = impl->clearTaggedBuffers(); !s.ok())
    return s;
  TI_CUDA_CHECK(cudaStreamSynchronize(impl->stream));
  return Status();
}

const WorkerAttributes &CudaExecutor::workerAttributes() const { return impl->attributes; }

size_t CudaExecutor::dynamicSharedBytes() const { return impl->sharedBytes; }

Status CudaExecutor::setWorkerMode(WorkerMode mode) {
  if ((mode == WorkerMode::StreamOnly || mode == WorkerMode::ComputeOnly) &&
      impl->lp->plan.stream.model != plan::ExecutionModel::Stream)
    return Status::error(std::string("worker mode ") + workerModeName(mode) +
                         " needs a plan for the stream execution model (tic --execution stream)");
  impl->args.mode = static_cast<uint32_t>(mode);
  return Status();
}

Status CudaExecutor::setTrace(bool on) {
  Impl &m = *impl;
  TI_CUDA_CHECK(cudaSetDevice(m.device));
  if (!on) {
    TI_CUDA_CHECK(cudaFree(m.traceEvents));
    TI_CUDA_CHECK(cudaFree(m.traceCounts));
    m.traceEvents = nullptr;
    m.traceCounts = nullptr;
    return Status();
  }
  if (m.traceEvents)
    return Status();
  if (!cuda::kTraceCompiled)
    return Status::error("this worker was built without tracing (TI_WORKER_TRACE=OFF)");
  // The traced kernel must fit one block per SM with the plan's shared
  // memory, as the plain one was checked to at creation.
  const plan::ExecutionModel model = m.lp->plan.stream.model;
  const void *traced = entryFor(model, true);
  TI_CUDA_CHECK(cudaFuncSetAttribute(traced, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(m.sharedBytes)));
  int blocks = 0;
  TI_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, traced, int(plan::blockThreads(model)), m.sharedBytes));
  if (blocks < 1)
    return Status::error("the traced worker cannot run one block per SM with this plan's " +
                         std::to_string(m.sharedBytes) + " bytes of shared memory");
  // A worker records at most two events a task (its inputs' arrival and the
  // task), one barrier per wave, the step's closing barrier and the
  // selection.
  const plan::Plan &p = m.lp->plan;
  m.traceCapacity =
      2 * plan::mostTasksPerWorker(p) + static_cast<uint32_t>(p.waves.size()) + 2;
  // Both buffers or neither: launch() traces when traceEvents is set.
  TraceEvent *events = nullptr;
  uint32_t *counts = nullptr;
  cudaError_t e = cudaMalloc(reinterpret_cast<void **>(&events),
                             size_t(m.workers) * m.traceCapacity * sizeof(TraceEvent));
  if (e == cudaSuccess)
    e = cudaMalloc(reinterpret_cast<void **>(&counts), m.workers * sizeof(uint32_t));
  if (e == cudaSuccess)
    e = cudaMemset(counts, 0, m.workers * sizeof(uint32_t));
  if (e != cudaSuccess) {
    cudaFree(events);
    cudaFree(counts);
    return cuda::cudaFailure(e, "allocating the trace buffers", __FILE__, __LINE__);
  }
  m.traceEvents = events;
  m.traceCounts = counts;
  return Status();
}

StatusOr<std::vector<std::vector<TraceEvent>>> CudaExecutor::trace() const {
  const Impl &m = *impl;
  if (!m.traceEvents)
    return Status::error("tracing is off");
  TI_CUDA_CHECK(cudaSetDevice(m.device));
  std::vector<uint32_t> counts(m.workers);
  std::vector<TraceEvent> all(size_t(m.workers) * m.traceCapacity);
  TI_CUDA_CHECK(cudaMemcpy(counts.data(), m.traceCounts, counts.size() * sizeof(uint32_t),
                           cudaMemcpyDeviceToHost));
  TI_CUDA_CHECK(cudaMemcpy(all.data(), m.traceEvents, all.size() * sizeof(TraceEvent),
                           cudaMemcpyDeviceToHost));
  std::vector<std::vector<TraceEvent>> out(m.workers);
  for (uint32_t w = 0; w < m.workers; ++w) {
    const TraceEvent *first = all.data() + size_t(w) * m.traceCapacity;
    out[w].assign(first, first + std::min(counts[w], m.traceCapacity));
  }
  return out;
}
