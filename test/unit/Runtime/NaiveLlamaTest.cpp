//===- NaiveLlamaTest.cpp - Checks on the reference forward pass ----------===//
//
// The oracle has to be right on its own, since everything else is judged
// against it. So: tiny models whose logits are worked out by hand (position
// 0, where attention returns v; position 1, where RoPE decides the scores;
// the MLP), RoPE's defining property and Llama 3's frequencies derived here
// another way, the bf16 rounding against a bit-level rounding, and
// equivalences on random models: causality, GQA against an explicitly
// expanded MHA, the bf16 cache against a double one, tied against untied.
//
//===----------------------------------------------------------------------===//
#include "NaiveLlama.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <numbers>
#include <stdexcept>

using namespace ti::reference;

namespace {

using Weights = std::map<std::string, std::vector<float>>;

/// Serves \p weights by name; asking for a tensor that is not there throws,
/// so a model that loads a name it should not (lm_head when tied) fails.
WeightFn serve(Weights weights) {
  return [weights = std::move(weights)](const std::string &name) {
    auto it = weights.find(name);
    if (it == weights.end())
      throw std::runtime_error("no tensor " + name);
    return it->second;
  };
}

std::string layer(int i, const char *suffix) {
  return "model.layers." + std::to_string(i) + "." + suffix;
}

/// SplitMix64: a fixed sequence on every platform, unlike the standard
/// distributions, so the random models are the same everywhere.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [-1, 1).
  double uniform() {
    return static_cast<double>(next() >> 11) * 0x1.0p-52 - 1.0;
  }
};

std::vector<float> randomValues(Rng &rng, size_t count, double scale,
                                double offset = 0.0) {
  std::vector<float> v(count);
  for (float &x : v)
    x = static_cast<float>(offset + scale * rng.uniform());
  return v;
}

/// Random weights of a plausible scale (linear layers ~ 1/sqrt(fan-in), norm
/// weights near 1) so activations stay in a sane range.
Weights randomWeights(const LlamaConfig &c, uint64_t seed) {
  Rng rng{seed};
  Weights w;
  const size_t h = c.hidden, q = c.heads * c.headDim,
               kv = c.kvHeads * c.headDim, f = c.ffn;
  auto linear = [&](size_t out, size_t in) {
    return randomValues(rng, out * in, 1.5 / std::sqrt(double(in)));
  };
  w["model.embed_tokens.weight"] = randomValues(rng, c.vocab * h, 1.0);
  for (int i = 0; i < c.layers; ++i) {
    w[layer(i, "input_layernorm.weight")] = randomValues(rng, h, 0.2, 1.0);
    w[layer(i, "self_attn.q_proj.weight")] = linear(q, h);
    w[layer(i, "self_attn.k_proj.weight")] = linear(kv, h);
    w[layer(i, "self_attn.v_proj.weight")] = linear(kv, h);
    w[layer(i, "self_attn.o_proj.weight")] = linear(h, q);
    w[layer(i, "post_attention_layernorm.weight")] =
        randomValues(rng, h, 0.2, 1.0);
    w[layer(i, "mlp.gate_proj.weight")] = linear(f, h);
    w[layer(i, "mlp.up_proj.weight")] = linear(f, h);
    w[layer(i, "mlp.down_proj.weight")] = linear(h, f);
  }
  w["model.norm.weight"] = randomValues(rng, h, 0.2, 1.0);
  if (!c.tiedEmbeddings)
    w["lm_head.weight"] = randomValues(rng, c.vocab * h, 1.0);
  return w;
}

/// A small GQA model that exercises every part: two layers, two query heads
/// per K/V head, and an original context short enough that the Llama 3
/// scaling has frequencies in all three of its regimes.
LlamaConfig smallConfig() {
  LlamaConfig c;
  c.vocab = 40;
  c.hidden = 24;
  c.ffn = 40;
  c.layers = 2;
  c.heads = 4;
  c.kvHeads = 2;
  c.headDim = 8;
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

/// One layer, one head of dimension 2, ffn 1, no scaling, tied: the shape
/// of the hand-computed models. The caller fills in the weights.
LlamaConfig tinyConfig(int vocab, int hidden = 2) {
  LlamaConfig c;
  c.vocab = vocab;
  c.hidden = hidden;
  c.ffn = 1;
  c.layers = 1;
  c.heads = 1;
  c.kvHeads = 1;
  c.headDim = 2;
  c.rmsEps = 1e-6;
  c.tiedEmbeddings = true;
  return c;
}

/// Weights for tinyConfig: Q, K and V take the first two elements of h, O
/// puts them back; the MLP is switched off (a zero gate makes
/// silu(0) * up = 0); norms are 1. Tests change what they need.
Weights tinyWeights(std::vector<float> embedding, int hidden = 2) {
  const size_t n = hidden;
  std::vector<float> take(2 * n, 0.0f), put(n * 2, 0.0f);
  for (size_t r = 0; r < 2; ++r) {
    take[r * n + r] = 1;
    put[r * 2 + r] = 1;
  }
  Weights w;
  w["model.embed_tokens.weight"] = std::move(embedding);
  w[layer(0, "input_layernorm.weight")] = std::vector<float>(n, 1.0f);
  w[layer(0, "self_attn.q_proj.weight")] = take;
  w[layer(0, "self_attn.k_proj.weight")] = take;
  w[layer(0, "self_attn.v_proj.weight")] = take;
  w[layer(0, "self_attn.o_proj.weight")] = put;
  w[layer(0, "post_attention_layernorm.weight")] = std::vector<float>(n, 1.0f);
  w[layer(0, "mlp.gate_proj.weight")] = std::vector<float>(n, 0.0f);
  w[layer(0, "mlp.up_proj.weight")] = std::vector<float>(n, -2.0f);
  w[layer(0, "mlp.down_proj.weight")] = std::vector<float>(n, 3.0f);
  w["model.norm.weight"] = std::vector<float>(n, 1.0f);
  return w;
}

std::vector<std::vector<double>> run(NaiveLlama &model,
                                     const std::vector<int> &tokens) {
  std::vector<std::vector<double>> logits;
  for (int t : tokens)
    logits.push_back(model.step(t));
  return logits;
}

double dot(const std::vector<double> &a, const std::vector<double> &b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += a[i] * b[i];
  return s;
}

//===----------------------------------------------------------------------===//
// Hand-computed models
//===----------------------------------------------------------------------===//

// At position 0 softmax has one score, so attention returns v = h whatever q
// and k are; with identity V and O the residual is x + rmsnorm(x).
TEST(NaiveLlama, PositionZeroAttentionReturnsV) {
  LlamaConfig c = tinyConfig(3);
  Weights w = tinyWeights({3, 4, 1, 0, 0, 2});
  // Q and K must not matter at position 0.
  w[layer(0, "self_attn.q_proj.weight")] = {1, 2, 3, 4};
  w[layer(0, "self_attn.k_proj.weight")] = {-1, 5, 0.5f, 2};
  NaiveLlama model(c, serve(w), /*bf16KvCache=*/false);
  EXPECT_EQ(model.position(), 0);
  std::vector<double> logits = model.step(0);
  EXPECT_EQ(model.position(), 1);

  // x = [3, 4]: mean square 12.5, h = x / r; x' = x (1 + 1/r) = s x.
  const double eps = c.rmsEps;
  const double r = std::sqrt(12.5 + eps);
  const double s = 1 + 1 / r;
  // Final norm of s x: s / sqrt(12.5 s^2 + eps) times x; logits are the
  // embedding rows dotted with that: [3,4].[3,4] = 25, [1,0] -> 3, [0,2] -> 8.
  const double n = s / std::sqrt(12.5 * s * s + eps);
  ASSERT_EQ(logits.size(), 3u);
  EXPECT_NEAR(logits[0], 25 * n, 1e-12);
  EXPECT_NEAR(logits[1], 3 * n, 1e-12);
  EXPECT_NEAR(logits[2], 8 * n, 1e-12);
  EXPECT_EQ(NaiveLlama::argmax(logits), 0);
}

// The same model with the bf16 cache: v is stored rounded, and the current
// position reads the rounded row too.
TEST(NaiveLlama, PositionZeroReadsTheRoundedV) {
  LlamaConfig c = tinyConfig(3);
  NaiveLlama model(c, serve(tinyWeights({3, 4, 1, 0, 0, 2})));
  EXPECT_TRUE(model.bf16KvCache());
  std::vector<double> logits = model.step(0);

  const double r = std::sqrt(12.5 + c.rmsEps);
  const double x0 = 3 + NaiveLlama::roundToBf16(3 / r);
  const double x1 = 4 + NaiveLlama::roundToBf16(4 / r);
  ASSERT_NE(x0, 3 * (1 + 1 / r)) << "the test needs a v that bf16 rounds";
  const double n = 1 / std::sqrt((x0 * x0 + x1 * x1) / 2 + c.rmsEps);
  EXPECT_NEAR(logits[0], n * (3 * x0 + 4 * x1), 1e-12);
  EXPECT_NEAR(logits[1], n * x0, 1e-12);
  EXPECT_NEAR(logits[2], n * 2 * x1, 1e-12);
}

// At position 1 the scores depend on RoPE. With head dimension 2 the only
// frequency is theta^0 = 1, so position p rotates by p radians:
// [a, b] -> [a cos p - b sin p, b cos p + a sin p]. Hidden is 3, not the head
// dimension, so that scaling scores by the wrong one shows.
TEST(NaiveLlama, PositionOneScoresFollowRope) {
  LlamaConfig c = tinyConfig(2, 3);
  c.ropeTheta = 12345.0; // irrelevant: the one frequency is 1
  NaiveLlama model(c, serve(tinyWeights({1, 0, 0, 0, 1, 0}, 3)), false);
  model.step(0);
  std::vector<double> logits = model.step(1);

  // h0 = [k, 0, 0], h1 = [0, k, 0] with k = 1 / sqrt(1/3 + eps).
  const double eps = c.rmsEps;
  const double k = 1 / std::sqrt(1.0 / 3 + eps);
  // q1 = k1 = R(1) [0, k] = [-k sin 1, k cos 1] and k0 = R(0) [k, 0] = [k, 0],
  // so q1.k1 = k^2 and q1.k0 = -k^2 sin 1; scores are divided by sqrt(2).
  const double s1 = k * k / std::sqrt(2.0);
  const double s0 = -k * k * std::sin(1.0) / std::sqrt(2.0);
  const double p1 = 1 / (1 + std::exp(s0 - s1));
  const double p0 = 1 - p1;
  // V is not rotated: attention = p0 v0 + p1 v1; x = e1 + attention.
  const double x0 = p0 * k, x1 = 1 + p1 * k;
  const double n = 1 / std::sqrt((x0 * x0 + x1 * x1) / 3 + eps);
  EXPECT_NEAR(logits[0], n * x0, 1e-12);
  EXPECT_NEAR(logits[1], n * x1, 1e-12);
}

// Attention switched off (O = 0) isolates the MLP, with norm weights that are
// not 1: x += down * silu(gate . g) * (up . g), g = rmsnorm(x) * w_post.
TEST(NaiveLlama, MlpIsSwiGlu) {
  LlamaConfig c = tinyConfig(2);
  Weights w = tinyWeights({1, 2, -1, 0.5f});
  w[layer(0, "self_attn.o_proj.weight")] = {0, 0, 0, 0};
  w[layer(0, "post_attention_layernorm.weight")] = {2, 0.5f};
  w[layer(0, "mlp.gate_proj.weight")] = {1, 0};
  w[layer(0, "mlp.up_proj.weight")] = {0, 1};
  w[layer(0, "mlp.down_proj.weight")] = {1, 0};
  w["model.norm.weight"] = {1.5f, -1};
  NaiveLlama model(c, serve(w), false);
  std::vector<double> logits = model.step(0);

  const double eps = c.rmsEps;
  const double r = std::sqrt(2.5 + eps); // rms of [1, 2]
  const double g0 = 2 * 1 / r, g1 = 0.5 * 2 / r;
  const double silu = g0 / (1 + std::exp(-g0));
  const double x0 = 1 + silu * g1, x1 = 2;
  const double n = 1 / std::sqrt((x0 * x0 + x1 * x1) / 2 + eps);
  const double y0 = 1.5 * n * x0, y1 = -1 * n * x1;
  EXPECT_NEAR(logits[0], 1 * y0 + 2 * y1, 1e-12);
  EXPECT_NEAR(logits[1], -1 * y0 + 0.5 * y1, 1e-12);
}

//===----------------------------------------------------------------------===//
// RoPE
//===----------------------------------------------------------------------===//

// Rotate-half pairs element i with i + d/2, not with its neighbour.
TEST(NaiveLlama, RopePairsEachElementWithTheOneHalfAHeadAway) {
  LlamaConfig c;
  c.headDim = 4;
  c.ropeTheta = 100.0; // frequencies 1 and 100^(-1/2) = 0.1
  std::vector<double> f = NaiveLlama::ropeInverseFrequencies(c);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_DOUBLE_EQ(f[0], 1.0);
  EXPECT_DOUBLE_EQ(f[1], 0.1);

  std::vector<double> a = {1, 0, 0, 0};
  NaiveLlama::applyRope(a, 1, f);
  EXPECT_NEAR(a[0], std::cos(1.0), 1e-15);
  EXPECT_EQ(a[1], 0);
  EXPECT_NEAR(a[2], std::sin(1.0), 1e-15);
  EXPECT_EQ(a[3], 0);

  std::vector<double> b = {0, 0, 0, 1};
  NaiveLlama::applyRope(b, 2, f);
  EXPECT_EQ(b[0], 0);
  EXPECT_NEAR(b[1], -std::sin(0.2), 1e-15);
  EXPECT_EQ(b[2], 0);
  EXPECT_NEAR(b[3], std::cos(0.2), 1e-15);
}

// The property RoPE exists for: q rotated to p and k rotated to p' have a dot
// product that depends on p - p' only. Checked with the Llama 3 frequencies.
TEST(NaiveLlama, RopeDotProductsDependOnRelativePositionOnly) {
  LlamaConfig c;
  c.headDim = 64;
  c.llama3Scaling = true;
  c.ropeFactor = 32.0;
  std::vector<double> f = NaiveLlama::ropeInverseFrequencies(c);
  Rng rng{7};
  std::vector<double> q(64), k(64);
  for (int i = 0; i < 64; ++i) {
    q[i] = rng.uniform();
    k[i] = rng.uniform();
  }
  auto rotated = [&](std::vector<double> v, int p) {
    NaiveLlama::applyRope(v, p, f);
    return v;
  };
  const double scale = std::sqrt(dot(q, q) * dot(k, k));
  struct Case {
    int p, pk, shift;
  };
  for (Case cs : {Case{5, 3, 100}, Case{0, 7, 1000}, Case{17, 17, 12345},
                  Case{40, 2, 3}, Case{3, 9, 8000}}) {
    const double before = dot(rotated(q, cs.p), rotated(k, cs.pk));
    const double after =
        dot(rotated(q, cs.p + cs.shift), rotated(k, cs.pk + cs.shift));
    EXPECT_NEAR(before, after, 1e-10 * scale)
        << "p=" << cs.p << " p'=" << cs.pk << " shift=" << cs.shift;
    // Rotations keep lengths...
    EXPECT_NEAR(dot(rotated(q, cs.p), rotated(q, cs.p)), dot(q, q), 1e-12);
    // ...and a different relative position does change the product, so a
    // RoPE that did nothing would not pass.
    EXPECT_GT(std::fabs(before - dot(rotated(q, cs.p), rotated(k, cs.pk + 1))),
              1e-3);
  }
}

// Llama 3.2's settings. Derived here another way: in long double, with the
// frequency from exp/log rather than pow, and the regimes decided on
// originalContext / wavelength = originalContext * f / (2 pi) against the
// factors rather than on wavelength against originalContext / factor.
TEST(NaiveLlama, Llama3InverseFrequencies) {
  LlamaConfig c;
  c.headDim = 64;
  c.ropeTheta = 500000.0;
  c.llama3Scaling = true;
  c.ropeFactor = 32.0;
  c.lowFreqFactor = 1.0;
  c.highFreqFactor = 4.0;
  c.originalContext = 8192;
  std::vector<double> got = NaiveLlama::ropeInverseFrequencies(c);
  ASSERT_EQ(got.size(), 32u);

  const long double pi = std::numbers::pi_v<long double>;
  int high = 0, medium = 0, low = 0;
  for (int i = 0; i < 32; ++i) {
    long double f = std::exp(-(2.0L * i / 64) * std::log(500000.0L));
    long double turns = 8192.0L * f / (2 * pi); // rotations per context
    long double want;
    if (turns > 4) {
      want = f;
      ++high;
    } else if (turns < 1) {
      want = f / 32;
      ++low;
    } else {
      long double t = (turns - 1) / (4 - 1);
      want = f * (t + (1 - t) / 32);
      ++medium;
    }
    EXPECT_NEAR(got[i], static_cast<double>(want),
                1e-13 * static_cast<double>(want))
        << "i=" << i;
  }
  // Wavelengths 2 pi * 500000^(i/32): below 2048 up to i = 14, above 8192
  // from i = 18.
  EXPECT_EQ(high, 15);
  EXPECT_EQ(medium, 3);
  EXPECT_EQ(low, 14);
  // Ends of the range: the fastest rotation is kept, the slowest is divided
  // by the factor.
  EXPECT_EQ(got[0], 1.0);
  EXPECT_NEAR(got[31], std::pow(500000.0, -62.0 / 64) / 32, 1e-20);
  // The smoothed band joins its neighbours in order.
  for (int i = 1; i < 32; ++i)
    EXPECT_LT(got[i], got[i - 1]);

  c.llama3Scaling = false;
  std::vector<double> plain = NaiveLlama::ropeInverseFrequencies(c);
  for (int i = 0; i < 32; ++i)
    EXPECT_NEAR(
        plain[i],
        static_cast<double>(std::exp(-(2.0L * i / 64) * std::log(500000.0L))),
        1e-14 * plain[i]);
}

//===----------------------------------------------------------------------===//
// bfloat16
//===----------------------------------------------------------------------===//

TEST(NaiveLlama, RoundToBf16KnownValues) {
  // bf16 keeps 8 significant bits: near 1 the spacing is 2^-7.
  EXPECT_EQ(NaiveLlama::roundToBf16(1.0), 1.0);
  EXPECT_EQ(NaiveLlama::roundToBf16(1 + 0x1p-8), 1.0); // tie, to even
  EXPECT_EQ(NaiveLlama::roundToBf16(1 + 3 * 0x1p-8), 1 + 0x1p-6); // tie, up
  EXPECT_EQ(NaiveLlama::roundToBf16(1 + 0x1p-8 + 0x1p-30), 1 + 0x1p-7);
  EXPECT_EQ(NaiveLlama::roundToBf16(-(1 + 0x1p-8 + 0x1p-30)), -(1 + 0x1p-7));
  // 1/3 = 1.0101010|1... x 2^-2 rounds up to 1.0101011 x 2^-2.
  EXPECT_EQ(NaiveLlama::roundToBf16(1.0 / 3), 0.333984375);
  EXPECT_EQ(NaiveLlama::roundToBf16(0.0), 0.0);
  EXPECT_TRUE(std::signbit(NaiveLlama::roundToBf16(-0.0)));
  // Subnormals step by 2^-133; half of that ties to even (zero).
  EXPECT_EQ(NaiveLlama::roundToBf16(0x1p-134), 0.0);
  EXPECT_EQ(NaiveLlama::roundToBf16(3 * 0x1p-134), 0x1p-132);
  // The largest bf16 is (2 - 2^-7) 2^127; float's largest rounds past it.
  EXPECT_EQ(NaiveLlama::roundToBf16(0x1.fcp127), 0x1.fcp127);
  EXPECT_EQ(NaiveLlama::roundToBf16(3.4028234663852886e38), INFINITY);
  EXPECT_EQ(NaiveLlama::roundToBf16(-INFINITY), -INFINITY);
  EXPECT_TRUE(std::isnan(NaiveLlama::roundToBf16(NAN)));
}

// Against the usual bit-level conversion of a float (add 0x7FFF plus the
// lowest kept bit, truncate), on random bit patterns of every exponent.
TEST(NaiveLlama, RoundToBf16MatchesBitLevelRounding) {
  Rng rng{99};
  for (int n = 0; n < 200000; ++n) {
    uint32_t bits = static_cast<uint32_t>(rng.next());
    if ((bits & 0x7F800000u) == 0x7F800000u)
      continue; // infinities and NaNs are checked above
    float value;
    std::memcpy(&value, &bits, sizeof value);
    uint32_t roundedBits = (bits + 0x7FFFu + ((bits >> 16) & 1u)) & 0xFFFF0000u;
    float want;
    std::memcpy(&want, &roundedBits, sizeof want);
    ASSERT_EQ(NaiveLlama::roundToBf16(value), static_cast<double>(want))
        << std::hexfloat << value;
  }
}

//===----------------------------------------------------------------------===//
// Random models
//===----------------------------------------------------------------------===//

// Logits at position t see tokens 0..t only: two sequences that share a
// prefix agree exactly on it and differ after it. reset() starts over.
TEST(NaiveLlama, LaterTokensDoNotChangeEarlierLogits) {
  LlamaConfig c = smallConfig();
  Weights w = randomWeights(c, 1);
  NaiveLlama a(c, serve(w)), b(c, serve(w));
  auto la = run(a, {3, 7, 1, 9, 4, 30});
  auto lb = run(b, {3, 7, 1, 20, 11, 30});
  EXPECT_EQ(a.position(), 6);
  for (int t = 0; t < 3; ++t)
    EXPECT_EQ(la[t], lb[t]) << "position " << t;
  for (int t = 3; t < 6; ++t)
    EXPECT_NE(la[t], lb[t]) << "position " << t;

  a.reset();
  EXPECT_EQ(a.position(), 0);
  EXPECT_EQ(run(a, {3, 7, 1, 20, 11, 30}), lb);
}

// GQA is MHA with each K/V head shared by heads / kvHeads consecutive query
// heads: copying each K/V head's projection rows once per query head that
// uses it gives an MHA model (kvHeads = heads) with the same logits. Copying
// them round-robin instead (the other plausible mapping) must not.
TEST(NaiveLlama, GqaEqualsMhaWithExpandedKv) {
  LlamaConfig gqa = smallConfig();
  Weights w = randomWeights(gqa, 2);
  LlamaConfig mha = gqa;
  mha.kvHeads = mha.heads;
  const int group = gqa.heads / gqa.kvHeads;
  const size_t rowsPerHead = size_t(gqa.headDim) * gqa.hidden;
  auto expand = [&](bool consecutive) {
    Weights e = w;
    for (int l = 0; l < gqa.layers; ++l)
      for (const char *name :
           {"self_attn.k_proj.weight", "self_attn.v_proj.weight"}) {
        const std::vector<float> &src = w.at(layer(l, name));
        std::vector<float> dst;
        for (int h = 0; h < mha.heads; ++h) {
          int kvHead = consecutive ? h / group : h % gqa.kvHeads;
          dst.insert(dst.end(), src.begin() + kvHead * rowsPerHead,
                     src.begin() + (kvHead + 1) * rowsPerHead);
        }
        e[layer(l, name)] = std::move(dst);
      }
    return e;
  };

  const std::vector<int> tokens = {5, 0, 39, 12, 12, 7, 21};
  NaiveLlama g(gqa, serve(w));
  NaiveLlama m(mha, serve(expand(true)));
  NaiveLlama wrong(mha, serve(expand(false)));
  auto lg = run(g, tokens), lm = run(m, tokens), lw = run(wrong, tokens);
  double worstWrong = 0;
  for (size_t t = 0; t < tokens.size(); ++t) {
    for (int v = 0; v < gqa.vocab; ++v) {
      EXPECT_NEAR(lg[t][v], lm[t][v], 1e-12) << "position " << t;
      worstWrong = std::max(worstWrong, std::fabs(lg[t][v] - lw[t][v]));
    }
  }
  EXPECT_GT(worstWrong, 1e-3);
}

// Per-layer shapes: the uniform shape given per layer is the same model, and
// expanding only layer 1's K/V heads (layer 1 MHA, layer 0 GQA) keeps the
// logits, so each layer attends with its own shape.
TEST(NaiveLlama, LayerShapesApplyToTheirLayer) {
  LlamaConfig gqa = smallConfig();
  ASSERT_EQ(gqa.layers, 2);
  Weights w = randomWeights(gqa, 5);
  LlamaConfig same = gqa;
  same.layerShapes = {gqa.shapeOf(0), gqa.shapeOf(1)};
  LlamaConfig mixed = gqa;
  mixed.layerShapes = {gqa.shapeOf(0), {gqa.heads, gqa.heads, gqa.headDim}};
  const int group = gqa.heads / gqa.kvHeads;
  const size_t rowsPerHead = size_t(gqa.headDim) * gqa.hidden;
  Weights expanded = w;
  for (const char *name : {"self_attn.k_proj.weight", "self_attn.v_proj.weight"}) {
    const std::vector<float> &src = w.at(layer(1, name));
    std::vector<float> dst;
    for (int h = 0; h < gqa.heads; ++h)
      dst.insert(dst.end(), src.begin() + (h / group) * rowsPerHead,
                 src.begin() + (h / group + 1) * rowsPerHead);
    expanded[layer(1, name)] = std::move(dst);
  }
  const std::vector<int> tokens = {5, 0, 39, 12, 7};
  NaiveLlama g(gqa, serve(w)), s(same, serve(w)), m(mixed, serve(expanded));
  auto lg = run(g, tokens), ls = run(s, tokens), lm = run(m, tokens);
  for (size_t t = 0; t < tokens.size(); ++t)
    for (int v = 0; v < gqa.vocab; ++v) {
      EXPECT_EQ(lg[t][v], ls[t][v]) << "position " << t;
      EXPECT_NEAR(lg[t][v], lm[t][v], 1e-12) << "position " << t;
    }
  // Layer 1 with layer 0's (GQA) shape cannot read the expanded weights.
  LlamaConfig wrong = mixed;
  wrong.layerShapes = {gqa.shapeOf(0), gqa.shapeOf(0)};
  EXPECT_THROW(NaiveLlama(wrong, serve(expanded)), std::invalid_argument);
}

// The bf16 cache moves the logits a little and the prediction not at all.
TEST(NaiveLlama, Bf16CacheChangesLogitsSlightly) {
  LlamaConfig c = smallConfig();
  Weights w = randomWeights(c, 3);
  NaiveLlama exact(c, serve(w), false), rounded(c, serve(w), true);
  EXPECT_FALSE(exact.bf16KvCache());
  const std::vector<int> tokens = {1, 2, 3, 5, 8, 13, 21, 34};
  auto le = run(exact, tokens), lr = run(rounded, tokens);
  double worst = 0, largest = 0;
  for (size_t t = 0; t < tokens.size(); ++t) {
    EXPECT_EQ(NaiveLlama::argmax(le[t]), NaiveLlama::argmax(lr[t]))
        << "position " << t;
    for (int v = 0; v < c.vocab; ++v) {
      worst = std::max(worst, std::fabs(le[t][v] - lr[t][v]));
      largest = std::max(largest, std::fabs(le[t][v]));
    }
  }
  EXPECT_GT(worst, 0.0);
  // bf16 keeps ~3 significant digits; the logits move by far less than
  // their size.
  EXPECT_LT(worst, 0.02 * largest);
}

// Untied with lm_head equal to the embedding is the tied model, exactly; and
// the untied model does read lm_head (negating it negates the logits).
TEST(NaiveLlama, TiedEqualsUntiedWithLmHeadCopiedFromEmbedding) {
  LlamaConfig tied = smallConfig();
  Weights w = randomWeights(tied, 4); // no lm_head: asking for it throws
  LlamaConfig untied = tied;
  untied.tiedEmbeddings = false;
  Weights wu = w;
  wu["lm_head.weight"] = w.at("model.embed_tokens.weight");
  Weights wn = wu;
  for (float &x : wn["lm_head.weight"])
    x = -x;

  const std::vector<int> tokens = {9, 9, 2, 38};
  NaiveLlama t(tied, serve(w)), u(untied, serve(wu)), n(untied, serve(wn));
  auto lt = run(t, tokens), lu = run(u, tokens), ln = run(n, tokens);
  for (size_t i = 0; i < tokens.size(); ++i) {
    EXPECT_EQ(lt[i], lu[i]) << "position " << i;
    for (int v = 0; v < tied.vocab; ++v)
      EXPECT_EQ(ln[i][v], -lt[i][v]);
  }
}

//===----------------------------------------------------------------------===//
// Small things
//===----------------------------------------------------------------------===//

TEST(NaiveLlama, ArgmaxTakesTheLowestIndexOnTies) {
  EXPECT_EQ(NaiveLlama::argmax({}), -1);
  EXPECT_EQ(NaiveLlama::argmax({-3.0}), 0);
  EXPECT_EQ(NaiveLlama::argmax({-5.0, -1.0, -2.0}), 1);
  EXPECT_EQ(NaiveLlama::argmax({1.0, 4.0, 2.0, 4.0}), 1);
  EXPECT_EQ(NaiveLlama::argmax({7.0, 7.0, 7.0}), 0);
}

TEST(NaiveLlama, RejectsBadConfigsWeightsAndTokens) {
  LlamaConfig c = smallConfig();
  Weights w = randomWeights(c, 5);

  LlamaConfig badHeads = c;
  badHeads.kvHeads = 3;
  EXPECT_THROW(NaiveLlama(badHeads, serve(w)), std::invalid_argument);
  LlamaConfig oddHeadDim = c;
  oddHeadDim.headDim = 7;
  EXPECT_THROW(NaiveLlama(oddHeadDim, serve(w)), std::invalid_argument);

  Weights shortNorm = w;
  shortNorm["model.norm.weight"].pop_back();
  EXPECT_THROW(NaiveLlama(c, serve(shortNorm)), std::invalid_argument);

  NaiveLlama model(c, serve(w));
  EXPECT_THROW(model.step(-1), std::out_of_range);
  EXPECT_THROW(model.step(c.vocab), std::out_of_range);
  EXPECT_EQ(model.position(), 0);
}

} // namespace
