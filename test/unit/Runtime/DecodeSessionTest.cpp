//===- DecodeSessionTest.cpp - Turns, cache reuse, sampling, end tokens ---===//
//
// On the CPU executor and the tiny model: a session's greedy tokens are
// generate()'s; a second turn that reuses the cache gives the tokens a fresh
// session fed everything gives; sampling repeats for a seed; host-side end
// tokens and the callback end a turn where they say.
//
//===----------------------------------------------------------------------===//
#include "ti/Runtime/CpuExecutor.h"
#include "ti/Runtime/DecodeSession.h"
#include "ti/Runtime/Generate.h"

#include "ModelPlan.h"

#include <gtest/gtest.h>

#include <unistd.h>

namespace ti {
namespace {

namespace fs = std::filesystem;

class DecodeSessionTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("ti-session-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    lp = test::compileTinyPlan(dir / "tiny", "--target rtx3050 --attention-split-context 16", 7);
    ASSERT_TRUE(lp);
  }
  void TearDown() override { fs::remove_all(dir); }

  std::vector<int32_t> prompt() const { return {lp->plan.model.bos, 17, 99, 250, 3, 41}; }

  fs::path dir;
  std::shared_ptr<const LoadedPlan> lp;
};

TEST_F(DecodeSessionTest, GreedyTokensAgreeAcrossLaunchSizes) {
  CpuExecutor a(lp, 2), b(lp, 2);
  auto expected = generate(lp->plan, a, prompt(), 40);
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  // A tiny launch budget: one token per launch after the first measurement.
  DecodeSession session(lp->plan, b, {.launchSeconds = 1e-9});
  std::vector<int32_t> seen;
  auto turn = session.turn(prompt(), 40, [&](std::span<const int32_t> t) {
    seen.insert(seen.end(), t.begin(), t.end());
    return true;
  });
  ASSERT_TRUE(turn.ok()) << turn.status().message();
  EXPECT_EQ(turn->tokens, expected->tokens);
  EXPECT_EQ(seen, turn->tokens);
  EXPECT_EQ(turn->reused, 0);
  EXPECT_EQ(turn->fed, 6);
  EXPECT_GE(turn->launches, static_cast<int32_t>(turn->tokens.size()));
}

TEST_F(DecodeSessionTest, ASecondTurnFeedsOnlyWhatIsNewAndAgreesWithAFreshStart) {
  CpuExecutor a(lp, 2), b(lp, 2);
  DecodeSession kept(lp->plan, a, {});
  auto first = kept.turn(prompt(), 12);
  ASSERT_TRUE(first.ok()) << first.status().message();
  std::vector<int32_t> conversation = prompt();
  conversation.insert(conversation.end(), first->tokens.begin(), first->tokens.end());
  conversation.insert(conversation.end(), {5, 6, 7});
  auto second = kept.turn(conversation, 12);
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(second->reused, static_cast<int32_t>(prompt().size() + first->tokens.size() - 1));
  EXPECT_EQ(second->fed, 4); // the first turn's last token, then 5 6 7

  DecodeSession fresh(lp->plan, b, {});
  auto whole = fresh.turn(conversation, 12);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(second->tokens, whole->tokens);
  EXPECT_EQ(whole->reused, 0);

  // A conversation that changed earlier reuses only the common prefix.
  conversation[3] = 4;
  auto third = kept.turn(conversation, 4);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->reused, 3);
}

TEST_F(DecodeSessionTest, SamplingRepeatsForASeed) {
  SessionOptions o{.sampling = {.temperature = 1.5, .topK = 50, .topP = 0.95, .seed = 3}};
  auto run = [&](SessionOptions options) {
    CpuExecutor exe(lp, 2);
    DecodeSession s(lp->plan, exe, options);
    auto t = s.turn(prompt(), 16);
    EXPECT_TRUE(t.ok());
    return t.ok() ? t->tokens : std::vector<int32_t>();
  };
  auto x = run(o), y = run(o);
  EXPECT_EQ(x, y);
  o.sampling.seed = 4;
  CpuExecutor greedyExe(lp, 2);
  auto greedy = generate(lp->plan, greedyExe, prompt(), 16);
  EXPECT_NE(x, greedy->tokens);
  EXPECT_NE(x, run(o));
}

TEST_F(DecodeSessionTest, EndTokensAndTheCallbackEndTheTurn) {
  // Random tiny models mostly repeat the prompt's last token; with seed 2 and
  // this prompt the greedy text changes after 14 tokens, so an end token there
  // falls inside a longer launch, which runs past it.
  auto varied = test::compileTinyPlan(dir / "seed2", "--target rtx3050 --attention-split-context 16", 2);
  ASSERT_TRUE(varied);
  std::vector<int32_t> input = {varied->plan.model.bos, 5};
  CpuExecutor a(varied, 2);
  auto expected = generate(varied->plan, a, input, 30);
  ASSERT_TRUE(expected.ok());
  std::size_t k = 2;
  while (k < expected->tokens.size() &&
         std::find(expected->tokens.begin(), expected->tokens.begin() + k, expected->tokens[k]) !=
             expected->tokens.begin() + k)
    ++k;
  ASSERT_LT(k + 2, expected->tokens.size()) << "the greedy text no longer changes: choose another seed";
  int32_t end = expected->tokens[k];
  CpuExecutor b(varied, 2);
  // An hour per launch: the second launch takes all 64 steps however slow the
  // build (the sanitizer build runs a step in a tenth of a second).
  DecodeSession session(varied->plan, b, {.endTokens = {end}, .launchSeconds = 3600});
  auto turn = session.turn(input, 30);
  ASSERT_TRUE(turn.ok());
  EXPECT_EQ(turn->tokens, std::vector<int32_t>(expected->tokens.begin(), expected->tokens.begin() + k + 1));
  EXPECT_EQ(turn->stop, TurnResult::Stop::EndToken);
  EXPECT_EQ(turn->launches, 2);
  // The cache holds the input and all generated tokens but the last, although
  // the kernel ran past the end token in the same launch.
  EXPECT_EQ(session.cachedTokens().size(), input.size() + turn->tokens.size() - 1);

  CpuExecutor c(lp, 2);
  DecodeSession stopped(lp->plan, c, {});
  int calls = 0;
  auto cut = stopped.turn(prompt(), 30, [&](std::span<const int32_t>) { return ++calls < 2; });
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->stop, TurnResult::Stop::Callback);
  EXPECT_EQ(calls, 2);
}

TEST_F(DecodeSessionTest, RefusesInputsThatCannotRun) {
  CpuExecutor a(lp, 2);
  DecodeSession session(lp->plan, a, {});
  EXPECT_EQ(session.turn(std::vector<int32_t>{}, 4).status().message(), "nothing to feed: the input has no tokens");
  EXPECT_EQ(session.turn(std::vector<int32_t>{1, 320}, 4).status().message(),
            "input token 1 is 320, outside the vocabulary of 320");
  std::vector<int32_t> longInput(lp->plan.model.maxContext + 1, 5);
  EXPECT_EQ(session.turn(longInput, 4).status().message(),
            "the input has 513 tokens but the plan holds at most 512 positions");
}

} // namespace
} // namespace ti
