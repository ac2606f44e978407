//===- AttentionLayoutTest.cpp - Where the K/V caches keep a row ----------===//
//
// The cache layout every executor indexes through (AttentionLayout.h): a kv
// head's rows position after position, the heads one after another; the
// chunks' positions; the attention op's scratch (WorkerLayout.h); and which
// steps stream the cached rows (TaskRecord.h).
//
//===----------------------------------------------------------------------===//
#include "ti/Plan/AttentionLayout.h"
#include "ti/Plan/TaskRecord.h"
#include "ti/Plan/WorkerLayout.h"

#include <gtest/gtest.h>

#include <algorithm>
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

TEST(AttentionPositions, LongModeChunksCoverTheContextOnceInOrder) {
  for (int32_t pos : {0, 1, 15, 16, 17, 399, 4095, 8191})
    for (uint32_t chunks : {1u, 2u, 16u, 132u}) {
      int32_t next = 0;
      for (uint32_t c = 0; c < chunks; ++c) {
        const AttentionPositions p = attentionPositions(c, chunks, pos, true);
        EXPECT_EQ(p.begin, next) << pos << " " << chunks << " " << c;
        EXPECT_LE(p.begin, p.end);
        next = p.end;
      }
      EXPECT_EQ(next, pos + 1) << pos << " " << chunks;
    }
  // The 1B at context 4,096: 16 chunks of 256.
  EXPECT_EQ(attentionPositions(3, 16, 4095, true).begin, 768);
  EXPECT_EQ(attentionPositions(3, 16, 4095, true).end, 1024);
}

TEST(AttentionPositions, ShortModeIsChunkZeroAlone) {
  EXPECT_EQ(attentionPositions(0, 16, 100, false).begin, 0);
  EXPECT_EQ(attentionPositions(0, 16, 100, false).end, 101);
  for (uint32_t c = 1; c < 16; ++c) {
    const AttentionPositions p = attentionPositions(c, 16, 100, false);
    EXPECT_EQ(p.begin, p.end) << c;
  }
}

TEST(AttentionPositions, TheCachedRowsStopBeforeTheStepsOwn) {
  // The last chunk holds pos; its cached rows end there. The others end where
  // they end.
  const AttentionPositions last = attentionPositions(15, 16, 4095, true);
  EXPECT_EQ(last.end, 4096);
  EXPECT_EQ(last.cachedEnd(4095), 4095);
  const AttentionPositions first = attentionPositions(0, 16, 4095, true);
  EXPECT_EQ(first.cachedEnd(4095), first.end);
  EXPECT_EQ(attentionPositions(0, 16, 0, false).cachedEnd(0), 0); // Context 1: nothing cached.
}

// The attention op's scratch in the Stream worker (WorkerLayout.h): the
// group's queries, the key, the value, a state per warp for the streamed
// form (ops/AttentionStream.cuh: D sums, max, sum of weights) inside the
// one-pass loop's states, then a block's weights [group][threads], in order,
// apart, and 16-byte aligned where the kernel reads float4s; where the
// scores go on the tensor cores (ops/AttentionStreamMma.cuh), a state per
// warp and head and weights [threads][4].
TEST(AttentionScratch, TheStreamedFormsRegionsFitInOrder) {
  const uint32_t threads = kStreamConsumerThreads, warps = threads / 32;
  for (uint32_t d : {8u, 16u, 32u, 64u, 128u, 256u})
    for (uint32_t group : {1u, 2u, 3u, 4u}) {
      SCOPED_TRACE("headDim " + std::to_string(d) + ", group " + std::to_string(group));
      const HeadGeometry g{uint16_t(8 * group), 8, uint16_t(d), 16};
      const AttentionLayout l = attentionLayout(g, threads);
      EXPECT_EQ(l.qAt, 0u);
      EXPECT_GE(l.kAt, group * d);
      EXPECT_GE(l.vAt, l.kAt + d);
      EXPECT_GE(l.statesAt, l.vAt + d);
      EXPECT_EQ(l.stateStride, d + 2);
      const bool mma = streamedScoresOnTensorCores(d, group);
      EXPECT_EQ(mma, (d == 64 || d == 128) && group <= kStreamedMmaHeads);
      EXPECT_GE(l.weightsAt, l.statesAt + warps * (mma ? group : 1u) * l.stateStride);
      EXPECT_GE(l.floats, l.weightsAt + (mma ? kStreamedMmaHeads : group) * threads);
      if (mma) { // The largest elements AttentionStreamMma.cuh indexes: the last
                 // warp's last head's l, the last row's fourth weight.
        EXPECT_LT(l.statesAt + (warps * group - 1) * l.stateStride + d + 1, l.weightsAt);
        EXPECT_LT(l.weightsAt + (threads - 1) * kStreamedMmaHeads + 3, l.floats);
      }
      for (uint32_t at : {l.kAt, l.vAt, l.weightsAt})
        EXPECT_EQ(at % 4, 0u);
    }
}


TEST(KvBlockRowsTest, APowerOfTwoOfRowsThatAStageAndTheThreadsHold) {
  EXPECT_EQ(kvBlockRows(32768, 64, 256), 256u);  // The 1B: 256 rows of 128 bytes.
  EXPECT_EQ(kvBlockRows(32768, 128, 256), 128u); // The 8B's 256-byte rows.
  EXPECT_EQ(kvBlockRows(32768, 64, 128), 128u);  // Fewer threads than rows.
  EXPECT_EQ(kvBlockRows(24576, 64, 256), 128u);  // 192 rows fit: a power of two.
  EXPECT_EQ(kvBlockRows(512, 8, 256), 32u);      // A warp's lanes: the least.
  EXPECT_EQ(kvBlockRows(511, 8, 256), 0u);
}

TEST(KvBlockRowsTest, OnlyHeadDimsThatTheValuePassTakes) {
  for (uint32_t d : {8u, 16u, 32u, 64u, 128u, 256u})
    EXPECT_TRUE(kvRowsStreamable(d)) << d;
  for (uint32_t d : {0u, 2u, 4u, 12u, 24u, 48u, 80u, 96u, 192u, 512u})
    EXPECT_FALSE(kvRowsStreamable(d)) << d;
  EXPECT_EQ(kvBlockRows(1 << 20, 96, 256), 0u);
}

TEST(KvBlocksTest, TheWalkCoversATasksCachedRowsInFullBlocksAndARest) {
  for (uint32_t chunks : {1u, 2u, 16u})
    for (bool longMode : {false, true})
      for (uint32_t chunk = 0; chunk < chunks; ++chunk)
        for (int32_t pos = 0; pos < 600; ++pos) {
          SCOPED_TRACE("chunk " + std::to_string(chunk) + " of " + std::to_string(chunks) +
                       ", pos " + std::to_string(pos) + (longMode ? ", long" : ", short"));
          const KvBlocks b = kvBlocks(chunk, chunks, pos, longMode, 16384, 64, 256);
          const AttentionPositions r = attentionPositions(chunk, chunks, pos, longMode);
          ASSERT_EQ(b.blockRows, 128u);
          ASSERT_EQ(b.begin, r.begin);
          ASSERT_EQ(b.end, std::min(r.end, pos)); // Position pos is this step's.
          uint32_t blocks = 0;
          int32_t rows = 0;
          for (int32_t base = b.begin; base < b.end; base += int32_t(b.blockRows)) {
            const uint32_t n = b.rowsAt(base);
            ASSERT_GE(n, 1u);
            ASSERT_LE(n, b.blockRows);
            if (base + int32_t(b.blockRows) < b.end) {
              ASSERT_EQ(n, b.blockRows); // Only the last block is short.
            }
            rows += int32_t(n);
            ++blocks;
          }
          ASSERT_EQ(blocks, b.count());
          ASSERT_EQ(rows, std::max(b.end - b.begin, 0));
        }
}

// Which steps stream kFlagStreamKv tasks' rows (TaskRecord.h): long mode
// above stream_kv_context; short mode only above a nonzero short_mma_context.
TEST(StreamsKvAtTest, LongModeAboveItsContextShortModeAboveShortMmaContext) {
  const uint32_t split = 128;
  for (uint32_t ctx = 1; ctx <= 2048; ++ctx) {
    SCOPED_TRACE("ctx " + std::to_string(ctx));
    const bool longMode = ctx > split;
    EXPECT_EQ(streamsKvAt(ctx, split, 1024, 0), longMode && ctx > 1024);
    EXPECT_EQ(streamsKvAt(ctx, split, 0, 0), longMode);
    EXPECT_EQ(streamsKvAt(ctx, split, 1024, 64), longMode ? ctx > 1024 : ctx > 64);
    EXPECT_EQ(streamsKvAt(ctx, split, 0, 1), longMode || ctx > 1);
  }
}

} // namespace
