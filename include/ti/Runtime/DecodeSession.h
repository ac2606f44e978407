//===- DecodeSession.h - A conversation's tokens over launches ---*- C++ -*-===//
//
// What text generation, chat and a server need on top of launches:
//   - the K/V cache kept between turns: the session remembers which tokens the
//     cache holds, and a turn feeds only what differs from them (the longest
//     common prefix is reused, even when a re-tokenized answer changed);
//   - greedy tokens chosen in the kernel, or sampled on the host (Sampler.h)
//     from each step's logits, one step per launch;
//   - launches sized for a reader: the first generates one token (time to
//     first token), later ones as many as fit in `launchSeconds` at the
//     measured time per step (at most 64); prompts go in 64-step launches;
//   - end tokens beyond the plan's (a chat model's end of turn), and a
//     callback after each launch that may stop the turn (a stop string, a
//     cancelled request).
//
// Not thread-safe; one per executor.
//
//===----------------------------------------------------------------------===//
#ifndef TI_RUNTIME_DECODESESSION_H
#define TI_RUNTIME_DECODESESSION_H

#include "ti/Plan/Plan.h"
#include "ti/Runtime/Executor.h"
#include "ti/Runtime/Sampler.h"

#include <functional>
#include <span>
#include <vector>

namespace ti {

struct SessionOptions {
  SamplingOptions sampling{};
  /// Tokens that end a turn besides the plan's end-of-sequence tokens.
  std::vector<int32_t> endTokens{};
  /// How long a generating launch should take at most, once the time per step
  /// is known: a reader sees text at least this often.
  double launchSeconds = 0.025;
};

struct TurnResult {
  std::vector<int32_t> tokens; // generated, the end token included
  enum class Stop { EndToken, Count, Context, Callback, NonFinite } stop = Stop::Count;
  int32_t reused = 0;          // tokens of the input the cache already held
  int32_t fed = 0;             // tokens of the input fed in this turn
  double firstTokenSeconds = 0; // from the turn's start to its first token
  double seconds = 0;          // the whole turn
  double decodeSeconds = 0;    // launches that generated, after the first token
  int32_t decodeSteps = 0;     // their steps
  int32_t launches = 0;
};

const char *stopName(TurnResult::Stop stop);

class DecodeSession {
public:
  DecodeSession(const plan::Plan &plan, Executor &executor, SessionOptions options);

  /// Continues the conversation whose tokens are `input` (all of them, from
  /// the start): feeds what the cache lacks, then generates up to `maxNew`
  /// tokens. `onTokens` sees each launch's new tokens (the end token
  /// included) and returns false to end the turn there.
  StatusOr<TurnResult> turn(std::span<const int32_t> input, int32_t maxNew,
                            const std::function<bool(std::span<const int32_t>)> &onTokens = {});

  /// The sampling of the turns that follow, its seed's draws from the start
  /// (a server's requests each bring theirs; the cache is kept).
  void setSampling(const SamplingOptions &sampling) {
    options.sampling = sampling;
    sampler = Sampler(sampling);
  }
  /// Forgets the cache's contents (the next turn feeds everything).
  void reset() { cached.clear(); }
  /// The tokens whose K/V the cache holds, in position order.
  const std::vector<int32_t> &cachedTokens() const { return cached; }

private:
  bool isEnd(int32_t token) const;

  const plan::Plan &plan;
  Executor &executor;
  SessionOptions options;
  Sampler sampler;
  std::vector<int32_t> cached;
  double secondsPerStep = 0; // measured on generating launches
};

} // namespace ti

#endif // TI_RUNTIME_DECODESESSION_H
