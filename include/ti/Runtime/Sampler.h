//===- Sampler.h - The next token from the logits, on the host ---*- C++ -*-===//
//
// Greedy decoding picks the token inside the kernel. Sampling happens here, on
// the host, from the step's logits, in this order (llama.cpp's):
//   1. repeat penalty over the last `repeatWindow` tokens of the history
//      (a positive logit divided by it, a negative one multiplied);
//   2. temperature 0: the largest logit (the lowest id among equals), done;
//   3. top-k: the k largest logits stay;
//   4. softmax at the temperature;
//   5. min-p: tokens below min_p times the likeliest one go;
//   6. top-p: the likeliest tokens whose probabilities first reach top_p stay;
//   7. one draw, u in [0, 1) from SplitMix64 of (seed, draw number), walking
//      top-k's survivors from the likeliest (the lower id first among
//      equals), or, without top-k, the survivors in id order: the same
//      distribution, without ordering the vocabulary.
// Deterministic: the token is a function of the logits, the history, the seed
// and how many draws came before, so the same logits give the same text on
// either backend. Nothing orders the whole vocabulary: top-k takes a partial
// sort of its k, top-p without it a histogram of the weights (only the bucket
// where the mass reaches top_p is sorted), and each weight's exponential is
// computed once, in float. A step costs a few passes over the logits
// (`ti-sampler-time`, docs/PERFORMANCE.md "Serving").
//
// Not thread-safe (it counts its draws); one per generation.
//
//===----------------------------------------------------------------------===//
#ifndef TI_RUNTIME_SAMPLER_H
#define TI_RUNTIME_SAMPLER_H

#include "ti/Support/Status.h"

#include <cstdint>
#include <span>
#include <vector>

namespace ti {

struct SamplingOptions {
  double temperature = 0; // 0: greedy
  int32_t topK = 0;       // 0: all
  double topP = 1;        // 1: all
  double minP = 0;        // 0: all
  double repeatPenalty = 1;
  int32_t repeatWindow = 64;
  uint64_t seed = 0;

  bool greedy() const { return temperature <= 0 && repeatPenalty == 1; }
  /// One line naming the first option out of range, or OK.
  Status check() const;
};

class Sampler {
public:
  explicit Sampler(SamplingOptions options) : options(options) {}
  /// The next token. `logits` must be finite where it matters; `history` is the
  /// text so far (prompt and generated), for the repeat penalty.
  int32_t next(std::span<const float> logits, std::span<const int32_t> history);

private:
  SamplingOptions options;
  uint64_t draws = 0;
  std::vector<float> work;
  std::vector<float> weights; // By token id: the softmax's unnormalized weights.
  std::vector<int32_t> order;
  std::vector<double> bucketMass; // Top-p without top-k (Sampler.cpp: cutTail).
  std::vector<int32_t> members;
};

} // namespace ti

#endif // TI_RUNTIME_SAMPLER_H
