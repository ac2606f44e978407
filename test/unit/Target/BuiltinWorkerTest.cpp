//===- BuiltinWorkerTest.cpp - The built-in targets' worker is this build's ===//
//
// tic plans for a built-in target with the worker limits written in
// lib/Target/Target.cpp; the CUDA worker's real limits are its constants
// (lib/Runtime/cuda/Config.cuh), which CudaExecutor::workerLimits reports for
// a GPU's opt-in shared memory per block. The two must agree, or tic would
// accept plans that tirun refuses (or refuse plans it could run). No GPU is
// needed: nothing here calls the CUDA runtime.
//
//===----------------------------------------------------------------------===//
#include "ti/Runtime/CudaExecutor.h"
#include "ti/Target/Target.h"

#include <gtest/gtest.h>

#include <ostream>

using namespace ti;

namespace ti::plan {
/// For gtest's messages (found by argument-dependent lookup).
void PrintTo(const WorkerLimits &l, std::ostream *os) {
  *os << "{threads " << l.threads << ", max group " << l.maxGroup << ", head dims";
  for (uint32_t d : l.headDims)
    *os << ' ' << d;
  *os << ", shared " << l.sharedBytes << ", vector " << l.vectorElements << "}";
}
} // namespace ti::plan

namespace {

TEST(BuiltinWorker, EachBuiltinTargetHasTheCompiledWorkersLimits) {
  // The opt-in shared memory per block of each built-in target's GPU (CUDA
  // programming guide, compute capabilities 8.6 and 9.0).
  const std::pair<const char *, size_t> gpus[] = {{"rtx3050", 99 * 1024}, {"h200", 227 * 1024}};
  for (auto [name, optIn] : gpus) {
    auto target = builtinTarget(name);
    ASSERT_TRUE(target.ok()) << name;
    EXPECT_EQ(target->workerLimits(), CudaExecutor::workerLimits(optIn, target->execution))
        << name;
  }
}

TEST(BuiltinWorker, AFileWithoutLimitsMeansThisWorkerOnTheSmallestGpu) {
  plan::WorkerLimits standard;
  EXPECT_EQ(standard, CudaExecutor::workerLimits(99 * 1024));
}

} // namespace
