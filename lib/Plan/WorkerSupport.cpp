//===- WorkerSupport.cpp - What a worker can run, and what a plan asks ----===//
//
// Per task, by opcode (each check in the model's terms, since tic reports it
// at the graph op the task came from):
//   Embed                  hidden a multiple of the vector; the table aligned.
//   Gemv, LmHead, FFN      columns a multiple of the vector; weight and norm
//                          offsets aligned to the vector's bytes.
//   Attention*             query heads per kv head at most maxGroup; head_dim
//                          one of headDims; the K/V caches aligned.
//   every opcode           its shared memory (WorkerLayout.h, at the limits'
//                          thread count), beside a Stream plan's ring
//                          (Execution.h) and the worker's schedule, within
//                          sharedBytes.
//
//===----------------------------------------------------------------------===//
#include "ti/Plan/WorkerSupport.h"

#include "ti/Plan/WorkerLayout.h"

#include <algorithm>

namespace ti::plan {

namespace {

std::string list(const std::vector<uint32_t> &values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i)
    text += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + std::to_string(values[i]);
  return text;
}

/// Why a worker with `limits` cannot run `t`, or "" if it can.
std::string problem(const TaskRecord &t, const WorkerLimits &limits, const StreamConfig &stream,
                    uint32_t schedule) {
  const uint64_t vectorBytes = limits.vectorElements * kWeightBytes;
  auto misaligned = [&](uint64_t offset) {
    return offset != kNone && vectorBytes && offset % vectorBytes;
  };
  auto notVectors = [&](uint32_t n) { return limits.vectorElements && n % limits.vectorElements; };
  const std::string vectors = "a multiple of " + std::to_string(limits.vectorElements) +
                              " (its " + std::to_string(vectorBytes) + "-byte loads)";
  switch (static_cast<Opcode>(t.opcode)) {
  case Opcode::Embed:
    if (notVectors(t.aux[0]))
      return "hidden " + std::to_string(t.aux[0]) + ": the worker needs " + vectors;
    if (misaligned(t.weight))
      return "the embedding is not " + std::to_string(vectorBytes) + "-byte aligned";
    break;
  case Opcode::Gemv:
  case Opcode::LmHead:
  case Opcode::GateUp:
  case Opcode::FfnPartial:
    if (notVectors(t.aux[0]))
      return std::to_string(t.aux[0]) + " columns: the worker needs " + vectors;
    if (misaligned(t.weight) || misaligned(t.norm))
      return "a weight or norm scale is not " + std::to_string(vectorBytes) + "-byte aligned";
    break;
  case Opcode::Attention: {
    const HeadGeometry &g = t.geometry;
    if (g.group() > limits.maxGroup)
      return std::to_string(g.heads) + " query heads over " + std::to_string(g.kvHeads) +
             " kv heads (" + std::to_string(g.group()) +
             " per kv head): the worker supports at most " + std::to_string(limits.maxGroup);
    if (std::find(limits.headDims.begin(), limits.headDims.end(), g.headDim) ==
        limits.headDims.end())
      return "head_dim " + std::to_string(g.headDim) + ": the worker supports " +
             list(limits.headDims);
    if (misaligned(t.in[1]) || misaligned(t.in[2]))
      return "its K/V cache is not " + std::to_string(vectorBytes) + "-byte aligned";
    break;
  }
  case Opcode::MergeAttention: // A thread merges vectors of a head.
    if (notVectors(t.geometry.headDim))
      return "head_dim " + std::to_string(t.geometry.headDim) + ": the merge needs " + vectors;
    break;
  case Opcode::Nop:
  case Opcode::SelectToken:
  case Opcode::ReduceResidual:
    break;
  }
  // The stream worker's FFN keeps kFfnColumnPasses groups of down-projection
  // columns per consumer thread across the stages of its down rows.
  if (stream.model == ExecutionModel::Stream && t.opcode == uint16_t(Opcode::FfnPartial) &&
      t.aux[0] / limits.vectorElements > uint64_t(limits.threads) * kFfnColumnPasses)
    return "hidden " + std::to_string(t.aux[0]) + ": the stream worker's FFN covers at most " +
           std::to_string(uint64_t(limits.threads) * limits.vectorElements * kFfnColumnPasses);
  const uint64_t shared =
      uint64_t(sharedFloatsFor(t, limits.threads, stream.rowPartBytes)) * sizeof(float);
  if (shared + stream.ringFootprint() + schedule > limits.sharedBytes)
    return "a task needs " + std::to_string(shared) + " bytes of shared memory beside " +
           (stream.ringFootprint()
                ? "the weight stream's " + std::to_string(stream.ringFootprint()) + " and "
                : std::string()) +
           "its worker's schedule (" + std::to_string(schedule) + "); the worker offers " +
           std::to_string(limits.sharedBytes);
  return "";
}

} // namespace

uint32_t mostTasksPerWorker(const Plan &plan) {
  // The tasks are sorted by worker: count each run.
  uint32_t most = 0;
  for (size_t i = 0, run = 0; i < plan.tasks.size(); ++i) {
    run = i > 0 && plan.tasks[i].worker == plan.tasks[i - 1].worker ? run + 1 : 1;
    most = std::max(most, uint32_t(run));
  }
  return most;
}

uint32_t scheduleBytes(const Plan &plan) {
  return scheduleBytesFor(uint32_t(plan.waves.size()));
}

WorkerSharedBytes workerSharedBytes(const Plan &plan) {
  uint32_t floats = 4;
  for (const TaskRecord &t : plan.tasks)
    floats = std::max(floats, sharedFloatsFor(t, taskThreads(plan.stream.model),
                                              plan.stream.rowPartBytes));
  return WorkerSharedBytes{plan.stream.ringFootprint(), scheduleBytes(plan),
                           uint64_t(floats) * sizeof(float)};
}

std::vector<WorkerProblem> workerProblems(const Plan &plan, const WorkerLimits &limits,
                                          size_t maxProblems) {
  std::vector<WorkerProblem> found;
  const uint32_t schedule = scheduleBytes(plan);
  for (size_t i = 0; i < plan.tasks.size() && found.size() < maxProblems; ++i)
    if (std::string why = problem(plan.tasks[i], limits, plan.stream, schedule); !why.empty())
      found.push_back({i, std::move(why)});
  return found;
}

} // namespace ti::plan
