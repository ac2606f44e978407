//===- TiledPlanTest.cpp - The verifier holds tiles to their tasks --------===//
//
// A tiny plan compiled with its GEMV weights in octet tiles (tic
// --weight-tiles on) verifies; each break below is refused with the task
// named: a tiled tensor read as rows, tiles read from a tensor of rows, a
// task's tiles starting inside an octet, tiles in a task that cannot
// multiply them, a stage that is not whole tiles. A reader of the wrong
// layout would compute silently wrong values, so none of them may pass.
//
//===----------------------------------------------------------------------===//
#include "ti/Plan/Plan.h"
#include "ti/Plan/PlanFile.h"
#include "ti/Plan/PlanVerifier.h"
#include "ti/Plan/WeightTiles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

using namespace ti;
using namespace ti::plan;
namespace fs = std::filesystem;

namespace {

class TiledPlanTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("ti-tiled-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string file = (dir / "plan.fb").string();
    const std::string cmd = std::string(TI_TOOLS_DIR) + "/tic " + TI_SOURCE_DIR +
                            "/models/tiny.graph --target h200 --weight-tiles on -o " + file;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    auto read = readPlanFile(file);
    ASSERT_TRUE(read.ok()) << read.status().message();
    plan = *read;
  }
  void TearDown() override { fs::remove_all(dir); }

  /// The first task with kFlagTiledWeights of `opcode` whose weights begin
  /// its tensor (so that a shift stays inside it).
  TaskRecord &tiledTask(Opcode opcode) {
    for (TaskRecord &t : plan.tasks)
      if (t.opcode == uint16_t(opcode) && (t.flags & kFlagTiledWeights) &&
          std::any_of(plan.weights.begin(), plan.weights.end(),
                      [&](const PackedTensor &w) { return w.offset == t.weight; }))
        return t;
    ADD_FAILURE() << "no tiled task";
    return plan.tasks.front();
  }
  std::string verified() {
    Status s = verifyPlan(plan);
    return s.ok() ? "" : s.message();
  }

  fs::path dir;
  Plan plan;
};

TEST_F(TiledPlanTest, TheTiledPlanVerifies) {
  EXPECT_EQ(verified(), "");
  EXPECT_GT(std::count_if(plan.tasks.begin(), plan.tasks.end(),
                          [](const TaskRecord &t) { return t.flags & kFlagTiledWeights; }),
            0);
}

TEST_F(TiledPlanTest, ATiledTensorReadAsRows) {
  tiledTask(Opcode::Gemv).flags &= ~kFlagTiledWeights;
  EXPECT_NE(verified().find("as rows, and its weights are stored in tiles"), std::string::npos)
      << verified();
}

TEST_F(TiledPlanTest, TilesReadFromATensorOfRows) {
  const TaskRecord &t = tiledTask(Opcode::GateUp);
  for (PackedTensor &w : plan.weights)
    if (w.offset <= t.weight && t.weight < w.offset + w.bytes)
      w.segments.back().tiled = false;
  plan.layoutHash = layoutHash(plan.weights, plan.weightsBytes);
  EXPECT_NE(verified().find("is not all stored in tiles"), std::string::npos) << verified();
}

TEST_F(TiledPlanTest, TilesThatBeginInsideAnOctet) {
  tiledTask(Opcode::Gemv).weight += kTileBytes;
  EXPECT_NE(verified().find("which is not an octet's start"), std::string::npos) << verified();
}

TEST_F(TiledPlanTest, OnlyGemvAndGateUpMultiplyTiles) {
  for (TaskRecord &t : plan.tasks)
    if (t.opcode == uint16_t(Opcode::LmHead)) {
      t.flags |= kFlagTiledWeights;
      break;
    }
  // Refused at the stream's check (the lm_head's rows are not octets of
  // tiles) before the flags' check would name the flag.
  EXPECT_NE(verified().find("(lm_head on worker"), std::string::npos) << verified();
  EXPECT_NE(verified().find("streams weight tiles"), std::string::npos) << verified();
}

TEST_F(TiledPlanTest, AStageOfWholeTiles) {
  plan.stream.stageBytes -= 16;
  EXPECT_NE(verified().find("is not whole tiles of 512"), std::string::npos) << verified();
}

} // namespace
