//===- Config.cuh - The CUDA worker's constants and shared memory -*- CUDA -*-===//
//
// Every tuning constant of the worker, with the static_asserts that keep them
// consistent. The worker is compiled once per execution model
// (ti/Plan/Execution.h): TI_WORKER_STREAM is 0 for the Plain worker
// (Worker.cu), 1 for the Stream worker (StreamWorker.cu); what depends on it
// lives in an inline namespace named after the model, so that the two
// compilations never share a symbol. What a plan may ask of this worker (the
// most query heads per kv head, the head dims, the shared memory) is reported by
// CudaExecutor::workerLimits() from these constants; tic reads the same facts
// from the target (ti/Target/Target.h) and refuses plans beyond them.
//
// Shared memory of one worker:
//   static   the block reductions' per-warp slots, the step's token, the task
//            records' windows (Worker.cu, ops/Common.cuh, Schedule.cuh), the
//            Stream worker's ring barriers, the traced kernel's mark
//            (TraceMarks.cuh): kStaticSharedBytes at most;
//   dynamic  the Stream worker's ring, the worker's schedule (the waves'
//            barrier kinds), then one float array reused by every task, laid
//            out as ti/Plan/WorkerLayout.h says for this worker's kThreads.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_CONFIG_CUH
#define TI_LIB_RUNTIME_CUDA_CONFIG_CUH

#include "ti/Plan/Execution.h"
#include "ti/Plan/TaskRecord.h"
#include "ti/Plan/WorkerLayout.h"
#include "ti/Support/HostDevice.h"

#include <cstdint>

#ifndef TI_WORKER_STREAM
#error "TI_WORKER_STREAM must be defined (lib/Runtime/cuda/CMakeLists.txt): 0 for the plain worker, 1 for the stream worker"
#endif
#if TI_WORKER_STREAM
#define TI_WORKER_MODEL_NAMESPACE stream_model
#else
#define TI_WORKER_MODEL_NAMESPACE plain_model
#endif

// The namespace of every worker header and of Worker.cu.
#define TI_WORKER_NAMESPACE_BEGIN                                                                  \
  namespace ti::cuda {                                                                             \
  inline namespace TI_WORKER_MODEL_NAMESPACE {
#define TI_WORKER_NAMESPACE_END                                                                    \
  }                                                                                                \
  }

TI_WORKER_NAMESPACE_BEGIN

constexpr plan::ExecutionModel kModel =
    TI_WORKER_STREAM ? plan::ExecutionModel::Stream : plan::ExecutionModel::Plain;
constexpr bool kStreamed = kModel == plan::ExecutionModel::Stream;
/// Threads that run tasks (the ops' kThreads), and the block's: the Stream
/// worker adds a producer warpgroup. The kernel is compiled for exactly
/// kBlockThreads: __launch_bounds__(kBlockThreads, 1) caps its registers at
/// 64 (Plain) or 168 (Stream) per thread, and the Stream worker's consumers
/// then take the producer's spare ones (Worker.cu: claimConsumerRegisters).
constexpr uint32_t kThreads = plan::taskThreads(kModel);
constexpr uint32_t kBlockThreads = plan::blockThreads(kModel);

// Whether the worker is also compiled in its traced instantiation (CMake
// option TI_WORKER_TRACE, on by default). Launches without tracing never run
// it; off, the build has no tracer at all, which is how docs/PERFORMANCE.md
// measures that tracing costs nothing when it is not asked for.
#ifndef TI_WORKER_TRACE
#error "TI_WORKER_TRACE must be defined (lib/Runtime/cuda/CMakeLists.txt): a default here could let the host and the kernel disagree"
#endif
constexpr bool kTraceCompiled = TI_WORKER_TRACE != 0;
constexpr uint32_t kWarpSize = 32;
constexpr uint32_t kWarps = kThreads / kWarpSize;
/// Bytes of one weight element, and one 16-byte weight load's bytes and
/// elements (the plan's, WorkerLayout.h; 32-bit here, as the ops' offset math).
constexpr uint32_t kWeightBytes = uint32_t(plan::kWeightBytes);
constexpr uint32_t kVectorBytes = plan::kWorkerVectorBytes;
constexpr uint32_t kVector = plan::kWorkerVector;
static_assert(kVector == 8, "the ops unpack a load as Bf16x8");
/// The vectors of a streamed row part whose x' a lane keeps in registers (8
/// floats each; ops/Common.cuh: XSlice): parts of up to 4 KB need no more.
constexpr uint32_t kSliceVectors = 8;
/// Independent 16-byte loads a lane issues before using the first (GEMV rows).
constexpr uint32_t kLoadsInFlight = 2;
/// Attention: the positions per lane group whose K and V rows are in flight
/// together, each issued a round ahead (registers: 8 words per position; the
/// Plain worker's 64 registers hold one).
constexpr uint32_t kAttentionRowsAhead = kStreamed ? 4 : 1;
/// The Stream worker's producer, when the plan lets it start no copy for a
/// wave its consumers have not begun, reads their wave this often.
constexpr uint32_t kPausePollNanoseconds = 100;
using plan::kFfnColumnPasses;
using plan::kReduceStagedFloats;
/// Query heads per kv head (G) the attention op handles: the group's rotated
/// queries fill shared memory, and its warps split the heads (Llama 3 has G =
/// 3 or 4).
constexpr uint32_t kMaxGroup = 4;
/// Heads a lane keeps an online softmax for where it keeps more than one
/// (WorkerLayout.h: 4 in the Stream worker, 1 in the Plain worker).
constexpr uint32_t kHeadsPerLane = plan::attentionHeadsPerLane(kThreads, plan::kAttentionLaneGroup);
/// An attention task whose positions sets of one head cover in this many
/// rounds keeps one head a lane even where kHeadsPerLane allows the group:
/// on the H200 the 1B's tasks of 33 and 65 positions ran faster so, those of
/// 129 and 256 with the whole group (docs/PERFORMANCE.md, step 5).
constexpr uint32_t kOneHeadRounds = 3;
/// Static shared memory the worker may use besides the dynamic array.
constexpr uint32_t kStaticSharedBytes = 1024;
/// The smallest opt-in shared memory per block of the supported GPUs (sm_86:
/// 99 KiB); larger needs are checked at run time against the device.
constexpr uint32_t kPortableSharedBytes = 99 * 1024;
/// Registers per thread at launch, which let one block fill an SM's 64K
/// registers (ti/Plan/Execution.h); the Stream worker's consumers then hold
/// plan::kStreamWorkerRegisters, its producer plan::kStreamProducerRegisters.
constexpr uint32_t kLaunchRegisters = kStreamed ? plan::kStreamLaunchRegisters
                                                : plan::kPlainWorkerRegisters;
/// Ring stages the Stream worker's static shared memory has barriers for.
constexpr uint32_t kMaxStreamStages = plan::kMaxStreamStages;

static_assert(kThreads % kWarpSize == 0, "a worker is whole warps");
static_assert(!kStreamed || kWarps % plan::kMaxRowParts == 0,
              "a warp takes the same part of every row (ops/Common.cuh)");
static_assert(kWarps <= kWarpSize, "block reductions combine the warps' slots in one warp");
static_assert(kThreads <= 1024, "CUDA blocks have at most 1024 threads");
static_assert(kLaunchRegisters * kBlockThreads <= 65536, "one block fits an SM's 64K registers");
static_assert((kLoadsInFlight & (kLoadsInFlight - 1)) == 0, "loads in flight: a power of two");

// The worker's shared-memory layout is the plan's (ti/Plan/WorkerLayout.h),
// at this worker's thread count.
using plan::alignFloats;
using plan::AttentionLayout;
using plan::FfnLayout;
TI_HOST_DEVICE constexpr FfnLayout ffnLayout(uint32_t hidden, uint32_t units) {
  return plan::ffnLayout(hidden, units, kThreads);
}
TI_HOST_DEVICE constexpr AttentionLayout attentionLayout(const plan::HeadGeometry &g) {
  return plan::attentionLayout(g, kThreads);
}
/// Where a task's row partials start in its dynamic shared memory.
TI_HOST_DEVICE constexpr uint32_t rowPartialsAt(const plan::TaskRecord &t) {
  return plan::rowPartialsAt(t, kThreads);
}

// The budget holds the largest tasks of Llama 3.1 8B (hidden 4096, head_dim
// 128, 4 query heads per kv head) with up to 1024 FFN units per task (20
// workers: 717) on the smallest supported GPU.
static_assert(sizeof(float) * ffnLayout(4096, 1024).floats + kStaticSharedBytes <=
                  kPortableSharedBytes,
              "an 8B model's FFN task fits an sm_86 worker's shared memory");
static_assert(sizeof(float) * attentionLayout(plan::HeadGeometry{32, 8, 128, 16}).floats +
                      kStaticSharedBytes <=
                  kPortableSharedBytes,
              "an 8B model's attention task fits an sm_86 worker's shared memory");

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_CONFIG_CUH
