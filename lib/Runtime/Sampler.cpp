//===- Sampler.cpp - The next token from the logits, on the host ----------===//
#include "ti/Runtime/Sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
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
  if (options.temperature <= 0) {
    int32_t best = 0;
    for (int32_t i = 1; i < vocab; ++i)
      if (likelier(i, best)) best = i;
    return best;
  }
  // 3. Top-k: the candidates in order, as far as needed (the first `sorted`
  // by likelier). Without it every token is a candidate, in id order.
  const bool cuts = (options.topK > 0 && options.topK < vocab) || options.topP < 1 || options.minP > 0;
  if (cuts || order.size() != std::size_t(vocab)) { // (Without cuts nothing reorders it.)
    order.resize(vocab);
    std::iota(order.begin(), order.end(), 0);
  }
  std::size_t sorted = 0;
  auto sortHead = [&](std::size_t head) {
    head = std::min<std::size_t>(head, order.size());
    if (head <= sorted) return;
    std::nth_element(order.begin() + sorted, order.begin() + head - 1, order.end(), likelier);
    std::sort(order.begin() + sorted, order.begin() + head, likelier);
    sorted = head;
  };
  std::size_t kept = order.size();
  if (options.topK > 0 && options.topK < vocab) {
    sortHead(options.topK);
    kept = options.topK;
    order.resize(kept);
  }
  // 4. Softmax at the temperature (unnormalized: the likeliest weighs 1),
  // each candidate's weight computed once, in float (the vocabulary's
  // exponentials are most of a step's sampling; a NaN logit weighs 0).
  int32_t likeliest = order[0];
  if (kept == std::size_t(vocab)) {
    // The largest value first (NaN compares false, so it never wins), then
    // its lowest id: two passes the compiler vectorizes.
    float largest = -std::numeric_limits<float>::infinity();
    for (int32_t t = 0; t < vocab; ++t) largest = work[t] > largest ? work[t] : largest;
    likeliest = int32_t(std::find(work.begin(), work.end(), largest) - work.begin());
    if (likeliest == vocab) // Every logit NaN or -inf: the order's own rule.
      likeliest = *std::min_element(order.begin(), order.end(), likelier);
  } else {
    for (std::size_t i = 1; i < kept; ++i)
      if (likelier(order[i], likeliest)) likeliest = order[i];
  }
  const float top = work[likeliest];
  if (!std::isfinite(top)) return likeliest;
  const float temperature = float(options.temperature);
  weights.resize(vocab);
  double total = 0;
  if (kept == std::size_t(vocab)) {
    for (int32_t t = 0; t < vocab; ++t) { // In id order: the compiler vectorizes it.
      const float w = std::exp((work[t] - top) / temperature);
      weights[t] = std::isnan(w) ? 0.0f : w;
    }
    for (int32_t t = 0; t < vocab; ++t) total += weights[t];
  } else {
    for (std::size_t i = 0; i < kept; ++i) {
      const float w = std::exp((work[order[i]] - top) / temperature);
      weights[order[i]] = std::isnan(w) ? 0.0f : w;
      total += weights[order[i]];
    }
  }
  // 5. Min-p: weights below min_p go (the likeliest weighs 1).
  // 6. Top-p: walk the sorted head, growing it, until the mass reaches top_p.
  double mass = total;
  std::size_t survivors = kept;
  if (options.topP < 1 || options.minP > 0) {
    mass = 0;
    survivors = 0;
    for (std::size_t head = 256; survivors < kept; head *= 2) {
      sortHead(head);
      for (; survivors < sorted; ++survivors) {
        double w = weights[order[survivors]];
        if (w < options.minP) break;
        if (mass >= options.topP * total && survivors > 0) break;
        mass += w;
      }
      bool stopped = survivors < sorted;
      if (stopped || sorted == kept) break;
    }
  }
  // 7. The draw: the survivors from the likeliest where a cut ordered them,
  // else every token in id order (the same distribution either way).
  uint64_t bits = splitMix64(options.seed ^ splitMix64(draws++));
  double u = double(bits >> 11) * 0x1.0p-53 * mass;
  if (!cuts) {
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
