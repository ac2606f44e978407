//===- Launch.h - One launch of the token loop ------------------*- C++ -*-===//
//
// Both executors run the same loop: one launch decodes up to
// kMaxStepsPerLaunch steps (one kernel launch on the GPU), each step a pass over
// the plan's waves at position startPos + s. The host only fills LaunchArgs and
// reads back the StepState.
//
// Step s of a launch (0-based) begins with SelectToken on every worker
// (selectToken() in Select.h):
//   1. If s > 0, combine step s-1's lm_head candidates into `best`; a NaN
//      candidate sets StepState::error and stops the launch.
//   2. If maxNew > 0 and step s-1 fed the last prompt token or a generated
//      one (s - 1 >= promptLen - 1), `best` is a generated token: append it to
//      StepState::tokens; stop after an end-of-sequence token or once
//      maxNew tokens are generated.
//   3. Stop if s == maxSteps or position startPos + s == the plan's max context.
//   4. Otherwise the step's token is prompt[s] while s < promptLen (teacher
//      forcing), else `best`; run the step's waves.
// A launch thus runs at most maxSteps forward steps and maxSteps + 1 selects.
// To generate past one launch, the next launch starts at startPos + steps with
// the last generated token as its one-token prompt.
//
//===----------------------------------------------------------------------===//
#ifndef TI_RUNTIME_LAUNCH_H
#define TI_RUNTIME_LAUNCH_H

#include "ti/Plan/TaskRecord.h"
#include "ti/Support/Status.h"

#include <cstdint>

namespace ti {

namespace plan {
struct Plan;
}

struct LaunchArgs {
  int32_t startPos = 0;  // Position of step 0.
  int32_t promptLen = 0; // Tokens of `prompt` fed first; at least 1.
  int32_t maxSteps = 1;  // Forward steps at most, 1..kMaxStepsPerLaunch.
  int32_t maxNew = 0;    // Tokens to generate at most; 0: feed the prompt only.
  int32_t prompt[plan::kMaxStepsPerLaunch] = {};
};

/// Checks launch arguments against a plan, as both executors do before they
/// launch: one line on the first problem.
Status checkLaunchArgs(const LaunchArgs &args, const plan::Plan &plan);

} // namespace ti

#endif // TI_RUNTIME_LAUNCH_H
