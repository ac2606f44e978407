//===- SamplerTest.cpp - Host sampling: each cut, determinism, ranges -----===//
#include "ti/Runtime/Sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

namespace ti {
namespace {

std::vector<float> peaked(int32_t vocab) {
  std::vector<float> logits(vocab);
  for (int32_t i = 0; i < vocab; ++i) logits[i] = -10 - 0.001f * i; // a long, unlikely tail
  logits[7] = 5;
  logits[3] = 4;
  logits[11] = 3;
  return logits;
}

std::map<int32_t, int> draws(SamplingOptions o, const std::vector<float> &logits, int n) {
  Sampler s(o);
  std::map<int32_t, int> counts;
  for (int i = 0; i < n; ++i) ++counts[s.next(logits, {})];
  return counts;
}

TEST(Sampler, TemperatureZeroIsTheLargestLogitLowestIdFirst) {
  Sampler s({});
  std::vector<float> logits = {1, 3, 3, 2};
  EXPECT_EQ(s.next(logits, {}), 1);
}

TEST(Sampler, TopKAndTopPAndMinPCutTheTail) {
  auto logits = peaked(1000);
  SamplingOptions o{.temperature = 1, .topK = 2, .seed = 1};
  auto counts = draws(o, logits, 400);
  EXPECT_EQ(counts.size(), 2u);
  EXPECT_TRUE(counts.count(7) && counts.count(3));
  // p(7) = 1/(1 + e^-1 + e^-2 + a thousand times e^-15) = 0.66: top-p 0.5
  // keeps 7 alone.
  o = {.temperature = 1, .topP = 0.5, .seed = 1};
  EXPECT_EQ(draws(o, logits, 200), (std::map<int32_t, int>{{7, 200}}));
  // min-p 0.3: 7 (1), 3 (e^-1 = 0.37) stay; 11 (e^-2) goes.
  o = {.temperature = 1, .minP = 0.3, .seed = 1};
  auto minp = draws(o, logits, 400);
  EXPECT_EQ(minp.size(), 2u);
  EXPECT_TRUE(minp.count(7) && minp.count(3));
}

TEST(Sampler, TopKKeepsTheLowerIdsAmongEqualLogitsAndNaNsLast) {
  // Top-k 3 of five equal logits: ids 1, 2 and 3 (the lower id first among
  // equals), whatever the order the pass over the vocabulary meets them in.
  std::vector<float> logits = {0, 5, 5, 5, 5, 5};
  auto counts = draws({.temperature = 1, .topK = 3, .seed = 2}, logits, 600);
  EXPECT_EQ(counts.size(), 3u);
  for (int32_t t : {1, 2, 3}) EXPECT_GT(counts[t], 100) << t;
  // NaN is the least likely: it is kept only when fewer tokens are numbers.
  std::vector<float> withNaN = {NAN, 1, NAN, 2};
  counts = draws({.temperature = 1, .topK = 2, .seed = 2}, withNaN, 200);
  EXPECT_EQ(counts.size(), 2u);
  EXPECT_GT(counts[1], 0);
  EXPECT_GT(counts[3], 0);
}

TEST(Sampler, DrawsFollowTheDistribution) {
  std::vector<float> logits = {0, std::log(3.0f)}; // 1:3
  auto counts = draws({.temperature = 1, .seed = 9}, logits, 4000);
  EXPECT_NEAR(counts[1] / 4000.0, 0.75, 0.03);
}

// Without a cut every token is drawn in id order from weights computed once:
// a NaN or -inf logit weighs nothing, the rest follow the distribution, and
// a long flat tail (2,000 tokens at e^-2 each) keeps its share.
TEST(Sampler, WithoutACutEveryTokenKeepsItsShare) {
  std::vector<float> logits = {std::nanf(""), -INFINITY, 0, std::log(3.0f)};
  auto counts = draws({.temperature = 1, .seed = 5}, logits, 4000);
  EXPECT_EQ(counts.count(0) + counts.count(1), 0u);
  EXPECT_NEAR(counts[3] / 4000.0, 0.75, 0.03);
  std::vector<float> tail(2001, -2.0f);
  tail[1000] = 0; // Weighs 1 against the tail's 2,000 e^-2 = 270.7.
  auto spread = draws({.temperature = 1, .seed = 6}, tail, 4000);
  EXPECT_NEAR(spread[1000] / 4000.0, 1 / 271.7, 0.004);
  EXPECT_GT(spread.size(), 1000u);
  // Every logit NaN: the lowest id, as greedy would say.
  EXPECT_EQ(Sampler({.temperature = 1}).next(std::vector<float>(3, std::nanf("")), {}), 0);
}

// Top-p and min-p without top-k find their survivors from a histogram of
// the weights, not a sort: the tokens drawn must be exactly those a walk over
// the sorted vocabulary keeps (the reference below), ties at the edge
// included (the lower id first), for flat and peaked steps.
std::set<int32_t> walkSurvivors(const std::vector<float> &logits, double temperature, double topP,
                                double minP) {
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
  });
  const float top = logits[order[0]];
  auto weight = [&](int32_t t) { return double(std::exp((logits[t] - top) / float(temperature))); };
  double total = 0;
  for (int32_t t : order) total += weight(t);
  std::set<int32_t> kept;
  double mass = 0;
  for (int32_t t : order) {
    if (weight(t) < minP || (mass >= topP * total && !kept.empty())) break;
    mass += weight(t);
    kept.insert(t);
  }
  return kept;
}

TEST(Sampler, TopPAndMinPWithoutTopKKeepWhatTheSortedWalkKeeps) {
  std::mt19937 random(11);
  struct Case {
    double spread, topP, minP;
  };
  for (const Case &c : {Case{1, 0.5, 0}, Case{0.2, 0.9, 0}, Case{3, 0.95, 0}, Case{1, 1, 0.3},
                        Case{1, 0.7, 0.2}, Case{0, 0.5, 0}}) {
    SCOPED_TRACE("spread " + std::to_string(c.spread) + ", top-p " + std::to_string(c.topP) +
                 ", min-p " + std::to_string(c.minP));
    std::normal_distribution<float> normal(0, float(c.spread));
    std::vector<float> logits(48);
    for (float &x : logits) x = std::round(normal(random) * 4) / 4; // Ties, on purpose.
    const std::set<int32_t> want = walkSurvivors(logits, 1, c.topP, c.minP);
    std::set<int32_t> drawn;
    for (const auto &[t, n] : draws({.temperature = 1, .topP = c.topP, .minP = c.minP, .seed = 4}, logits, 20000))
      drawn.insert(t);
    EXPECT_EQ(drawn, want);
  }
}

TEST(Sampler, TheSameSeedGivesTheSameTokens) {
  auto logits = peaked(5000);
  SamplingOptions o{.temperature = 2, .topP = 0.99, .seed = 42};
  Sampler a(o), b(o), c({.temperature = 2, .topP = 0.99, .seed = 43});
  std::vector<int32_t> x, y, z;
  for (int i = 0; i < 100; ++i) {
    x.push_back(a.next(logits, {}));
    y.push_back(b.next(logits, {}));
    z.push_back(c.next(logits, {}));
  }
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
}

TEST(Sampler, TheRepeatPenaltyLowersWhatWasSaid) {
  std::vector<float> logits = {2, 1.9f, -1};
  Sampler s({.repeatPenalty = 1.2});
  std::vector<int32_t> history = {0};
  EXPECT_EQ(s.next(logits, history), 1); // 2 / 1.2 < 1.9
  history = {2};
  EXPECT_EQ(s.next(logits, history), 0);
}

TEST(Sampler, OptionsOutOfRangeAreNamed) {
  EXPECT_EQ(SamplingOptions{.temperature = -1}.check().message(), "--temperature -1 is outside 0 to 100");
  EXPECT_EQ(SamplingOptions{.topK = -2}.check().message(), "--top-k -2 is negative");
  EXPECT_EQ(SamplingOptions{.topP = 0}.check().message(), "--top-p 0 is outside (0, 1]");
  EXPECT_EQ(SamplingOptions{.minP = 1}.check().message(), "--min-p 1 is outside [0, 1)");
  EXPECT_EQ(SamplingOptions{.repeatPenalty = 0}.check().message(), "--repeat-penalty 0 is outside (0, 10]");
  EXPECT_EQ(SamplingOptions{.temperature = NAN}.check().message(), "--temperature nan is outside 0 to 100");
  EXPECT_TRUE(SamplingOptions{}.check().ok());
}

} // namespace
} // namespace ti
