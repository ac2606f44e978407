//===- GpuTest.h - The fixture every GPU test starts from ------*- C++ -*-===//
//
// Skips the test where there is no CUDA GPU (ctest reports it as skipped),
// reads device 0's properties, hands out scratch folders that are removed
// after the test, and writes target files for this device; the tokens the
// tests feed.
//
//===----------------------------------------------------------------------===//
#ifndef TI_TEST_GPU_GPUTEST_H
#define TI_TEST_GPU_GPUTEST_H

#include "ti/Runtime/CudaExecutor.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace ti::test {

/// The token the GPU tests feed at step `pos`: bos, then a spread over the
/// vocabulary (not the greedy tokens: with random weights the tiny model's
/// greedy choice repeats its input, and attention would see identical rows).
inline int32_t feedToken(const LoadedPlan &lp, int32_t pos) {
  return pos == 0 ? lp.plan.model.bos : int32_t((pos * 37 + 11) % lp.plan.model.vocab);
}

class GpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (CudaExecutor::deviceCount() == 0)
      GTEST_SKIP() << "no CUDA GPU";
    auto info = CudaExecutor::deviceInfo(0);
    ASSERT_TRUE(info.ok()) << info.status().message();
    device = *info;
  }

  void TearDown() override {
    for (const std::filesystem::path &d : scratch)
      std::filesystem::remove_all(d);
  }

  /// A new empty folder under the system's temporary folder, named after
  /// `prefix`, the process and a counter; removed in TearDown.
  std::filesystem::path scratchDir(const std::string &prefix) {
    std::filesystem::path d =
        std::filesystem::temp_directory_path() /
        (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(scratch.size()));
    std::filesystem::create_directories(d);
    scratch.push_back(d);
    return d;
  }

  /// Writes a target file for this GPU's name with `arch` and `workers` to
  /// `path` (bandwidth 1000 GB/s: the tests compare results, not speed);
  /// `extra` is more "key": value text for the JSON object. Returns `path`.
  std::string writeTarget(const std::filesystem::path &path, const std::string &arch,
                          int workers, const std::string &extra = "",
                          uint32_t threads = CudaExecutor::workerThreads()) {
    std::ofstream(path) << "{\"name\": \"gpu-test\", \"gpu\": \"" << device.name
                        << "\", \"arch\": \"" << arch << "\", \"workers\": " << workers
                        << ", \"threads_per_worker\": " << threads
                        << ", \"bandwidth_gbs\": 1000" << (extra.empty() ? "" : ", ") << extra
                        << "}\n";
    return path.string();
  }

  /// The stream worker's shared memory on this GPU, as a target key (the
  /// ring needs more than a target file's sm_86 default).
  std::string streamSharedKey() const {
    return "\"shared_bytes_per_worker\": " +
           std::to_string(
               CudaExecutor::workerLimits(device.sharedPerBlockOptin, plan::ExecutionModel::Stream)
                   .sharedBytes);
  }

  CudaDeviceInfo device;

private:
  std::vector<std::filesystem::path> scratch;
};

} // namespace ti::test

#endif // TI_TEST_GPU_GPUTEST_H
