//===- DecodeBench.h - The measurements of tirun bench ----------*- C++ -*-===//
//
// What `tirun bench` measures, on any executor (docs/benchmarking.md):
//  - fillContext: the K/V cache holds positions 0..N-1 of the standard sequence
//    (and perhaps more: a step at position N attends to positions 0..N only,
//    so a cache filled further serves every smaller context as well);
//  - timeSteps: one step at position N (the sequence's token N), logits ready,
//    repeated; each repetition rewrites cache slot N with the values the
//    sequence puts there, so every repetition sees the same N cached positions;
//  - timeGeneration: greedy tokens from the first tokens of the sequence;
//  - generationGaps: the same, with each token's top-2 logit gap, for telling
//    a near-tie from a real disagreement between runtimes.
// Any Executor (ti/Runtime/Executor.h): the same code measures the GPU and
// the CPU backend.
//
//===----------------------------------------------------------------------===//
#ifndef TI_BENCH_DECODEBENCH_H
#define TI_BENCH_DECODEBENCH_H

#include "ti/Plan/Plan.h"
#include "ti/Support/Status.h"
#include "ti/Runtime/Executor.h"
#include "ti/Runtime/Generate.h"

#include <cstdint>
#include <vector>

namespace ti::bench {

/// Token i of the sequence every runtime is measured on: the model's bos (1
/// when it has none) at 0, then 1 + (i * 7919) mod (vocab - 1).
std::vector<int32_t> standardSequence(const plan::ModelInfo &model, size_t length);

/// Tokens of the generation prompt (the sequence's first ones).
constexpr size_t kGenerationPromptTokens = 6;

/// Fills the cache with positions `from`..context-1 of the standard sequence,
/// positions 0..from-1 holding it already (from = 0: from scratch). One line
/// on a context the plan cannot measure (it needs context + 1 <= max context).
Status fillContext(const plan::Plan &plan, Executor &executor, int32_t context,
                   int32_t from = 0);

/// The launch of the measured steps: `steps` (1..kMaxStepsPerLaunch) steps
/// from position `context` on, fed the sequence's tokens there, nothing
/// sampled.
LaunchArgs measuredStep(const plan::Plan &plan, int32_t context, int32_t steps = 1);

/// `repetitions` timed launches of measuredStep(plan, context, steps), in
/// milliseconds per step each (the executor's lastLaunchMilliseconds over
/// `steps`: CUDA events on the GPU, the host clock on the CPU). With one step a
/// launch, a time includes the launch's own start and end; with more, they are
/// shared by its steps, as in a generation that runs several tokens a launch.
/// The cache must hold positions 0..context-1 (fillContext); each repetition
/// rewrites positions context..context+steps-1 with the same values. A step
/// whose logits are not finite is an error unless `finiteLogits` is false
/// (the diagnostic worker modes, WorkerMode.h, whose values are not the
/// model's).
StatusOr<std::vector<double>> timeSteps(const plan::Plan &plan, Executor &executor,
                                        int32_t context, int repetitions, int32_t steps = 1,
                                        bool finiteLogits = true);

struct GenerationRun {
  std::vector<int32_t> tokens;
  double seconds = 0; // Host time, first prompt step to the last token.
};

/// Up to `count` greedy tokens (fewer at an end-of-sequence token) from the
/// generation prompt, the cache refilled from position 0.
StatusOr<GenerationRun> timeGeneration(const plan::Plan &plan, Executor &executor,
                                       int32_t count);

struct GapsRun {
  std::vector<int32_t> tokens;
  std::vector<float> top2Gaps; // The gap of the logits each token was chosen from.
};

/// The same generation, one step per launch, with each token's top-2 gap.
StatusOr<GapsRun> generationGaps(const plan::Plan &plan, Executor &executor,
                                 int32_t count);

/// The largest logit minus the second largest (0 on a tie; 0 for fewer than two).
float top2Gap(const std::vector<float> &logits);

} // namespace ti::bench

#endif // TI_BENCH_DECODEBENCH_H
