//===- WorkerSupportTest.cpp - What a worker can run, task by task --------===//
//
// One task at a time against the standard worker's limits: each limit met,
// then each exceeded, with the message tic and the CUDA executor report.
//
//===----------------------------------------------------------------------===//
#include "ti/Plan/WorkerLayout.h"
#include "ti/Plan/WorkerSupport.h"

#include "MakeTask.h"

#include <gtest/gtest.h>

using namespace ti::plan;
using ti::plan::test::makeTask;

namespace {

/// The message for `task` alone, or "" when the worker can run it.
std::string problemOf(const TaskRecord &task, const WorkerLimits &limits = WorkerLimits()) {
  Plan p;
  p.tasks = {task};
  std::vector<WorkerProblem> found = workerProblems(p, limits);
  return found.empty() ? "" : found[0].message;
}

TaskRecord attention(HeadGeometry g) {
  TaskRecord t = makeTask(Opcode::Attention, 0);
  t.in[1] = t.in[2] = t.out[1] = 4096;
  t.geometry = g;
  return t;
}

TaskRecord gemv(uint32_t columns, uint32_t rows = 64) {
  TaskRecord t = makeTask(Opcode::Gemv, 0);
  t.weight = 256;
  t.rowEnd = rows;
  t.aux[0] = columns;
  return t;
}

TEST(WorkerSupport, LlamaShapesFit) {
  EXPECT_EQ(problemOf(attention({32, 8, 64, 16})), "");  // 1B: four per kv head.
  EXPECT_EQ(problemOf(attention({24, 8, 128, 16})), ""); // 3B: three.
  EXPECT_EQ(problemOf(gemv(8192)), "");
}

TEST(WorkerSupport, TooManyQueryHeadsPerKvHead) {
  EXPECT_EQ(problemOf(attention({12, 2, 64, 1})),
            "12 query heads over 2 kv heads (6 per kv head): the worker supports at most 4");
  WorkerLimits eight;
  eight.maxGroup = 8;
  EXPECT_EQ(problemOf(attention({12, 2, 64, 1}), eight), "");
}

TEST(WorkerSupport, UnsupportedHeadDim) {
  EXPECT_EQ(problemOf(attention({8, 8, 96, 1})),
            "head_dim 96: the worker supports 8, 16, 32, 64, 128 or 256");
}

TEST(WorkerSupport, ColumnsAndAlignment) {
  EXPECT_EQ(problemOf(gemv(100)), "100 columns: the worker needs a multiple of 8 (its 16-byte loads)");
  TaskRecord t = gemv(64);
  t.weight = 264;
  EXPECT_EQ(problemOf(t), "a weight or norm scale is not 16-byte aligned");
  TaskRecord a = attention({8, 8, 64, 1});
  a.in[1] = 4100;
  EXPECT_EQ(problemOf(a), "its K/V cache is not 16-byte aligned");
  TaskRecord e = makeTask(Opcode::Embed, 0);
  e.weight = 0;
  e.aux[0] = 2050;
  EXPECT_EQ(problemOf(e), "hidden 2050: the worker needs a multiple of 8 (its 16-byte loads)");
}

TEST(WorkerSupport, SharedMemory) {
  // A GEMV of K columns keeps x' (K floats): 8,192 columns take 32 KiB, beside
  // the schedule of a plan without waves (no barrier kinds: 0 bytes).
  WorkerLimits small;
  small.sharedBytes = 32 * 1024;
  EXPECT_EQ(problemOf(gemv(8192), small), "");
  EXPECT_EQ(problemOf(gemv(8200), small),
            "a task needs 32800 bytes of shared memory beside its worker's schedule (0); the "
            "worker offers 32768");
  // An FFN task of hidden 4096 and 1024 units on the standard worker: the
  // layout an sm_86 worker has room for.
  TaskRecord ffn = makeTask(Opcode::FfnPartial, 0);
  ffn.weight = ffn.norm = 0;
  ffn.aux[0] = 4096;
  ffn.rowEnd = 1024;
  EXPECT_EQ(problemOf(ffn), "");
}

TEST(WorkerSupport, StreamSegmentsFollowEachOthersRows) {
  // A GateUp task of 10 units of K = 4096: its gate rows, then its up rows.
  TaskRecord gateUp = makeTask(Opcode::GateUp, 0);
  gateUp.weight = 1 << 20;
  gateUp.aux[0] = 4096;
  gateUp.rowBegin = 30;
  gateUp.rowEnd = 40;
  ASSERT_EQ(streamSegmentCount(Opcode::GateUp), 2u);
  EXPECT_EQ(streamSegment(gateUp, 0).offset, 1u << 20);
  EXPECT_EQ(streamSegment(gateUp, 1).offset, (1u << 20) + 10 * 8192);
  EXPECT_EQ(streamSegment(gateUp, 1).rows, 10u);
  EXPECT_EQ(streamSegment(gateUp, 1).rowBytes, 8192u);
  EXPECT_EQ(streamSegmentCount(Opcode::FfnPartial), 3u);
  EXPECT_EQ(streamSegmentCount(Opcode::Gemv), 1u);
  EXPECT_EQ(streamSegmentCount(Opcode::Embed), 0u);
}

TEST(WorkerSupport, RowPartialsFollowTheOpsRegions) {
  // A GEMV of 16 rows of 8,192 columns (16 KB rows) in parts of 4 KB: 4 parts
  // a row, 64 floats past x'.
  TaskRecord down = gemv(8192);
  down.rowEnd = 16;
  EXPECT_EQ(rowParts(16384, 4096), 4u);
  EXPECT_EQ(rowParts(16384, 5000), 4u); // Equal parts, a power of two of them.
  EXPECT_EQ(rowParts(6144, 4096), 2u);  // Two of 3 KB, not 4 KB and 2 KB.
  EXPECT_EQ(rowParts(4096, 4096), 1u);
  EXPECT_EQ(rowParts(16384, 0), 1u);
  // At most one part per consumer warp (a warp keeps one part of every row).
  EXPECT_EQ(kMaxRowParts, 8u);
  EXPECT_EQ(rowParts(65536, 1024), 8u);
  // Parts divide the row's 16-byte vectors: 320 bytes (20 vectors) in 4 of 80,
  // the most that divide it, though parts of 32 bytes were asked for.
  EXPECT_EQ(rowParts(320, 32), 4u);
  EXPECT_EQ(rowParts(336, 16), 1u); // 21 vectors: no equal parts.
  EXPECT_EQ(rowPartialsFloats(down, 4096, 256), 64u);
  EXPECT_EQ(rowPartialsAt(down, 512), 8192u);
  EXPECT_EQ(sharedFloatsFor(down, 512, 4096), 8192u + 64);
  EXPECT_EQ(sharedFloatsFor(down, 512, 0), 8192u);
  EXPECT_EQ(sharedFloatsFor(down, 512, 16384), 8192u); // Whole rows.
  // A GateUp: its longest segment (both are n rows of K) sets the partials.
  TaskRecord gateUp = makeTask(Opcode::GateUp, 0);
  gateUp.aux[0] = 4096;
  gateUp.rowEnd = 10;
  EXPECT_EQ(rowPartialsFloats(gateUp, 4096, 256), 20u);
  EXPECT_EQ(sharedFloatsFor(gateUp, 512, 4096), 4096u + 12 + 20); // x', gate[10] aligned, parts.
  // A plan whose rows x parts pass 2^32 saturates: no worker holds it.
  TaskRecord huge = gemv(1u << 20, 1u << 29); // 2^29 rows of 2 MiB, each in 16 parts.
  EXPECT_EQ(rowPartialsFloats(huge, 16, 256), 0xffffffffu);
  EXPECT_EQ(sharedFloatsFor(huge, 512, 16), 0xffffffffu);
}

TEST(WorkerSupport, AMergeHoldsEveryChunksPartialsStatsAndWeights) {
  // Llama 3.2 1B's merge task: a kv head's 4 heads of 64 (256 values) over
  // 16 chunks: the partials [16][256], (max, sum) [16][4] and each chunk's
  // weight of each head [16][4] (ops/MergeAttention.cuh).
  TaskRecord merge = makeTask(Opcode::MergeAttention, 0);
  merge.geometry = HeadGeometry{32, 8, 64, 16};
  merge.rowBegin = 256;
  merge.rowEnd = 512;
  EXPECT_EQ(opFloatsFor(merge, 256), 16u * 256 + 16 * 4 * 2 + 16 * 4);
  EXPECT_EQ(sharedFloatsFor(merge, 256, 4096), 16u * 256 + 16 * 4 * 3);
  // The op carves its regions with the same layout, one after another.
  const MergeLayout l = mergeLayout(16, 256, 4);
  EXPECT_EQ(l.statsAt, 16u * 256);
  EXPECT_EQ(l.weightsAt, 16u * 256 + 16 * 4 * 2);
  EXPECT_EQ(l.floats, opFloatsFor(merge, 256));
  // A merge with no heads (its geometry unset) takes nothing.
  merge.geometry = HeadGeometry{};
  EXPECT_EQ(opFloatsFor(merge, 256), 0u);
}

TEST(WorkerSupport, ScheduleBytesHoldTheWavesBarrierKinds) {
  // A byte a wave, rounded up to 16 bytes; the task records are not in it
  // (the kernel's window of them is in static shared memory), however many
  // tasks a worker runs.
  Plan p;
  p.waves.resize(3);
  p.tasks = {makeTask(Opcode::Gemv, 0), makeTask(Opcode::Gemv, 0), makeTask(Opcode::Gemv, 0)};
  EXPECT_EQ(scheduleBytes(p), 16u);
  p.tasks[0].worker = p.tasks[1].worker = p.tasks[2].worker = 1;
  EXPECT_EQ(scheduleBytes(p), 16u);
  p.waves.resize(17);
  EXPECT_EQ(scheduleBytes(p), 32u);
  EXPECT_EQ(scheduleBytes(Plan()), 0u);
}

TEST(WorkerSupport, ProblemsComeInTaskOrderUpToTheBound) {
  Plan p;
  p.tasks = {gemv(64), gemv(100), attention({12, 2, 64, 1}), gemv(10)};
  std::vector<WorkerProblem> two = workerProblems(p, WorkerLimits(), 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].task, 1u);
  EXPECT_EQ(two[1].task, 2u);
  EXPECT_EQ(workerProblems(p, WorkerLimits(), 10).size(), 3u);
}

} // namespace
