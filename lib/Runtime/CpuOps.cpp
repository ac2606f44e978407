//===- CpuOps.cpp - The opcodes' arithmetic on the CPU --------------------===//
//
// Straight loops over the record's ranges. Dot products keep eight partial
// sums (which the compiler vectorises without reassociating anything) and add
// them in a fixed tree, so the CPU result is the same on every run and every
// thread count.
//
//===----------------------------------------------------------------------===//
#include "CpuOps.h"

#include "ti/Plan/AttentionLayout.h"
#include "ti/Plan/Tagged.h"
#include "ti/Plan/WeightTiles.h"
#include "ti/Support/Bf16.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

using namespace ti;
using namespace ti::cpu;
using plan::TaskRecord;

namespace {

const uint16_t *weightsAt(const TaskContext &c, uint64_t offset) {
  return reinterpret_cast<const uint16_t *>(c.weights + offset);
}
float *arenaF32(const TaskContext &c, uint64_t offset) {
  return reinterpret_cast<float *>(c.arena + offset);
}
uint16_t *arenaBf16(const TaskContext &c, uint64_t offset) {
  return reinterpret_cast<uint16_t *>(c.arena + offset);
}

/// An f32 operand of a task in the arena: plain, or tagged (Tagged.h). A
/// tagged element is written with the step's tag, and a read that finds
/// another tag (a value no task has written yet in this step) is reported to
/// the executor (TagCheck): the CPU runs the waves in order, so such a read is
/// an ordering the plan gets wrong.
class F32Operand {
public:
  F32Operand(const TaskContext &c, const TaskRecord &t, uint64_t offset, bool tagged)
      // An absent operand (kNone) is never touched; its address is not even
      // formed, which would overflow the arena pointer.
      : c_(c), t_(t), at_(offset == plan::kNone ? nullptr : c.arena + offset), tagged_(tagged) {}

  float operator[](uint64_t i) const {
    if (!tagged_) {
      float v;
      std::memcpy(&v, at_ + i * plan::kActivationBytes, sizeof v);
      return v;
    }
    uint64_t e;
    std::memcpy(&e, at_ + i * plan::kTaggedBytes, sizeof e);
    if (plan::tagOf(e) != c_.tag)
      c_.tagCheck->report(t_);
    return plan::valueOf(e);
  }
  void set(uint64_t i, float v) const {
    if (!tagged_) {
      std::memcpy(at_ + i * plan::kActivationBytes, &v, sizeof v);
      return;
    }
    const uint64_t e = plan::packTagged(v, c_.tag);
    std::memcpy(at_ + i * plan::kTaggedBytes, &e, sizeof e);
  }
  /// Elements [begin, begin + n).
  std::vector<float> read(uint64_t begin, uint64_t n) const {
    std::vector<float> v(n);
    for (uint64_t i = 0; i < n; ++i)
      v[i] = (*this)[begin + i];
    return v;
  }

private:
  const TaskContext &c_;
  const TaskRecord &t_;
  uint8_t *at_;
  bool tagged_;
};

F32Operand in0(const TaskContext &c, const TaskRecord &t) {
  return F32Operand(c, t, t.in[0], t.flags & plan::kFlagTaggedIn0);
}
F32Operand in1(const TaskContext &c, const TaskRecord &t) {
  return F32Operand(c, t, t.in[1], t.flags & plan::kFlagTaggedIn1);
}
F32Operand out0(const TaskContext &c, const TaskRecord &t) {
  return F32Operand(c, t, t.out[0], t.flags & plan::kFlagTaggedOut0);
}
F32Operand out1(const TaskContext &c, const TaskRecord &t) {
  return F32Operand(c, t, t.out[1], t.flags & plan::kFlagTaggedOut1);
}

float dotBf16(const uint16_t *w, const float *x, uint32_t n) {
  float acc[8] = {};
  uint32_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int j = 0; j < 8; ++j)
      acc[j] += bf16ToFloat(w[k + j]) * x[k + j];
  float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; k < n; ++k)
    s += bf16ToFloat(w[k]) * x[k];
  return s;
}

float dotF32(const float *a, const float *b, uint32_t n) {
  float acc[8] = {};
  uint32_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int j = 0; j < 8; ++j)
      acc[j] += a[k + j] * b[k + j];
  float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; k < n; ++k)
    s += a[k] * b[k];
  return s;
}

/// x' = x * rsqrt(mean(x^2) + eps) * scale, or x when the task has no norm.
void normalizeInput(const TaskContext &c, const TaskRecord &t, const float *x, uint32_t n,
                    std::vector<float> &out) {
  out.assign(x, x + n);
  if (t.norm == plan::kNone)
    return;
  float ss = dotF32(x, x, n);
  float eps = c.plan->params[t.param];
  float r = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  const uint16_t *scale = weightsAt(c, t.norm);
  for (uint32_t k = 0; k < n; ++k)
    out[k] = x[k] * r * bf16ToFloat(scale[k]);
}

float silu(float z) { return z / (1.0f + std::exp(-z)); }

/// Rotates one head's vector in place by the position's angles.
void rope(const float *invFreq, int32_t pos, float *v, uint32_t headDim) {
  uint32_t half = headDim / 2;
  for (uint32_t i = 0; i < half; ++i) {
    float angle = static_cast<float>(pos) * invFreq[i];
    float cs = std::cos(angle), sn = std::sin(angle);
    float a = v[i], b = v[i + half];
    v[i] = a * cs - b * sn;
    v[i + half] = b * cs + a * sn;
  }
}

/// An attention task's shape: its layer's geometry, its chunk, and where its
/// workspace keeps what (AttentionLayout.h).
struct AttentionShape {
  uint32_t headDim, group, q, kv, chunk, chunks;
  plan::AttentionWorkspace ws;
  plan::KvCacheLayout cache;
};

AttentionShape attentionShape(const TaskContext &c, const TaskRecord &t) {
  const plan::HeadGeometry &g = t.geometry;
  return AttentionShape{g.headDim,   g.group(),  g.qRows(),
                        g.kvRows(),  t.aux[1],   g.chunks,
                        plan::AttentionWorkspace::of(g),
                        plan::KvCacheLayout::of(g, c.plan->model.maxContext)};
}

/// This step's key for kv head g, rotated and rounded to bf16 (as the cache
/// stores it), returned as floats.
std::vector<float> currentKey(const TaskContext &c, const TaskRecord &t, const AttentionShape &s,
                              const float *invFreq) {
  std::vector<float> k = in0(c, t).read(s.q + t.aux[0] * s.headDim, s.headDim);
  rope(invFreq, c.pos, k.data(), s.headDim);
  for (float &x : k)
    x = bf16ToFloat(floatToBf16(x));
  return k;
}

/// This step's value for kv head g, rounded to bf16 (as the cache stores it).
std::vector<float> currentValue(const TaskContext &c, const TaskRecord &t,
                                const AttentionShape &s) {
  std::vector<float> v = in0(c, t).read(s.q + s.kv + t.aux[0] * s.headDim, s.headDim);
  for (float &x : v)
    x = bf16ToFloat(floatToBf16(x));
  return v;
}

/// Score of rotated query `q` against the key at position j.
float score(const TaskContext &c, const TaskRecord &t, const AttentionShape &s, const float *q,
            const std::vector<float> &kNow, int32_t j, float scale) {
  if (j == c.pos)
    return scale * dotF32(q, kNow.data(), s.headDim);
  const uint16_t *k = arenaBf16(c, t.in[1]) + s.cache.row(uint32_t(j), t.aux[0]);
  return scale * dotBf16(k, q, s.headDim);
}

/// out[:] = sum over j in [jb, je) of weight_j * V[j] (head g), weights given;
/// V[pos] is `vNow`, never the cache's row pos.
void weightedValues(const TaskContext &c, const TaskRecord &t, const AttentionShape &s,
                    const float *weights, int32_t jb, int32_t je,
                    const std::vector<float> &vNow, float *out) {
  std::fill(out, out + s.headDim, 0.0f);
  const uint16_t *v = arenaBf16(c, t.in[2]);
  for (int32_t j = jb; j < je; ++j) {
    const uint16_t *row = v + s.cache.row(uint32_t(j), t.aux[0]);
    float w = weights[j - jb];
    for (uint32_t i = 0; i < s.headDim; ++i)
      out[i] += w * (j == c.pos ? vNow[i] : bf16ToFloat(row[i]));
  }
}

} // namespace

void cpu::runNop(const TaskContext &, const TaskRecord &) {}

void cpu::runSelectToken(const TaskContext &, const TaskRecord &) {}

void cpu::runEmbed(const TaskContext &c, const TaskRecord &t) {
  int32_t token = reinterpret_cast<const int32_t *>(c.arena + t.in[0])[t.worker];
  const uint16_t *row = weightsAt(c, t.weight) + uint64_t(token) * t.aux[0];
  const F32Operand x = out0(c, t);
  for (uint32_t h = t.rowBegin; h < t.rowEnd; ++h)
    x.set(h, bf16ToFloat(row[h]));
}

namespace {
/// The Gemv input, normalised where the task has a norm.
void gemvInput(const TaskContext &c, const TaskRecord &t, std::vector<float> &x) {
  uint32_t k = t.aux[0];
  normalizeInput(c, t, in0(c, t).read(0, k).data(), k, x);
}

/// The rows of a Gemv's or GateUp's weights: row j of the task's slice
/// (j < its rows, gate and up rows alike), row-major or, with
/// kFlagTiledWeights, gathered from its octet's tiles (WeightTiles.h).
class WeightRowsOf {
public:
  WeightRowsOf(const TaskContext &c, const TaskRecord &t)
      : w_(weightsAt(c, t.weight)), k_(t.aux[0]), tiled_(t.flags & plan::kFlagTiledWeights),
        row_(tiled_ ? k_ : 0) {}
  const uint16_t *operator[](uint64_t j) {
    if (!tiled_)
      return w_ + j * k_;
    for (uint32_t c = 0; c < k_; c += plan::kTileCols)
      std::memcpy(row_.data() + c, w_ + plan::tiledElement(j, c, k_),
                  plan::kTileCols * sizeof(uint16_t));
    return row_.data();
  }

private:
  const uint16_t *w_;
  uint32_t k_;
  bool tiled_;
  std::vector<uint16_t> row_;
};
} // namespace

void cpu::runGemv(const TaskContext &c, const TaskRecord &t) {
  std::vector<float> x;
  gemvInput(c, t, x);
  uint32_t k = t.aux[0];
  WeightRowsOf w(c, t);
  const F32Operand y = out0(c, t), residual = in1(c, t);
  const bool addResidual = t.flags & plan::kFlagResidual;
  for (uint32_t i = t.rowBegin; i < t.rowEnd; ++i) {
    float v = dotBf16(w[i - t.rowBegin], x.data(), k);
    if (addResidual)
      v = residual[i] + v;
    y.set(i, v);
    if ((t.flags & plan::kFlagVCache) && i >= t.aux[1])
      arenaBf16(c, t.out[1])[plan::KvCacheLayout::of(t.geometry, c.plan->model.maxContext)
                                 .at(uint32_t(c.pos), i - t.aux[1])] = floatToBf16(v);
  }
}

void cpu::runGateUp(const TaskContext &c, const TaskRecord &t) {
  std::vector<float> x;
  gemvInput(c, t, x);
  const uint32_t k = t.aux[0], n = t.rowEnd - t.rowBegin;
  WeightRowsOf w(c, t); // The gate rows, then the up rows.
  const F32Operand y = out0(c, t);
  for (uint32_t u = 0; u < n; ++u) {
    const float gate = dotBf16(w[u], x.data(), k);
    y.set(t.rowBegin + u, silu(gate) * dotBf16(w[n + u], x.data(), k));
  }
}

void cpu::runLmHead(const TaskContext &c, const TaskRecord &t) {
  std::vector<float> x;
  normalizeInput(c, t, in0(c, t).read(0, t.aux[0]).data(), t.aux[0], x);
  uint32_t k = t.aux[0];
  const uint16_t *w = weightsAt(c, t.weight);
  float *logits = arenaF32(c, t.out[0]);
  plan::Candidate best{-INFINITY, static_cast<int32_t>(t.rowBegin)};
  bool nonFinite = false;
  for (uint32_t i = t.rowBegin; i < t.rowEnd; ++i) {
    float v = dotBf16(w + uint64_t(i - t.rowBegin) * k, x.data(), k);
    logits[i] = v;
    if (!std::isfinite(v)) {
      if (!nonFinite)
        best = {NAN, static_cast<int32_t>(i)};
      nonFinite = true;
    } else if (!nonFinite && v > best.value) {
      best = {v, static_cast<int32_t>(i)};
    }
  }
  reinterpret_cast<plan::Candidate *>(c.arena + t.out[1])[t.aux[1]] = best;
}

void cpu::runAttention(const TaskContext &c, const TaskRecord &t) {
  AttentionShape s = attentionShape(c, t);
  const float *params = &c.plan->params[t.param];
  float scale = params[0];
  const float *invFreq = params + 1;
  if (!c.longMode && s.chunk != 0)
    return;

  std::vector<float> kNow = currentKey(c, t, s, invFreq);
  const std::vector<float> vNow = currentValue(c, t, s);
  if (s.chunk == 0) {
    uint16_t *cacheRow = arenaBf16(c, t.in[1]) + s.cache.row(uint32_t(c.pos), t.aux[0]);
    for (uint32_t i = 0; i < s.headDim; ++i)
      cacheRow[i] = floatToBf16(kNow[i]);
  }
  const plan::AttentionPositions positions =
      plan::attentionPositions(s.chunk, s.chunks, c.pos, c.longMode);
  const int32_t jb = positions.begin, je = positions.end;
  // Short mode: the output; long mode: the chunk's partials and stats.
  const F32Operand y = out0(c, t), ws = out1(c, t);
  std::vector<float> scores(je - jb), weights(je - jb), out(s.headDim);
  for (uint32_t h = t.aux[0] * s.group; h < (t.aux[0] + 1) * s.group; ++h) {
    std::vector<float> q = in0(c, t).read(h * s.headDim, s.headDim);
    rope(invFreq, c.pos, q.data(), s.headDim);
    float m = -INFINITY;
    for (int32_t j = jb; j < je; ++j) {
      scores[j - jb] = score(c, t, s, q.data(), kNow, j, scale);
      m = std::max(m, scores[j - jb]);
    }
    // exp(s_j - m) once each: the sum, then the same values over it.
    float l = 0;
    for (int32_t j = jb; j < je; ++j) {
      weights[j - jb] = std::exp(scores[j - jb] - m);
      l += weights[j - jb];
    }
    for (float &w : weights)
      w /= l;
    weightedValues(c, t, s, weights.data(), jb, je, vNow, out.data());
    if (!c.longMode) {
      for (uint32_t i = 0; i < s.headDim; ++i)
        y.set(uint64_t(h) * s.headDim + i, out[i]);
      continue;
    }
    for (uint32_t i = 0; i < s.headDim; ++i)
      ws.set(s.ws.partials(s.chunk, h) + i, out[i]);
    ws.set(s.ws.stats(s.chunk, h), m);
    ws.set(s.ws.stats(s.chunk, h) + 1, l);
  }
}

void cpu::runMergeAttention(const TaskContext &c, const TaskRecord &t) {
  if (!c.longMode)
    return; // The attention's chunk 0 wrote the output.
  const F32Operand in = in0(c, t), y = out0(c, t);
  const plan::HeadGeometry &g = t.geometry;
  const plan::AttentionWorkspace ws = plan::AttentionWorkspace::of(g);
  std::vector<float> weights(g.chunks);
  for (uint32_t h = t.rowBegin / g.headDim; h < t.rowEnd / g.headDim; ++h) {
    float m = -INFINITY, l = 0;
    for (uint32_t ch = 0; ch < g.chunks; ++ch)
      m = std::max(m, in[ws.stats(ch, h)]);
    for (uint32_t ch = 0; ch < g.chunks; ++ch) {
      const uint64_t st = ws.stats(ch, h);
      weights[ch] = in[st + 1] * std::exp(in[st] - m);
      l += weights[ch];
    }
    for (uint32_t i = 0; i < g.headDim; ++i) {
      float sum = 0;
      for (uint32_t ch = 0; ch < g.chunks; ++ch)
        sum += weights[ch] * in[ws.partials(ch, h) + i];
      y.set(uint64_t(h) * g.headDim + i, sum / l);
    }
  }
}

void cpu::runFfnPartial(const TaskContext &c, const TaskRecord &t) {
  uint32_t h = t.aux[0], n = t.rowEnd - t.rowBegin;
  std::vector<float> x;
  normalizeInput(c, t, arenaF32(c, t.in[0]), h, x);
  const uint16_t *gate = weightsAt(c, t.weight);
  const uint16_t *up = gate + uint64_t(n) * h;
  const uint16_t *down = up + uint64_t(n) * h;
  float *out = arenaF32(c, t.out[0]) + uint64_t(t.aux[1]) * h;
  std::fill(out, out + h, 0.0f);
  for (uint32_t u = 0; u < n; ++u) {
    float act = silu(dotBf16(gate + uint64_t(u) * h, x.data(), h)) *
                dotBf16(up + uint64_t(u) * h, x.data(), h);
    const uint16_t *row = down + uint64_t(u) * h;
    for (uint32_t j = 0; j < h; ++j)
      out[j] += act * bf16ToFloat(row[j]);
  }
}

void cpu::runReduceResidual(const TaskContext &c, const TaskRecord &t) {
  uint32_t h = t.aux[0], parts = t.aux[1];
  const float *partials = arenaF32(c, t.in[0]);
  const float *residual = arenaF32(c, t.in[1]);
  float *x = arenaF32(c, t.out[0]);
  for (uint32_t r = t.rowBegin; r < t.rowEnd; ++r) {
    float sum = 0;
    for (uint32_t p = 0; p < parts; ++p)
      sum += partials[uint64_t(p) * h + r];
    x[r] = residual[r] + sum;
  }
}
