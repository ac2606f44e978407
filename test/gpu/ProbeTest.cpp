//===- ProbeTest.cpp - What tirun probe measures, on the GPU it runs on ----===//
//
// The streaming-read bandwidth with a small buffer (sane numbers, the
// requested repetitions), the worker's fingerprint (16 hex digits, stable,
// from a hashed cubin where the build has one for the device), and the
// executor's refusal of a plan made for another worker binary, with one line
// naming both fingerprints, next to its acceptance of the right one; the
// hand-off latency under each load (finite, positive, returned at all: a
// ponger that never answered would hang, which the cooperative launch
// prevents).
//
// Without a GPU every test that needs one is skipped (GTEST_SKIP).
//
//===----------------------------------------------------------------------===//
#include "ti/Runtime/CudaBandwidth.h"
#include "ti/Runtime/CudaExecutor.h"
#include "ti/Runtime/CudaHandOff.h"
#include "ti/Runtime/CudaInputRead.h"
#include "ti/Runtime/LoadedPlan.h"

#include "GpuTest.h"
#include "ModelPlan.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace ti;
namespace fs = std::filesystem;

namespace {

bool isHex(const std::string &s) {
  return s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

class ProbeTest : public test::GpuTest {
protected:
  /// Whether this GPU has the bulk-copy engine (sm_90 and later).
  bool hasBulkCopies() const { return std::stoi(device.arch.substr(3)) >= 90; }

  /// A measurement asked for a ring of copies larger than any SM's shared
  /// memory: refused where the GPU has the engine (elsewhere it copies
  /// nothing and may succeed).
  void expectRingDoesNotFit(const Status &s) const {
    if (!hasBulkCopies())
      return;
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("does not fit"), std::string::npos) << s.message();
  }

  /// A short measurement of the streaming floor (GB/s), the bound that a
  /// load's bandwidth must stay near: far above it, the load read L2, not
  /// memory. 0 on failure, recorded.
  double streamingFloorGBs() const {
    BandwidthOptions options;
    options.bytes = 1ull << 30;
    options.repetitions = 3;
    auto floor = measureStreamingBandwidth(0, options);
    EXPECT_TRUE(floor.ok()) << floor.status().message();
    return floor.ok() ? floor->medianGBs : 0;
  }

  /// The tiny model for this GPU (4 workers) from a target probed with the
  /// worker `fingerprint`, for the Plain worker or, with `stream`, the Stream
  /// one (its shared memory: the ring needs more than the target file's
  /// default).
  std::shared_ptr<const LoadedPlan> planFor(const std::string &fingerprint, bool stream = false) {
    const fs::path stem = scratchDir("ti-probe") / fingerprint;
    std::string keys = "\"worker_fingerprint\": \"" + fingerprint + "\"";
    if (stream)
      keys += ", \"shared_bytes_per_worker\": " +
              std::to_string(CudaExecutor::workerLimits(device.sharedPerBlockOptin,
                                                        plan::ExecutionModel::Stream)
                                 .sharedBytes);
    const std::string target = writeTarget(stem.string() + ".json", device.arch, 4, keys);
    return test::compileTinyPlan(
        stem, "--target-file " + target + (stream ? " --execution stream" : ""), 1);
  }
};

TEST_F(ProbeTest, StreamingBandwidthIsSane) {
  BandwidthOptions options;
  options.bytes = 512ull << 20;
  options.repetitions = 5;
  auto r = measureStreamingBandwidth(0, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GT(r->medianGBs, 0);
  EXPECT_LE(r->minGBs, r->medianGBs);
  EXPECT_LE(r->medianGBs, r->maxGBs);
  EXPECT_EQ(r->repetitions, 5);
  EXPECT_EQ(r->samples.size(), 5u);
  EXPECT_EQ(r->bytes, options.bytes);
  EXPECT_EQ(r->blocks, device.smCount);
  EXPECT_EQ(r->threads, 1024);
  RecordProperty("bandwidth_gbs_median", std::to_string(r->medianGBs));
  std::printf("streaming read, 512 MiB x 5: median %.1f GB/s (min %.1f, max %.1f)\n", r->medianGBs,
              r->minGBs, r->maxGBs);
}

TEST_F(ProbeTest, BadBandwidthOptionsAreErrors) {
  BandwidthOptions small;
  small.bytes = 1 << 20;
  EXPECT_FALSE(measureStreamingBandwidth(0, small).ok());
  BandwidthOptions none;
  none.repetitions = 0;
  EXPECT_FALSE(measureStreamingBandwidth(0, none).ok());
  auto missing = measureStreamingBandwidth(CudaExecutor::deviceCount(), BandwidthOptions());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no CUDA GPU"), std::string::npos)
      << missing.status().message();
}

TEST_F(ProbeTest, HandOffLatencyIsMeasuredUnderEachLoad) {
  HandOffOptions options;
  options.rounds = 500;
  options.warmupRounds = 100;
  options.repetitions = 1;
  options.streamBytes = 256ull << 20;
  auto r = measureHandOff(0, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Between a clock tick and a millisecond: what any GPU's L2 allows.
  for (double ns : {r->idleNs, r->othersStreamNs, r->allStreamNs}) {
    EXPECT_GT(ns, 1.0);
    EXPECT_LT(ns, 1e6);
  }
  EXPECT_GT(r->othersStreamGBs, 0);
  EXPECT_GT(r->allStreamGBs, 0);
  EXPECT_GE(r->pairs, 1);
  EXPECT_EQ(r->rounds, 500);
  std::printf("hand-off, one way: %.0f ns idle, %.0f with the other SMs streaming (%.0f GB/s), "
              "%.0f with every SM streaming (%.0f GB/s) (%d pairs)\n",
              r->idleNs, r->othersStreamNs, r->othersStreamGBs, r->allStreamNs, r->allStreamGBs,
              r->pairs);
  // The bulk-copy loads exactly where the GPU has the engine.
  EXPECT_EQ(r->bulkMeasured, hasBulkCopies()) << device.arch;
  if (!r->bulkMeasured)
    return;
  for (double ns : {r->othersBulkNs, r->allBulkNs}) {
    EXPECT_GT(ns, 1.0);
    EXPECT_LT(ns, 1e6);
  }
  EXPECT_GT(r->othersBulkGBs, 0);
  EXPECT_GT(r->allBulkGBs, 0);
  // Each load reads memory, not L2 (the bulk copies once went over the same
  // bytes SM after SM, at four times the memory's bandwidth): nothing far
  // above the streaming floor measured here. A bound on the method, not a
  // speed: the loads stream as fast as they can either way.
  const double floorGBs = streamingFloorGBs();
  ASSERT_GT(floorGBs, 0);
  for (double gbs : {r->othersStreamGBs, r->allStreamGBs, r->othersBulkGBs, r->allBulkGBs})
    EXPECT_LT(gbs, 1.3 * floorGBs) << "the floor: " << floorGBs << " GB/s";
  std::printf("with bulk copies: %.0f ns with the other SMs copying (%.0f GB/s), %.0f with every "
              "SM copying (%.0f GB/s)\n",
              r->othersBulkNs, r->othersBulkGBs, r->allBulkNs, r->allBulkGBs);
}

TEST_F(ProbeTest, BadHandOffOptionsAreErrors) {
  HandOffOptions none;
  none.rounds = 0;
  EXPECT_FALSE(measureHandOff(0, none).ok());
  HandOffOptions small;
  small.streamBytes = 1 << 20;
  EXPECT_FALSE(measureHandOff(0, small).ok());
  HandOffOptions ragged; // Bulk copies move multiples of 16 bytes.
  ragged.bulkStageBytes = 1000;
  EXPECT_FALSE(measureHandOff(0, ragged).ok());
  HandOffOptions deep;
  deep.bulkStages = 9;
  EXPECT_FALSE(measureHandOff(0, deep).ok());
  HandOffOptions huge; // No SM's shared memory holds 8 MiB.
  huge.bulkStageBytes = 1u << 20;
  huge.bulkStages = 8;
  expectRingDoesNotFit(measureHandOff(0, huge).status());
  auto missing = measureHandOff(CudaExecutor::deviceCount(), HandOffOptions());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no CUDA GPU"), std::string::npos)
      << missing.status().message();
}

TEST_F(ProbeTest, InputReadIsMeasuredEachWay) {
  InputReadOptions options;
  options.lengths = {2048, 14336};
  options.repetitions = 5;
  options.copyBytes = 256ull << 20;
  const double floorGBs = streamingFloorGBs();
  ASSERT_GT(floorGBs, 0);
  auto r = measureInputRead(0, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  for (size_t i = 0; i < r->size(); ++i) {
    const InputReadResult &x = (*r)[i];
    EXPECT_EQ(x.length, options.lengths[i]);
    // Between a clock tick and a millisecond: what any GPU's L2 allows.
    for (double ns : {x.roundsNs, x.pipelinedNs, x.batchedNs, x.aloneNs}) {
      EXPECT_GT(ns, 1.0);
      EXPECT_LT(ns, 1e6);
    }
    std::printf("input read, K = %u: %.0f ns in rounds, %.0f pipelined, %.0f batched, %.0f "
                "alone; behind copies %.0f in rounds (%.0f GB/s), %.0f batched (%.0f GB/s), "
                "%.0f for one SM behind the others' (%.0f GB/s), %.0f for one SM behind its "
                "own (%.0f GB/s)\n",
                x.length, x.roundsNs, x.pipelinedNs, x.batchedNs, x.aloneNs, x.copyingNs,
                x.copyingGBs, x.copyingBatchedNs, x.copyingBatchedGBs, x.othersCopyingNs,
                x.othersCopyingGBs, x.ownCopyingNs, x.ownCopyingGBs);
    // The copying ways exactly where the GPU has the engine; their copies
    // read memory, not L2 (nothing far above the streaming floor).
    EXPECT_EQ(x.copiesMeasured, hasBulkCopies()) << device.arch;
    if (x.copiesMeasured)
      for (auto [ns, gbs] : {std::pair{x.copyingNs, x.copyingGBs},
                             std::pair{x.copyingBatchedNs, x.copyingBatchedGBs},
                             std::pair{x.othersCopyingNs, x.othersCopyingGBs},
                             std::pair{x.ownCopyingNs, x.ownCopyingGBs}}) {
        EXPECT_GT(ns, 1.0);
        EXPECT_LT(ns, 1e6);
        EXPECT_GT(gbs, 0);
        EXPECT_LT(gbs, 1.3 * floorGBs);
      }
  }
  // Seven times the pairs take longer to read in rounds than one round:
  // each round waits for its loads (not a speed: a count of round trips).
  EXPECT_GT((*r)[1].aloneNs, (*r)[0].aloneNs);
}

TEST_F(ProbeTest, BadInputReadOptionsAreErrors) {
  InputReadOptions ragged; // Not whole rounds of 256 threads' pairs.
  ragged.lengths = {1000};
  EXPECT_FALSE(measureInputRead(0, ragged).ok());
  InputReadOptions none;
  none.repetitions = 0;
  EXPECT_FALSE(measureInputRead(0, none).ok());
  InputReadOptions raggedStage; // Bulk copies move multiples of 16 bytes.
  raggedStage.copyStageBytes = 1000;
  EXPECT_FALSE(measureInputRead(0, raggedStage).ok());
  InputReadOptions small;
  small.copyBytes = 1 << 20;
  EXPECT_FALSE(measureInputRead(0, small).ok());
  InputReadOptions huge; // No SM's shared memory holds 8 MiB.
  huge.copyStageBytes = 1u << 20;
  huge.copyStages = 8;
  expectRingDoesNotFit(measureInputRead(0, huge).status());
  auto missing = measureInputRead(CudaExecutor::deviceCount(), InputReadOptions());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no CUDA GPU"), std::string::npos)
      << missing.status().message();
}

TEST_F(ProbeTest, FingerprintIsSixteenHexDigitsAndStable) {
  const std::string f = CudaExecutor::kernelFingerprint(0);
  EXPECT_EQ(f.size(), 16u) << f;
  EXPECT_TRUE(isHex(f)) << f;
  EXPECT_EQ(f, CudaExecutor::kernelFingerprint(0));
}

TEST_F(ProbeTest, TheDeviceRunsAHashedImage) {
  auto image = CudaExecutor::workerImage(0);
  ASSERT_TRUE(image.ok()) << image.status().message();
  EXPECT_EQ(image->sha256.size(), 64u);
  EXPECT_TRUE(isHex(image->sha256)) << image->sha256;
  // The build's architectures (sm_86, sm_90) run their own cubin, unless the
  // environment forces the JIT.
  const char *forced = std::getenv("CUDA_FORCE_PTX_JIT");
  if ((device.arch == "sm_86" || device.arch == "sm_90") && !(forced && *forced)) {
    EXPECT_FALSE(image->jit) << image->describe();
    EXPECT_EQ(image->name, device.arch);
  }
  RecordProperty("worker_image", image->describe());
}

TEST_F(ProbeTest, APlanForAnotherWorkerIsRefusedInOneLine) {
  const std::string mine = CudaExecutor::kernelFingerprint(0);
  ASSERT_EQ(mine.size(), 16u);
  const std::string other = mine == "0123456789abcdef" ? "fedcba9876543210" : "0123456789abcdef";
  auto wrong = planFor(other);
  ASSERT_TRUE(wrong);
  auto refused = CudaExecutor::create(wrong);
  ASSERT_FALSE(refused.ok());
  const std::string &message = refused.status().message();
  EXPECT_NE(message.find(other), std::string::npos) << message;
  EXPECT_NE(message.find(mine), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;

  auto right = planFor(mine);
  ASSERT_TRUE(right);
  auto accepted = CudaExecutor::create(right);
  EXPECT_TRUE(accepted.ok()) << accepted.status().message();
}

TEST_F(ProbeTest, TheStreamWorkerHasItsOwnFingerprint) {
  // Each execution model's worker is its own object with its own images
  // (both hashed at build time): a stream plan runs only with the Stream
  // worker's fingerprint, and the Plain worker's is not it.
  if (device.arch != plan::kStreamArch)
    GTEST_SKIP() << "the stream worker needs sm_90; " << device.arch << " runs the plain one";
  const std::string plain = CudaExecutor::kernelFingerprint(0, plan::ExecutionModel::Plain);
  const std::string stream = CudaExecutor::kernelFingerprint(0, plan::ExecutionModel::Stream);
  ASSERT_EQ(stream.size(), 16u) << stream;
  EXPECT_NE(stream, plain);
  auto image = CudaExecutor::workerImage(0, plan::ExecutionModel::Stream);
  ASSERT_TRUE(image.ok()) << image.status().message();
  EXPECT_EQ(image->model, plan::ExecutionModel::Stream);
  EXPECT_EQ(image->sha256.size(), 64u);
  RecordProperty("stream_worker_image", image->describe());

  auto wrong = planFor(plain, /*stream=*/true);
  ASSERT_TRUE(wrong);
  ASSERT_EQ(wrong->plan.stream.model, plan::ExecutionModel::Stream);
  auto refused = CudaExecutor::create(wrong);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(stream), std::string::npos)
      << refused.status().message();
  auto right = planFor(stream, /*stream=*/true);
  ASSERT_TRUE(right);
  auto accepted = CudaExecutor::create(right);
  EXPECT_TRUE(accepted.ok()) << accepted.status().message();
}

} // namespace
