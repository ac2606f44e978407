//===- LowerGraph.cpp - Graph IR to stages (lower-graph) ------------------===//
//
// 1. Start the step with a Select stage: every worker combines the previous
//    step's lm_head candidates into this step's token (the runtime feeds
//    prompt tokens instead while there are any).
// 2. Give every graph value a slice of an arena buffer (f32). Matmuls that read
//    the same input are stacked into one Gemv stage (Q/K/V, gate/up) with one
//    output buffer; each matmul's value is a slice of it.
// 3. Make one stage per remaining op, in program order: embed, rmsnorm, rope,
//    attention (with its layer's K and V caches), silu_mul, add, argmax.
// 4. Check the step's shape: one token input feeding one embed, a position
//    input, exactly one argmax over a matmul's output (the logits).
//
// The fusion passes that follow turn this one-stage-per-op form into the
// post's waves; whatever they cannot fuse is rejected by codegen.
//
//===----------------------------------------------------------------------===//
#include "ti/Passes/Passes.h"

#include "llvm/ADT/DenseMap.h"

#include <cmath>
#include <numbers>

using namespace ti;
using namespace ti::tir;

namespace {

/// The RoPE inverse frequencies of one head, with Llama 3 scaling when asked
/// (as Hugging Face's _compute_llama3_parameters does it, in double precision).
std::vector<float> ropeInverseFrequencies(const Op &op) {
  int64_t headDim = op.findAttr("head_dim")->value.i;
  double theta = op.findAttr("theta")->value.asDouble();
  std::vector<float> freqs;
  const NamedAttr *scaling = op.findAttr("scaling");
  double factor = 1, low = 1, high = 1, original = 1;
  if (scaling) {
    factor = op.findAttr("factor")->value.asDouble();
    low = op.findAttr("low_freq_factor")->value.asDouble();
    high = op.findAttr("high_freq_factor")->value.asDouble();
    original = op.findAttr("original_context")->value.asDouble();
  }
  double lowWavelen = original / low, highWavelen = original / high;
  for (int64_t i = 0; i < headDim; i += 2) {
    double f = 1.0 / std::pow(theta, static_cast<double>(i) / headDim);
    if (scaling) {
      double wavelen = 2 * std::numbers::pi / f;
      if (wavelen > lowWavelen) {
        f /= factor;
      } else if (wavelen >= highWavelen) {
        double smooth = (original / wavelen - low) / (high - low);
        f = (1 - smooth) * f / factor + smooth * f;
      }
    }
    freqs.push_back(static_cast<float>(f));
  }
  return freqs;
}

class LowerGraph : public Pass {
public:
  LowerGraph() : Pass(PassId::LowerGraph) {}
  bool run(Module &m, DiagnosticEngine &diags) override;

private:
  Slice newValueBuffer(Module &m, unsigned value, plan::BufferKind kind = plan::BufferKind::Activation);
  std::string stageName(const Module &m, const Op &op, llvm::StringRef base) const;

  llvm::DenseMap<unsigned, Slice> slices; // Graph value -> where it lives.
};

} // namespace

Slice LowerGraph::newValueBuffer(Module &m, unsigned value, plan::BufferKind kind) {
  const Value &v = m.graph->values[value];
  uint64_t n = v.type.numElements();
  int b = m.addBuffer(v.name, kind, n * plan::kActivationBytes);
  Slice s{b, 0, n};
  slices[value] = s;
  return s;
}

std::string LowerGraph::stageName(const Module &m, const Op &op, llvm::StringRef base) const {
  std::string name = op.layer >= 0 ? "L" + std::to_string(op.layer) + "." : "";
  // Value names carry the layer as a suffix ("q.3"): drop it, the prefix says it.
  llvm::StringRef b = base;
  if (op.layer >= 0)
    b = b.rsplit('.').first;
  return name + b.str();
}

bool LowerGraph::run(Module &m, DiagnosticEngine &diags) {
  const Graph &g = *m.graph;
  slices.clear();
  m.stages.clear();
  m.buffers.clear();

  // The step's fixed buffers. Sizes that depend on the task count are set by
  // layout.
  int candidates = m.addBuffer("candidates", plan::BufferKind::Candidates, 0);
  const uint64_t token = plan::kTokenBytes;
  int prompt = m.addBuffer("prompt", plan::BufferKind::Prompt, token * plan::kMaxStepsPerLaunch);
  int tokenSlots = m.addBuffer("token_slots", plan::BufferKind::TokenSlots, token * m.target.workers);
  int stepState = m.addBuffer("step_state", plan::BufferKind::StepState, sizeof(plan::StepState));
  Stage select(StageKind::Select);
  select.name = "select";
  select.input = Slice{candidates, 0, 0};
  select.input2 = Slice{prompt, 0, plan::kMaxStepsPerLaunch};
  select.output = Slice{tokenSlots, 0, m.target.workers};
  select.output2 = Slice{stepState, 0, 0};
  select.units = m.target.workers;
  m.stages.push_back(std::move(select));

  // Matmuls grouped by input value, in program order.
  llvm::DenseMap<unsigned, std::vector<unsigned>> matmulsByInput;
  for (unsigned i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].kind == OpKind::MatMul)
      matmulsByInput[g.ops[i].operands[0].index].push_back(i);
  std::vector<bool> done(g.ops.size());

  unsigned argmaxCount = 0, embedCount = 0;
  // Where a count goes wrong: the second embed or argmax, else the graph.
  llvm::SMLoc extraEmbed = g.loc, extraArgmax = g.loc;
  for (unsigned i = 0; i < g.ops.size(); ++i) {
    if (done[i])
      continue;
    const Op &op = g.ops[i];
    const Value &result = g.values[op.result];
    Stage s(StageKind::Gemv);
    s.layer = op.layer;
    s.loc = op.loc;
    auto operandSlice = [&](unsigned k) { return slices.lookup(op.operands[k].index); };

    switch (op.kind) {
    case OpKind::Embed: {
      if (++embedCount == 2)
        extraEmbed = op.loc;
      s.kind = StageKind::Embed;
      s.name = "embed";
      s.matrix = {WeightRows{op.operands[0].index, 0,
                             static_cast<uint64_t>(g.weights[op.operands[0].index].type.shape[0])}};
      s.cols = g.weights[op.operands[0].index].type.shape[1];
      s.input = Slice{tokenSlots, 0, m.target.workers};
      s.output = newValueBuffer(m, op.result);
      s.units = s.cols;
      break;
    }
    case OpKind::RmsNorm:
      s.kind = StageKind::RmsNorm;
      s.name = stageName(m, op, result.name);
      s.input = operandSlice(0);
      s.norm = op.operands[1].index;
      s.eps = op.findAttr("eps")->value.asDouble();
      s.output = newValueBuffer(m, op.result);
      s.units = s.input.length;
      break;
    case OpKind::MatMul: {
      // Stack every matmul of this input that comes later too.
      s.kind = StageKind::Gemv;
      const std::vector<unsigned> &group = matmulsByInput[op.operands[0].index];
      uint64_t rows = 0;
      std::string name;
      for (unsigned j : group) {
        const Op &mm = g.ops[j];
        unsigned w = mm.operands[1].index;
        s.matrix.push_back(WeightRows{w, 0, static_cast<uint64_t>(g.weights[w].type.shape[0])});
        rows += g.weights[w].type.shape[0];
        llvm::StringRef base = g.values[mm.result].name;
        if (mm.layer >= 0)
          base = base.rsplit('.').first;
        name += (name.empty() ? "" : "+") + base.str();
        done[j] = true;
      }
      s.name = (op.layer >= 0 ? "L" + std::to_string(op.layer) + "." : std::string()) + name;
      s.input = operandSlice(0);
      s.cols = s.input.length;
      std::string bufferName = group.size() == 1 ? result.name : s.name;
      int b = m.addBuffer(bufferName, plan::BufferKind::Activation,
                          rows * plan::kActivationBytes);
      s.output = Slice{b, 0, rows};
      uint64_t offset = 0;
      for (unsigned j : group) {
        uint64_t n = g.values[g.ops[j].result].type.numElements();
        slices[g.ops[j].result] = Slice{b, offset, n};
        offset += n;
      }
      s.units = rows;
      break;
    }
    case OpKind::Rope:
      s.kind = StageKind::Rope;
      s.name = stageName(m, op, result.name);
      s.input = operandSlice(0);
      s.headDim = op.findAttr("head_dim")->value.i;
      s.ropeInvFreq = ropeInverseFrequencies(op);
      s.hasRope = true;
      s.output = newValueBuffer(m, op.result);
      s.units = s.input.length;
      break;
    case OpKind::Attention: {
      s.kind = StageKind::Attention;
      s.name = stageName(m, op, result.name);
      s.input = operandSlice(0);
      s.input2 = operandSlice(1);
      s.input3 = operandSlice(2);
      s.heads = op.findAttr("heads")->value.i;
      s.kvHeads = op.findAttr("kv_heads")->value.i;
      s.headDim = op.findAttr("head_dim")->value.i;
      s.scale = 1.0 / std::sqrt(static_cast<double>(s.headDim));
      uint64_t cacheBytes =
          uint64_t(m.maxContext) * s.kvHeads * s.headDim * plan::kCacheBytes;
      std::string layer = op.layer >= 0 ? "L" + std::to_string(op.layer) + "." : "";
      s.output2 = Slice{m.addBuffer(layer + "k_cache", plan::BufferKind::KCache, cacheBytes), 0, 0};
      s.output3 = Slice{m.addBuffer(layer + "v_cache", plan::BufferKind::VCache, cacheBytes), 0, 0};
      s.output = newValueBuffer(m, op.result);
      s.units = s.heads;
      break;
    }
    case OpKind::SiluMul:
    case OpKind::Add:
      s.kind = op.kind == OpKind::Add ? StageKind::Add : StageKind::SiluMul;
      s.name = stageName(m, op, result.name);
      s.input = operandSlice(0);
      s.input2 = operandSlice(1);
      s.output = newValueBuffer(m, op.result);
      s.units = s.input.length;
      break;
    case OpKind::Argmax:
      if (++argmaxCount == 2)
        extraArgmax = op.loc;
      s.kind = StageKind::Argmax;
      s.name = stageName(m, op, result.name);
      s.input = operandSlice(0);
      s.units = s.input.length;
      break;
    }
    m.stages.push_back(std::move(s));
  }

  if (embedCount != 1) {
    diags.error(extraEmbed, "a decode plan needs exactly one 'embed' of the token, found " +
                                   llvm::Twine(embedCount));
    return false;
  }
  if (argmaxCount != 1) {
    diags.error(extraArgmax, "a decode plan needs exactly one 'argmax' (greedy selection "
                               "of the next token), found " + llvm::Twine(argmaxCount));
    return false;
  }
  count("stages", m.stages.size());
  count("buffers", m.buffers.size());
  return true;
}

std::unique_ptr<Pass> ti::createLowerGraphPass() { return std::make_unique<LowerGraph>(); }
