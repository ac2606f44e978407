//===- Generate.cpp - Prompt in, tokens out, over launches ----------------===//
//
// 1. Feed all but the last kMaxStepsPerLaunch-sized piece of the prompt in
//    launches that generate nothing (maxNew = 0).
// 2. The launch with the prompt's rest generates; each later launch feeds the
//    last generated token as its one-token prompt, until a stop.
//
//===----------------------------------------------------------------------===//
#include "ti/Runtime/Generate.h"

#include <algorithm>
#include <chrono>

using namespace ti;

const char *ti::stopReason(GenerateResult::Stop stop) {
  switch (stop) {
  case GenerateResult::Stop::EndOfSequence: return "end of sequence";
  case GenerateResult::Stop::Count: return "token count";
  case GenerateResult::Stop::Context: return "context full";
  case GenerateResult::Stop::Error: return "non-finite logits";
  }
  return "?";
}

Status ti::checkPrompt(const std::vector<int32_t> &prompt, const plan::Plan &p) {
  if (prompt.empty())
    return Status::error("the prompt is empty: give at least one token");
  if (prompt.size() > p.model.maxContext)
    return Status::error("the prompt has " + std::to_string(prompt.size()) +
                         " tokens but the plan holds at most " +
                         std::to_string(p.model.maxContext) + " positions");
  for (size_t i = 0; i < prompt.size(); ++i)
    if (prompt[i] < 0 || uint32_t(prompt[i]) >= p.model.vocab)
      return Status::error("prompt token " + std::to_string(i) + " is " +
                           std::to_string(prompt[i]) + ", outside the vocabulary of " +
                           std::to_string(p.model.vocab));
  return Status();
}

StatusOr<GenerateResult> ti::generate(const plan::Plan &p, Executor &executor,
                                      const std::vector<int32_t> &prompt, int32_t maxNew,
                                      const GenerateOptions &options) {
  if (Status s = checkPrompt(prompt, p); !s.ok())
    return s;
  if (options.startPos < 0 || uint64_t(options.startPos) + prompt.size() > p.model.maxContext)
    return Status::error("a prompt of " + std::to_string(prompt.size()) + " tokens from position " +
                         std::to_string(options.startPos) + " does not fit the plan's " +
                         std::to_string(p.model.maxContext) + " positions");
  using Clock = std::chrono::steady_clock;
  const int32_t maxSteps =
      std::clamp<int32_t>(options.stepsPerLaunch, 1, plan::kMaxStepsPerLaunch);
  const int32_t context = p.model.maxContext;
  GenerateResult r;
  int32_t pos = options.startPos;
  size_t fed = 0;

  auto run = [&](const std::vector<int32_t> &piece, int32_t steps, int32_t wanted,
                 double &seconds) -> StatusOr<plan::StepState> {
    LaunchArgs a;
    a.startPos = pos;
    a.promptLen = static_cast<int32_t>(piece.size());
    a.maxSteps = std::min(steps, context - pos);
    a.maxNew = wanted;
    std::copy(piece.begin(), piece.end(), a.prompt);
    auto t0 = Clock::now();
    auto state = executor.launch(a);
    seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    ++r.launches;
    if (state) {
      pos += state->steps;
      if (options.afterLaunch)
        if (Status s = options.afterLaunch(*state); !s.ok())
          return s;
    }
    return state;
  };

  // Prompt-only launches.
  while (prompt.size() - fed > size_t(maxSteps)) {
    std::vector<int32_t> piece(prompt.begin() + fed, prompt.begin() + fed + maxSteps);
    auto state = run(piece, maxSteps, 0, r.promptSeconds);
    if (!state)
      return state.status();
    fed += maxSteps;
  }
  std::vector<int32_t> piece(prompt.begin() + fed, prompt.end());
  if (maxNew <= 0) {
    // Feed the rest of the prompt; nothing to generate.
    auto state = run(piece, static_cast<int32_t>(piece.size()), 0, r.promptSeconds);
    if (!state)
      return state.status();
    r.positions = pos;
    return r;
  }
  for (;;) {
    int32_t want = maxNew - static_cast<int32_t>(r.tokens.size());
    // Steps: the piece, then one per generated token but the last.
    // In 64 bits: want may be near INT32_MAX (tirun -n 2147483646).
    int32_t steps = static_cast<int32_t>(std::min<int64_t>(maxSteps, int64_t(piece.size()) + want - 1));
    auto state = run(piece, std::max(steps, 1), want, r.decodeSeconds);
    if (!state)
      return state.status();
    r.decodeSteps += state->steps;
    r.tokens.insert(r.tokens.end(), state->tokens, state->tokens + state->generated);
    if (state->error) {
      r.stop = GenerateResult::Stop::Error;
      break;
    }
    if (state->done) {
      r.stop = GenerateResult::Stop::EndOfSequence;
      break;
    }
    if (static_cast<int32_t>(r.tokens.size()) >= maxNew) {
      r.stop = GenerateResult::Stop::Count;
      break;
    }
    if (pos >= context || state->generated == 0) {
      r.stop = GenerateResult::Stop::Context;
      break;
    }
    piece = {r.tokens.back()};
  }
  r.positions = pos;
  return r;
}
