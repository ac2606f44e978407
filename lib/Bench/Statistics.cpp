//===- Statistics.cpp - Medians and their confidence intervals ------------===//
#include "ti/Bench/Statistics.h"

#include <algorithm>
#include <cmath>

namespace ti::bench {

size_t medianCiLowerRank(size_t n, double confidence) {
  // Add P(B = k) for k = 0, 1, ... while P(B <= k) stays within the tail; the
  // terms are computed in log space (C(n, k) / 2^n underflows long before n
  // is large), and the tiny first terms that underflow to 0 change nothing.
  const double tail = (1 - confidence) / 2;
  const double logHalfN = -double(n) * std::log(2.0);
  double cumulative = 0;
  size_t rank = 0; // P(B < rank) <= tail holds for rank = 0 trivially.
  for (size_t k = 0; k < n; ++k) {
    double logTerm = std::lgamma(double(n) + 1) - std::lgamma(double(k) + 1) -
                     std::lgamma(double(n - k) + 1) + logHalfN;
    cumulative += std::exp(logTerm);
    if (cumulative > tail)
      break;
    rank = k + 1; // P(B < k + 1) = P(B <= k) <= tail.
  }
  return rank;
}

double median(std::vector<double> samples) {
  if (samples.empty())
    return 0;
  std::sort(samples.begin(), samples.end());
  size_t n = samples.size();
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

Summary summarize(std::vector<double> samples) {
  Summary s;
  s.n = samples.size();
  if (samples.empty())
    return s;
  std::sort(samples.begin(), samples.end());
  s.median = median(samples);
  s.min = samples.front();
  s.max = samples.back();
  if (size_t l = medianCiLowerRank(s.n)) {
    s.hasCi = true;
    s.ciLow = samples[l - 1];
    s.ciHigh = samples[s.n - l];
  }
  return s;
}

} // namespace ti::bench
