//===- WeightTilesTest.cpp - The octet-tile layout of weight rows ---------===//
//
// tiledElement is a permutation of a block's elements, keeps an octet's
// elements inside the octet, and lays a tile out as the consumers read it:
// lane l's 16 bytes (elements 8l .. 8l + 8 of the tile) are row l / 4's
// columns 8 (l % 4) .. + 8. An octet streams in pieces of at most a stage.
//
//===----------------------------------------------------------------------===//
#include "ti/Plan/WeightTiles.h"

#include <gtest/gtest.h>

#include <vector>

using namespace ti::plan;

namespace {

TEST(WeightTilesTest, APermutationOfTheBlockOctetByOctet) {
  for (uint64_t cols : {32u, 64u, 96u, 2048u}) {
    const uint64_t rows = 24;
    std::vector<int> seen(rows * cols);
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t c = 0; c < cols; ++c) {
        const uint64_t e = tiledElement(r, c, cols);
        ASSERT_LT(e, rows * cols);
        ++seen[e];
        EXPECT_EQ(e / (kTileRows * cols), r / kTileRows) << "row " << r << " leaves its octet";
      }
    for (int n : seen)
      ASSERT_EQ(n, 1) << cols << " columns";
  }
}

TEST(WeightTilesTest, ALanesSixteenBytesAreOneRowsEightColumns) {
  const uint64_t cols = 64; // Two tiles an octet.
  for (uint64_t tile = 0; tile < 2; ++tile)
    for (uint32_t lane = 0; lane < 32; ++lane)
      for (uint32_t e = 0; e < 8; ++e) {
        const uint64_t row = lane / 4, col = tile * kTileCols + 8 * (lane % 4) + e;
        EXPECT_EQ(tiledElement(row, col, cols), tile * kTileRows * kTileCols + 8 * lane + e);
      }
  // The second octet starts after the first's 8 x 64 elements.
  EXPECT_EQ(tiledElement(8, 0, cols), 8 * cols);
}

TEST(WeightTilesTest, OctetsStreamInPiecesOfAStage) {
  // The 1B's 2,048 columns: one 32 KB stage an octet; 8,192: four; 3,072:
  // a stage and a half.
  EXPECT_EQ(octetBytes(4096), 32768u);
  EXPECT_EQ(tiledPiecesPerOctet(octetBytes(4096), 32768), 1u);
  EXPECT_EQ(tiledPiecesPerOctet(octetBytes(16384), 32768), 4u);
  EXPECT_EQ(tiledPiecesPerOctet(octetBytes(6144), 32768), 2u);
  EXPECT_EQ(tiledPieceBytes(49152, 0, 32768), 32768u);
  EXPECT_EQ(tiledPieceBytes(49152, 32768, 32768), 16384u);
  EXPECT_TRUE(tileable(24, 2048));
  EXPECT_FALSE(tileable(20, 2048));
  EXPECT_FALSE(tileable(24, 2040));
}

} // namespace
