//===- AttentionLayoutTest.cpp - Where the K/V caches keep a row ----------===//
//
// The cache layout every executor indexes through (AttentionLayout.h): a kv
// head's rows position after position, the heads one after another.
//
//===----------------------------------------------------------------------===//
#include "ti/Plan/AttentionLayout.h"

#include <gtest/gtest.h>

#include <set>

using namespace ti::plan;

namespace {

TEST(KvCacheLayout, AHeadsPositionsAreOneRun) {
  // The 1B's geometry: 8 kv heads of 64, a cache of 8,192 positions.
  const KvCacheLayout c = KvCacheLayout::of(HeadGeometry{32, 8, 64, 16}, 8192);
  EXPECT_EQ(c.row(0, 0), 0u);
  EXPECT_EQ(c.row(1, 0), 64u);
  EXPECT_EQ(c.positionStride(), 64u);
  EXPECT_EQ(c.row(0, 1), 8192u * 64);
  EXPECT_EQ(c.row(8191, 7), (7u * 8192 + 8191) * 64);
  // A task of kv head 3 over positions [256, 512) reads one run of 32 KB.
  EXPECT_EQ(c.row(511, 3) + 64 - c.row(256, 3), 256u * 64);
  // Column 3 * 64 + 5 of position 10 is head 3's dimension 5.
  EXPECT_EQ(c.at(10, 3 * 64 + 5), c.row(10, 3) + 5);
}

TEST(KvCacheLayout, EveryElementOnceInsideTheCache) {
  // A small cache, every (position, column): a bijection onto
  // [0, maxContext * kvHeads * headDim), the buffer the plan sizes.
  const HeadGeometry g{4, 2, 8, 2};
  const uint32_t maxContext = 5;
  const KvCacheLayout c = KvCacheLayout::of(g, maxContext);
  std::set<uint64_t> seen;
  for (uint32_t pos = 0; pos < maxContext; ++pos)
    for (uint32_t col = 0; col < g.kvRows(); ++col) {
      const uint64_t e = c.at(pos, col);
      EXPECT_LT(e, uint64_t(maxContext) * g.kvRows());
      EXPECT_TRUE(seen.insert(e).second) << pos << ", " << col;
    }
  EXPECT_EQ(seen.size(), size_t(maxContext) * g.kvRows());
}

} // namespace
