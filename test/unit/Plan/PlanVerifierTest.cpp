//===- PlanVerifierTest.cpp - The access model and the plan verifier ------===//
//
// A one-layer plan written by hand that uses every opcode and is valid in both
// attention modes, then one break at a time, each rejected with a message that
// names the task and its wave. Last, a plan the size of a real one (132
// workers, ~100 waves), valid and then with a barrier missing.
//
//===----------------------------------------------------------------------===//
#include "ti/Plan/PlanVerifier.h"
#include "ti/Plan/TaskAccesses.h"

#include "MakeTask.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

using namespace ti::plan;
using ti::plan::test::makeTask;

namespace {

WeightSegment segment(std::string checkpoint, std::vector<uint64_t> shape, uint64_t r0, uint64_t r1,
                      uint64_t c0, uint64_t c1, bool transposed = false) {
  return {std::move(checkpoint), std::move(shape), r0, r1, c0, c1, transposed};
}

void addTensor(Plan &p, std::string name, uint64_t offset, std::vector<WeightSegment> segments) {
  uint64_t elements = 0;
  for (const WeightSegment &s : segments)
    elements += s.elements();
  p.weights.push_back({std::move(name), offset, 2 * elements, std::move(segments)});
}

void sortTasks(Plan &p) {
  std::stable_sort(p.tasks.begin(), p.tasks.end(), [](const TaskRecord &a, const TaskRecord &b) {
    return std::pair(a.worker, a.wave) < std::pair(b.worker, b.wave);
  });
}

// Waves of the tiny plan.
enum : uint16_t { kSelect, kEmbed, kQkv, kAttention, kMerge, kWo, kFfn, kReduce, kLmHead };

// Arena offsets of the tiny plan's buffers.
constexpr uint64_t kSlots = 0, kPrompt = 256, kState = 512, kCandidates = 1024, kX0 = 1280,
                   kQkvOut = 1536, kKCache = 1792, kVCache = 2048, kWorkspace = 2304, kX1 = 2560,
                   kPartials = 2816, kX2 = 3072, kLogits = 3328, kAttnOut = 3584;

/// hidden 16, heads 2, kv heads 1, head dim 8, ffn 32, vocab 24, max context 8,
/// 4 workers, 2 attention chunks over a split context of 4.
Plan tinyPlan() {
  Plan p;
  p.model.name = "tiny";
  p.model.vocab = 24;
  p.model.hidden = 16;
  p.model.ffn = 32;
  p.model.layers = 1;
  p.model.heads = 2;
  p.model.kvHeads = 1;
  p.model.headDim = 8;
  p.model.maxContext = 8;
  p.model.bos = 0;
  p.model.eos = {1};
  p.model.rmsEps = 1e-5;
  p.target.name = "test";
  p.target.arch = "sm_90";
  p.target.workers = 4;
  p.target.threadsPerWorker = 256;
  p.attention = {4};

  addTensor(p, "embed", 0, {segment("model.embed_tokens.weight", {24, 16}, 0, 24, 0, 16)});
  addTensor(p, "layer0.attn_norm", 1024,
            {segment("model.layers.0.input_layernorm.weight", {16}, 0, 1, 0, 16)});
  addTensor(p, "layer0.qkv", 1280,
            {segment("model.layers.0.self_attn.q_proj.weight", {16, 16}, 0, 16, 0, 16),
             segment("model.layers.0.self_attn.k_proj.weight", {8, 16}, 0, 8, 0, 16),
             segment("model.layers.0.self_attn.v_proj.weight", {8, 16}, 0, 8, 0, 16)});
  addTensor(p, "layer0.wo", 2304,
            {segment("model.layers.0.self_attn.o_proj.weight", {16, 16}, 0, 16, 0, 16)});
  addTensor(p, "layer0.ffn_norm", 2816,
            {segment("model.layers.0.post_attention_layernorm.weight", {16}, 0, 1, 0, 16)});
  std::vector<WeightSegment> ffn;
  for (uint64_t w = 0; w < 4; ++w) {
    ffn.push_back(
        segment("model.layers.0.mlp.gate_proj.weight", {32, 16}, 8 * w, 8 * w + 8, 0, 16));
    ffn.push_back(segment("model.layers.0.mlp.up_proj.weight", {32, 16}, 8 * w, 8 * w + 8, 0, 16));
    ffn.push_back(
        segment("model.layers.0.mlp.down_proj.weight", {16, 32}, 0, 16, 8 * w, 8 * w + 8, true));
  }
  addTensor(p, "layer0.ffn", 3072, ffn);
  addTensor(p, "final_norm", 6144, {segment("model.norm.weight", {16}, 0, 1, 0, 16)});
  addTensor(p, "lm_head", 6400, {segment("lm_head.weight", {24, 16}, 0, 24, 0, 16)});
  p.weightsBytes = 7168;
  p.layoutHash = layoutHash(p.weights, p.weightsBytes);

  p.buffers = {{"token_slots", BufferKind::TokenSlots, kSlots, 16},
               {"prompt", BufferKind::Prompt, kPrompt, 256},
               {"step_state", BufferKind::StepState, kState, sizeof(StepState)},
               {"candidates", BufferKind::Candidates, kCandidates, 32},
               {"x0", BufferKind::Activation, kX0, 64},
               {"qkv", BufferKind::Activation, kQkvOut, 128},
               {"k_cache0", BufferKind::KCache, kKCache, 128},
               {"v_cache0", BufferKind::VCache, kVCache, 128},
               {"attn_ws", BufferKind::AttentionWorkspace, kWorkspace, 160},
               {"x1", BufferKind::Activation, kX1, 64},
               {"ffn_partials", BufferKind::Partials, kPartials, 256},
               {"x2", BufferKind::Activation, kX2, 64},
               {"logits", BufferKind::Logits, kLogits, 96},
               {"attn", BufferKind::Activation, kAttnOut, 64}};
  p.arenaBytes = 3840;

  p.waves = {{"select", BarrierKind::None},
             {"embed", BarrierKind::Grid},
             {"layer0.qkv", BarrierKind::Grid},
             {"layer0.attention", BarrierKind::Grid},
             {"layer0.merge", BarrierKind::Grid},
             {"layer0.wo", BarrierKind::Grid},
             {"layer0.ffn", BarrierKind::Grid},
             {"layer0.reduce", BarrierKind::Grid},
             {"lm_head", BarrierKind::Grid}};
  // eps; softmax scale and 4 inverse frequencies; eps; eps.
  p.params = {1e-5f, 0.35f, 1.0f, 0.1f, 0.01f, 0.001f, 1e-5f, 1e-5f};

  for (uint16_t w = 0; w < 4; ++w) {
    TaskRecord s = makeTask(Opcode::SelectToken, w, kSelect);
    s.in[0] = kCandidates;
    s.aux[0] = 4;
    s.in[1] = kPrompt;
    s.out[0] = kSlots;
    if (w == 0) {
      s.flags = kFlagRecord;
      s.out[1] = kState;
    }
    p.tasks.push_back(s);

    TaskRecord e = makeTask(Opcode::Embed, w, kEmbed);
    e.rowBegin = 4 * w;
    e.rowEnd = 4 * w + 4;
    e.weight = 0;
    e.weightBytes = 8;
    e.in[0] = kSlots;
    e.out[0] = kX0;
    e.aux[0] = 16;
    e.aux[1] = 24;
    p.tasks.push_back(e);

    // q rows [0, 16), k rows [16, 24), v rows [24, 32): worker 3 writes v.
    TaskRecord q = makeTask(Opcode::Gemv, w, kQkv);
    q.layer = 0;
    q.flags = kFlagVCache;
    q.rowBegin = 8 * w;
    q.rowEnd = 8 * w + 8;
    q.weight = 1280 + 8 * w * 32;
    q.weightBytes = 256;
    q.norm = 1024;
    q.param = 0;
    q.in[0] = kX0;
    q.out[0] = kQkvOut;
    q.out[1] = kVCache;
    q.aux[0] = 16;
    q.aux[1] = 24;
    q.geometry = {0, 1, 8, 0}; // A V row: 1 kv head of 8.
    p.tasks.push_back(q);

    // Attention of chunks 0, 1 on workers 0, 1; workers 2, 3 have none.
    TaskRecord a = makeTask(Opcode::Attention, w, kAttention);
    a.layer = 0;
    a.param = 1;
    a.in[0] = kQkvOut;
    a.in[1] = kKCache;
    a.in[2] = kVCache;
    a.out[0] = kAttnOut;   // Short mode.
    a.out[1] = kWorkspace; // Long mode.
    a.aux[0] = 0;
    a.aux[1] = w % 2;
    a.geometry = {2, 1, 8, 2};
    if (w < 2)
      p.tasks.push_back(a);

    // The long-mode merge of the 2 heads, on the last worker.
    TaskRecord mg = makeTask(Opcode::MergeAttention, w, kMerge);
    mg.layer = 0;
    mg.rowBegin = 0;
    mg.rowEnd = 16;
    mg.in[0] = kWorkspace;
    mg.out[0] = kAttnOut;
    mg.aux[0] = 16;
    mg.geometry = {2, 1, 8, 2}; // Its attention's.
    if (w == 3)
      p.tasks.push_back(mg);

    TaskRecord o = makeTask(Opcode::Gemv, w, kWo);
    o.layer = 0;
    o.flags = kFlagResidual;
    o.rowBegin = 4 * w;
    o.rowEnd = 4 * w + 4;
    o.weight = 2304 + 4 * w * 32;
    o.weightBytes = 128;
    o.in[0] = kAttnOut; // The attention's output (its merge's in long mode).
    o.in[1] = kX0;
    o.out[0] = kX1;
    o.aux[0] = 16;
    p.tasks.push_back(o);

    TaskRecord f = makeTask(Opcode::FfnPartial, w, kFfn);
    f.layer = 0;
    f.rowBegin = 8 * w;
    f.rowEnd = 8 * w + 8;
    f.weight = 3072 + 768 * w;
    f.weightBytes = 768;
    f.norm = 2816;
    f.param = 6;
    f.in[0] = kX1;
    f.out[0] = kPartials;
    f.aux[0] = 16;
    f.aux[1] = w;
    p.tasks.push_back(f);

    TaskRecord r = makeTask(Opcode::ReduceResidual, w, kReduce);
    r.layer = 0;
    r.rowBegin = 4 * w;
    r.rowEnd = 4 * w + 4;
    r.in[0] = kPartials;
    r.in[1] = kX1;
    r.out[0] = kX2;
    r.aux[0] = 16;
    r.aux[1] = 4;
    p.tasks.push_back(r);

    TaskRecord l = makeTask(Opcode::LmHead, w, kLmHead);
    l.rowBegin = 6 * w;
    l.rowEnd = 6 * w + 6;
    l.weight = 6400 + 6 * w * 32;
    l.weightBytes = 192;
    l.norm = 6144;
    l.param = 7;
    l.in[0] = kX2;
    l.out[0] = kLogits;
    l.out[1] = kCandidates;
    l.aux[0] = 16;
    l.aux[1] = w;
    p.tasks.push_back(l);
  }
  sortTasks(p);
  return p;
}

size_t findTask(const Plan &p, Opcode op, uint16_t worker) {
  for (size_t i = 0; i < p.tasks.size(); ++i)
    if (p.tasks[i].opcode == static_cast<uint16_t>(op) && p.tasks[i].worker == worker)
      return i;
  ADD_FAILURE() << "no such task";
  return 0;
}

TaskRecord &taskOf(Plan &p, Opcode op, uint16_t worker) { return p.tasks[findTask(p, op, worker)]; }

/// Worker `worker`'s output projection (its second gemv, after qkv).
TaskRecord &woOf(Plan &p, uint16_t worker) {
  size_t i = findTask(p, Opcode::Gemv, worker) + 1;
  while (i < p.tasks.size() && p.tasks[i].wave != kWo)
    ++i;
  EXPECT_LT(i, p.tasks.size());
  return p.tasks[i];
}

/// How the verifier names a task, for the messages below.
std::string named(const Plan &p, Opcode op, uint16_t worker) {
  size_t i = findTask(p, op, worker);
  const TaskRecord &t = p.tasks[i];
  return "task #" + std::to_string(i) + " (" + opcodeName(t.opcode) + " on worker " +
         std::to_string(worker) + ", wave " + std::to_string(t.wave) + " '" + p.waves[t.wave].name +
         "')";
}

/// The one message containing all of `parts`, or a failure listing them all.
::testing::AssertionResult hasError(const Plan &p, std::vector<std::string> parts) {
  std::vector<std::string> errors = verifyPlanAll(p);
  for (const std::string &e : errors)
    if (std::all_of(parts.begin(), parts.end(),
                    [&](const std::string &part) { return e.find(part) != std::string::npos; }))
      return ::testing::AssertionSuccess();
  auto failure = ::testing::AssertionFailure() << "no message has all of:";
  for (const std::string &part : parts)
    failure << " [" << part << "]";
  failure << "\nmessages:";
  for (const std::string &e : errors)
    failure << "\n  " << e;
  return failure;
}

/// Success when the verifier finds nothing, else a failure with every message.
::testing::AssertionResult isValid(const Plan &p) {
  std::vector<std::string> errors = verifyPlanAll(p);
  if (errors.empty())
    return ::testing::AssertionSuccess();
  auto failure = ::testing::AssertionFailure() << "messages:";
  for (const std::string &e : errors)
    failure << "\n  " << e;
  return failure;
}

/// tinyPlan with the MLP in the GateUp form: each FFN task becomes a GateUp of
/// its 8 units (two rows of 16 a unit, 512 bytes) writing act[8w, 8w + 8) of
/// a 32-float activation buffer (the partials buffer, as an activation), and
/// each reduce task the down projection's Gemv of its 4 rows of 32 over act,
/// with the residual.
Plan gateUpPlan() {
  Plan p = tinyPlan();
  // The GateUp form's weights: each unit's gate and up rows, a task's units
  // together, then the down projection's rows (what layout packs).
  std::vector<WeightSegment> gateUp;
  for (uint64_t w = 0; w < 4; ++w) {
    gateUp.push_back(segment("model.layers.0.mlp.gate_proj.weight", {32, 16}, 8 * w, 8 * w + 8, 0, 16));
    gateUp.push_back(segment("model.layers.0.mlp.up_proj.weight", {32, 16}, 8 * w, 8 * w + 8, 0, 16));
  }
  std::vector<PackedTensor> weights;
  for (PackedTensor &t : p.weights)
    if (t.name != "layer0.ffn")
      weights.push_back(std::move(t));
  p.weights = std::move(weights);
  addTensor(p, "layer0.gate+up", 3072, gateUp);
  addTensor(p, "layer0.down", 5120, {segment("model.layers.0.mlp.down_proj.weight", {16, 32}, 0, 16, 0, 32)});
  std::sort(p.weights.begin(), p.weights.end(),
            [](const PackedTensor &a, const PackedTensor &b) { return a.offset < b.offset; });
  p.layoutHash = layoutHash(p.weights, p.weightsBytes);
  for (Buffer &b : p.buffers)
    if (b.kind == BufferKind::Partials)
      b.kind = BufferKind::Activation;
  for (TaskRecord &t : p.tasks) {
    if (t.opcode == uint16_t(Opcode::FfnPartial)) {
      t.opcode = uint16_t(Opcode::GateUp);
      t.weight = 3072 + 512 * t.worker;
      t.weightBytes = 512;
      t.aux[1] = 0;
    } else if (t.opcode == uint16_t(Opcode::ReduceResidual)) {
      t.opcode = uint16_t(Opcode::Gemv);
      t.flags = kFlagResidual;
      t.weight = 5120 + 256 * t.worker;
      t.weightBytes = 256;
      t.aux[0] = 32; // K: the intermediate units.
      t.aux[1] = 0;
    }
  }
  return p;
}

TEST(PlanVerifierTest, TinyPlanIsValid) {
  Plan p = tinyPlan();
  std::vector<std::string> errors = verifyPlanAll(p);
  for (const std::string &e : errors)
    ADD_FAILURE() << e;
  EXPECT_TRUE(verifyPlan(p).ok());
}

TEST(PlanVerifierTest, MessagesNameTheTaskAndWave) {
  Plan p = tinyPlan();
  p.tasks[findTask(p, Opcode::Gemv, 1)].param = 100;
  ti::Status s = verifyPlan(p);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "task #10 (gemv on worker 1, wave 2 'layer0.qkv') param 100 needs "
                         "params[100, 101), the plan has 8");
}

TEST(PlanVerifierTest, AttentionAccessesDependOnMode) {
  Plan p = tinyPlan();
  const TaskRecord &chunk1 = taskOf(p, Opcode::Attention, 1);
  EXPECT_TRUE(taskAccesses(p, chunk1, StepMode::Short).empty()); // Chunk 0 does it all.

  // Long mode: chunk 1 writes its partials and stats, and only chunk 0 stores
  // the key at pos.
  std::vector<Access> longChunk = taskAccesses(p, chunk1, StepMode::Long);
  std::vector<std::pair<uint64_t, uint64_t>> writes;
  for (const Access &a : longChunk)
    if (a.write)
      writes.push_back({a.begin, a.end});
  EXPECT_EQ(writes, (std::vector<std::pair<uint64_t, uint64_t>>{
                        {kWorkspace + 64, kWorkspace + 128}, {kWorkspace + 144, kWorkspace + 160}}));
  EXPECT_TRUE(std::none_of(longChunk.begin(), longChunk.end(),
                           [](const Access &a) { return a.kind == AccessKind::CacheRow; }));
  // The values stop before the row this step's q+k+v writes: the chunk takes
  // position pos's value from its q|k|v input.
  auto history = std::find_if(longChunk.begin(), longChunk.end(), [](const Access &a) {
    return a.kind == AccessKind::CacheHistory && a.operand == Operand::In2;
  });
  ASSERT_NE(history, longChunk.end());
  EXPECT_FALSE(history->includesCurrentRow);
  EXPECT_EQ(history->cacheBase, kVCache);
  EXPECT_EQ(history->rowBytes, 16u);

  // The merge reads every chunk's partials and stats and writes the output in
  // long mode; in short mode it does nothing (chunk 0 wrote the output).
  auto mergeAccess = [&](StepMode mode, Operand op) {
    for (const Access &a : taskAccesses(p, taskOf(p, Opcode::MergeAttention, 3), mode))
      if (a.operand == op)
        return std::pair(a.begin, a.end);
    return std::pair(uint64_t(0), uint64_t(0));
  };
  EXPECT_TRUE(taskAccesses(p, taskOf(p, Opcode::MergeAttention, 3), StepMode::Short).empty());
  EXPECT_EQ(mergeAccess(StepMode::Long, Operand::In0), std::pair(kWorkspace, kWorkspace + 160));
  EXPECT_EQ(mergeAccess(StepMode::Long, Operand::Out0), std::pair(kAttnOut, kAttnOut + 64));
}

TEST(PlanVerifierTest, TwoWritersOfOneRow) {
  Plan p = tinyPlan();
  taskOf(p, Opcode::ReduceResidual, 1).rowBegin = 2; // Rows 2, 3 are worker 0's.
  EXPECT_TRUE(hasError(p, {named(p, Opcode::ReduceResidual, 0), " and ",
                           named(p, Opcode::ReduceResidual, 1), "both write x2[+8, +8)"}));
}

TEST(PlanVerifierTest, MorePartialsThanTheArenaHolds) {
  // Refused before the access model lists 2^28 reads (a flipped bit of aux[1]
  // once made the verifier run out of memory).
  Plan p = tinyPlan();
  taskOf(p, Opcode::ReduceResidual, 2).aux[1] = 1u << 28;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::ReduceResidual, 2),
                           "sums 268435456 partials of 16 values, more than the arena's 3840 "
                           "bytes hold"}));
}

TEST(PlanVerifierTest, ArenaSliceOutOfBounds) {
  Plan p = tinyPlan();
  taskOf(p, Opcode::ReduceResidual, 3).out[0] = kX2 + 16;
  EXPECT_TRUE(hasError(
      p, {named(p, Opcode::ReduceResidual, 3), "out[0] A[+3136, +16) is not inside one buffer"}));
}

TEST(PlanVerifierTest, WeightsSliceOutOfBounds) {
  Plan p = tinyPlan();
  taskOf(p, Opcode::Gemv, 3).weight += 16; // The qkv gemv's slice runs past its tensor.
  EXPECT_TRUE(hasError(
      p, {named(p, Opcode::Gemv, 3), "weight W[+2064, +256) is not inside one packed tensor"}));
}

TEST(PlanVerifierTest, OperandInWrongBufferKind) {
  Plan p = tinyPlan();
  taskOf(p, Opcode::FfnPartial, 0).out[0] = kX2; // Partials must go to a partials buffer.
  EXPECT_TRUE(
      hasError(p, {named(p, Opcode::FfnPartial, 0), "out[0]", "'x2' (activation)", "wrong kind"}));
}

TEST(PlanVerifierTest, ReadBeforeWrite) {
  Plan p = tinyPlan();
  size_t wo = findTask(p, Opcode::Gemv, 1) + 2; // Worker 1's wo, after its qkv and attention.
  ASSERT_EQ(p.tasks[wo].wave, kWo);
  p.tasks[wo].in[1] = kX2; // Reduce writes x2 later, in wave 6.
  EXPECT_TRUE(hasError(p, {"task #" + std::to_string(wo) +
                           " (gemv on worker 1, wave 5 'layer0.wo')"
                           " reads x2[+16, +16) before any task writes it"}));
}

TEST(PlanVerifierTest, WriteAfterReadInOneWave) {
  Plan p = tinyPlan();
  taskOf(p, Opcode::Gemv, 3).in[0] = kQkvOut; // Workers 0, 1 write it in this wave.
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Gemv, 0) + " writes qkv[+0, +32) that " +
                           named(p, Opcode::Gemv, 3) + " of the same wave reads"}));
}

TEST(PlanVerifierTest, MissingBarrier) {
  Plan p = tinyPlan();
  p.waves[kEmbed].barrier = BarrierKind::None; // qkv reads every worker's slice of x0.
  EXPECT_TRUE(hasError(p, {"(gemv on worker ", "wave 2 'layer0.qkv') reads x0", "written by task",
                           "(embed on worker", "missing barrier between wave 1 and wave 2"}));
}

TEST(PlanVerifierTest, GuardedBarrierNeededInShortMode) {
  Plan p = tinyPlan();
  // In short mode chunk 0 writes the plain output and wo reads it two waves
  // later (the merge does nothing): barriers in long mode only leave them
  // unordered.
  p.waves[kAttention].barrier = BarrierKind::GridIfLong;
  p.waves[kMerge].barrier = BarrierKind::GridIfLong;
  std::vector<std::string> errors = verifyPlanAll(p);
  ASSERT_FALSE(errors.empty());
  for (const std::string &e : errors)
    EXPECT_NE(e.find("(short mode)"), std::string::npos) << e;
  EXPECT_TRUE(hasError(p, {"wave 5 'layer0.wo') reads attn[+0, +",
                           "written by " + named(p, Opcode::Attention, 0),
                           "missing barrier between wave 3 and wave 5 (short mode)"}));
}

TEST(PlanVerifierTest, TheMergeWaitsForEveryChunkInLongMode) {
  Plan p = tinyPlan();
  // Chunk 1 acts in long mode only; the merge then reads its partials and
  // stats.
  p.waves[kAttention].barrier = BarrierKind::None;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::MergeAttention, 3) + " reads attn_ws[+",
                           "missing barrier between wave 3 and wave 4 (long mode)"}));
}

/// The tiny plan with x0 and qkv tagged (Tagged.h: twice their bytes) and no
/// grid barrier after the waves that write them: every reader of them waits
/// for their tags.
/// tinyPlan with x0, qkv and the attention's output tagged: the attention's
/// output hands off by tags in short mode, its workspace behind a grid
/// barrier in long mode.
Plan taggedTinyPlan() {
  Plan p = tinyPlan();
  for (Buffer &b : p.buffers)
    if (b.name == "x0" || b.name == "qkv" || b.name == "attn") {
      b.tagged = true;
      b.bytes *= 2;
    }
  p.waves[kEmbed].barrier = BarrierKind::Tagged;
  p.waves[kQkv].barrier = BarrierKind::Tagged;
  p.waves[kAttention].barrier = BarrierKind::GridIfLong;
  p.waves[kMerge].barrier = BarrierKind::Tagged;
  for (TaskRecord &t : p.tasks) {
    const auto op = static_cast<Opcode>(t.opcode);
    if (op == Opcode::Embed) {
      t.flags |= kFlagTaggedOut0;
      t.out[0] = kX0;
    } else if (op == Opcode::Gemv && t.wave == kQkv) {
      t.flags |= kFlagTaggedIn0 | kFlagTaggedOut0;
    } else if (op == Opcode::Attention) {
      t.flags |= kFlagTaggedIn0 | kFlagTaggedOut0;
    } else if (op == Opcode::MergeAttention) {
      t.flags |= kFlagTaggedOut0;
    } else if (op == Opcode::Gemv && t.wave == kWo) {
      t.flags |= kFlagTaggedIn0 | kFlagTaggedIn1; // The attention's output; the residual, x0.
    }
  }
  return p;
}

TEST(PlanVerifierTest, TaggedHandOffsNeedNoBarrier) {
  EXPECT_TRUE(isValid(taggedTinyPlan()));
  // The access model: a tagged operand's elements are 8 bytes.
  Plan p = taggedTinyPlan();
  std::vector<Access> embed = taskAccesses(p, taskOf(p, Opcode::Embed, 1), StepMode::Short);
  auto out = std::find_if(embed.begin(), embed.end(),
                          [](const Access &a) { return a.operand == Operand::Out0; });
  ASSERT_NE(out, embed.end());
  EXPECT_TRUE(out->tagged);
  EXPECT_EQ(out->begin, kX0 + 4 * 8);
  EXPECT_EQ(out->end, kX0 + 8 * 8);
}

TEST(PlanVerifierTest, APlainReadOfATaggedBuffer) {
  // It would read the value without waiting for the write: no barrier orders
  // the embed wave before it.
  Plan p = taggedTinyPlan();
  taskOf(p, Opcode::Gemv, 2).flags &= ~kFlagTaggedIn0;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Gemv, 2) + " in[0] A[+1280, +64)",
                           "read or written as plain f32 values, and buffer 'x0' is tagged"}));
}

TEST(PlanVerifierTest, ATaggedReadOfAPlainBuffer) {
  Plan p = taggedTinyPlan();
  taskOf(p, Opcode::FfnPartial, 0).flags |= kFlagTaggedIn0;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::FfnPartial, 0) + " has flags 0x10 that ffn_partial "
                           "does not take"}));
  p = taggedTinyPlan();
  for (Buffer &b : p.buffers)
    if (b.name == "attn")
      b.tagged = false; // Its writers and its reader still take it tagged.
  EXPECT_TRUE(hasError(p, {"(gemv on worker 1, wave 5 'layer0.wo') in[0] A[+3584, +",
                           "is read or written as tagged values, and buffer 'attn' is not "
                           "tagged"}));
}

TEST(PlanVerifierTest, ATaggedWorkspaceWriteOfAPlainWorkspace) {
  // kFlagTaggedOut1: the chunks would write 8-byte pairs into a plain
  // workspace (and past its end).
  Plan p = taggedTinyPlan();
  taskOf(p, Opcode::Attention, 1).flags |= kFlagTaggedOut1;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Attention, 1) +
                           " out[1] A[+2432, +128) is not inside one buffer"}));
}

TEST(PlanVerifierTest, TagsOrderOnlyTaggedReads) {
  // The workspace is plain: without the grid barrier after the attention
  // wave in long mode, the output projection may read it before it is
  // written. (Short mode reads the tagged output: no barrier needed.)
  Plan p = taggedTinyPlan();
  p.waves[kAttention].barrier = BarrierKind::Tagged;
  EXPECT_TRUE(hasError(p, {"wave 4 'layer0.merge') reads attn_ws[+",
                           "missing barrier between wave 3 and wave 4 (long mode)"}));
}

TEST(PlanVerifierTest, ATaggedReadOfItsOwnWave) {
  // A tagged read of a write in its own wave could wait for a task that runs
  // after it on the same worker: a hazard, tags or not.
  Plan p = taggedTinyPlan();
  TaskRecord &q = taskOf(p, Opcode::Gemv, 3);
  q.in[0] = kQkvOut; // Tagged, written by workers 0-3 in this wave.
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Gemv, 0) + " writes qkv[+0, +", "that " +
                           named(p, Opcode::Gemv, 3) + " of the same wave reads"}));
}

TEST(PlanVerifierTest, OnlyActivationsAreTagged) {
  Plan p = taggedTinyPlan();
  for (Buffer &b : p.buffers)
    if (b.name == "k_cache0")
      b.tagged = true;
  EXPECT_TRUE(hasError(p, {"buffer 'k_cache0' is tagged, and a k_cache buffer cannot be"}));
}

TEST(PlanVerifierTest, GeometryWhereItIsNotUsed) {
  Plan p = tinyPlan();
  taskOf(p, Opcode::FfnPartial, 1).geometry = {2, 1, 8, 2};
  EXPECT_TRUE(hasError(p, {named(p, Opcode::FfnPartial, 1),
                           "has geometry (heads 2 over 1 kv heads of dim 8 in 2 chunks) it does "
                           "not use"}));
  p = tinyPlan();
  taskOf(p, Opcode::Gemv, 3).geometry.heads = 2; // A V-cache write uses kv heads and dim only.
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Gemv, 3), "it does not use"}));
}

TEST(PlanVerifierTest, InconsistentGeometry) {
  Plan p = tinyPlan();
  taskOf(p, Opcode::Attention, 0).geometry.heads = 3; // Not a multiple of 1... but of 2:
  taskOf(p, Opcode::Attention, 0).geometry.kvHeads = 2;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Attention, 0),
                           "geometry: 3 heads is not a positive multiple of 2 kv heads"}));
  p = tinyPlan();
  taskOf(p, Opcode::Attention, 1).geometry.headDim = 7;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Attention, 1),
                           "geometry: 1 kv heads of dim 7 (both positive, the dim even"}));
  p = tinyPlan();
  taskOf(p, Opcode::MergeAttention, 3).geometry.chunks = 5; // 5 chunks: above split 4.
  EXPECT_TRUE(hasError(p, {"geometry: 5 chunks, not 1 to the split context 4"}));
  p = tinyPlan();
  taskOf(p, Opcode::Attention, 1).aux[1] = 2; // Chunk 2 of 2.
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Attention, 1), "is chunk 2 of its 2"}));
}

TEST(PlanVerifierTest, AWorkspaceHasOneGeometry) {
  // Chunk 1 on worker 1 believes the layer has 2 kv heads of dim 4: that
  // layout is 96 bytes, the workspace 160.
  Plan p = tinyPlan();
  taskOf(p, Opcode::Attention, 1).geometry = {2, 2, 4, 2};
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Attention, 1), "out[1]: workspace 'attn_ws'",
                           "is not the 96 bytes from out[1] that its geometry"}));
  // 1 head of dim 8 in 4 chunks, on worker 0 (chunk 0): the same 40 floats
  // (4 x 8 partials, 4 x 2 stats against 2 x 2 x 8 and 2 x 2 x 2), so the
  // size check passes, but the task would index its layer's workspace as
  // another layer's.
  p = tinyPlan();
  taskOf(p, Opcode::Attention, 0).geometry = {1, 1, 8, 4};
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Attention, 1), "share workspace 'attn_ws' with "
                           "different geometry (heads 2 over 1 kv heads of dim 8 in 2 chunks; "
                           "heads 1 over 1 kv heads of dim 8 in 4 chunks"}));
}

TEST(PlanVerifierTest, TheMergeReadsItsLayersPartials) {
  Plan p = tinyPlan();
  auto merge = [](Plan &p) -> TaskRecord & { return taskOf(p, Opcode::MergeAttention, 3); };
  merge(p).geometry.chunks = 1; // It would take chunk 0 alone.
  EXPECT_TRUE(hasError(p, {"merges 16 values of geometry (heads 2 over 1 kv heads of dim 8 in 1 "
                           "chunks) at 'attn_ws'[+0], but its partials are 16 values of geometry "
                           "(heads 2 over 1 kv heads of dim 8 in 2 chunks) at [+0]"}));
  p = tinyPlan();
  merge(p).geometry.headDim = 4; // Would weight 4 heads of 4 by 2 heads' stats.
  EXPECT_TRUE(hasError(p, {"merges an output of 16 values; its geometry (heads 2 over 1 kv heads "
                           "of dim 4"}));
  p = tinyPlan();
  merge(p).in[0] += 32; // Chunk 0's second head: the read runs past the workspace.
  EXPECT_TRUE(hasError(p, {named(p, Opcode::MergeAttention, 3) + " in[0] A[+2336, +160) is not "
                           "inside one buffer"}));
  p = tinyPlan();
  merge(p).rowBegin = 4; // Half a head.
  EXPECT_TRUE(hasError(p, {"rows [4, 16) are not whole heads of dim 8 inside its 16"}));
}

TEST(PlanVerifierTest, ACacheHoldsMaxContextRowsOfItsWidth) {
  // A V cache of twice the bytes its rows of 8 values need: every access is in
  // bounds, but the rows it was sized for are not the ones its tasks use.
  Plan p = tinyPlan();
  p.buffers[7].bytes = 256;
  ASSERT_EQ(p.buffers[7].name, "v_cache0");
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Gemv, 3), "out[1]: cache 'v_cache0' has 256 bytes, "
                           "but 8 rows of its 8 values take 128"}));
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Attention, 0), "in[2]: cache 'v_cache0'"}));
}

TEST(PlanVerifierTest, EveryTaskLaysOutACacheByTheSameHeads) {
  // The caches are head-major: the V rows written as 2 kv heads of dim 4 fill
  // the same bytes as 1 of dim 8, in an order the attention would misread.
  Plan p = tinyPlan();
  size_t writer = findTask(p, Opcode::Gemv, 3);
  ASSERT_TRUE(p.tasks[writer].flags & kFlagVCache);
  p.tasks[writer].geometry.kvHeads = 2;
  p.tasks[writer].geometry.headDim = 4;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Gemv, 3), "lay out cache 'v_cache0' by different "
                                                      "heads"}));
  EXPECT_TRUE(hasError(p, {"(2 kv heads of dim 4; 1 of dim 8)"}) ||
              hasError(p, {"(1 kv heads of dim 8; 2 of dim 4)"}));
  // The K cache that one attention task reads and writes: the others' heads.
  p = tinyPlan();
  taskOf(p, Opcode::Attention, 1).geometry.kvHeads = 2;
  taskOf(p, Opcode::Attention, 1).geometry.headDim = 4;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Attention, 1), "lay out cache 'k_cache0' by "
                                                           "different heads"}));
}

TEST(PlanVerifierTest, EndTokens) {
  Plan p = tinyPlan();
  p.model.eos = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_TRUE(verifyPlan(p).ok()) << verifyPlan(p).message();
  p.model.eos.push_back(9);
  EXPECT_TRUE(hasError(p, {"model: 9 end-of-sequence tokens, more than the 8 a plan may name"}));
  p.model.eos = {24};
  EXPECT_TRUE(
      hasError(p, {"model: end-of-sequence token 24 is outside the vocabulary of 24"}));
  p.model.eos = {-1};
  EXPECT_TRUE(
      hasError(p, {"model: end-of-sequence token -1 is outside the vocabulary of 24"}));
}

/// The tiny plan for the stream worker: its consumer threads, a ring of four
/// 64-byte stages (the plan's rows are 16 bf16: 32 bytes).
Plan streamPlan() {
  Plan p = tinyPlan();
  p.target.threadsPerWorker = kStreamConsumerThreads;
  p.stream = StreamConfig{ExecutionModel::Stream, 64, 4, 2};
  return p;
}

TEST(PlanVerifierTest, AStreamPlanIsValid) {
  Plan p = streamPlan();
  EXPECT_TRUE(isValid(p));
}

/// The stream plan with worker 0's attention task streaming its K/V rows
/// through stages of `stageBytes`.
Plan streamPlanWithStreamedKv(uint32_t stageBytes) {
  Plan p = streamPlan();
  p.stream.stageBytes = stageBytes;
  taskOf(p, Opcode::Attention, 0).flags |= kFlagStreamKv;
  return p;
}

TEST(PlanVerifierTest, StreamedKvRowsNeedAStageOfABlock) {
  // The tiny plan's attention rows are 8 bf16 (16 bytes): a block of 32 of
  // them needs stages of 512 bytes.
  Plan p = streamPlanWithStreamedKv(512);
  EXPECT_TRUE(isValid(p));
  p.stream.stageBytes = 256;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Attention, 0) + " streams its K/V rows (stream_kv) "
                           "but a stage of 256 bytes holds fewer than 32 rows of 16 bytes"}));
  // The value pass puts headDim / 8 lanes on a row: 8 times a power of two.
  p = streamPlanWithStreamedKv(4096);
  taskOf(p, Opcode::Attention, 0).geometry.headDim = 24;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Attention, 0) + " streams its K/V rows (stream_kv) "
                           "but its head_dim 24 is not 8, 16, 32, 64, 128 or 256"}));
  p = tinyPlan();
  taskOf(p, Opcode::Attention, 0).flags |= kFlagStreamKv;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Attention, 0) + " streams its K/V rows (stream_kv) "
                           "but the plan has no weight stream"}));
  p = tinyPlan();
  taskOf(p, Opcode::Gemv, 0).flags |= kFlagStreamKv;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Gemv, 0) + " has flags 0x80 that gemv does not take"}));
}

TEST(PlanVerifierTest, ShortModeStreamsOnlyHeadsOfTheTensorCoresForm) {
  // The tiny plan's heads have 8 dimensions: the tensor cores' form takes 64
  // or 128, in groups of up to 4 (WorkerLayout.h).
  Plan p = streamPlanWithStreamedKv(4096);
  EXPECT_TRUE(isValid(p));
  p.attention.shortMmaContext = 64;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Attention, 0) +
                           " streams its K/V rows in short mode (short_mma_context 64) but its "
                           "heads (head_dim 8, "}));
}

TEST(PlanVerifierTest, EveryStreamedRowFitsAStage) {
  Plan p = streamPlan();
  p.stream.stageBytes = 16;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Gemv, 0), " streams rows of 32 bytes, more than a "
                                                      "stage's 16"}));
  EXPECT_TRUE(hasError(p, {named(p, Opcode::FfnPartial, 0), " streams rows of 32 bytes"}));
}

TEST(PlanVerifierTest, TheRingIsOneTheBulkCopiesCanFill) {
  Plan p = streamPlan();
  p.stream.stageBytes = 72;
  EXPECT_TRUE(hasError(p, {"execution: stage_bytes 72 is not a positive multiple of 16"}));
  p = streamPlan();
  p.stream.stages = 1;
  p.stream.inFlightStages = 1;
  EXPECT_TRUE(hasError(p, {"execution: a ring of 1 stages (2 to 16)"}));
  p = streamPlan();
  p.stream.stages = kMaxStreamStages + 1;
  EXPECT_TRUE(hasError(p, {"execution: a ring of 17 stages (2 to 16)"}));
  p = streamPlan();
  p.stream.inFlightStages = 5;
  EXPECT_TRUE(hasError(p, {"execution: 5 stages in flight, of a ring of 4"}));
  p = streamPlan();
  p.stream.inFlightStages = 0;
  EXPECT_TRUE(hasError(p, {"execution: 0 stages in flight, of a ring of 4"}));
  p = streamPlan();
  p.stream.handOffInFlightStages = p.stream.inFlightStages + 1;
  EXPECT_TRUE(hasError(p, {"execution: 3 stages in flight during a grid barrier, more than the 2 "
                           "of the stream"}));
  p = streamPlan();
  p.stream.rowPartBytes = 40;
  EXPECT_TRUE(hasError(p, {"execution: row_part_bytes 40 is not a multiple of 16"}));
  p = streamPlan();
  p.stream.rowPartBytes = 16; // 32-byte rows in two parts.
  EXPECT_TRUE(isValid(p));
}

TEST(PlanVerifierTest, AStreamPlanRunsOnTheStreamWorkersThreads) {
  Plan p = streamPlan();
  p.target.threadsPerWorker = 1024;
  EXPECT_TRUE(hasError(p, {"execution: a stream plan runs tasks on 256 threads, but the target "
                           "has 1024"}));
}

TEST(PlanVerifierTest, APlainPlanHasNoStream) {
  Plan p = tinyPlan();
  p.stream.stageBytes = 64;
  EXPECT_TRUE(hasError(p, {"execution: a plain plan has a weight stream (stage_bytes 64, stages 0)"}));
  p.stream = StreamConfig{};
  p.stream.copiesEvictFirst = true;
  EXPECT_TRUE(hasError(p, {"execution: a plain plan has a weight stream (stage_bytes 0, stages 0)"}));
  p.stream = StreamConfig{};
  p.stream.kvCopiesUnhinted = true;
  EXPECT_TRUE(hasError(p, {"execution: a plain plan has a weight stream (stage_bytes 0, stages 0)"}));
}

TEST(PlanVerifierTest, KvRowsCopiesGoUnhintedOnlyBesideHintedWeights) {
  Plan p = streamPlan();
  p.stream.copiesEvictFirst = true;
  p.stream.kvCopiesUnhinted = true;
  EXPECT_TRUE(verifyPlan(p).ok());
  p.stream.copiesEvictFirst = false;
  EXPECT_TRUE(hasError(p, {"execution: kv_copies_unhinted without copies_evict_first"}));
}

TEST(PlanVerifierTest, LayoutHashMismatch) {
  Plan p = tinyPlan();
  p.layoutHash ^= 1;
  EXPECT_TRUE(hasError(p, {"layout hash 0x", "does not match the weights layout"}));
}

TEST(PlanVerifierTest, UnknownOpcode) {
  Plan p = tinyPlan();
  size_t i = findTask(p, Opcode::LmHead, 2);
  p.tasks[i].opcode = 42;
  EXPECT_TRUE(hasError(p, {"task #" + std::to_string(i) +
                           " (opcode 42 on worker 2, wave 8 'lm_head') has an unknown opcode"}));
}

TEST(PlanVerifierTest, UnsortedTasks) {
  Plan p = tinyPlan();
  std::swap(p.tasks[0], p.tasks[1]);
  EXPECT_TRUE(hasError(p, {"task #1 (select_token on worker 0, wave 0 'select') is out of order"}));
}

TEST(PlanVerifierTest, WorkerWithoutSelectToken) {
  Plan p = tinyPlan();
  taskOf(p, Opcode::SelectToken, 2).opcode = static_cast<uint16_t>(Opcode::Nop);
  EXPECT_TRUE(hasError(p, {"worker 2 has no select_token task"}));
}

TEST(PlanVerifierTest, BadParamIndex) {
  Plan p = tinyPlan();
  taskOf(p, Opcode::Attention, 0).param = 4; // Needs 5 floats: params[4, 9).
  EXPECT_TRUE(hasError(
      p, {named(p, Opcode::Attention, 0), "param 4 needs params[4, 9), the plan has 8"}));
}

TEST(PlanVerifierTest, FlagTheOpcodeDoesNotTake) {
  Plan p = tinyPlan();
  taskOf(p, Opcode::LmHead, 0).flags = kFlagResidual;
  EXPECT_TRUE(
      hasError(p, {named(p, Opcode::LmHead, 0), "has flags 0x1 that lm_head does not take"}));
}

TEST(PlanVerifierTest, LastWaveNeedsGridBarrier) {
  Plan p = tinyPlan();
  p.waves.back().barrier = BarrierKind::GridIfLong;
  EXPECT_TRUE(hasError(p, {"wave 8 'lm_head' is the last", "the step needs a grid barrier"}));
}

/// 132 workers, a select and an embed wave, then `layers` waves of gemvs, each
/// reading the whole vector the previous wave wrote a slice of.
Plan largePlan(uint16_t workers, uint16_t layers) {
  const uint32_t rowsPerWorker = 16, hidden = workers * rowsPerWorker, vocab = 8;
  Plan p;
  p.model.name = "large";
  p.model.vocab = vocab;
  p.model.hidden = hidden;
  p.model.ffn = hidden;
  p.model.layers = layers;
  p.model.heads = 16;
  p.model.kvHeads = 4;
  p.model.headDim = 64;
  p.model.maxContext = 1024;
  p.target.workers = workers;
  p.attention = {64};

  uint64_t weightOffset = 0;
  auto align = [](uint64_t v, uint64_t a) { return (v + a - 1) / a * a; };
  addTensor(p, "embed", 0, {segment("embed", {vocab, hidden}, 0, vocab, 0, hidden)});
  weightOffset = align(p.weights.back().bytes, kWeightAlignment);
  for (uint16_t l = 0; l < layers; ++l) {
    std::string name = "w" + std::to_string(l);
    addTensor(p, name, weightOffset, {segment(name, {hidden, hidden}, 0, hidden, 0, hidden)});
    weightOffset = align(weightOffset + p.weights.back().bytes, kWeightAlignment);
  }
  p.weightsBytes = weightOffset;
  p.layoutHash = layoutHash(p.weights, p.weightsBytes);

  uint64_t arena = 0;
  auto buffer = [&](std::string name, BufferKind kind, uint64_t bytes) {
    p.buffers.push_back({std::move(name), kind, arena, bytes});
    arena = align(arena + bytes, kArenaAlignment);
    return p.buffers.back().offset;
  };
  uint64_t slots = buffer("slots", BufferKind::TokenSlots, 4 * workers);
  uint64_t prompt = buffer("prompt", BufferKind::Prompt, 4 * kMaxStepsPerLaunch);
  uint64_t state = buffer("state", BufferKind::StepState, sizeof(StepState));
  uint64_t candidates = buffer("candidates", BufferKind::Candidates, sizeof(Candidate));
  std::vector<uint64_t> x;
  for (uint16_t l = 0; l <= layers; ++l)
    x.push_back(buffer("x" + std::to_string(l), BufferKind::Activation, 4 * hidden));
  p.arenaBytes = arena;

  p.waves.push_back({"select", BarrierKind::None});
  p.waves.push_back({"embed", BarrierKind::Grid});
  for (uint16_t l = 0; l < layers; ++l)
    p.waves.push_back({"gemv" + std::to_string(l), BarrierKind::Grid});

  for (uint16_t w = 0; w < workers; ++w) {
    uint32_t r0 = w * rowsPerWorker, r1 = r0 + rowsPerWorker;
    TaskRecord s = makeTask(Opcode::SelectToken, w, 0);
    s.in[0] = candidates;
    s.aux[0] = 1;
    s.in[1] = prompt;
    s.out[0] = slots;
    if (w == 0) {
      s.flags = kFlagRecord;
      s.out[1] = state;
    }
    p.tasks.push_back(s);
    TaskRecord e = makeTask(Opcode::Embed, w, 1);
    e.rowBegin = r0;
    e.rowEnd = r1;
    e.weight = 0;
    e.weightBytes = 2 * rowsPerWorker;
    e.in[0] = slots;
    e.out[0] = x[0];
    e.aux[0] = hidden;
    e.aux[1] = vocab;
    p.tasks.push_back(e);
    for (uint16_t l = 0; l < layers; ++l) {
      TaskRecord g = makeTask(Opcode::Gemv, w, 2 + l);
      g.rowBegin = r0;
      g.rowEnd = r1;
      g.weight = p.weights[1 + l].offset + 2ull * r0 * hidden;
      g.weightBytes = 2ull * rowsPerWorker * hidden;
      g.in[0] = x[l];
      g.out[0] = x[l + 1];
      g.aux[0] = hidden;
      p.tasks.push_back(g);
    }
  }
  return p;
}

TEST(PlanVerifierTest, ALargePlanVerifies) {
  // The time is recorded, not asserted (a loaded machine would fail any
  // limit): the hazard walk is O(reads x log), which keeps it in milliseconds.
  Plan p = largePlan(132, 100);
  ASSERT_EQ(p.tasks.size(), 132u * 102u);
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> errors = verifyPlanAll(p);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const std::string &e : errors)
    ADD_FAILURE() << e;
  RecordProperty("verify_ms", static_cast<int>(seconds * 1000));

  // The same plan with one barrier gone is caught.
  p.waves[50].barrier = BarrierKind::None;
  EXPECT_TRUE(hasError(p, {"missing barrier between wave 50 and wave 51"}));
}

} // namespace

TEST(PlanVerifierTest, AGateUpPlanIsValid) {
  Plan p = gateUpPlan();
  EXPECT_TRUE(isValid(p));
}

TEST(PlanVerifierTest, GateUpStreamsAGateAndAnUpRowPerUnit) {
  Plan p = gateUpPlan();
  taskOf(p, Opcode::GateUp, 1).weightBytes = 768; // Three rows a unit: the FfnPartial's.
  EXPECT_TRUE(hasError(p, {named(p, Opcode::GateUp, 1), "weightBytes is 768, but it streams 512"}));
  p = gateUpPlan();
  taskOf(p, Opcode::GateUp, 2).flags = kFlagResidual;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::GateUp, 2), "flags 0x1 that gate_up does not take"}));
  p = gateUpPlan();
  taskOf(p, Opcode::GateUp, 0).in[0] = kNone;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::GateUp, 0), "has no in[0]"}));
}

TEST(PlanVerifierTest, TheDownProjectionWaitsForEveryGateUpTask) {
  // The down Gemvs read all of act: without the barrier after the GateUp wave,
  // a worker's down task may read rows another worker's GateUp has not written.
  Plan p = gateUpPlan();
  p.waves[kFfn].barrier = BarrierKind::None;
  EXPECT_TRUE(hasError(p, {"(gate_up on worker", "missing barrier between wave 6 and wave 7"}));
}

// Ownership: the defect the hostile-input probe found (issue #16) was one byte
// of a plan moving a task's weight offset into another task's block of the
// same tensor: in bounds, so the verifier passed it, and the logits changed.
TEST(PlanVerifierTest, ATaskReadsTheRowsItOwns) {
  Plan p = tinyPlan();
  TaskRecord &qkv1 = taskOf(p, Opcode::Gemv, 1);
  qkv1.weight = taskOf(p, Opcode::Gemv, 0).weight; // Worker 0's rows, for worker 1's outputs.
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Gemv, 1), "of tensor 'layer0.qkv', and its rows [8, 16) are bytes [+256, +512) of it"}));

  // Rows and weights moved together onto worker 0's: in step with each other,
  // but worker 0's rows are streamed twice and worker 1's by nobody.
  p = tinyPlan();
  TaskRecord &moved = taskOf(p, Opcode::Gemv, 1);
  const TaskRecord &first = taskOf(p, Opcode::Gemv, 0);
  moved.rowBegin = first.rowBegin;
  moved.rowEnd = first.rowEnd;
  moved.weight = first.weight;
  EXPECT_TRUE(hasError(p, {"tensor 'layer0.qkv' in wave 2: bytes [+0, +256) are streamed by ", named(p, Opcode::Gemv, 0),
                           " and by ", named(p, Opcode::Gemv, 1)}));

  // A task gone: its rows are streamed by no task.
  p = tinyPlan();
  p.tasks.erase(p.tasks.begin() + findTask(p, Opcode::LmHead, 3));
  EXPECT_TRUE(hasError(p, {"tensor 'lm_head' in wave 8: bytes [+576, +768) are streamed by no task"}));
}

// An offset so large that adding the candidate's index saturates: the range
// began and ended at 2^64 - 1, read as empty, and escaped the bounds check
// (the mutation test found it: the CPU executor then wrote before the arena).
TEST(PlanVerifierTest, AnOffsetPast2To64IsNotAnEmptyRange) {
  Plan p = tinyPlan();
  taskOf(p, Opcode::LmHead, 2).out[1] = UINT64_MAX - 15; // + 2 candidates of 8 bytes
  EXPECT_TRUE(hasError(p, {named(p, Opcode::LmHead, 2),
                           "out[1] A[+18446744073709551614, +1) is not inside one buffer"}));
}

// The workers load operands in 16-byte vectors: a reduce's in[0] a byte past
// its buffer's start was inside the buffer, passed, and made the CPU executor
// load misaligned floats (the mutation test under UBSan found it).
TEST(PlanVerifierTest, OperandsAreAligned) {
  Plan p = tinyPlan();
  taskOf(p, Opcode::ReduceResidual, 3).in[0] += 1;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::ReduceResidual, 3), "has in[0] at", "not a multiple of 16"}));
  p = tinyPlan();
  taskOf(p, Opcode::Gemv, 3).weight += 8;
  EXPECT_TRUE(hasError(p, {named(p, Opcode::Gemv, 3), "has weight at 2056, not a multiple of 16"}));
}

// An arena larger than its buffers: the executors allocate arenaBytes, and
// 2^64 - 1 wrapped the CPU executor's rounding to 4 KiB (the mutation test's
// harness found it when it could not allocate such an arena).
TEST(PlanVerifierTest, TheArenaEndsWithItsBuffers) {
  Plan p = tinyPlan();
  p.arenaBytes = UINT64_MAX;
  EXPECT_TRUE(hasError(p, {"the arena is 18446744073709551615 bytes, and its buffers end at 3648 (at most 3840 with the alignment)"}));
  p.arenaBytes = 3840; // The buffers' end rounded up: what layout writes.
  EXPECT_TRUE(isValid(p));
}
