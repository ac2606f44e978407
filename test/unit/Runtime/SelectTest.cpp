//===- SelectTest.cpp - The parallel candidate combination ----------------===//
//
// The CUDA worker combines the candidates with 32 lanes (lane l folds slots
// l, l + 32, ... with preferred(), then an xor butterfly); the CPU executor
// scans them with combineCandidates(). Both must choose the same candidate,
// including NaNs (the first by slot wins) and ties (the lowest index wins).
//
//===----------------------------------------------------------------------===//
#include "ti/Runtime/Select.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace ti;

namespace {

/// The worker's combination, lane by lane on the host.
plan::Candidate warpCombine(const std::vector<plan::Candidate> &c) {
  CandidateChoice lanes[32];
  for (uint32_t l = 0; l < 32; ++l) {
    lanes[l] = CandidateChoice{c[0], 0};
    for (uint32_t i = l; i < c.size(); i += 32)
      lanes[l] = i == l ? CandidateChoice{c[i], i} : preferred(lanes[l], CandidateChoice{c[i], i});
  }
  for (uint32_t offset = 16; offset >= 1; offset /= 2) {
    CandidateChoice next[32];
    for (uint32_t l = 0; l < 32; ++l)
      next[l] = preferred(lanes[l], lanes[l ^ offset]);
    std::memcpy(lanes, next, sizeof lanes);
  }
  for (uint32_t l = 1; l < 32; ++l) // Every lane agrees.
    EXPECT_EQ(std::memcmp(&lanes[l].candidate, &lanes[0].candidate, sizeof(plan::Candidate)), 0);
  return lanes[0].candidate;
}

TEST(SelectTest, WarpCombinationChoosesWhatTheScanChooses) {
  std::mt19937 rng(7);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float pool[] = {-inf, -1.0f, -0.0f, 0.0f, 0.5f, 1.0f, 1.0f, 2.0f, inf, nan};
  for (int trial = 0; trial < 20000; ++trial) {
    const uint32_t n = 1 + rng() % 140;
    std::vector<plan::Candidate> c(n);
    for (uint32_t i = 0; i < n; ++i) {
      // Mostly finite values from a small pool, so ties are common; NaN rarely.
      float v = pool[rng() % (trial % 3 == 0 ? 10 : 9)];
      c[i] = plan::Candidate{v, int32_t(rng() % 1000)};
    }
    plan::Candidate scan = combineCandidates(c.data(), n);
    plan::Candidate warp = warpCombine(c);
    ASSERT_EQ(std::memcmp(&scan, &warp, sizeof scan), 0)
        << "trial " << trial << ": scan (" << scan.value << ", " << scan.index << "), warp ("
        << warp.value << ", " << warp.index << ")";
  }
}

TEST(SelectTest, SelectTokenIsSelectCombinedOfTheScan) {
  LaunchArgs args;
  args.promptLen = 1;
  args.maxSteps = 4;
  args.maxNew = 4;
  SelectParams params{100, 1, {999}};
  std::vector<plan::Candidate> c = {{1.0f, 5}, {3.0f, 9}, {3.0f, 7}};
  plan::StepState a{}, b{};
  EXPECT_EQ(selectToken(1, args, params, c.data(), 3, &a), 7);
  EXPECT_EQ(selectCombined(1, args, params, combineCandidates(c.data(), 3), &b), 7);
  EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0);
}

} // namespace
