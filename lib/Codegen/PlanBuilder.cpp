//===- PlanBuilder.cpp - Task IR to plan ----------------------------------===//
//
// 1. Model info: sizes from the stages (the embedding's shape, the first
//    attention's heads, the FFN's units), bos/eos/eps from the graph's attrs.
// 2. Weights, buffers: copied from the module (layout made them).
// 3. Waves: one per stage, with the barrier place-barriers chose.
// 4. Tasks: one record per task, fields exactly as TaskRecord.h specifies for
//    its opcode, each with its own stage's attention geometry where its opcode
//    uses one (layers may differ); then sorted by (worker, wave) for the
//    executors.
// 5. The ring's depth where the tasks need the room: with a target that lets
//    the ring narrow (stream_min_ring_bytes), a stage at a time until the
//    largest task's shared memory fits beside it (fuse-ffn did the same for a
//    GateUp down projection before the tasks existed; this covers the rest,
//    e.g. a wide model's FFN partials beside the default 6 stages).
// 6. What the target's worker can run (WorkerSupport.h): a stage whose tasks
//    ask more (too many query heads per kv head, an unsupported head_dim,
//    more shared memory than the worker has) is refused at its graph op, once
//    per stage.
//
//===----------------------------------------------------------------------===//
#include "ti/Codegen/PlanBuilder.h"

#include "ti/Plan/AttentionLayout.h"
#include "ti/Plan/Tagged.h"
#include "ti/Plan/WorkerLayout.h"
#include "ti/Plan/WorkerSupport.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

using namespace ti;
using namespace ti::tir;

namespace {

class PlanBuilder {
public:
  PlanBuilder(const Module &m, DiagnosticEngine &diags) : m(m), diags(diags) {}
  std::optional<plan::Plan> build();

private:
  uint64_t at(const Slice &s) const {
    return s.valid() ? m.buffers[s.buffer].offset + s.offset * elementBytes(s) : plan::kNone;
  }
  bool tagged(const Slice &s) const { return s.valid() && m.buffers[s.buffer].tagged; }
  uint64_t elementBytes(const Slice &s) const {
    return tagged(s) ? plan::kTaggedBytes : plan::kActivationBytes;
  }
  /// The geometry fields a stage's tasks carry; false after reporting one
  /// that does not fit the record's 16 bits.
  bool geometryOf(const Stage &s, bool heads, bool row, bool chunks, plan::HeadGeometry &g);
  uint64_t normOffset(const Stage &s) const {
    return s.norm >= 0 ? m.packed[m.wholePacked[s.norm]].offset : plan::kNone;
  }
  /// The index of `values` in the plan's float table; equal blocks are shared
  /// (every QKV task of a layer uses the same eps).
  uint32_t addParams(std::vector<float> values) {
    auto [it, inserted] = paramBlocks.try_emplace(values, p.params.size());
    if (inserted)
      p.params.insert(p.params.end(), values.begin(), values.end());
    return it->second;
  }
  bool modelInfo();
  bool emitStage(const Stage &s, uint16_t wave);
  /// Step 5.
  void narrowRingForTasks();
  /// Step 6: false after reporting what the target's worker cannot run.
  bool fitsTheWorker();

  const Module &m;
  DiagnosticEngine &diags;
  plan::Plan p;
  std::map<std::vector<float>, uint32_t> paramBlocks;
};

} // namespace

bool PlanBuilder::modelInfo() {
  const Graph &g = *m.graph;
  plan::ModelInfo &info = p.model;
  info.name = g.name;
  info.maxContext = m.maxContext;
  for (const Stage &s : m.stages) {
    if (s.kind == StageKind::Embed) {
      const Weight &table = g.weights[s.matrix[0].weight];
      // 32 bits suffice: the graph verifier refuses dimensions past 2^31-1.
      info.vocab = static_cast<uint32_t>(table.type.shape[0]);
      info.hidden = static_cast<uint32_t>(table.type.shape[1]);
    }
    if (s.kind == StageKind::AttentionChunks) {
      if (info.layers++ == 0) {
        info.heads = s.heads;
        info.kvHeads = s.kvHeads;
        info.headDim = s.headDim;
      }
    }
    if (s.kind == StageKind::FfnPartial || (s.kind == StageKind::Gemv && s.siluMul))
      info.ffn = s.units;
    if (s.norm >= 0)
      info.rmsEps = s.eps;
  }
  // The plan, its verifier and both workers are for a transformer: a graph
  // of an embedding and a head alone elaborated and compiled, and only the
  // plan verifier refused it (GraphFuzzer's find: "model: ffn is 0").
  if (info.layers == 0 || info.ffn == 0) {
    diags.error(g.loc, "a decode plan needs at least one layer of attention and of MLP (silu_mul); graph '" +
                           llvm::Twine(g.name) + "' has " + (info.layers == 0 ? "no attention" : "no MLP"));
    return false;
  }
  if (const NamedAttr *bos = g.findAttr("bos_token"); bos && bos->value.kind == AttrValue::Kind::Int)
    info.bos = bos->value.i;
  if (const NamedAttr *eos = g.findAttr("eos_tokens")) {
    if (eos->value.kind == AttrValue::Kind::IntList)
      info.eos.assign(eos->value.list.begin(), eos->value.list.end());
    else if (eos->value.kind == AttrValue::Kind::Int)
      info.eos = {static_cast<int32_t>(eos->value.i)};
  }
  if (info.eos.size() > plan::kMaxEndTokens) {
    diags.error(g.findAttr("eos_tokens")->loc,
                "eos_tokens names " + llvm::Twine(info.eos.size()) + " tokens; a plan holds " +
                    llvm::Twine(plan::kMaxEndTokens) + " at most");
    return false;
  }
  for (int32_t id : info.eos)
    if (id < 0 || static_cast<uint32_t>(id) >= info.vocab) {
      diags.error(g.findAttr("eos_tokens")->loc,
                  "end-of-sequence token " + llvm::Twine(id) + " is outside the vocabulary");
      return false;
    }
  if (info.bos >= 0 && static_cast<uint32_t>(info.bos) >= info.vocab) {
    diags.error(g.findAttr("bos_token")->loc, "bos_token is outside the vocabulary");
    return false;
  }
  p.attention.splitContext = m.target.attentionSplitContext;
  return true;
}

bool PlanBuilder::geometryOf(const Stage &s, bool heads, bool row, bool chunks,
                             plan::HeadGeometry &g) {
  g = plan::HeadGeometry{};
  for (auto [use, value, name] : {std::tuple{heads, s.heads, "heads"},
                                  std::tuple{row, s.kvHeads, "kv_heads"},
                                  std::tuple{row, s.headDim, "head_dim"},
                                  std::tuple{heads || chunks, s.chunks, "chunks"}})
    if (use && value > 0xffff) {
      diags.error(s.loc, "stage '" + s.name + "': " + name + " = " + llvm::Twine(value) +
                             " does not fit a task's geometry (65535 at most)");
      return false;
    }
  if (heads)
    g.heads = uint16_t(s.heads);
  if (row) {
    g.kvHeads = uint16_t(s.kvHeads);
    g.headDim = uint16_t(s.headDim);
  }
  if (chunks)
    g.chunks = uint16_t(s.chunks);
  return true;
}

bool PlanBuilder::emitStage(const Stage &s, uint16_t wave) {
  for (const Task &t : s.tasks) {
    plan::TaskRecord r{};
    r.wave = wave;
    r.worker = static_cast<uint16_t>(t.worker);
    r.layer = s.layer >= 0 ? static_cast<uint32_t>(s.layer) : plan::kNone32;
    r.rowBegin = t.rowBegin;
    r.rowEnd = t.rowEnd;
    r.param = plan::kNone32;
    r.weight = r.norm = plan::kNone;
    for (uint64_t &x : r.in)
      x = plan::kNone;
    for (uint64_t &x : r.out)
      x = plan::kNone;
    if (t.packed >= 0) {
      r.weight = t.weightOffset;
      r.weightBytes = t.weightBytes;
    }
    r.norm = normOffset(s);
    if (s.norm >= 0)
      r.param = addParams({static_cast<float>(s.eps)});

    plan::Opcode opcode = plan::Opcode::Nop;
    if (!stageOpcode(s, opcode)) {
      diags.error(s.loc, "stage '" + s.name + "' (" + stageKindName(s.kind) +
                             ") has no task opcode: it should have been fused");
      return false;
    }
    r.opcode = uint16_t(opcode);
    switch (s.kind) {
    case StageKind::Select:
      r.in[0] = at(s.input);
      r.in[1] = at(s.input2);
      r.out[0] = at(s.output);
      r.aux[0] = m.buffers[s.input.buffer].bytes / sizeof(plan::Candidate);
      if (t.worker == 0) {
        r.flags = plan::kFlagRecord;
        r.out[1] = at(s.output2);
      }
      r.rowBegin = 0;
      r.rowEnd = 1;
      break;
    case StageKind::Embed:
      r.in[0] = at(s.input);
      r.out[0] = at(s.output);
      r.aux[0] = s.cols;
      r.aux[1] = m.graph->weights[s.matrix[0].weight].type.shape[0];
      break;
    case StageKind::Gemv:
    case StageKind::LmHead:
      r.in[0] = at(s.input);
      r.out[0] = at(s.output);
      r.aux[0] = s.cols;
      if (s.residual.valid()) {
        r.flags |= plan::kFlagResidual;
        r.in[1] = at(s.residual);
      }
      if (s.vCacheWrite) {
        r.flags |= plan::kFlagVCache;
        r.out[1] = at(s.output2);
        r.aux[1] = s.vRowBegin;
      }
      if (s.kind == StageKind::Gemv && !geometryOf(s, false, s.vCacheWrite, false, r.geometry))
        return false;
      if (s.kind == StageKind::LmHead) {
        r.out[1] = at(s.output2);
        r.aux[1] = t.aux1;
      }
      if (s.siluMul) {
        if (s.residual.valid() || s.vCacheWrite || s.matrix.size() != 2) {
          diags.error(s.loc, "stage '" + s.name + "': a SiLU*up GEMV with a residual or a V "
                             "cache write is not supported");
          return false;
        }
        r.flags = 0;
        r.geometry = {};
      }
      if (s.tiled)
        r.flags |= plan::kFlagTiledWeights;
      break;
    case StageKind::AttentionChunks: {
      r.in[0] = at(s.input);
      r.in[1] = at(s.input2);
      r.in[2] = at(s.input3);
      r.out[0] = at(s.output);  // Short mode: the attention's output.
      r.out[1] = at(s.output2); // Long mode: the workspace.
      // Chunk 0 writes row pos of the K cache at in[1].
      r.aux[0] = t.aux0;
      r.aux[1] = t.aux1;
      if (!geometryOf(s, true, true, true, r.geometry))
        return false;
      std::vector<float> params{static_cast<float>(s.scale)};
      params.insert(params.end(), s.ropeInvFreq.begin(), s.ropeInvFreq.end());
      r.param = addParams(std::move(params));
      r.rowBegin = t.aux0;
      r.rowEnd = t.aux0 + 1;
      // The cached rows through the weight stream where the target asks and
      // a stage holds a block of them (AttentionLayout.h: kvBlockRows).
      if (m.target.streamKv && m.stream.stageBytes > 0 &&
          plan::kvBlockRows(m.stream.stageBytes, r.geometry.headDim,
                            plan::taskThreads(plan::ExecutionModel::Stream)) > 0)
        r.flags |= plan::kFlagStreamKv;
      break;
    }
    case StageKind::MergeAttention:
      r.in[0] = at(s.input);  // The workspace.
      r.out[0] = at(s.output); // The attention's output.
      r.aux[0] = s.units;
      if (!geometryOf(s, true, true, true, r.geometry))
        return false;
      break;
    case StageKind::FfnPartial:
      r.in[0] = at(s.input);
      r.out[0] = at(s.output);
      r.aux[0] = s.cols;
      r.aux[1] = t.aux1;
      break;
    case StageKind::ReduceResidual:
      r.in[0] = at(s.input);
      r.in[1] = at(s.residual);
      r.out[0] = at(s.output);
      r.aux[0] = s.units;
      r.aux[1] = t.aux1;
      break;
    default: // The kinds without an opcode were refused above.
      break;
    }
    // tag-hand-offs tagged only the operands these opcodes take tagged.
    if (tagged(s.input))
      r.flags |= plan::kFlagTaggedIn0;
    if (tagged(s.residual))
      r.flags |= plan::kFlagTaggedIn1;
    if (tagged(s.output))
      r.flags |= plan::kFlagTaggedOut0;
    if (s.kind == StageKind::AttentionChunks && tagged(s.output2))
      r.flags |= plan::kFlagTaggedOut1;
    p.tasks.push_back(r);
  }
  return true;
}

std::optional<plan::Plan> PlanBuilder::build() {
  if (m.packed.empty() && m.arenaBytes == 0) {
    diags.error(m.graph->loc, "the module has no layout: run the whole pipeline before codegen");
    return std::nullopt;
  }
  if (m.stages.size() > 0xffff) {
    diags.error(m.graph->loc, "too many waves for the plan format (65535 at most)");
    return std::nullopt;
  }
  if (!modelInfo())
    return std::nullopt;
  const Target &t = m.target;
  p.target.name = t.name;
  p.target.arch = t.arch;
  p.target.workers = t.workers;
  p.target.threadsPerWorker = t.threadsPerWorker;
  p.target.maxRegisters = t.maxRegisters;
  p.target.bandwidthGBs = t.bandwidthGBs;
  p.target.workerFingerprint = t.workerFingerprint;

  p.weights = m.packed;
  p.weightsBytes = m.weightsBytes;
  p.layoutHash = plan::layoutHash(p.weights, p.weightsBytes);
  for (const Buffer &b : m.buffers)
    p.buffers.push_back(plan::Buffer{b.name, b.kind, b.offset, b.bytes, b.tagged});
  p.arenaBytes = m.arenaBytes;
  p.stream = m.stream;

  for (size_t i = 0; i < m.stages.size(); ++i) {
    p.waves.push_back(plan::Wave{m.stages[i].name, m.stages[i].barrier});
    if (!emitStage(m.stages[i], static_cast<uint16_t>(i)))
      return std::nullopt;
  }
  std::stable_sort(p.tasks.begin(), p.tasks.end(),
                   [](const plan::TaskRecord &a, const plan::TaskRecord &b) {
                     return a.worker != b.worker ? a.worker < b.worker : a.wave < b.wave;
                   });
  // The contexts from which K/V rows stream: only in a plan whose attention
  // streams them (a plain plan, or stages too small for a block, have none);
  // in short mode only where every task that streams has heads the tensor
  // cores' form takes (the others' streamed form was not measured against
  // one warp a query head there). Where every attention task streams in that
  // form, short mode pays to a longer context: the split moves up to the
  // target's short_mma_split_context (if short mode streams below it).
  const auto streamsKv = [](const plan::TaskRecord &r) { return r.flags & plan::kFlagStreamKv; };
  if (std::any_of(p.tasks.begin(), p.tasks.end(), streamsKv)) {
    p.attention.streamKvContext = t.streamKvContext;
    if (std::all_of(p.tasks.begin(), p.tasks.end(), [&](const plan::TaskRecord &r) {
          return !streamsKv(r) ||
                 plan::streamedScoresOnTensorCores(r.geometry.headDim, r.geometry.group());
        }))
      p.attention.shortMmaContext = t.shortMmaContext;
    const bool everyAttentionStreams =
        std::all_of(p.tasks.begin(), p.tasks.end(), [&](const plan::TaskRecord &r) {
          return r.opcode != uint16_t(plan::Opcode::Attention) || streamsKv(r);
        });
    if (p.attention.shortMmaContext != 0 && everyAttentionStreams &&
        p.attention.shortMmaContext < t.shortMmaSplitContext)
      p.attention.splitContext = std::max(p.attention.splitContext, t.shortMmaSplitContext);
  }
  narrowRingForTasks();
  if (!fitsTheWorker())
    return std::nullopt;
  return std::move(p);
}

void PlanBuilder::narrowRingForTasks() {
  plan::StreamConfig &st = p.stream;
  if (st.model != plan::ExecutionModel::Stream || m.target.streamMinRingBytes == 0)
    return;
  const uint32_t least = std::max(2u, m.target.streamMinRingBytes / st.stageBytes);
  // The schedule and the largest task's scratch do not depend on the ring.
  const plan::WorkerSharedBytes need = plan::workerSharedBytes(p);
  const uint64_t room = m.target.workerLimits().sharedBytes;
  while (st.stages > least && st.ringFootprint() + need.schedule + need.scratch > room) {
    --st.stages;
    st.inFlightStages = std::min(st.inFlightStages, st.stages);
    st.handOffInFlightStages = std::min(st.handOffInFlightStages, st.inFlightStages);
  }
}

bool PlanBuilder::fitsTheWorker() {
  // Once per graph op: an attention op's scores and values stages, and all of
  // a stage's tasks, would say the same.
  std::set<std::pair<const char *, std::string>> reported;
  bool fits = true;
  for (const plan::WorkerProblem &problem :
       plan::workerProblems(p, m.target.workerLimits(), p.tasks.size())) {
    const Stage &s = m.stages[p.tasks[problem.task].wave]; // One wave per stage.
    fits = false;
    if (reported.emplace(s.loc.getPointer(), problem.message).second)
      diags.error(s.loc, problem.message + " (target '" + m.target.name + "')");
  }
  return fits;
}

std::optional<plan::Plan> ti::buildPlan(const Module &module, DiagnosticEngine &diags) {
  return PlanBuilder(module, diags).build();
}
