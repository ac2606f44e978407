//===- ModelPlanTest.cpp - Where the test plans' tools and graphs come from ===//
//
// A GPU machine is given the built tools and a copy of the repository at
// paths other than the build's; TI_TOOLS_DIR and TI_SOURCE_DIR say where.
//
//===----------------------------------------------------------------------===//
#include "ModelPlan.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

class ModelPlanTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("ti-model-plan-" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  void TearDown() override {
    ::unsetenv("TI_TOOLS_DIR");
    ::unsetenv("TI_SOURCE_DIR");
    fs::remove_all(dir);
  }
  fs::path dir;
};

TEST_F(ModelPlanTest, UsesTheBuildWithoutTheEnvironment) {
  ::unsetenv("TI_TOOLS_DIR");
  ::unsetenv("TI_SOURCE_DIR");
  EXPECT_EQ(ti::test::toolsDir(), TI_TOOLS_DIR);
  EXPECT_EQ(ti::test::sourceDir(), TI_SOURCE_DIR);
  EXPECT_NE(ti::test::compileTinyPlan(dir / "plan", "", 1), nullptr);
}

TEST_F(ModelPlanTest, TakesTheToolsAndTheGraphsFromTheEnvironment) {
  // A copy of the tools and of the graph elsewhere, as on a GPU machine.
  const fs::path tools = dir / "tools", source = dir / "repository";
  fs::create_directories(tools);
  fs::create_directories(source / "models");
  for (const char *tool : {"tic", "tipack"})
    fs::copy_file(fs::path(TI_TOOLS_DIR) / tool, tools / tool);
  fs::copy_file(fs::path(TI_SOURCE_DIR) / "models/tiny.graph", source / "models/tiny.graph");
  ::setenv("TI_TOOLS_DIR", tools.c_str(), 1);
  ::setenv("TI_SOURCE_DIR", source.c_str(), 1);
  EXPECT_EQ(ti::test::toolsDir(), tools.string());
  EXPECT_NE(ti::test::compileTinyPlan(dir / "plan", "", 1), nullptr);
}

TEST_F(ModelPlanTest, FailsWhereTheEnvironmentNamesNoTools) {
  ::setenv("TI_TOOLS_DIR", (dir / "missing").c_str(), 1);
  EXPECT_NONFATAL_FAILURE(EXPECT_EQ(ti::test::compileTinyPlan(dir / "plan", "", 1), nullptr),
                          "missing/tic");
}

TEST_F(ModelPlanTest, FailsWhereTheEnvironmentNamesNoGraphs) {
  ::setenv("TI_SOURCE_DIR", (dir / "missing").c_str(), 1);
  EXPECT_NONFATAL_FAILURE(EXPECT_EQ(ti::test::compileTinyPlan(dir / "plan", "", 1), nullptr),
                          "missing/models/tiny.graph");
}

} // namespace
