//===- Launch.cpp - One launch of the token loop --------------------------===//
#include "ti/Runtime/Launch.h"

#include "ti/Plan/Plan.h"

using namespace ti;

Status ti::checkLaunchArgs(const LaunchArgs &a, const plan::Plan &p) {
  if (a.promptLen < 1 || a.promptLen > int32_t(plan::kMaxStepsPerLaunch))
    return Status::error("a launch needs 1 to " + std::to_string(plan::kMaxStepsPerLaunch) +
                         " prompt tokens, not " + std::to_string(a.promptLen));
  if (a.maxSteps < 1 || a.maxSteps > int32_t(plan::kMaxStepsPerLaunch))
    return Status::error("a launch runs 1 to " + std::to_string(plan::kMaxStepsPerLaunch) +
                         " steps, not " + std::to_string(a.maxSteps));
  if (a.maxNew < 0)
    return Status::error("maxNew must not be negative");
  if (a.startPos < 0 || uint32_t(a.startPos) >= p.model.maxContext)
    return Status::error("position " + std::to_string(a.startPos) +
                         " is outside the plan's context of " +
                         std::to_string(p.model.maxContext) + " positions");
  for (int32_t i = 0; i < a.promptLen; ++i)
    if (a.prompt[i] < 0 || uint32_t(a.prompt[i]) >= p.model.vocab)
      return Status::error("token " + std::to_string(a.prompt[i]) +
                           " is outside the vocabulary of " + std::to_string(p.model.vocab));
  return Status();
}
