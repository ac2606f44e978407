//===- Statistics.h - Medians and their confidence intervals ----*- C++ -*-===//
//
// Benchmark timings are skewed (a late clock ramp, a preempted host thread
// only ever make a step slower), so a benchmark reports the median, and a
// confidence interval for it that assumes nothing about the distribution:
// the order statistics x(l) and x(n+1-l) of the n sorted samples, with l the
// largest rank for which P(B < l) <= (1 - confidence) / 2, B ~ Binomial(n, 1/2).
// The interval then covers the true median with probability at least
// `confidence`. bench/benchstats.py computes the same for the Python drivers;
// docs/benchmarking.md states the definition for both.
//
//===----------------------------------------------------------------------===//
#ifndef TI_BENCH_STATISTICS_H
#define TI_BENCH_STATISTICS_H

#include <cstddef>
#include <vector>

namespace ti::bench {

/// The 1-based rank l of the interval's lower end for n samples, or 0 when
/// no interval of that confidence exists (n < 6 at 95%).
size_t medianCiLowerRank(size_t n, double confidence = 0.95);

/// The median of `samples` (the mean of the two middle ones for an even
/// count); 0 for none.
double median(std::vector<double> samples);

struct Summary {
  size_t n = 0;
  double median = 0;
  double min = 0, max = 0;
  bool hasCi = false; // n is large enough for a 95% interval.
  double ciLow = 0, ciHigh = 0;
};

/// The median, extremes and 95% interval of `samples` (any order).
Summary summarize(std::vector<double> samples);

} // namespace ti::bench

#endif // TI_BENCH_STATISTICS_H
