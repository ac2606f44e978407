//===- ExpNonPositiveTest.cpp - The sampler's exponential against std::exp -===//
#include "ti/Support/ExpNonPositive.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ti {
namespace {

TEST(ExpNonPositive, WithinTwoUlpOfExpOnItsRange) {
  // Every 2^-14 of [-87, 0], and the points near each end.
  double worst = 0;
  float worstAt = 0;
  for (int32_t i = 0; i <= 87 * 16384; ++i) {
    const float x = -float(i) / 16384.0f;
    const double want = std::exp(double(x));
    const double error = std::fabs(double(expNonPositive(x)) - want) / want;
    if (error > worst)
      worst = error, worstAt = x;
  }
  // 2 ulp of a float's 24 bits: 2^-22 of the value.
  EXPECT_LE(worst, 0x1.0p-22) << "at " << worstAt;
  EXPECT_EQ(expNonPositive(0.0f), 1.0f);
  EXPECT_EQ(expNonPositive(-0.0f), 1.0f);
}

TEST(ExpNonPositive, ZeroBelowItsRangeAndForNaN) {
  EXPECT_EQ(expNonPositive(-87.5f), 0.0f);
  EXPECT_EQ(expNonPositive(-1e30f), 0.0f);
  EXPECT_EQ(expNonPositive(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(expNonPositive(std::numeric_limits<float>::quiet_NaN()), 0.0f);
  EXPECT_EQ(expNonPositive(-std::numeric_limits<float>::quiet_NaN()), 0.0f);
  EXPECT_GT(expNonPositive(-87.0f), 0.0f);
}

} // namespace
} // namespace ti
