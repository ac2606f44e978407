//===- CpuExecutor.cpp - Runs a plan on the CPU ---------------------------===//
//
// 1. The arena is one zeroed allocation of the plan's arenaBytes.
// 2. A launch copies the prompt into its buffer and runs steps until
//    selectToken() says stop: every worker's SelectToken (wave 0), then each
//    wave's tasks, spread over the thread pool, wave after wave.
// 3. Threads take the tasks of a wave in a fixed stride (thread i: tasks i,
//    i + T, ...); a std::barrier ends the wave. Each task's arithmetic runs on
//    one thread, so results do not depend on the thread count.
//
//===----------------------------------------------------------------------===//
#include "ti/Runtime/CpuExecutor.h"

#include "CpuOps.h"

#include "ti/Plan/Tagged.h"

#include <barrier>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>

using namespace ti;
using namespace ti::cpu;

struct CpuExecutor::Impl {
  std::shared_ptr<const LoadedPlan> lp;
  uint8_t *arena = nullptr;
  unsigned threadCount = 1;
  double lastLaunchMs = -1; // -1: nothing launched yet.
  uint32_t nextTag = 1;      // The next launch's tag base (Tagged.h).
  TagCheck tagCheck;

  // The pool: workers wait at `start`, run `job`, meet at `done`.
  std::vector<std::thread> pool;
  std::unique_ptr<std::barrier<>> start, done;
  std::function<void(unsigned)> job;
  bool quit = false;

  void parallel(const std::function<void(unsigned)> &fn) {
    job = fn;
    start->arrive_and_wait();
    fn(0);
    done->arrive_and_wait();
  }

  /// run<Name> for every line of Opcodes.def (CpuOps.h).
  void runTask(const TaskContext &c, const plan::TaskRecord &t) {
    switch (plan::Opcode(t.opcode)) {
#define TI_OPCODE(Name, Value, Spelling, Kind)                                                     \
  case plan::Opcode::Name:                                                                         \
    run##Name(c, t);                                                                               \
    break;
#include "ti/Plan/Opcodes.def"
    }
  }
};

CpuExecutor::CpuExecutor(std::shared_ptr<const LoadedPlan> plan, unsigned threads)
    : impl(std::make_unique<Impl>()) {
  impl->lp = std::move(plan);
  uint64_t bytes = (impl->lp->plan.arenaBytes + 4095) / 4096 * 4096;
  impl->arena = static_cast<uint8_t *>(std::aligned_alloc(4096, bytes ? bytes : 4096));
  std::memset(impl->arena, 0, bytes);
  unsigned n = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  impl->threadCount = n;
  impl->start = std::make_unique<std::barrier<>>(n);
  impl->done = std::make_unique<std::barrier<>>(n);
  for (unsigned i = 1; i < n; ++i)
    impl->pool.emplace_back([this, i] {
      for (;;) {
        impl->start->arrive_and_wait();
        if (impl->quit)
          return;
        impl->job(i);
        impl->done->arrive_and_wait();
      }
    });
}

CpuExecutor::~CpuExecutor() {
  impl->quit = true;
  impl->start->arrive_and_wait();
  for (std::thread &t : impl->pool)
    t.join();
  std::free(impl->arena);
}

std::string CpuExecutor::device() const {
  return "CPU, " + std::to_string(impl->threadCount) + " threads";
}

StatusOr<std::vector<uint8_t>> CpuExecutor::saveArena() const {
  return std::vector<uint8_t>(impl->arena, impl->arena + impl->lp->plan.arenaBytes);
}

Status CpuExecutor::restoreArena(const std::vector<uint8_t> &arena) {
  if (arena.size() != impl->lp->plan.arenaBytes)
    return Status::error("the saved arena has " + std::to_string(arena.size()) +
                         " bytes, the plan's has " + std::to_string(impl->lp->plan.arenaBytes));
  std::memcpy(impl->arena, arena.data(), arena.size());
  // Another executor's tags may be this one's future ones (Tagged.h).
  for (const plan::Buffer &b : impl->lp->plan.buffers)
    if (b.tagged)
      std::memset(impl->arena + b.offset, 0, b.bytes);
  return Status();
}

Status CpuExecutor::reset() {
  std::memset(impl->arena, 0, impl->lp->plan.arenaBytes);
  return Status();
}

const float *CpuExecutor::logitsData() const {
  return reinterpret_cast<const float *>(impl->arena + impl->lp->logitsOffset);
}

StatusOr<std::vector<float>> CpuExecutor::logits() const {
  const float *first = logitsData();
  return std::vector<float>(first, first + impl->lp->plan.model.vocab);
}

StatusOr<double> CpuExecutor::lastLaunchMilliseconds() const {
  if (impl->lastLaunchMs < 0)
    return Status::error("no launch has run yet");
  return impl->lastLaunchMs;
}

Status CpuExecutor::setWorkerMode(WorkerMode mode) {
  if (mode == WorkerMode::Full)
    return Status();
  return Status::error(std::string("worker mode ") + workerModeName(mode) +
                       " needs the CUDA backend");
}

Status CpuExecutor::setTrace(bool on) {
  if (!on)
    return Status();
  return Status::error("tracing needs the CUDA backend: the CPU executor records no traces");
}

StatusOr<std::vector<std::vector<TraceEvent>>> CpuExecutor::trace() const {
  return Status::error("tracing needs the CUDA backend: the CPU executor records no traces");
}

StatusOr<plan::StepState> CpuExecutor::launch(const LaunchArgs &args) {
  const auto start = std::chrono::steady_clock::now();
  const LoadedPlan &lp = *impl->lp;
  const plan::Plan &p = lp.plan;
  if (Status s = checkLaunchArgs(args, p); !s.ok())
    return s;
  std::memcpy(impl->arena + lp.promptOffset, args.prompt, sizeof args.prompt);
  auto *state = reinterpret_cast<plan::StepState *>(impl->arena + lp.stepStateOffset);
  std::memset(state, 0, sizeof *state);

  const SelectParams select = lp.selectParams();
  const plan::Buffer *candidates = p.findBuffer(plan::BufferKind::Candidates);
  const plan::Buffer *slots = p.findBuffer(plan::BufferKind::TokenSlots);
  auto *tokenSlots = reinterpret_cast<int32_t *>(impl->arena + slots->offset);
  uint32_t candidateCount = candidates->bytes / sizeof(plan::Candidate);
  const auto *cands = reinterpret_cast<const plan::Candidate *>(impl->arena + candidates->offset);

  const uint32_t tagBase = impl->nextTag;
  impl->nextTag += plan::kMaxStepsPerLaunch;
  impl->tagCheck.clear();
  TaskContext ctx{&p, lp.weights->data(), impl->arena, 0, false, 0, &impl->tagCheck};
  for (int32_t s = 0;; ++s) {
    // Wave 0: every worker's SelectToken. They all compute the same token;
    // the recording one also updates the StepState.
    int32_t token = -1;
    for (uint32_t i : lp.waveTasks[0]) { // The verifier put every SelectToken here.
      const plan::TaskRecord &t = p.tasks[i];
      if (plan::Opcode(t.opcode) != plan::Opcode::SelectToken)
        continue;
      bool record = t.flags & plan::kFlagRecord;
      int32_t mine = selectToken(s, args, select, cands, candidateCount, record ? state : nullptr);
      tokenSlots[t.worker] = mine;
      if (record)
        token = mine;
    }
    if (token < 0)
      break;
    ctx.pos = args.startPos + s;
    ctx.longMode = uint32_t(ctx.pos + 1) > p.attention.splitContext;
    ctx.tag = plan::stepTag(tagBase, s);
    for (size_t w = 0; w < lp.waveTasks.size(); ++w) {
      const std::vector<uint32_t> &tasks = lp.waveTasks[w];
      impl->parallel([&](unsigned thread) {
        for (size_t i = thread; i < tasks.size(); i += impl->threadCount)
          impl->runTask(ctx, p.tasks[tasks[i]]);
      });
    }
    if (const plan::TaskRecord *t = impl->tagCheck.first())
      return Status::error("task #" + std::to_string(t - p.tasks.data()) + " (" +
                           plan::opcodeName(t->opcode) + " on worker " +
                           std::to_string(t->worker) + ", wave " + std::to_string(t->wave) +
                           ") read a tagged value that no task had written in step " +
                           std::to_string(s) + ": the plan's order is wrong");
  }
  impl->lastLaunchMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return *state;
}
