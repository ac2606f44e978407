//===- DecodeBenchTest.cpp - tirun bench's measurements on the CPU --------===//
//
// The measurements on the CPU executor and the tiny model: the standard
// sequence, that a timed step sees exactly `context` cached positions however
// often it is repeated (its logits equal those of a plain run over the
// sequence), that the gaps run generates the same tokens as the timed one,
// and the refusals.
//
//===----------------------------------------------------------------------===//
#include "ti/Bench/DecodeBench.h"
#include "ti/Runtime/CpuExecutor.h"

#include "ModelPlan.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <unistd.h>

using namespace ti;
using namespace ti::bench;
namespace fs = std::filesystem;

namespace {

class DecodeBenchTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("ti-bench-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    lp = test::compileTinyPlan(dir / "plan", "", 5);
    ASSERT_NE(lp, nullptr);
    cpu = std::make_unique<CpuExecutor>(lp, 2);
  }
  void TearDown() override { fs::remove_all(dir); }

  std::vector<float> logits() const { return *cpu->logits(); }

  fs::path dir;
  std::shared_ptr<const LoadedPlan> lp;
  std::unique_ptr<CpuExecutor> cpu;
};

} // namespace

TEST_F(DecodeBenchTest, StandardSequence) {
  plan::ModelInfo m;
  m.vocab = 128256;
  m.bos = 128000;
  std::vector<int32_t> s = standardSequence(m, 4);
  EXPECT_EQ(s, (std::vector<int32_t>{128000, 7920, 15839, 23758}));
  m.bos = -1;
  m.vocab = 100;
  s = standardSequence(m, 3);
  EXPECT_EQ(s, (std::vector<int32_t>{1, 1 + 7919 % 99, 1 + 15838 % 99}));
}

TEST_F(DecodeBenchTest, RepeatedStepsSeeTheSameContext) {
  const plan::Plan &p = lp->plan;
  const int32_t context = 40;
  // Reference: the sequence's first context + 1 tokens fed in one go.
  std::vector<int32_t> fed = standardSequence(p.model, context + 1);
  ASSERT_TRUE(generate(p, *cpu, fed, 0).ok());
  std::vector<float> expected = logits();
  ASSERT_TRUE(cpu->reset().ok());
  ASSERT_TRUE(fillContext(p, *cpu, context).ok());
  auto times = timeSteps(p, *cpu, context, 3);
  ASSERT_TRUE(times.ok()) << times.status().message();
  EXPECT_EQ(times->size(), 3u);
  for (double t : *times)
    EXPECT_GT(t, 0);
  EXPECT_EQ(logits(), expected); // Same arithmetic, same order: bit for bit.
}

TEST_F(DecodeBenchTest, FillInPiecesOrFurtherGivesTheSameStep) {
  const plan::Plan &p = lp->plan;
  const int32_t context = 40;
  ASSERT_TRUE(fillContext(p, *cpu, context).ok());
  ASSERT_TRUE(timeSteps(p, *cpu, context, 1).ok());
  const std::vector<float> expected = logits();
  // In two pieces, the second from where the first stopped.
  ASSERT_TRUE(cpu->reset().ok());
  ASSERT_TRUE(fillContext(p, *cpu, 17).ok());
  ASSERT_TRUE(fillContext(p, *cpu, context, 17).ok());
  ASSERT_TRUE(timeSteps(p, *cpu, context, 1).ok());
  EXPECT_EQ(logits(), expected);
  // Filled past the context (to 100, in more than one launch): the step at
  // 40 attends to positions 0..40 only.
  ASSERT_TRUE(cpu->reset().ok());
  ASSERT_TRUE(fillContext(p, *cpu, 100).ok());
  ASSERT_TRUE(timeSteps(p, *cpu, context, 1).ok());
  EXPECT_EQ(logits(), expected);
  // A saved state put into a fresh executor gives the same step.
  std::vector<uint8_t> state = *cpu->saveArena();
  cpu = std::make_unique<CpuExecutor>(lp, 2);
  ASSERT_TRUE(cpu->restoreArena(state).ok());
  ASSERT_TRUE(timeSteps(p, *cpu, context, 1).ok());
  EXPECT_EQ(logits(), expected);
  EXPECT_FALSE(cpu->restoreArena(std::vector<uint8_t>(3)).ok());
}

TEST_F(DecodeBenchTest, ContextMustLeaveRoomForTheStep) {
  const plan::Plan &p = lp->plan;
  EXPECT_TRUE(fillContext(p, *cpu, 0).ok());
  Status s = fillContext(p, *cpu, int32_t(p.model.maxContext));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("context 512 cannot be measured"), std::string::npos) << s.message();
  EXPECT_FALSE(fillContext(p, *cpu, -1).ok());
}

TEST_F(DecodeBenchTest, GapsRunGeneratesTheTimedRunsTokens) {
  const plan::Plan &p = lp->plan;
  auto timed = timeGeneration(p, *cpu, 12);
  ASSERT_TRUE(timed.ok()) << timed.status().message();
  EXPECT_GT(timed->seconds, 0);
  ASSERT_FALSE(timed->tokens.empty());
  auto gaps = generationGaps(p, *cpu, 12);
  ASSERT_TRUE(gaps.ok()) << gaps.status().message();
  EXPECT_EQ(gaps->tokens, timed->tokens);
  ASSERT_EQ(gaps->top2Gaps.size(), gaps->tokens.size());
  // The last token's gap is that of the logits left by the last launch.
  EXPECT_EQ(gaps->top2Gaps.back(), top2Gap(logits()));
  for (float g : gaps->top2Gaps)
    EXPECT_GE(g, 0);
}

TEST(Top2Gap, LargestMinusSecond) {
  EXPECT_EQ(top2Gap({1, 5, 3}), 2);
  EXPECT_EQ(top2Gap({5, 1, 5}), 0);
  EXPECT_EQ(top2Gap({-2, -7}), 5);
  EXPECT_EQ(top2Gap({4}), 0);
}

TEST_F(DecodeBenchTest, SeveralStepsALaunchRunTheSequence) {
  const plan::Plan &p = lp->plan;
  const int32_t context = 40;
  // Reference: the sequence's first context + 4 tokens fed in one go.
  ASSERT_TRUE(generate(p, *cpu, standardSequence(p.model, context + 4), 0).ok());
  const std::vector<float> expected = logits();
  ASSERT_TRUE(cpu->reset().ok());
  ASSERT_TRUE(fillContext(p, *cpu, context).ok());
  const LaunchArgs launch = measuredStep(p, context, 4);
  EXPECT_EQ(launch.startPos, context);
  EXPECT_EQ(launch.promptLen, 4);
  EXPECT_EQ(launch.maxSteps, 4);
  const std::vector<int32_t> tokens = standardSequence(p.model, context + 4);
  EXPECT_EQ(std::vector<int32_t>(launch.prompt, launch.prompt + 4),
            std::vector<int32_t>(tokens.begin() + context, tokens.end()));
  auto times = timeSteps(p, *cpu, context, 2, 4);
  ASSERT_TRUE(times.ok()) << times.status().message();
  EXPECT_EQ(times->size(), 2u);
  EXPECT_EQ(logits(), expected); // The launch's last step is position context + 3.
}

TEST_F(DecodeBenchTest, StepsPerLaunchMustFit) {
  const plan::Plan &p = lp->plan;
  const int32_t last = int32_t(p.model.maxContext) - 4;
  ASSERT_TRUE(fillContext(p, *cpu, last).ok());
  EXPECT_TRUE(timeSteps(p, *cpu, last, 1, 4).ok());
  auto over = timeSteps(p, *cpu, last + 1, 1, 4);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("with 4 steps a launch cannot be measured"),
            std::string::npos)
      << over.status().message();
  EXPECT_FALSE(timeSteps(p, *cpu, 0, 1, 0).ok());
  EXPECT_FALSE(timeSteps(p, *cpu, 0, 1, int32_t(plan::kMaxStepsPerLaunch) + 1).ok());
}
