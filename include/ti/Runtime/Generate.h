//===- Generate.h - Prompt in, tokens out, over launches --------*- C++ -*-===//
//
// The host side of decoding: feeds a prompt of any length through launches of
// at most kMaxStepsPerLaunch steps (teacher forcing), then generates greedily
// until an end-of-sequence token, the requested count, or the plan's context
// is reached. Works with either executor (Executor.h).
//
//===----------------------------------------------------------------------===//
#ifndef TI_RUNTIME_GENERATE_H
#define TI_RUNTIME_GENERATE_H

#include "ti/Plan/Plan.h"
#include "ti/Runtime/Executor.h"
#include "ti/Support/Status.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ti {

struct GenerateResult {
  std::vector<int32_t> tokens;
  enum class Stop { EndOfSequence, Count, Context, Error } stop = Stop::Count;
  int32_t positions = 0;      // Positions filled (prompt + generated - 1).
  double promptSeconds = 0;   // Launches that fed only the prompt.
  double decodeSeconds = 0;   // Launches that generated.
  int32_t decodeSteps = 0;    // Forward steps those launches ran.
  int32_t launches = 0;
};

/// Checks a prompt against a plan: non-empty, ids in the vocabulary, shorter
/// than the context. One line.
Status checkPrompt(const std::vector<int32_t> &prompt, const plan::Plan &plan);

/// Optional knobs of generate(): launches of at most `stepsPerLaunch` steps
/// (1 runs one step per launch, so that `afterLaunch` sees every step's
/// logits), a callback after each launch, and the position the prompt starts
/// at (the cache already holds positions 0..startPos-1, which the prompt
/// continues).
struct GenerateOptions {
  int32_t stepsPerLaunch = plan::kMaxStepsPerLaunch;
  std::function<Status(const plan::StepState &)> afterLaunch;
  int32_t startPos = 0;
};

StatusOr<GenerateResult> generate(const plan::Plan &plan, Executor &executor,
                                  const std::vector<int32_t> &prompt, int32_t maxNew,
                                  const GenerateOptions &options = {});

const char *stopReason(GenerateResult::Stop stop);

} // namespace ti

#endif // TI_RUNTIME_GENERATE_H
