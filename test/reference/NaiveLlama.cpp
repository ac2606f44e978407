//===- NaiveLlama.cpp - Reference forward pass of a Llama decoder ---------===//
//
// One step, for a token t at position p:
//
//   1. x = embed[t]
//   2. for each layer:
//        h = rmsnorm(x) * w_in
//        q = Wq h, k = Wk h, v = Wv h; RoPE(q), RoPE(k) per head at p
//        append k, v to the layer's cache (rounded to bf16 if asked)
//        per query head: softmax(q . K[0..p] / sqrt(d)) . V[0..p], with K/V
//          head = query head / (heads / kvHeads)
//        x += Wo concat(heads)
//        g = rmsnorm(x) * w_post
//        x += Wdown (silu(Wgate g) * (Wup g))
//   3. logits = Wlm (rmsnorm(x) * w_final), Wlm = embed when tied
//
// Everything is computed in double and written as the formula reads; nothing
// is fused, reordered or blocked, so this file can be checked against the math
// by eye. The weight matrices keep the floats the callback gave (every float
// is exact in double, so this loses nothing and halves the memory).
//
//===----------------------------------------------------------------------===//
#include "NaiveLlama.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <utility>

using namespace ti::reference;

namespace {

[[noreturn]] void fail(const std::string &message) {
  throw std::invalid_argument("NaiveLlama: " + message);
}

void checkConfig(const LlamaConfig &c) {
  if (c.vocab <= 0 || c.hidden <= 0 || c.ffn <= 0 || c.layers <= 0)
    fail("every dimension must be positive");
  if (!c.layerShapes.empty() && c.layerShapes.size() != static_cast<size_t>(c.layers))
    fail("layerShapes must have one shape per layer");
  for (int i = 0; i < c.layers; ++i) {
    const LlamaConfig::AttentionShape s = c.shapeOf(i);
    if (s.heads <= 0 || s.kvHeads <= 0 || s.headDim <= 0)
      fail("every dimension must be positive");
    if (s.headDim % 2 != 0)
      fail("headDim must be even: RoPE rotates pairs of elements");
    if (s.heads % s.kvHeads != 0)
      fail("kvHeads must divide heads");
  }
  if (!(c.rmsEps >= 0.0) || !(c.ropeTheta > 0.0))
    fail("rmsEps must be non-negative and ropeTheta positive");
  if (c.llama3Scaling &&
      (!(c.ropeFactor > 0.0) || !(c.lowFreqFactor > 0.0) ||
       !(c.highFreqFactor > c.lowFreqFactor) || c.originalContext <= 0))
    fail("llama3 scaling needs factor > 0, 0 < lowFreqFactor < "
         "highFreqFactor and originalContext > 0");
}

std::string layerName(int layer, const char *suffix) {
  return "model.layers." + std::to_string(layer) + "." + suffix;
}

std::vector<float> loadValues(const WeightFn &weights, const std::string &name,
                              size_t size) {
  std::vector<float> raw = weights(name);
  if (raw.size() != size)
    fail(name + " has " + std::to_string(raw.size()) + " values, expected " +
         std::to_string(size));
  return raw;
}

std::vector<double> loadVector(const WeightFn &weights, const std::string &name,
                               int size) {
  std::vector<float> raw = loadValues(weights, name, size);
  return std::vector<double>(raw.begin(), raw.end());
}

double silu(double z) { return z / (1.0 + std::exp(-z)); }

} // namespace

NaiveLlama::NaiveLlama(LlamaConfig config, WeightFn weights, bool bf16KvCache)
    : cfg(std::move(config)), roundCache(bf16KvCache) {
  checkConfig(cfg);
  if (!weights)
    fail("no weight callback");

  auto loadMatrix = [&](const std::string &name, int rows, int cols) {
    Matrix m;
    m.rows = rows;
    m.cols = cols;
    m.values = loadValues(weights, name, size_t(rows) * cols);
    return m;
  };

  embedding = loadMatrix("model.embed_tokens.weight", cfg.vocab, cfg.hidden);
  layerWeights.resize(cfg.layers);
  for (int i = 0; i < cfg.layers; ++i) {
    Layer &l = layerWeights[i];
    l.shape = cfg.shapeOf(i);
    l.invFreq = ropeInverseFrequencies(cfg, l.shape.headDim);
    const int qDim = l.shape.heads * l.shape.headDim;
    const int kvDim = l.shape.kvHeads * l.shape.headDim;
    l.inputNorm =
        loadVector(weights, layerName(i, "input_layernorm.weight"), cfg.hidden);
    l.q = loadMatrix(layerName(i, "self_attn.q_proj.weight"), qDim, cfg.hidden);
    l.k =
        loadMatrix(layerName(i, "self_attn.k_proj.weight"), kvDim, cfg.hidden);
    l.v =
        loadMatrix(layerName(i, "self_attn.v_proj.weight"), kvDim, cfg.hidden);
    l.o = loadMatrix(layerName(i, "self_attn.o_proj.weight"), cfg.hidden, qDim);
    l.postAttentionNorm = loadVector(
        weights, layerName(i, "post_attention_layernorm.weight"), cfg.hidden);
    l.gate =
        loadMatrix(layerName(i, "mlp.gate_proj.weight"), cfg.ffn, cfg.hidden);
    l.up = loadMatrix(layerName(i, "mlp.up_proj.weight"), cfg.ffn, cfg.hidden);
    l.down =
        loadMatrix(layerName(i, "mlp.down_proj.weight"), cfg.hidden, cfg.ffn);
  }
  finalNorm = loadVector(weights, "model.norm.weight", cfg.hidden);
  // A tied checkpoint has no lm_head tensor at all, so do not ask for one.
  if (!cfg.tiedEmbeddings)
    lmHead = loadMatrix("lm_head.weight", cfg.vocab, cfg.hidden);
}

void NaiveLlama::reset() {
  for (Layer &l : layerWeights) {
    l.keys.clear();
    l.values.clear();
  }
  pos = 0;
}

int NaiveLlama::argmax(const std::vector<double> &logits) {
  int best = -1;
  for (size_t i = 0; i < logits.size(); ++i)
    // Strictly greater keeps the first of equal values.
    if (best < 0 || logits[i] > logits[best])
      best = static_cast<int>(i);
  return best;
}

std::vector<double>
NaiveLlama::ropeInverseFrequencies(const LlamaConfig &config, int headDim) {
  if (headDim == 0)
    headDim = config.headDim;
  const int half = headDim / 2;
  std::vector<double> freq(half);
  for (int i = 0; i < half; ++i)
    freq[i] = std::pow(config.ropeTheta, -2.0 * i / headDim);
  if (!config.llama3Scaling)
    return freq;

  // Llama 3's frequency scaling (transformers' _compute_llama3_parameters):
  // rotations faster than the original context resolves well (short
  // wavelengths) are kept, slow ones are stretched by the factor, and the
  // band between is interpolated linearly in originalContext / wavelength.
  const double ctx = config.originalContext;
  const double highFreqWavelen = ctx / config.highFreqFactor;
  const double lowFreqWavelen = ctx / config.lowFreqFactor;
  for (double &f : freq) {
    const double wavelen = 2.0 * std::numbers::pi / f;
    if (wavelen < highFreqWavelen)
      continue;
    if (wavelen > lowFreqWavelen) {
      f = f / config.ropeFactor;
      continue;
    }
    const double smooth = (ctx / wavelen - config.lowFreqFactor) /
                          (config.highFreqFactor - config.lowFreqFactor);
    f = (1.0 - smooth) * f / config.ropeFactor + smooth * f;
  }
  return freq;
}

void NaiveLlama::applyRope(std::span<double> head, int position,
                           const std::vector<double> &invFreq) {
  const size_t half = head.size() / 2;
  for (size_t i = 0; i < half; ++i) {
    const double angle = position * invFreq[i];
    const double c = std::cos(angle);
    const double s = std::sin(angle);
    const double a = head[i];
    const double b = head[i + half];
    head[i] = a * c - b * s;
    head[i + half] = b * c + a * s;
  }
}

double NaiveLlama::roundToBf16(double value) {
  if (!std::isfinite(value) || value == 0.0)
    return value;
  // bfloat16 has float's exponent range and 8 significant bits. For |value|
  // in [2^e, 2^(e+1)) the spacing of bf16 numbers is 2^(e-7); below float's
  // smallest normal (2^-126) it stays at the subnormal spacing 2^-133.
  // Dividing by a power of two is exact, and nearbyint in the default
  // rounding mode rounds to nearest, ties to even (as CUDA's
  // __float2bfloat16_rn does). Rounding straight from double can differ from
  // rounding a float that was itself rounded from the same double only when
  // the value lies within float precision of a tie: far below any tolerance.
  int exponent = std::ilogb(value);
  if (exponent < -126)
    exponent = -126;
  const double spacing = std::ldexp(1.0, exponent - 7);
  const double rounded = std::nearbyint(value / spacing) * spacing;
  // Rounding up may reach 2^128, which bf16 cannot hold.
  if (std::fabs(rounded) >= std::ldexp(1.0, 128))
    return std::copysign(INFINITY, value);
  return rounded;
}

std::vector<double> NaiveLlama::matVec(const Matrix &w,
                                       const std::vector<double> &x) {
  std::vector<double> y(w.rows, 0.0);
  for (int r = 0; r < w.rows; ++r) {
    double sum = 0.0;
    for (int c = 0; c < w.cols; ++c)
      sum += w.values[static_cast<size_t>(r) * w.cols + c] * x[c];
    y[r] = sum;
  }
  return y;
}

std::vector<double>
NaiveLlama::rmsNorm(const std::vector<double> &x,
                    const std::vector<double> &weight) const {
  double sumSquares = 0.0;
  for (double v : x)
    sumSquares += v * v;
  const double scale =
      1.0 / std::sqrt(sumSquares / static_cast<double>(x.size()) + cfg.rmsEps);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = x[i] * scale * weight[i];
  return y;
}

std::vector<double> NaiveLlama::attention(Layer &layer,
                                          const std::vector<double> &h) {
  const int d = layer.shape.headDim, heads = layer.shape.heads;
  std::vector<double> q = matVec(layer.q, h);
  std::vector<double> k = matVec(layer.k, h);
  std::vector<double> v = matVec(layer.v, h);
  for (int head = 0; head < heads; ++head)
    applyRope(std::span<double>(q).subspan(head * d, d), pos, layer.invFreq);
  for (int head = 0; head < layer.shape.kvHeads; ++head)
    applyRope(std::span<double>(k).subspan(head * d, d), pos, layer.invFreq);

  // The runtime keeps its K/V cache in bfloat16, and that rounding is the
  // largest error it makes on purpose; leaving it out of the oracle would make
  // every comparison need a tolerance wide enough to hide real bugs. So round
  // exactly where the runtime does, once per stored value (K after RoPE), and
  // attend with the stored values at every position, the current one too,
  // since the runtime also reads its own fresh row back from the cache.
  if (roundCache) {
    for (double &value : k)
      value = roundToBf16(value);
    for (double &value : v)
      value = roundToBf16(value);
  }
  layer.keys.push_back(std::move(k));
  layer.values.push_back(std::move(v));

  const int positions = pos + 1;
  const int group = heads / layer.shape.kvHeads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> out(static_cast<size_t>(heads) * d, 0.0);
  std::vector<double> scores(positions);
  for (int head = 0; head < heads; ++head) {
    const int kvHead = head / group;
    const double *qh = &q[static_cast<size_t>(head) * d];
    double maxScore = -INFINITY;
    for (int p = 0; p < positions; ++p) {
      const double *kp = &layer.keys[p][static_cast<size_t>(kvHead) * d];
      double dot = 0.0;
      for (int i = 0; i < d; ++i)
        dot += qh[i] * kp[i];
      scores[p] = dot * scale;
      maxScore = std::max(maxScore, scores[p]);
    }
    // Subtracting the maximum changes nothing mathematically and keeps exp
    // from overflowing.
    double total = 0.0;
    for (int p = 0; p < positions; ++p) {
      scores[p] = std::exp(scores[p] - maxScore);
      total += scores[p];
    }
    double *oh = &out[static_cast<size_t>(head) * d];
    for (int p = 0; p < positions; ++p) {
      const double weight = scores[p] / total;
      const double *vp = &layer.values[p][static_cast<size_t>(kvHead) * d];
      for (int i = 0; i < d; ++i)
        oh[i] += weight * vp[i];
    }
  }
  return matVec(layer.o, out);
}

std::vector<double> NaiveLlama::mlp(const Layer &layer,
                                    const std::vector<double> &g) const {
  std::vector<double> gate = matVec(layer.gate, g);
  std::vector<double> up = matVec(layer.up, g);
  std::vector<double> act(cfg.ffn);
  for (int i = 0; i < cfg.ffn; ++i)
    act[i] = silu(gate[i]) * up[i];
  return matVec(layer.down, act);
}

std::vector<double> NaiveLlama::step(int token) {
  if (token < 0 || token >= cfg.vocab)
    throw std::out_of_range("NaiveLlama: token " + std::to_string(token) +
                            " outside [0, " + std::to_string(cfg.vocab) + ")");

  std::vector<double> x(embedding.values.begin() +
                            static_cast<ptrdiff_t>(token) * cfg.hidden,
                        embedding.values.begin() +
                            static_cast<ptrdiff_t>(token + 1) * cfg.hidden);
  for (Layer &layer : layerWeights) {
    std::vector<double> attn = attention(layer, rmsNorm(x, layer.inputNorm));
    for (int i = 0; i < cfg.hidden; ++i)
      x[i] += attn[i];
    std::vector<double> ffn = mlp(layer, rmsNorm(x, layer.postAttentionNorm));
    for (int i = 0; i < cfg.hidden; ++i)
      x[i] += ffn[i];
  }
  ++pos;
  return matVec(cfg.tiedEmbeddings ? embedding : lmHead, rmsNorm(x, finalNorm));
}
