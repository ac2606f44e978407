//===- AttentionTask.cuh - What an attention task reads and writes -*- CUDA -*-===//
//
// The task's record, read once (Attention.cuh and AttentionStream.cuh run it).
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_OPS_ATTENTIONTASK_CUH
#define TI_LIB_RUNTIME_CUDA_OPS_ATTENTIONTASK_CUH

#include "Common.cuh"

#include "ti/Plan/AttentionLayout.h"

TI_WORKER_NAMESPACE_BEGIN

/// One attention task: its layer's geometry (the task's own), which kv head
/// and chunk, its positions, its workspace (AttentionLayout.h) and every other
/// buffer it touches. The task reads its record here and nowhere else, so the
/// loads are in flight together; reads at each use made a chain of them (0.4
/// µs of the 1B's short-mode task, docs/PERFORMANCE.md).
struct AttentionTask {
  plan::HeadGeometry geo;
  uint32_t g, chunk;
  uint32_t group;   // G: geo.group() without its zero test (the verifier's kv_heads > 0).
  int32_t jb, je;   // The task's positions.
  plan::AttentionWorkspace workspaceLayout;
  // Where the task writes, chosen by the step's mode: in short mode out[0],
  // the heads' outputs; in long mode out[1], the workspace of the chunks'
  // partials and stats (each tagged where its flag says).
  F32Out result;
  F32In qkv;        // in[0]: the stacked q|k|v of the position.
  // Kv head g's rows (position 0) of in[1], in[2] and in[1] again (the K
  // cache, whose row pos chunk 0 writes); a position's row is positionStride
  // elements past the one before (AttentionLayout.h: KvCacheLayout).
  const uint16_t *kCache, *vCache;
  uint16_t *kOut;
  uint32_t positionStride;
  const float *params; // The softmax scale, then the RoPE inverse frequencies.

  __device__ uint32_t lanes() const { return geo.headDim / kVector; } // Per position.
  /// The workspace elements of head h's partials and stats in this chunk.
  __device__ uint64_t partials(uint32_t h) const { return workspaceLayout.partials(chunk, h); }
  __device__ uint64_t stats(uint32_t h) const { return workspaceLayout.stats(chunk, h); }
};

__device__ AttentionTask attentionTask(const KernelArgs &a, const plan::TaskRecord &t,
                                       const Step &step) {
  const plan::HeadGeometry geo = t.geometry;
  const uint32_t chunk = t.aux[1];
  const plan::AttentionPositions positions =
      plan::attentionPositions(chunk, geo.chunks, step.pos, step.longMode);
  const plan::KvCacheLayout cache = plan::KvCacheLayout::of(geo, a.maxContext);
  const uint64_t head = cache.row(0, t.aux[0]);
  return AttentionTask{geo,
                       t.aux[0],
                       chunk,
                       uint32_t(geo.heads) / uint32_t(geo.kvHeads),
                       positions.begin,
                       positions.end,
                       plan::AttentionWorkspace::of(geo),
                       step.longMode ? F32Out(a, t.out[1], t.flags & plan::kFlagTaggedOut1, step.tag)
                                     : out0(a, t, step),
                       in0(a, t, step),
                       arenaBf16(a, t.in[1]) + head,
                       arenaBf16(a, t.in[2]) + head,
                       arenaBf16(a, t.in[1]) + head,
                       cache.positionStride(),
                       a.params + t.param};
}

TI_WORKER_NAMESPACE_END

#endif // TI_LIB_RUNTIME_CUDA_OPS_ATTENTIONTASK_CUH
