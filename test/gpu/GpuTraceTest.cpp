//===- GpuTraceTest.cpp - What a traced launch records ---------------------===//
//
// A traced launch (CudaExecutor::setTrace) of the tiny model, tagged
// hand-offs, on the plain worker and (sm_90) the stream worker, in short mode
// and in long mode (the attention split at 16): each worker records each of
// its tasks once, in its order, every one that has inputs right after the
// mark of their arrival (TraceKind::TaskInputs, which every opcode but nop
// and select_token stamps: WeightStream::inputsReady), the mark inside the
// task's interval; and the traced kernel's logits are the untraced kernel's,
// bit for bit (the tracer only times, it changes no arithmetic).
//
// Without a GPU every test is skipped.
//
//===----------------------------------------------------------------------===//
#include "ti/Runtime/CudaExecutor.h"
#include "ti/Runtime/LoadedPlan.h"
#include "ti/Runtime/TraceEvent.h"

#include "GpuTest.h"
#include "ModelPlan.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace ti;

namespace {

constexpr uint32_t kSplitContext = 16;

class GpuTraceTest : public test::GpuTest {
protected:
  /// The tiny model with tagged hand-offs for this GPU, `execution` plain or
  /// stream (the stream worker's shared memory as its target key).
  std::shared_ptr<const LoadedPlan> tinyPlan(plan::ExecutionModel execution) {
    const bool stream = execution == plan::ExecutionModel::Stream;
    const std::string shared = stream ? streamSharedKey() : "";
    const auto dir = scratchDir("ti-gpu-trace");
    const std::string target =
        writeTarget(dir / "target.json", device.arch, device.smCount, shared);
    return test::compileModelPlan(
        "models/tiny.graph", dir / "plan",
        "--target-file " + target + " --attention-split-context " + std::to_string(kSplitContext) +
            " --hand-offs tags --execution " + (stream ? "stream" : "plain"),
        3);
  }

  /// Steps [0, end) fed as a prompt in launches of two steps (the tracer
  /// records a launch's second step), tracing the launch that ends at
  /// `end`; returns its trace and the logits of its last step.
  void runTo(const std::shared_ptr<const LoadedPlan> &lp, int32_t end, bool traced,
             std::vector<std::vector<TraceEvent>> &trace, std::vector<float> &logits) {
    auto gpu = CudaExecutor::create(lp);
    ASSERT_TRUE(gpu.ok()) << gpu.status().message();
    for (int32_t pos = 0; pos < end; pos += 2) {
      if (traced && pos + 2 == end) {
        ASSERT_TRUE((*gpu)->setTrace(true).ok());
      }
      LaunchArgs args;
      args.startPos = pos;
      args.promptLen = 2;
      args.maxSteps = 2;
      args.maxNew = 1;
      for (int32_t i = 0; i < 2; ++i)
        args.prompt[i] = test::feedToken(*lp, pos + i);
      auto state = (*gpu)->launch(args);
      ASSERT_TRUE(state.ok()) << state.status().message();
      ASSERT_EQ(state->error, 0);
    }
    if (traced) {
      auto events = (*gpu)->trace();
      ASSERT_TRUE(events.ok()) << events.status().message();
      trace = *events;
    }
    auto l = (*gpu)->logits();
    ASSERT_TRUE(l.ok()) << l.status().message();
    logits = *l;
  }

  void expectTraceOfEveryTask(plan::ExecutionModel execution) {
    auto lp = tinyPlan(execution);
    ASSERT_TRUE(lp);
    const plan::Plan &p = lp->plan;
    // The traced step: position 1 (context 2, short mode), then position
    // kSplitContext + 3 (long mode).
    for (int32_t end : {2, int32_t(kSplitContext) + 4}) {
      SCOPED_TRACE("the launch ending at step " + std::to_string(end));
      std::vector<std::vector<TraceEvent>> trace, none;
      std::vector<float> tracedLogits, logits;
      runTo(lp, end, true, trace, tracedLogits);
      runTo(lp, end, false, none, logits);
      ASSERT_EQ(tracedLogits.size(), logits.size());
      EXPECT_EQ(std::memcmp(tracedLogits.data(), logits.data(), logits.size() * sizeof(float)), 0)
          << "the traced kernel's logits differ from the untraced kernel's";
      ASSERT_EQ(trace.size(), size_t(p.target.workers));
      size_t marked = 0;
      for (uint32_t w = 0; w < p.target.workers; ++w) {
        std::vector<uint32_t> want, got;
        for (uint32_t i = 0; i < p.tasks.size(); ++i)
          if (p.tasks[i].worker == w)
            want.push_back(i);
        const std::vector<TraceEvent> &events = trace[w];
        for (size_t e = 0; e < events.size(); ++e) {
          if (static_cast<TraceKind>(events[e].kind) != TraceKind::Task)
            continue;
          const TraceEvent &task = events[e];
          got.push_back(task.index);
          ASSERT_LT(task.index, p.tasks.size());
          const auto op = static_cast<plan::Opcode>(p.tasks[task.index].opcode);
          if (op == plan::Opcode::Nop || op == plan::Opcode::SelectToken)
            continue;
          ASSERT_GT(e, 0u) << "worker " << w << ", task " << task.index;
          const TraceEvent &mark = events[e - 1];
          EXPECT_EQ(static_cast<TraceKind>(mark.kind), TraceKind::TaskInputs)
              << "worker " << w << ": task " << task.index << " ("
              << plan::opcodeName(uint16_t(op)) << ") has no inputs mark";
          EXPECT_EQ(mark.index, task.index);
          EXPECT_EQ(mark.begin, task.begin);
          EXPECT_LE(mark.begin, mark.end);
          EXPECT_LE(mark.end, task.end);
          ++marked;
        }
        EXPECT_EQ(got, want) << "worker " << w << "'s tasks, in order";
      }
      EXPECT_GT(marked, 0u);
    }
  }
};

TEST_F(GpuTraceTest, ThePlainWorkerMarksEveryTasksInputsAndKeepsItsLogits) {
  expectTraceOfEveryTask(plan::ExecutionModel::Plain);
}

TEST_F(GpuTraceTest, TheStreamWorkerMarksEveryTasksInputsAndKeepsItsLogits) {
  if (device.arch != "sm_90")
    GTEST_SKIP() << "the stream worker needs sm_90";
  expectTraceOfEveryTask(plan::ExecutionModel::Stream);
}

} // namespace
