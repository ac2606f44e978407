//===- DecodeSession.cpp - A conversation's tokens over launches ----------===//
//
// A turn:
//   1. Reuse the longest common prefix of the input and the cached tokens
//      (keeping at least one input token to feed: its step makes the logits).
//   2. Feed all but the last 64 input tokens in prompt-only launches.
//   3. Generate: a greedy launch feeds the rest of the input (later: the last
//      generated token), p tokens, and wants w tokens: it runs p + w - 1
//      steps, the generated tokens fed back inside it. A sampling launch runs
//      the p steps and draws one token from the last step's logits.
//   4. After each launch: cut at the first end token, tell the callback, and
//      record which tokens the cache now holds (every fed token; the last
//      generated one is not fed until the next launch).
//
//===----------------------------------------------------------------------===//
#include "ti/Runtime/DecodeSession.h"

#include "ti/Runtime/Launch.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace ti {

const char *stopName(TurnResult::Stop stop) {
  switch (stop) {
  case TurnResult::Stop::EndToken: return "end token";
  case TurnResult::Stop::Count: return "token count";
  case TurnResult::Stop::Context: return "context full";
  case TurnResult::Stop::Callback: return "stopped";
  case TurnResult::Stop::NonFinite: return "non-finite logits";
  }
  return "?";
}

DecodeSession::DecodeSession(const plan::Plan &plan, Executor &executor, SessionOptions options)
    : plan(plan), executor(executor), options(options), sampler(options.sampling) {}

bool DecodeSession::isEnd(int32_t token) const {
  return std::find(plan.model.eos.begin(), plan.model.eos.end(), token) != plan.model.eos.end() ||
         std::find(options.endTokens.begin(), options.endTokens.end(), token) != options.endTokens.end();
}

StatusOr<TurnResult> DecodeSession::turn(std::span<const int32_t> input, int32_t maxNew,
                                         const std::function<bool(std::span<const int32_t>)> &onTokens) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const int32_t context = static_cast<int32_t>(plan.model.maxContext);
  if (input.empty()) return Status::error("nothing to feed: the input has no tokens");
  if (maxNew < 0) return Status::error("the count of tokens to generate is negative");
  for (std::size_t i = 0; i < input.size(); ++i)
    if (input[i] < 0 || static_cast<uint32_t>(input[i]) >= plan.model.vocab)
      return Status::error("input token " + std::to_string(i) + " is " + std::to_string(input[i]) +
                           ", outside the vocabulary of " + std::to_string(plan.model.vocab));
  if (input.size() > static_cast<std::size_t>(context))
    return Status::error("the input has " + std::to_string(input.size()) + " tokens but the plan holds at most " +
                         std::to_string(context) + " positions");

  // 1. The common prefix.
  std::size_t common = 0;
  while (common < cached.size() && common + 1 < input.size() && cached[common] == input[common]) ++common;
  cached.resize(common);
  TurnResult r;
  r.reused = static_cast<int32_t>(common);
  r.fed = static_cast<int32_t>(input.size() - common);

  auto launch = [&](std::span<const int32_t> piece, int32_t steps, int32_t wanted) -> StatusOr<plan::StepState> {
    LaunchArgs a;
    a.startPos = static_cast<int32_t>(cached.size());
    a.promptLen = static_cast<int32_t>(piece.size());
    a.maxSteps = steps;
    a.maxNew = wanted;
    std::copy(piece.begin(), piece.end(), a.prompt);
    ++r.launches;
    return executor.launch(a);
  };

  // 2. Prompt-only launches.
  std::vector<int32_t> piece(input.begin() + common, input.end());
  while (piece.size() > static_cast<std::size_t>(plan::kMaxStepsPerLaunch)) {
    std::span<const int32_t> head(piece.data(), plan::kMaxStepsPerLaunch);
    auto state = launch(head, plan::kMaxStepsPerLaunch, 0);
    if (!state) return state.status();
    cached.insert(cached.end(), head.begin(), head.end());
    piece.erase(piece.begin(), piece.begin() + plan::kMaxStepsPerLaunch);
  }
  if (maxNew == 0) {
    auto state = launch(piece, static_cast<int32_t>(piece.size()), 0);
    if (!state) return state.status();
    cached.insert(cached.end(), piece.begin(), piece.end());
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return r;
  }

  // 3. Generation.
  const bool sampling = !options.sampling.greedy();
  std::vector<int32_t> history;
  for (;;) {
    int32_t room = context - static_cast<int32_t>(cached.size());
    if (room < static_cast<int32_t>(piece.size())) {
      r.stop = TurnResult::Stop::Context;
      break;
    }
    int32_t want = 1;
    if (!sampling && !r.tokens.empty() && secondsPerStep > 0)
      want = static_cast<int32_t>(std::clamp(options.launchSeconds / secondsPerStep, 1.0, 64.0));
    want = std::min(want, maxNew - static_cast<int32_t>(r.tokens.size()));
    int32_t p = static_cast<int32_t>(piece.size());
    int32_t steps = sampling ? p : std::min<int32_t>({p + want - 1, plan::kMaxStepsPerLaunch, room});
    steps = std::max(steps, 1);
    auto t0 = Clock::now();
    auto state = launch(piece, steps, sampling ? 1 : want);
    if (!state) return state.status();
    double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    std::vector<int32_t> fresh;
    if (sampling) {
      if (state->error) {
        r.stop = TurnResult::Stop::NonFinite;
        break;
      }
      auto logits = executor.logits();
      if (!logits) return logits.status();
      // The text so far: the cache (which holds the earlier generated tokens
      // but the last) and this launch's piece (that last one, or the input).
      history.assign(cached.begin(), cached.end());
      history.insert(history.end(), piece.begin(), piece.end());
      fresh.push_back(sampler.next(*logits, history));
    } else {
      fresh.assign(state->tokens, state->tokens + state->generated);
    }
    // Every token fed this launch: the piece, then the generated ones fed back.
    int32_t fedSteps = state->steps;
    for (int32_t s = 0; s < fedSteps; ++s)
      cached.push_back(s < p ? piece[s] : fresh[s - p]);
    if (fedSteps > 0) secondsPerStep = seconds / fedSteps;
    if (r.tokens.empty() && !fresh.empty()) {
      r.firstTokenSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    } else if (!fresh.empty()) {
      r.decodeSeconds += seconds;
      r.decodeSteps += fedSteps;
    }
    // 4. End tokens, the callback, the limits.
    std::size_t keep = fresh.size();
    bool ended = false;
    for (std::size_t i = 0; i < fresh.size(); ++i)
      if (isEnd(fresh[i])) {
        keep = i + 1;
        ended = true;
        break;
      }
    fresh.resize(keep);
    r.tokens.insert(r.tokens.end(), fresh.begin(), fresh.end());
    // What the kernel ran past a host-side end token (or a stop the callback
    // asks for) is not part of the conversation: the cache keeps the input
    // and every generated token but the last.
    auto dropOverrun = [&] {
      std::size_t valid = input.size() + r.tokens.size() - 1;
      if (cached.size() > valid) cached.resize(valid);
    };
    if (ended) dropOverrun();
    if (onTokens && !fresh.empty() && !onTokens(fresh)) {
      dropOverrun();
      r.stop = TurnResult::Stop::Callback;
      break;
    }
    if (ended) {
      r.stop = TurnResult::Stop::EndToken;
      break;
    }
    if (!sampling && state->error) {
      r.stop = TurnResult::Stop::NonFinite;
      break;
    }
    if (static_cast<int32_t>(r.tokens.size()) >= maxNew) {
      r.stop = TurnResult::Stop::Count;
      break;
    }
    if (fresh.empty() || static_cast<int32_t>(cached.size()) >= context) {
      r.stop = TurnResult::Stop::Context;
      break;
    }
    piece = {r.tokens.back()};
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

} // namespace ti
