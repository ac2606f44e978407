//===- TokenBytesTest.cpp - The bytes of a decode step's floor ------------===//
//
// A hand-made plan with an untied embedding (gathered by row), a matrix
// streamed by two tasks that both re-read one norm scale, and a K/V cache:
// each part of TokenBytes and the floor computed by hand.
//
//===----------------------------------------------------------------------===//
#include "ti/Plan/TokenBytes.h"

#include "MakeTask.h"

#include <gtest/gtest.h>

using namespace ti::plan;
using ti::plan::test::makeTask;

namespace {

/// vocab 100 x hidden 8 embedding (1,600 bytes, at 0), a norm scale of 8 (16
/// bytes, at 1,792), a 6 x 8 matrix (96 bytes, at 2,048); 2 layers whose K and
/// V caches hold 16 positions of 2 kv heads of 4 (16 bytes a row).
Plan smallPlan() {
  Plan p;
  p.model.layers = 2;
  p.model.kvHeads = 2;
  p.model.headDim = 4;
  p.model.hidden = 8;
  p.model.maxContext = 16;
  for (const char *cache : {"L0.k", "L0.v", "L1.k", "L1.v"})
    p.buffers.push_back({cache, cache[3] == 'k' ? BufferKind::KCache : BufferKind::VCache,
                         p.buffers.size() * 256, 16 * 16});
  p.weights = {{"embed", 0, 1600, {}}, {"norm", 1792, 16, {}}, {"w", 2048, 96, {}}};
  TaskRecord embed = makeTask(Opcode::Embed, 0);
  embed.weight = 0;
  embed.weightBytes = 16; // One row of 8 bf16.
  p.tasks.push_back(embed);
  for (uint16_t worker = 0; worker < 2; ++worker) {
    TaskRecord gemv = makeTask(Opcode::Gemv, worker);
    gemv.weight = 2048 + worker * 48;
    gemv.weightBytes = 48; // Three rows each.
    gemv.norm = 1792;
    gemv.aux[0] = 8; // K: the norm scale's length.
    p.tasks.push_back(gemv);
  }
  return p;
}

} // namespace

TEST(TokenBytes, PartsOfAHandMadePlan) {
  TokenBytes b = tokenBytes(smallPlan());
  EXPECT_EQ(b.packed, 1600u + 16 + 96);
  EXPECT_EQ(b.gathered, 1600u);  // The embedding is never streamed whole.
  EXPECT_EQ(b.gatheredRows, 16u);
  EXPECT_EQ(b.normRereads, 16);   // Read twice, counted once in packed.
  EXPECT_EQ(b.tasks, 16u + 2 * (48 + 16));
  EXPECT_EQ(b.floorWeights(), 16u + 16 + 96);
  EXPECT_EQ(b.floorWeights() + uint64_t(b.normRereads), b.tasks);
}

TEST(TokenBytes, TiedEmbeddingIsStreamedOnceAndItsRowReadAgain) {
  Plan p = smallPlan();
  TaskRecord head = makeTask(Opcode::LmHead, 0);
  head.weight = 0;
  head.weightBytes = 1600;
  p.tasks.push_back(head);
  TokenBytes b = tokenBytes(p);
  EXPECT_EQ(b.gathered, 0u);
  EXPECT_EQ(b.floorWeights(), 1600u + 16 + 96 + 16);
}

TEST(TokenBytes, FloorAddsTheCachedPositions) {
  Plan p = smallPlan();
  // 2 layers x K and V x 2 kv heads x 4 x 2 bytes = 64 bytes a position.
  EXPECT_EQ(kvCacheBytes(p, 1), 64u);
  EXPECT_EQ(kvCacheBytes(p, 0), 0u);
  EXPECT_EQ(floorBytes(p, 0), 128u);
  EXPECT_EQ(floorBytes(p, 10), 128u + 640);
  EXPECT_DOUBLE_EQ(floorSeconds(2'000'000'000, 4000), 0.5e-3);
  EXPECT_EQ(floorSeconds(1000, 0), 0); // No bandwidth measured: no floor.
}

TEST(TokenBytes, Llama1BPerPositionKv) {
  // 16 layers' K and V caches of 8192 positions x 8 kv heads x 64 bf16.
  Plan p;
  p.model.maxContext = 8192;
  for (int layer = 0; layer < 16; ++layer)
    for (BufferKind kind : {BufferKind::KCache, BufferKind::VCache})
      p.buffers.push_back({"cache", kind, 0, 8192ull * 8 * 64 * 2});
  EXPECT_EQ(kvCacheBytes(p, 1), 32768u);
  EXPECT_EQ(kvCacheBytes(p, 4096), 134217728u);
}

TEST(TokenBytes, LayersOfDifferentWidthsEachCountTheirOwnRows) {
  Plan p;
  p.model.maxContext = 100;
  p.buffers.push_back({"L0.k", BufferKind::KCache, 0, 100 * 256});
  p.buffers.push_back({"L0.v", BufferKind::VCache, 0, 100 * 256});
  p.buffers.push_back({"L1.k", BufferKind::KCache, 0, 100 * 64});
  p.buffers.push_back({"L1.v", BufferKind::VCache, 0, 100 * 64});
  p.buffers.push_back({"x", BufferKind::Activation, 0, 4096}); // Not a cache.
  EXPECT_EQ(kvCacheBytes(p, 3), 3u * (256 + 256 + 64 + 64));
}
