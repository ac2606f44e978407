//===- Sampler.cpp - The next token from the logits, on the host ----------===//
#include "ti/Runtime/Sampler.h"
#include "ti/Support/ExpNonPositive.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_set>

namespace ti {

namespace {

uint64_t splitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// The likelier's first: the largest logit, the lowest id among equals, NaN
/// last (id 0 if every one is NaN). Two passes the compiler vectorizes (the
/// largest value, NaN comparing false so it never wins; then its first id),
/// where a comparison function called for every token cost four times more.
int32_t likeliestOf(std::span<const float> logits) {
  float largest = -std::numeric_limits<float>::infinity();
  for (float x : logits) largest = x > largest ? x : largest;
  const auto at = std::find(logits.begin(), logits.end(), largest);
  return at == logits.end() ? 0 : static_cast<int32_t>(at - logits.begin());
}

/// The sum of `w` in double: 8 running sums (every 8th value each, the tail's
/// by its index mod 8), added pairwise at the end, an order the compiler
/// vectorizes; one running sum is a chain of 128,256 dependent additions for
/// Llama 3's vocabulary, a fifth of a draw at a temperature alone.
double sumOf(std::span<const float> w) {
  double lanes[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= w.size(); i += 8)
    for (std::size_t j = 0; j < 8; ++j) lanes[j] += w[i + j];
  for (; i < w.size(); ++i) lanes[i % 8] += w[i];
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
         ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

/// Min-p and top-p over the whole vocabulary (no top-k): zeroes the weight
/// of every token the cuts remove and returns the survivors' mass. They are
/// the tokens the walk from the likeliest (the larger logit first, the lower
/// id among equals) keeps while its mass is below top_p of `total`, and none
/// below min_p. Without ordering the vocabulary: a weight's bucket is its
/// float's top 16 bits (monotonic in the weight, 128 a power of two), every
/// bucket above the one where the mass reaches top_p stays whole, and only
/// that bucket's members are sorted. A flat step over 128,256 tokens at top_p
/// 0.95 took 42-46 ms when the walk sorted a growing head of the vocabulary.
double cutTail(std::vector<float> &weights, std::span<const float> logits, double total, double topP,
               double minP, std::vector<double> &bucketMass, std::vector<int32_t> &members) {
  constexpr uint32_t kBuckets = (std::bit_cast<uint32_t>(1.0f) >> 16) + 1;
  auto bucketOf = [](float w) { return std::bit_cast<uint32_t>(w) >> 16; };
  bucketMass.assign(kBuckets, 0.0);
  for (float &w : weights) {
    if (w < minP) // The likeliest weighs 1 and min_p < 1: it stays.
      w = 0;
    else if (w > 0)
      bucketMass[bucketOf(w)] += w;
  }
  const double want = topP * total;
  double above = 0;
  uint32_t edge = kBuckets; // None: top_p cuts nothing.
  if (topP < 1)
    for (uint32_t b = kBuckets; b-- > 0;) {
      if (above + bucketMass[b] >= want) {
        edge = b;
        break;
      }
      above += bucketMass[b];
    }
  if (edge == kBuckets)
    return sumOf(weights);
  members.clear();
  for (std::size_t t = 0; t < weights.size(); ++t) {
    if (weights[t] <= 0) continue;
    const uint32_t b = bucketOf(weights[t]);
    if (b < edge)
      weights[t] = 0;
    else if (b == edge)
      members.push_back(static_cast<int32_t>(t));
  }
  std::sort(members.begin(), members.end(), [&](int32_t a, int32_t b) {
    return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
  });
  // The walk goes on in the edge bucket: a token joins while the mass is
  // below top_p's, and the likeliest always.
  double mass = above;
  std::size_t joined = 0;
  for (; joined < members.size() && (mass < want || (above == 0 && joined == 0)); ++joined)
    mass += weights[members[joined]];
  for (std::size_t i = joined; i < members.size(); ++i) weights[members[i]] = 0;
  return mass;
}

} // namespace

Status SamplingOptions::check() const {
  if (!(temperature >= 0 && temperature <= 100))
    return Status::error("--temperature " + number(temperature) + " is outside 0 to 100");
  if (topK < 0) return Status::error("--top-k " + std::to_string(topK) + " is negative");
  if (!(topP > 0 && topP <= 1)) return Status::error("--top-p " + number(topP) + " is outside (0, 1]");
  if (!(minP >= 0 && minP < 1)) return Status::error("--min-p " + number(minP) + " is outside [0, 1)");
  if (!(repeatPenalty > 0 && repeatPenalty <= 10))
    return Status::error("--repeat-penalty " + number(repeatPenalty) + " is outside (0, 10]");
  if (repeatWindow < 0) return Status::error("the repeat window is negative");
  return {};
}

int32_t Sampler::next(std::span<const float> logits, std::span<const int32_t> history) {
  const int32_t vocab = static_cast<int32_t>(logits.size());
  work.assign(logits.begin(), logits.end());
  // 1. The repeat penalty, once per distinct token of the window.
  if (options.repeatPenalty != 1) {
    std::unordered_set<int32_t> seen;
    std::size_t from = history.size() > static_cast<std::size_t>(options.repeatWindow)
                           ? history.size() - options.repeatWindow
                           : 0;
    for (std::size_t i = from; i < history.size(); ++i) {
      int32_t t = history[i];
      if (t < 0 || t >= vocab || !seen.insert(t).second) continue;
      work[t] = work[t] > 0 ? float(work[t] / options.repeatPenalty) : float(work[t] * options.repeatPenalty);
    }
  }
  // The likelier first; the lower id first among equals. NaN sorts last.
  auto likelier = [&](int32_t a, int32_t b) {
    float x = work[a], y = work[b];
    if (std::isnan(x) != std::isnan(y)) return std::isnan(y);
    return x != y && !std::isnan(x) ? x > y : a < b;
  };
  // 2. Greedy.
  if (options.temperature <= 0)
    return likeliestOf(work);
  // 3. Top-k: the k likeliest, sorted in `order`, are the candidates.
  // Without it every token is, by id.
  const bool topK = options.topK > 0 && options.topK < vocab;
  const std::size_t kept = topK ? std::size_t(options.topK) : std::size_t(vocab);
  if (topK) {
    // One pass in id order over a heap of the k likeliest so far, whose top
    // is the least likely of them: a token joins only if likelier than it
    // (an equal one, with a higher id, is not), so the k are those of the
    // order above. Most tokens are below the top's value, and one compare
    // sends them past: 0.1 ms for Llama 3's vocabulary and k = 40, where an
    // nth_element over every id took 0.9 (docs/PERFORMANCE.md, "Serving").
    order.clear();
    for (int32_t t = 0; t < vocab; ++t) {
      if (order.size() < kept) {
        order.push_back(t);
        std::push_heap(order.begin(), order.end(), likelier);
        continue;
      }
      if (!(work[t] >= work[order.front()]) && !std::isnan(work[order.front()]))
        continue; // Less likely than the k's least (or NaN): not among them.
      if (!likelier(t, order.front()))
        continue;
      std::pop_heap(order.begin(), order.end(), likelier);
      order.back() = t;
      std::push_heap(order.begin(), order.end(), likelier);
    }
    std::sort(order.begin(), order.end(), likelier);
  }
  // 4. Softmax at the temperature (unnormalized: the likeliest weighs 1),
  // each candidate's weight computed once, in float, by an exponential the
  // compiler vectorizes (the vocabulary's exponentials are most of a step's
  // sampling; a NaN logit weighs 0).
  const int32_t likeliest = topK ? order[0] : likeliestOf(work);
  const float top = work[likeliest];
  if (!std::isfinite(top)) return likeliest;
  const float temperature = float(options.temperature);
  weights.resize(vocab);
  double total = 0;
  if (!topK) {
    for (int32_t t = 0; t < vocab; ++t) // In id order: the compiler vectorizes it.
      weights[t] = expNonPositive((work[t] - top) / temperature);
    total = sumOf(weights);
  } else {
    for (std::size_t i = 0; i < kept; ++i) {
      weights[order[i]] = expNonPositive((work[order[i]] - top) / temperature);
      total += weights[order[i]];
    }
  }
  // 5. Min-p: weights below min_p go (the likeliest weighs 1).
  // 6. Top-p: the likeliest tokens until their mass reaches top_p of it all.
  double mass = total;
  std::size_t survivors = kept;
  if (options.topP < 1 || options.minP > 0) {
    if (!topK) {
      mass = cutTail(weights, work, total, options.topP, options.minP, bucketMass, members);
    } else { // Top-k sorted its k: walk them.
      mass = 0;
      survivors = 0;
      for (; survivors < kept; ++survivors) {
        double w = weights[order[survivors]];
        if (w < options.minP) break;
        if (mass >= options.topP * total && survivors > 0) break;
        mass += w;
      }
    }
  }
  // 7. The draw: top-k's survivors from the likeliest, else every token left
  // with a weight in id order (the same distribution either way).
  uint64_t bits = splitMix64(options.seed ^ splitMix64(draws++));
  double u = double(bits >> 11) * 0x1.0p-53 * mass;
  if (!topK) {
    int32_t last = likeliest;
    for (int32_t t = 0; t < vocab; ++t) {
      if (weights[t] <= 0) continue;
      u -= weights[t];
      last = t;
      if (u < 0) return t;
    }
    return last;
  }
  for (std::size_t i = 0; i < survivors; ++i) {
    u -= weights[order[i]];
    if (u < 0) return order[i];
  }
  return order[survivors - 1];
}

} // namespace ti
