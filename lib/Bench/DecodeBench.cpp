//===- DecodeBench.cpp - The measurements of tirun bench ------------------===//
#include "ti/Bench/DecodeBench.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <string>

namespace ti::bench {

std::vector<int32_t> standardSequence(const plan::ModelInfo &model, size_t length) {
  std::vector<int32_t> tokens(length);
  const uint64_t span = model.vocab > 1 ? model.vocab - 1 : 1;
  for (size_t i = 0; i < length; ++i)
    tokens[i] = i == 0 ? (model.bos >= 0 ? model.bos : 1) : int32_t(1 + (i * 7919) % span);
  return tokens;
}

Status fillContext(const plan::Plan &plan, Executor &executor, int32_t context,
                   int32_t from) {
  if (context < 0 || uint64_t(context) + 1 > plan.model.maxContext)
    return Status::error("context " + std::to_string(context) + " cannot be measured: the plan " +
                         "holds " + std::to_string(plan.model.maxContext) +
                         " positions, and the measured step needs one more than the context");
  from = std::max(from, 0);
  if (from >= context)
    return Status();
  // Teacher forcing of the standard sequence's positions from..context-1.
  const std::vector<int32_t> tokens = standardSequence(plan.model, size_t(context));
  GenerateOptions options;
  options.startPos = from;
  auto filled = generate(plan, executor,
                         std::vector<int32_t>(tokens.begin() + from, tokens.end()), 0, options);
  if (!filled)
    return filled.status();
  if (filled->positions != context)
    return Status::error("filling the cache reached position " +
                         std::to_string(filled->positions) + " of " + std::to_string(context));
  return Status();
}

LaunchArgs measuredStep(const plan::Plan &plan, int32_t context, int32_t steps) {
  LaunchArgs step;
  step.startPos = context;
  step.promptLen = steps;
  step.maxSteps = steps;
  step.maxNew = 0; // Logits ready; nothing sampled.
  const std::vector<int32_t> tokens = standardSequence(plan.model, size_t(context) + steps);
  std::copy(tokens.begin() + context, tokens.end(), step.prompt);
  return step;
}

StatusOr<std::vector<double>> timeSteps(const plan::Plan &plan, Executor &executor,
                                        int32_t context, int repetitions, int32_t steps,
                                        bool finiteLogits) {
  if (steps < 1 || uint32_t(steps) > plan::kMaxStepsPerLaunch)
    return Status::error("steps per launch must be 1 to " +
                         std::to_string(plan::kMaxStepsPerLaunch) + ", not " +
                         std::to_string(steps));
  if (context < 0 || uint64_t(context) + uint64_t(steps) > plan.model.maxContext)
    return Status::error("context " + std::to_string(context) + " with " + std::to_string(steps) +
                         " steps a launch cannot be measured: the plan holds " +
                         std::to_string(plan.model.maxContext) + " positions");
  const LaunchArgs step = measuredStep(plan, context, steps);
  std::vector<double> ms;
  for (int r = 0; r < repetitions; ++r) {
    auto state = executor.launch(step);
    if (!state)
      return state.status();
    if (state->error && finiteLogits)
      return Status::error("the step produced non-finite logits");
    if (state->steps != steps)
      return Status::error("the launch ran " + std::to_string(state->steps) + " of " +
                           std::to_string(steps) + " steps");
    auto t = executor.lastLaunchMilliseconds();
    if (!t)
      return t.status();
    ms.push_back(*t / steps);
  }
  return ms;
}

namespace {

std::vector<int32_t> generationPrompt(const plan::Plan &plan) {
  return standardSequence(plan.model,
                          std::min<size_t>(kGenerationPromptTokens, plan.model.maxContext));
}

} // namespace

StatusOr<GenerationRun> timeGeneration(const plan::Plan &plan, Executor &executor,
                                       int32_t count) {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  auto result = generate(plan, executor, generationPrompt(plan), count);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!result)
    return result.status();
  if (result->stop == GenerateResult::Stop::Error)
    return Status::error("the generation met non-finite logits");
  return GenerationRun{result->tokens, seconds};
}

StatusOr<GapsRun> generationGaps(const plan::Plan &plan, Executor &executor,
                                 int32_t count) {
  const std::vector<int32_t> prompt = generationPrompt(plan);
  GapsRun run;
  GenerateOptions options;
  options.stepsPerLaunch = 1;
  // One step per launch: after the launch that ran position p, the logits are
  // p's, and from position promptLen - 1 on each picked the next token.
  options.afterLaunch = [&, position = int32_t(0)](const plan::StepState &state) mutable
      -> Status {
    position += state.steps;
    if (state.steps == 0 || position - 1 < int32_t(prompt.size()) - 1)
      return Status();
    auto logits = executor.logits();
    if (!logits)
      return logits.status();
    run.top2Gaps.push_back(top2Gap(*logits));
    return Status();
  };
  auto result = generate(plan, executor, prompt, count, options);
  if (!result)
    return result.status();
  if (result->stop == GenerateResult::Stop::Error)
    return Status::error("the generation met non-finite logits");
  run.tokens = result->tokens;
  // Every launch from the prompt's last position on picked one token.
  if (run.top2Gaps.size() != run.tokens.size())
    return Status::error("the gaps run saw " + std::to_string(run.top2Gaps.size()) +
                         " sets of logits for " + std::to_string(run.tokens.size()) + " tokens");
  return run;
}

float top2Gap(const std::vector<float> &logits) {
  float first = -std::numeric_limits<float>::infinity(), second = first;
  for (float x : logits) {
    if (x > first) {
      second = first;
      first = x;
    } else if (x > second) {
      second = x;
    }
  }
  return logits.size() < 2 ? 0 : first - second;
}

} // namespace ti::bench
