//===- Passes.h - Every pass of the compiler, in pipeline order -*- C++ -*-===//
#ifndef TI_PASSES_PASSES_H
#define TI_PASSES_PASSES_H

#include "ti/Passes/Pass.h"

namespace ti {

/// lower-graph: one stage per graph op; matmuls sharing an input are stacked.
std::unique_ptr<Pass> createLowerGraphPass();
/// fuse-norms: every GEMV that consumes an RMSNorm recomputes it itself.
std::unique_ptr<Pass> createFuseNormsPass();
/// fuse-epilogues: RoPE into attention, the V-cache write, SiLU(gate)*up,
/// residual adds and the argmax into the GEMV that feeds them.
std::unique_ptr<Pass> createFuseEpiloguesPass();
/// split-attention: attention -> scores and values stages over C chunks.
std::unique_ptr<Pass> createSplitAttentionPass();
/// fuse-ffn: gate/up + down -> per-worker FFN partials and a fixed-order reduce.
std::unique_ptr<Pass> createFuseFfnPass();
/// balance-rows: cut every stage into tasks that stream equal bytes.
std::unique_ptr<Pass> createBalanceRowsPass();
/// place-barriers: the barrier after each wave, from the real dependencies.
std::unique_ptr<Pass> createPlaceBarriersPass();
/// assign-workers: every task to one worker.
std::unique_ptr<Pass> createAssignWorkersPass();
/// layout: arena offsets of the buffers, packed weights in streaming order.
std::unique_ptr<Pass> createLayoutPass();

/// The names of the default pipeline, in order.
std::vector<std::string> defaultPipeline();
/// A pass by its command-line name, or null.
std::unique_ptr<Pass> createPassByName(llvm::StringRef name);

} // namespace ti

#endif // TI_PASSES_PASSES_H
