//===- Config.cuh - The CUDA worker's constants and shared memory -*- CUDA -*-===//
//
// Every tuning constant of the worker, with the static_asserts that keep them
// consistent, and the layout of the worker's dynamic shared memory. The layout
// functions are __host__ __device__: the executor sizes the launch's dynamic
// shared memory with exactly the arithmetic the ops use to carve it.
//
// Shared memory of one worker:
//   static   the block reductions' per-warp slots, the step's token (Worker.cu,
//            ops/Common.cuh): kStaticSharedBytes at most;
//   dynamic  one float array, reused by every task (a block barrier separates
//            tasks). Per opcode, in floats, each region 16-byte aligned:
//              Gemv             x'[K]
//              LmHead           x'[K], reused for the warps' best rows
//              FfnPartial       x'[H] | act[n] | down partials[G][H] (G > 1)
//              Attention*       q'[G*D] | k'[D] | value partials[kWarps][D]
//              ReduceResidual   partials[P][rows] (when they fit)
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_CONFIG_CUH
#define TI_LIB_RUNTIME_CUDA_CONFIG_CUH

#include "ti/Plan/TaskRecord.h"
#include "ti/Support/HostDevice.h"

#include <cstdint>

namespace ti::cuda {

/// Threads of a worker (one block per SM). The kernel is compiled for exactly
/// this many: __launch_bounds__(kThreads, 1) caps it at 64 registers.
constexpr uint32_t kThreads = 1024;

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
/// Bytes of one weight element, and the elements of one 16-byte weight load.
constexpr uint32_t kWeightBytes = bytesOf(plan::kWeightType);
constexpr uint32_t kVectorBytes = 16;
constexpr uint32_t kVector = kVectorBytes / kWeightBytes;
static_assert(kVector == 8, "the ops unpack a load as Bf16x8");
/// Independent 16-byte loads a lane issues before using the first (GEMV rows).
constexpr uint32_t kLoadsInFlight = 2;
/// ReduceResidual stages its partials in shared memory up to this many floats
/// (32 KiB: 128 partials of 64 rows).
constexpr uint32_t kReduceStagedFloats = 8192;
/// Query heads per kv head (G) the attention ops handle: they keep two softmax
/// statistics per head of the group in registers (Llama 3 has G = 3 or 4;
/// 8 would spill).
constexpr uint32_t kMaxGroup = 4;
/// Static shared memory the worker may use besides the dynamic array.
constexpr uint32_t kStaticSharedBytes = 1024;
/// The smallest opt-in shared memory per block of the supported GPUs (sm_86:
/// 99 KiB); larger needs are checked at run time against the device.
constexpr uint32_t kPortableSharedBytes = 99 * 1024;
/// Registers per thread that let one kThreads block fill an SM's 64K registers.
constexpr uint32_t kMaxRegisters = 65536 / kThreads;

static_assert(kThreads % kWarpSize == 0, "a worker is whole warps");
static_assert(kWarps <= kWarpSize, "block reductions combine the warps' slots in one warp");
static_assert(kThreads <= 1024, "CUDA blocks have at most 1024 threads");
static_assert(kMaxRegisters == 64, "the plans' targets assume 64 registers per thread");
static_assert((kLoadsInFlight & (kLoadsInFlight - 1)) == 0, "loads in flight: a power of two");

/// Rounds a float count up to a 16-byte boundary.
TI_HOST_DEVICE constexpr uint32_t alignFloats(uint32_t n) { return (n + 3u) & ~3u; }

/// FfnPartial's down projection: `groups` sets of threads each sum every
/// groups-th unit into 8 columns per thread, then the sets are added in order.
struct FfnLayout {
  uint32_t hidden, units, vectors, groups;
  uint32_t xAt, actAt, partialsAt, floats;
};
TI_HOST_DEVICE constexpr FfnLayout ffnLayout(uint32_t hidden, uint32_t units) {
  FfnLayout l{};
  l.hidden = hidden;
  l.units = units;
  l.vectors = hidden / kVector;
  l.groups = l.vectors >= kThreads ? 1u : kThreads / l.vectors;
  l.xAt = 0;
  l.actAt = alignFloats(hidden);
  l.partialsAt = l.actAt + alignFloats(units);
  l.floats = l.partialsAt + (l.groups > 1 ? l.groups * hidden : 0u);
  return l;
}

/// The attention ops' regions: rotated queries of the group, the current key,
/// and the per-warp partial sums of the weighted values (of the task's layer's
/// geometry).
struct AttentionLayout {
  uint32_t qAt, kAt, partialsAt, floats;
};
TI_HOST_DEVICE constexpr AttentionLayout attentionLayout(const plan::HeadGeometry &g) {
  AttentionLayout l{};
  l.qAt = 0;
  l.kAt = alignFloats(g.group() * g.headDim);
  l.partialsAt = l.kAt + alignFloats(g.headDim);
  l.floats = l.partialsAt + kWarps * g.headDim;
  return l;
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

/// Floats of dynamic shared memory one task needs.
TI_HOST_DEVICE constexpr uint32_t sharedFloatsFor(const plan::TaskRecord &t) {
  switch (static_cast<plan::Opcode>(t.opcode)) {
  case plan::Opcode::Gemv:
    return alignFloats(t.aux[0]);
  case plan::Opcode::LmHead: // x'[K], then the warps' best rows (3 words each).
    return alignFloats(t.aux[0]) > 3 * kWarps ? alignFloats(t.aux[0]) : 3 * kWarps;
  case plan::Opcode::FfnPartial:
    return ffnLayout(t.aux[0], t.rowEnd - t.rowBegin).floats;
  case plan::Opcode::AttentionScores:
  case plan::Opcode::AttentionValues:
    return attentionLayout(t.geometry).floats;
  case plan::Opcode::ReduceResidual: {
    const uint64_t staged = uint64_t(t.aux[1]) * (t.rowEnd - t.rowBegin);
    return staged <= kReduceStagedFloats ? static_cast<uint32_t>(staged) : 0u;
  }
  case plan::Opcode::Nop:
  case plan::Opcode::SelectToken:
  case plan::Opcode::Embed:
    return 0;
  }
  return 0;
}

} // namespace ti::cuda

#endif // TI_LIB_RUNTIME_CUDA_CONFIG_CUH
