//===- TiledGemv.cuh - A Gemv or GateUp over weight tiles, on the tensor cores -*- CUDA -*-===//
//
// The Stream worker's form of a kFlagTiledWeights task (TaskRecord.h): its
// rows are stored in octet tiles (ti/Plan/WeightTiles.h) and arrive through
// the ring octet by octet, in pieces of a stage (WeightStream::consumeTiled).
//
// 1. x' into shared memory as the B operand of `mma.sync.m16n8k16` (bf16 in,
//    f32 sums): for each 8 columns of x', a bf16 hi and lo pair per value in
//    the 32 bytes the floats would take (Common.cuh: loadScaledInput).
//    With a norm, x' is x * scale without the norm's 1 / rms,
//    a scalar of the whole input that step 3 applies to the row sums, so
//    that the products need not wait for the block's sum of squares (the
//    1B 1.8% faster at context 1; docs/PERFORMANCE.md, step 18).
// 2. A tile (8 rows x 32 columns) is the A operand of one product: lane l's
//    16 bytes are row g = l / 4's columns 8t .. 8t + 7 (t = l % 4), of which
//    the first four take A's row g and the last four its row g + 8 (which k
//    slot a column takes does not change a dot product as long as B's x'
//    sits in the same slot). B's columns 0 and 1 are x' hi and lo for the
//    first four of each 8 columns, its columns 2 and 3 for the last four,
//    the others zero, so only lanes 0-15 hold a nonzero B operand (8 bytes
//    a tile), and row r's dot product is C(r, 0) + C(r, 1) + C(r + 8, 2) +
//    C(r + 8, 3): lane 4r's c0 + c1 and lane 4r + 1's c2 + c3. (With x' as
//    A, whose 16 rows held x' in two, a tile took two products and its B
//    twice the registers: the 1B 13% slower in compute-only mode,
//    docs/PERFORMANCE.md, step 16.) Warp w takes
//    the piece's tiles w, w + 8, ... in batches whose loads are all issued
//    before the first product, into two accumulator chains that live across
//    an octet's pieces. Where an octet is one full piece, every piece has
//    the same columns, and the warp keeps its tiles' B words in registers. At the octet's last piece the warp adds its chains
//    (in a fixed order) and lane 4r leaves row r's sum in the tile partials
//    (shared memory, [rows][warps]: WorkerLayout.h).
// 3. After the last octet and a block barrier, thread r adds row r's warps'
//    partials in warp order, multiplies the sum by 1 / rms (1 without a
//    norm) and emits it: Gemv's residual, output and V cache row, or
//    GateUp's silu(gate) * up from its gate and up rows.
//
// The sums differ from the row form's (Common.cuh: XSlice) in order, by
// x's hi + lo split (|x - hi - lo| <= 2^-17 |x|) and where 1 / rms is
// applied; a run repeats them bit for bit.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_TILEDGEMV_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_TILEDGEMV_CUH

#include "Common.cuh"

TI_WORKER_NAMESPACE_BEGIN

#if TI_WORKER_STREAM
/// d += A b for one k block of 16: A's four words of this lane, B's two.
__device__ __forceinline__ void mmaBf16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                        uint32_t a3, uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/// One tile's product: A (the weights) from lane l's 16 bytes at `w`, B (x')
/// from its 8 bytes at `x` (lanes 0-15; the others' B is zero).
struct TileOperands {
  uint4 w;
  uint2 x;
  __device__ __forceinline__ void load(const uint8_t *wAt, const uint8_t *xAt, bool holdsX) {
    w = *reinterpret_cast<const uint4 *>(wAt);
    x = holdsX ? *reinterpret_cast<const uint2 *>(xAt) : uint2{0, 0};
  }
  __device__ __forceinline__ void multiply(float (&d)[4]) const {
    // A's words: row g's two k pairs (a0, a2) are the row's columns 8t..8t+3,
    // row g + 8's (a1, a3) its columns 8t+4..8t+7.
    mmaBf16(d, w.x, w.z, w.y, w.w, x.x, x.y);
  }
};

/// Steps 2 of every segment of task t, then a block barrier: every row's
/// warp partials in `partials` ([rows of all segments][kWarps], the
/// segments' rows one after another). `xb` is x' as B words (step 1).
__device__ __forceinline__ void tiledProducts(WeightStream &ws, const plan::TaskRecord &t,
                                              const float *xb, float *partials) {
  constexpr uint32_t kChains = 2;
  // The tiles of a 32 KB stage: the pieces the unrolled batch takes.
  constexpr uint32_t kFullPieceTiles = 64;
  // A tile's B words: 8 bytes for each of its 32 columns' 4 bytes.
  constexpr uint32_t kTileXBytes = plan::kTileCols * 4;
  const uint32_t segments = plan::streamSegmentCount(static_cast<plan::Opcode>(t.opcode));
  const uint32_t lane = laneId(), warp = warpId();
  const bool holdsX = lane < 16;
  // Lane (g, t)'s B words of a tile: column g of its columns 8t .. 8t + 7.
  const uint8_t *xBase = reinterpret_cast<const uint8_t *>(xb) + (lane % 4) * 32 + (lane / 4) * 8;
  // The warp's tiles of a full piece.
  constexpr uint32_t kWarpTiles = kFullPieceTiles / kWarps;
  uint32_t rowBase = 0; // The segment's first row among all segments' rows.
#pragma unroll 1
  for (uint32_t k = 0; k < segments; ++k) {
    const plan::StreamSegment seg = plan::streamSegment(t, k);
    float acc[kChains][4] = {};
    // Octets that are one full piece each (rows of 2,048 columns, the 1B's
    // q+k+v, o and gate+up, in stages of at least 32 KB; smaller stages cut
    // them in pieces): every piece of the segment has the same columns, so the warp
    // keeps its tiles' B words in registers for all of them rather than
    // loading them with each tile (the consumers' compute-only step 7% faster,
    // docs/PERFORMANCE.md, step 16; it paid in the full step once the
    // consumers had 224 registers, step 17).
    const uint32_t octetBytes = plan::octetBytes(seg.rowBytes);
    const bool oneStageOctets =
        octetBytes == kFullPieceTiles * plan::kTileBytes && octetBytes <= ws.stageBytes();
    uint2 xHeld[kWarpTiles];
#pragma unroll
    for (uint32_t j = 0; j < kWarpTiles; ++j)
      xHeld[j] = oneStageOctets && holdsX
                     ? *reinterpret_cast<const uint2 *>(xBase + (warp + j * kWarps) * kTileXBytes)
                     : uint2{0, 0};
    ws.consumeTiled(seg, [&](uint32_t octet, uint32_t first, uint32_t bytes, const uint8_t *data) {
      const uint32_t tiles = bytes / plan::kTileBytes;
      // The piece's first tile in its octet: the B words of its columns.
      const uint8_t *x = xBase + first / plan::kTileBytes * kTileXBytes;
      const uint8_t *w = data + lane * 16;
      if (oneStageOctets) {
        // The warp's 8 tiles, every load issued before the first product,
        // into the chains in the order of the batches below (the same sums).
        TileOperands op[kWarpTiles];
#pragma unroll
        for (uint32_t j = 0; j < kWarpTiles; ++j)
          op[j] = TileOperands{
              *reinterpret_cast<const uint4 *>(w + (warp + j * kWarps) * plan::kTileBytes),
              xHeld[j]};
#pragma unroll
        for (uint32_t j = 0; j < kWarpTiles; ++j)
          op[j].multiply(acc[j % kChains]);
      } else if (tiles == kFullPieceTiles) {
        // A whole stage of tiles (every octet of 2,048 columns, every piece
        // but an octet's last of longer ones): the warp's tiles in batches
        // of kBatch, every load of a batch issued before its first product
        // (batches of 4 ran the same full steps and made the worker spill,
        // docs/PERFORMANCE.md, step 16).
        constexpr uint32_t kBatch = 2;
        static_assert(kFullPieceTiles % (kBatch * kWarps) == 0, "whole batches");
#pragma unroll 1
        for (uint32_t i0 = warp; i0 < kFullPieceTiles; i0 += kBatch * kWarps) {
          TileOperands op[kBatch];
#pragma unroll
          for (uint32_t j = 0; j < kBatch; ++j) {
            const uint32_t i = i0 + j * kWarps;
            op[j].load(w + i * plan::kTileBytes, x + i * kTileXBytes, holdsX);
          }
#pragma unroll
          for (uint32_t j = 0; j < kBatch; ++j)
            op[j].multiply(acc[j % kChains]);
        }
      } else {
        // Two tiles a turn, both loads first.
        uint32_t i = warp;
#pragma unroll 1
        for (; i + kWarps < tiles; i += 2 * kWarps) {
          TileOperands op0, op1;
          op0.load(w + i * plan::kTileBytes, x + i * kTileXBytes, holdsX);
          op1.load(w + (i + kWarps) * plan::kTileBytes, x + (i + kWarps) * kTileXBytes, holdsX);
          op0.multiply(acc[0]);
          op1.multiply(acc[1]);
        }
        if (i < tiles) {
          TileOperands op;
          op.load(w + i * plan::kTileBytes, x + i * kTileXBytes, holdsX);
          op.multiply(acc[0]);
        }
      }
      if (first + bytes < plan::octetBytes(seg.rowBytes))
        return; // The octet goes on in the next piece.
      float c[4];
#pragma unroll
      for (uint32_t e = 0; e < 4; ++e) {
        c[e] = acc[0][e];
#pragma unroll
        for (uint32_t n = 1; n < kChains; ++n)
          c[e] += acc[n][e];
#pragma unroll
        for (uint32_t n = 0; n < kChains; ++n)
          acc[n][e] = 0;
      }
      // Lane 4r: C(r, 0) + C(r, 1); lane 4r + 1: C(r + 8, 2) + C(r + 8, 3).
      const float mine = (lane & 1) ? c[2] + c[3] : c[0] + c[1];
      const float next = __shfl_down_sync(0xffffffffu, mine, 1);
      if (lane % 4 == 0) {
        const uint32_t row = rowBase + octet * plan::kTileRows + lane / 4;
        partials[row * kWarps + warp] = mine + next;
      }
    });
    rowBase += seg.rows;
  }
  blockBarrier();
}

/// Row r's sum over the warps' partials, in warp order.
__device__ __forceinline__ float tiledRow(const float *partials, uint32_t r) {
  const float4 p0 = reinterpret_cast<const float4 *>(partials + r * kWarps)[0];
  const float4 p1 = reinterpret_cast<const float4 *>(partials + r * kWarps)[1];
  static_assert(kWarps == 8, "a row's partials are two float4");
  return ((((((p0.x + p0.y) + p0.z) + p0.w) + p1.x) + p1.y) + p1.z) + p1.w;
}

/// A kFlagTiledWeights Gemv or GateUp (TaskRecord.h), steps 1-3: one body
/// for both (a second inlined copy of the prologue made the worker spill).
/// A GateUp's gate rows are its first segment's, its up rows the second's.
__device__ void runTiledTask(const KernelArgs &a, const plan::TaskRecord &t, const Step &step,
                             WeightStream &ws, const Scratch &s) {
  const uint32_t k = t.aux[0], flags = t.flags;
  const bool gateUp = static_cast<plan::Opcode>(t.opcode) == plan::Opcode::GateUp;
  const uint32_t begin = t.rowBegin, rows = t.rowEnd - t.rowBegin;
  const bool hasResidual = flags & plan::kFlagResidual;
  const F32In residual = in1(a, t, step);
  // Thread r's residual is issued before the input's loads and waited for
  // after the products (rows past kThreads load theirs then).
  const bool hasEarly = hasResidual && threadIdx.x < rows;
  const uint64_t earlyIssued = hasEarly ? residual.issue(begin + threadIdx.x) : 0;
  float *xb = s.floats;
  const DeferredNorm norm = loadScaledInput(a, t, step, ws, k, xb, s);
  float *partials = s.floats + rowPartialsAt(t);
  tiledProducts(ws, t, xb, partials);
  const float rms = norm.factor(s);

  const F32Out y = out0(a, t, step);
  const uint32_t vFirst = (flags & plan::kFlagVCache) ? t.aux[1] : ~0u;
  uint16_t *vCache = (flags & plan::kFlagVCache) ? arenaBf16(a, t.out[1]) : nullptr;
  const plan::KvCacheLayout cache = plan::KvCacheLayout::of(t.geometry, a.maxContext);
  for (uint32_t r = threadIdx.x; r < rows; r += kThreads) {
    float v = tiledRow(partials, r) * rms;
    if (gateUp)
      v = siluTimes(v, tiledRow(partials, rows + r) * rms);
    if (hasResidual)
      v = (r == threadIdx.x ? residual.finish(begin + r, earlyIssued) : residual.load1(begin + r)) +
          v;
    const uint32_t i = begin + r;
    y.store(i, v);
    if (i >= vFirst)
      vCache[cache.at(step.pos, i - vFirst)] = floatToBf16(v);
  }
}
#endif

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_TILEDGEMV_CUH
