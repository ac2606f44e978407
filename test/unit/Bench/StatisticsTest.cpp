//===- StatisticsTest.cpp - Medians and their confidence intervals --------===//
//
// The interval's ranks against the exact binomial tail computed here by other
// means (integer counts of subsets), the median of odd and even counts, and
// that the interval is made of the right order statistics whatever the input
// order.
//
//===----------------------------------------------------------------------===//
#include "ti/Bench/Statistics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace ti::bench;

namespace {

/// P(Binomial(n, 1/2) <= k) with exact integer binomial coefficients (n <= 60).
double binomialTail(unsigned n, unsigned k) {
  unsigned long long sum = 0, c = 1; // c = C(n, i)
  for (unsigned i = 0; i <= k; ++i) {
    sum += c;
    c = c * (n - i) / (i + 1);
  }
  return double(sum) / double(1ull << n);
}

} // namespace

TEST(Statistics, LowerRanksOfKnownSampleCounts) {
  EXPECT_EQ(medianCiLowerRank(5), 0u); // 2 x 1/32 > 5%: no 95% interval.
  EXPECT_EQ(medianCiLowerRank(6), 1u); // [min, max]: 1 - 2/64 = 96.9%.
  EXPECT_EQ(medianCiLowerRank(10), 2u);
  EXPECT_EQ(medianCiLowerRank(20), 6u);
  EXPECT_EQ(medianCiLowerRank(100), 40u);
  // Large n: about n/2 - 0.98 sqrt(n), from the normal approximation.
  EXPECT_NEAR(double(medianCiLowerRank(10000)), 5000 - 0.98 * 100, 2);
}

TEST(Statistics, LowerRankIsTheLargestWithinTheTail) {
  for (unsigned n = 6; n <= 60; ++n) {
    size_t l = medianCiLowerRank(n);
    ASSERT_GE(l, 1u) << n;
    // P(B < l) within 2.5%; one rank more would not be.
    EXPECT_LE(binomialTail(n, unsigned(l) - 1), 0.025) << n;
    EXPECT_GT(binomialTail(n, unsigned(l)), 0.025) << n;
  }
}

TEST(Statistics, Median) {
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(median({3}), 3);
  EXPECT_EQ(median({5, 1, 3}), 3);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
}

TEST(Statistics, SummaryUsesOrderStatisticsWhateverTheOrder) {
  std::vector<double> samples;
  for (int i = 1; i <= 20; ++i)
    samples.push_back(i * 0.5); // 0.5 .. 10
  std::shuffle(samples.begin(), samples.end(), std::mt19937(7));
  Summary s = summarize(samples);
  EXPECT_EQ(s.n, 20u);
  EXPECT_EQ(s.median, 5.25);
  EXPECT_EQ(s.min, 0.5);
  EXPECT_EQ(s.max, 10);
  ASSERT_TRUE(s.hasCi);
  EXPECT_EQ(s.ciLow, 3.0);  // x(6)
  EXPECT_EQ(s.ciHigh, 7.5); // x(15) = x(20 + 1 - 6)
}

TEST(Statistics, TooFewSamplesHaveNoInterval) {
  Summary s = summarize({1, 2, 3, 4, 5});
  EXPECT_EQ(s.median, 3);
  EXPECT_FALSE(s.hasCi);
  EXPECT_FALSE(summarize({}).hasCi);
}

TEST(Statistics, IntervalCoversTheMedianAtLeastNinetyFivePercent) {
  // Draw from a skewed distribution with a known median and count how often
  // the interval holds it: at least 95% (to sampling error) for every n.
  std::mt19937 rng(1);
  std::exponential_distribution<double> exp1(1.0); // Median ln 2.
  const double trueMedian = std::log(2.0);
  for (size_t n : {6u, 11u, 30u, 101u}) {
    int covered = 0, trials = 4000;
    for (int t = 0; t < trials; ++t) {
      std::vector<double> xs(n);
      for (double &x : xs)
        x = exp1(rng);
      Summary s = summarize(xs);
      covered += s.ciLow <= trueMedian && trueMedian <= s.ciHigh;
    }
    EXPECT_GE(double(covered) / trials, 0.94) << n;
  }
}
