//===- CpuExecutorTest.cpp - The CPU executor against the naive reference -===//
//
// The whole pipeline on the tiny model: tic compiles the graph (with a small
// attention split context, so a 64-step run uses both attention forms),
// packWeights writes random weights, the CPU executor runs the plan; the
// independent reference (test/reference, written from the model's math)
// computes the same steps from the same checkpoint values. Logits must agree
// to float32 accuracy at every step and the greedy tokens must be the same.
//
//===----------------------------------------------------------------------===//
#include "NaiveLlama.h"

#include "ti/Plan/PlanFile.h"
#include "ti/Support/Bf16.h"
#include "ti/Runtime/CpuExecutor.h"
#include "ti/Runtime/Generate.h"
#include "ti/Weights/Packer.h"
#include "ti/Weights/RandomWeights.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unistd.h>

using namespace ti;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kSeed = 11;

/// tiny.graph's hyper-parameters, as the reference wants them.
reference::LlamaConfig tinyConfig() {
  reference::LlamaConfig c;
  c.vocab = 320;
  c.hidden = 64;
  c.ffn = 160;
  c.layers = 3;
  c.heads = 4;
  c.kvHeads = 2;
  c.headDim = 16;
  c.rmsEps = 1e-5;
  c.ropeTheta = 10000.0;
  c.llama3Scaling = true;
  c.ropeFactor = 8.0;
  c.lowFreqFactor = 1.0;
  c.highFreqFactor = 4.0;
  c.originalContext = 64;
  c.tiedEmbeddings = true;
  return c;
}

/// The checkpoint's values: what `tipack --random` packs, as bf16.
std::vector<float> randomTensor(const std::string &name, size_t elements, unsigned rank) {
  std::vector<float> v(elements);
  randomWeights(kSeed, name, rank, 0, elements, v.data());
  for (float &x : v)
    x = bf16ToFloat(floatToBf16(x));
  return v;
}

/// test/models/Inputs/mixed-layers.graph's: tiny's, with three layers of
/// different attention shapes.
reference::LlamaConfig mixedConfig() {
  reference::LlamaConfig c = tinyConfig();
  c.layerShapes = {{4, 2, 16}, {2, 2, 32}, {8, 2, 8}};
  return c;
}

/// The checkpoint values of config `c`'s tensors, shaped by the layer each
/// belongs to.
reference::WeightFn tinyWeights(const reference::LlamaConfig &c = tinyConfig()) {
  return [c](const std::string &name) {
    auto has = [&](const char *s) { return name.find(s) != std::string::npos; };
    int layer = 0;
    std::sscanf(name.c_str(), "model.layers.%d.", &layer);
    const reference::LlamaConfig::AttentionShape shape = c.shapeOf(layer);
    size_t h = c.hidden, q = size_t(shape.heads) * shape.headDim,
           kv = size_t(shape.kvHeads) * shape.headDim, f = c.ffn;
    if (name == "model.embed_tokens.weight")
      return randomTensor(name, size_t(c.vocab) * h, 2);
    if (has("layernorm") || name == "model.norm.weight")
      return randomTensor(name, h, 1);
    if (has("q_proj")) return randomTensor(name, q * h, 2);
    if (has("k_proj") || has("v_proj")) return randomTensor(name, kv * h, 2);
    if (has("o_proj")) return randomTensor(name, h * q, 2);
    if (has("gate_proj") || has("up_proj") || has("down_proj")) return randomTensor(name, f * h, 2);
    ADD_FAILURE() << "unexpected tensor " << name;
    return std::vector<float>();
  };
}

class CpuExecutorTest : public ::testing::Test {
protected:
  /// Compiles `graph` (tiny.graph by default; relative to the source tree)
  /// with `extra` tic options and packs random weights.
  std::shared_ptr<const LoadedPlan> compileAndPack(const std::string &extra,
                                                   const std::string &graph = "models/tiny.graph") {
    fs::path dir = fs::temp_directory_path() /
                   ("ti-cpu-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(dir);
    dirs.push_back(dir);
    std::string plan = (dir / "plan.fb").string(), weights = (dir / "weights.bin").string();
    std::string cmd = std::string(TI_TOOLS_DIR) + "/tic " + TI_SOURCE_DIR + "/" + graph + " " +
                      extra + " -o " + plan;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    auto p = plan::readPlanFile(plan);
    EXPECT_TRUE(p.ok()) << p.status().message();
    PackOptions opts;
    opts.random = true;
    opts.seed = kSeed;
    Status packed = packWeights(*p, opts, weights, nullptr);
    EXPECT_TRUE(packed.ok()) << packed.message();
    auto lp = loadPlan(plan, weights);
    EXPECT_TRUE(lp.ok()) << lp.status().message();
    return lp.ok() ? *lp : nullptr;
  }

  void TearDown() override {
    for (const fs::path &d : dirs)
      fs::remove_all(d);
  }

  std::vector<fs::path> dirs;
  int counter = 0;
};

/// One step at `pos` feeding `token`; returns the executor's logits.
std::vector<float> stepOnce(CpuExecutor &exe, const LoadedPlan &lp, int32_t pos, int32_t token) {
  LaunchArgs a;
  a.startPos = pos;
  a.promptLen = 1;
  a.maxSteps = 1;
  a.prompt[0] = token;
  auto state = exe.launch(a);
  EXPECT_TRUE(state.ok()) << state.status().message();
  EXPECT_EQ(state->steps, 1);
  return *exe.logits();
}

/// The token fed at step `pos` when teacher forcing. A spread of ids: with
/// random tied weights the greedy choice tends to repeat its input, and a
/// sequence of one token makes every V row equal, which would hide attention
/// bugs (any softmax weights then give the same output).
int32_t forcedToken(const LoadedPlan &lp, int32_t pos) {
  return pos == 0 ? lp.plan.model.bos : 3 + (pos * 37) % (int32_t(lp.plan.model.vocab) - 3);
}

/// Runs 64 steps, comparing every step's logits with the reference. With
/// `greedy`, each step feeds the previous step's argmax (and the tokens are
/// returned); otherwise forcedToken().
std::vector<int32_t> compareWithReference(const LoadedPlan &lp, unsigned threads,
                                          bool greedy = true,
                                          const reference::LlamaConfig &config = tinyConfig()) {
  CpuExecutor exe(std::shared_ptr<const LoadedPlan>(&lp, [](const LoadedPlan *) {}), threads);
  reference::NaiveLlama ref(config, tinyWeights(config));
  std::vector<int32_t> tokens;
  int32_t token = lp.plan.model.bos;
  double worst = 0;
  for (int32_t pos = 0; pos < 64; ++pos) {
    std::vector<float> got = stepOnce(exe, lp, pos, token);
    std::vector<double> want = ref.step(token);
    double scale = 0, err = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      scale = std::max(scale, std::abs(want[i]));
      err = std::max(err, std::abs(double(got[i]) - want[i]));
    }
    worst = std::max(worst, err / scale);
    EXPECT_LE(err, 1e-4 * scale) << "step " << pos << " (context " << pos + 1 << ")";
    int32_t mine = static_cast<int32_t>(std::max_element(got.begin(), got.end()) - got.begin());
    EXPECT_EQ(mine, reference::NaiveLlama::argmax(want)) << "step " << pos;
    tokens.push_back(mine);
    token = greedy ? mine : forcedToken(lp, pos + 1);
  }
  ::testing::Test::RecordProperty("max_relative_logit_error", std::to_string(worst));
  return tokens;
}

TEST_F(CpuExecutorTest, MatchesTheReferenceAcrossTheAttentionSplit_Rtx3050) {
  // Split at 16: steps 0-15 run attention in one pass, 16-63 in 10 chunks.
  auto lp = compileAndPack("--target rtx3050 --attention-split-context 16");
  ASSERT_TRUE(lp);
  ASSERT_EQ(lp->plan.attentionChunks(), 10u);
  compareWithReference(*lp, 2);
}

TEST_F(CpuExecutorTest, MatchesTheReferenceAcrossTheAttentionSplit_H200) {
  auto lp = compileAndPack("--target h200 --attention-split-context 16");
  ASSERT_TRUE(lp);
  ASSERT_EQ(lp->plan.attentionChunks(), 16u);
  compareWithReference(*lp, 3);
}

TEST_F(CpuExecutorTest, MatchesTheReferenceWithTheGateUpForm) {
  // The MLP as a GateUp wave and the down projection's Gemv (no partials, no
  // reduce wave), on both targets' shapes.
  for (const char *target : {"--target h200", "--target rtx3050"}) {
    SCOPED_TRACE(target);
    auto lp = compileAndPack(std::string(target) + " --ffn-form gate_up --attention-split-context 16");
    ASSERT_TRUE(lp);
    size_t gateUps = 0, partials = 0;
    for (const plan::TaskRecord &t : lp->plan.tasks) {
      gateUps += t.opcode == uint16_t(plan::Opcode::GateUp);
      partials += t.opcode == uint16_t(plan::Opcode::FfnPartial);
    }
    EXPECT_GT(gateUps, 0u);
    EXPECT_EQ(partials, 0u);
    compareWithReference(*lp, 2);
  }
}

TEST_F(CpuExecutorTest, TaggedHandOffsGiveTheSameBits) {
  // Tagged values (Tagged.h) change where the activations live and which
  // waves end in a grid barrier, not one bit of the arithmetic: on both
  // targets' shapes and FFN forms, logits equal the grid plan's at every step
  // across the attention split, and match the reference. The CPU executor
  // checks every tagged read's tag, so a read before its write fails here.
  // A split at 16 runs attention in chunks and keeps its workspace plain; at
  // 512 (the whole cache) it runs in one pass and the workspace is tagged.
  for (const char *target : {"--target h200 --attention-split-context 16",
                             "--target rtx3050 --attention-split-context 16",
                             "--target h200 --attention-split-context 512"}) {
    SCOPED_TRACE(target);
    const std::string common = target;
    auto grid = compileAndPack(common + " --hand-offs grid");
    auto tags = compileAndPack(common + " --hand-offs tags");
    ASSERT_TRUE(grid && tags);
    size_t tagged = 0, taggedWaves = 0;
    for (const plan::Buffer &b : tags->plan.buffers)
      tagged += b.tagged;
    for (const plan::Wave &w : tags->plan.waves)
      taggedWaves += w.barrier == plan::BarrierKind::Tagged;
    EXPECT_GT(tagged, 0u);
    EXPECT_GT(taggedWaves, 0u);
    CpuExecutor a(grid, 2), b(tags, 2);
    for (int32_t pos = 0; pos < 40; ++pos) {
      const int32_t token = forcedToken(*grid, pos);
      EXPECT_EQ(stepOnce(a, *grid, pos, token), stepOnce(b, *tags, pos, token)) << "step " << pos;
    }
    compareWithReference(*tags, 2, /*greedy=*/false);
  }
}

TEST_F(CpuExecutorTest, WeightTilesGiveTheSameBits) {
  // GEMV weights in octet tiles (tile-weights, WeightTiles.h) change where
  // each weight is packed and how the rows are balanced (whole octets), not
  // one bit of the CPU's arithmetic: tipack packs the same random values at
  // their tiled places and the CPU executor gathers each row back; logits
  // equal the row plan's at every step, and match the reference.
  for (const char *graph : {"models/tiny.graph", "test/models/Inputs/mixed-layers.graph"}) {
    SCOPED_TRACE(graph);
    const std::string common = "--target h200 --attention-split-context 16 ";
    auto rows = compileAndPack(common + "--weight-tiles off", graph);
    auto tiles = compileAndPack(common + "--weight-tiles on", graph);
    ASSERT_TRUE(rows && tiles);
    size_t tiled = 0;
    for (const plan::TaskRecord &t : tiles->plan.tasks)
      tiled += (t.flags & plan::kFlagTiledWeights) != 0;
    EXPECT_GT(tiled, 0u);
    for (const plan::TaskRecord &t : rows->plan.tasks)
      EXPECT_FALSE(t.flags & plan::kFlagTiledWeights);
    CpuExecutor a(rows, 2), b(tiles, 2);
    for (int32_t pos = 0; pos < 40; ++pos) {
      const int32_t token = forcedToken(*rows, pos);
      EXPECT_EQ(stepOnce(a, *rows, pos, token), stepOnce(b, *tiles, pos, token)) << "step " << pos;
    }
  }
  auto tiles = compileAndPack("--target h200 --attention-split-context 16 --weight-tiles on");
  ASSERT_TRUE(tiles);
  compareWithReference(*tiles, 2, /*greedy=*/false);
}

TEST_F(CpuExecutorTest, MatchesTheReferenceOnVariedTokens) {
  // Teacher-forced distinct tokens: distinct K/V rows, so the softmax weights
  // matter; both attention forms, both targets.
  for (const char *target : {"--target rtx3050", "--target h200"}) {
    auto lp = compileAndPack(std::string(target) + " --attention-split-context 16");
    ASSERT_TRUE(lp);
    compareWithReference(*lp, 2, /*greedy=*/false);
  }
}

TEST_F(CpuExecutorTest, MatchesTheReferenceWhenLayersDiffer) {
  // Layers of 2, 1 and 4 query heads per kv head, of dims 16, 32 and 8: each
  // layer's tasks carry their own geometry (the model info has the first's).
  for (const char *target : {"--target rtx3050", "--target h200"}) {
    auto lp = compileAndPack(std::string(target) + " --attention-split-context 16",
                             "test/models/Inputs/mixed-layers.graph");
    ASSERT_TRUE(lp);
    compareWithReference(*lp, 2, /*greedy=*/false, mixedConfig());
  }
}

TEST_F(CpuExecutorTest, OneLaunchGeneratesWhatSingleStepsDo) {
  auto lp = compileAndPack("--target rtx3050 --attention-split-context 16");
  ASSERT_TRUE(lp);
  std::vector<int32_t> stepwise = compareWithReference(*lp, 2);

  CpuExecutor exe(lp, 2);
  auto result = generate(lp->plan, exe, {lp->plan.model.bos}, 64);
  ASSERT_TRUE(result.ok()) << result.status().message();
  // The tiny model's eos (token 2) may end the run early; what ran must agree.
  ASSERT_FALSE(result->tokens.empty());
  EXPECT_TRUE(std::equal(result->tokens.begin(), result->tokens.end(), stepwise.begin()));
  if (result->stop != GenerateResult::Stop::EndOfSequence) {
    EXPECT_EQ(result->tokens.size(), 64u);
  }
}

TEST_F(CpuExecutorTest, ResultsDoNotDependOnThreadsOrRuns) {
  auto lp = compileAndPack("--target rtx3050 --attention-split-context 16");
  ASSERT_TRUE(lp);
  auto logitsAfter = [&](unsigned threads) {
    CpuExecutor exe(lp, threads);
    std::vector<float> last;
    int32_t token = lp->plan.model.bos;
    for (int32_t pos = 0; pos < 24; ++pos) {
      last = stepOnce(exe, *lp, pos, token);
      token = static_cast<int32_t>(std::max_element(last.begin(), last.end()) - last.begin());
    }
    return last;
  };
  std::vector<float> one = logitsAfter(1), four = logitsAfter(4), again = logitsAfter(4);
  EXPECT_EQ(0, std::memcmp(one.data(), four.data(), one.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(four.data(), again.data(), four.size() * sizeof(float)));
}

/// `n` prompt tokens spread over the tiny model's vocabulary.
std::vector<int32_t> spreadPrompt(int n) {
  std::vector<int32_t> prompt;
  for (int i = 0; i < n; ++i)
    prompt.push_back(3 + (i * 37) % 300);
  return prompt;
}

TEST_F(CpuExecutorTest, PromptsLongerThanOneLaunchAreFedInPieces) {
  auto lp = compileAndPack("--target rtx3050 --attention-split-context 16");
  ASSERT_TRUE(lp);
  // 100 prompt tokens: one prompt-only launch of 64, then 36 + generation.
  const std::vector<int32_t> prompt = spreadPrompt(100);
  CpuExecutor exe(lp, 2);
  auto result = generate(lp->plan, exe, prompt, 5);
  ASSERT_TRUE(result.ok()) << result.status().message();

  reference::NaiveLlama ref(tinyConfig(), tinyWeights());
  std::vector<double> logits;
  for (int32_t t : prompt)
    logits = ref.step(t);
  ASSERT_FALSE(result->tokens.empty());
  EXPECT_EQ(result->tokens[0], reference::NaiveLlama::argmax(logits));
}

TEST_F(CpuExecutorTest, APromptFromStartPosContinuesTheCache) {
  auto lp = compileAndPack("--target rtx3050 --attention-split-context 16");
  ASSERT_TRUE(lp);
  const std::vector<int32_t> prompt = spreadPrompt(100);
  CpuExecutor whole(lp, 2), split(lp, 2);
  auto all = generate(lp->plan, whole, prompt, 5);
  ASSERT_TRUE(all.ok()) << all.status().message();

  // The first 70 tokens (a full launch and a short one, nothing generated),
  // then the rest from position 70 with the generation.
  auto head = generate(lp->plan, split, {prompt.begin(), prompt.begin() + 70}, 0);
  ASSERT_TRUE(head.ok()) << head.status().message();
  EXPECT_EQ(head->positions, 70);
  GenerateOptions from70;
  from70.startPos = 70;
  auto rest = generate(lp->plan, split, {prompt.begin() + 70, prompt.end()}, 5, from70);
  ASSERT_TRUE(rest.ok()) << rest.status().message();
  EXPECT_EQ(rest->tokens, all->tokens);
  EXPECT_EQ(rest->positions, all->positions);

  GenerateOptions past;
  past.startPos = int32_t(lp->plan.model.maxContext) - 1;
  auto over = generate(lp->plan, split, {1, 2}, 1, past);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().message(),
            "a prompt of 2 tokens from position 511 does not fit the plan's 512 positions");
}

TEST_F(CpuExecutorTest, BadPromptsAreRefused) {
  auto lp = compileAndPack("--target rtx3050");
  ASSERT_TRUE(lp);
  CpuExecutor exe(lp, 1);
  auto empty = generate(lp->plan, exe, {}, 4);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().message(), "the prompt is empty: give at least one token");
  auto outside = generate(lp->plan, exe, {1, 320}, 4);
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.status().message(),
            "prompt token 1 is 320, outside the vocabulary of 320");
  auto tooLong = generate(lp->plan, exe, std::vector<int32_t>(513, 5), 4);
  ASSERT_FALSE(tooLong.ok());
  EXPECT_EQ(tooLong.status().message(),
            "the prompt has 513 tokens but the plan holds at most 512 positions");
}

TEST_F(CpuExecutorTest, GenerationStopsAtTheEndOfTheContext) {
  // A 24-position plan: 20 prompt tokens leave room for 5 predictions.
  auto lp = compileAndPack("--target rtx3050 --max-context 24 --attention-split-context 8");
  ASSERT_TRUE(lp);
  CpuExecutor exe(lp, 2);
  std::vector<int32_t> prompt(20, 7);
  auto result = generate(lp->plan, exe, prompt, 50);
  ASSERT_TRUE(result.ok()) << result.status().message();
  if (result->stop != GenerateResult::Stop::EndOfSequence) {
    EXPECT_EQ(result->stop, GenerateResult::Stop::Context);
    EXPECT_EQ(result->tokens.size(), 5u);
    EXPECT_EQ(result->positions, 24);
  }
}

} // namespace
