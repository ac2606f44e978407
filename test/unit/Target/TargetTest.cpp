//===- TargetTest.cpp - Target files: what tirun probe writes, tic reads --===//
//
// A probed target (with its worker fingerprint and worker limits) must come
// back from its JSON exactly; the fingerprint is a string or an error, and a
// target without one (a hand-written file) has none; worker limits a file
// lacks take the standard worker's.
//
//===----------------------------------------------------------------------===//
#include "ti/Target/Target.h"

#include <gtest/gtest.h>

using namespace ti;

namespace {

/// What `tirun probe` writes on the H200: the built-in target's choices, the
/// measured values, and a fingerprint.
Target probedH200() {
  auto t = builtinTarget("h200");
  EXPECT_TRUE(t.ok());
  Target p = *t;
  p.name = "nvidia-h200";
  p.bandwidthGBs = 4512.3;
  p.workerFingerprint = "0123456789abcdef";
  return p;
}

TEST(Target, AProbedTargetRoundTripsThroughJson) {
  const Target t = probedH200();
  const std::string json = targetToJson(t);
  EXPECT_NE(json.find("\"worker_fingerprint\": \"0123456789abcdef\""), std::string::npos) << json;
  auto back = parseTargetJson(json, "probe.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->name, t.name);
  EXPECT_EQ(back->gpu, t.gpu);
  EXPECT_EQ(back->arch, t.arch);
  EXPECT_EQ(back->workers, t.workers);
  EXPECT_EQ(back->threadsPerWorker, t.threadsPerWorker);
  EXPECT_EQ(back->maxRegisters, t.maxRegisters);
  EXPECT_EQ(back->bandwidthGBs, t.bandwidthGBs);
  EXPECT_EQ(back->attentionSplitContext, t.attentionSplitContext);
  EXPECT_EQ(back->balanceTolerance, t.balanceTolerance);
  EXPECT_EQ(back->workerFingerprint, t.workerFingerprint);
  EXPECT_EQ(back->workerLimits(), t.workerLimits());
  // Every field, including any this test does not name.
  EXPECT_EQ(targetToJson(*back), json);
}

TEST(Target, TheProbesDefaultsAreTheBuiltinH200s) {
  // tirun probe takes what it does not measure from Target's initializers and
  // the execution model's choices (the stream worker on sm_90).
  auto h200 = builtinTarget("h200");
  ASSERT_TRUE(h200.ok());
  Target defaults = Target().withExecution(h200->execution);
  defaults.name = h200->name;
  defaults.gpu = h200->gpu;
  defaults.arch = h200->arch;
  defaults.workers = h200->workers;
  defaults.bandwidthGBs = h200->bandwidthGBs;
  defaults.sharedBytesPerWorker = h200->sharedBytesPerWorker; // The probe reads the GPU's.
  EXPECT_EQ(targetToJson(defaults), targetToJson(*h200));
}

TEST(Target, OnlyTheStreamWorkerMovesTheSplitForShortModeOnTheTensorCores) {
  // Short mode streams to the tensor cores only in the stream worker (its
  // short_mma_context); the plain worker keeps one split.
  EXPECT_EQ(Target().withExecution(plan::ExecutionModel::Stream).shortMmaSplitContext, 384u);
  EXPECT_EQ(Target().withExecution(plan::ExecutionModel::Plain).shortMmaSplitContext, 0u);
  auto rtx = builtinTarget("rtx3050");
  ASSERT_TRUE(rtx.ok());
  EXPECT_EQ(rtx->shortMmaSplitContext, 0u);
}

TEST(Target, TheBuiltinTargetsCarryNoFingerprint) {
  for (const std::string &name : builtinTargetNames()) {
    auto t = builtinTarget(name);
    ASSERT_TRUE(t.ok()) << name;
    EXPECT_EQ(t->workerFingerprint, "") << name;
  }
}

TEST(Target, AFileWithoutAFingerprintHasNone) {
  auto t = parseTargetJson(R"({"name": "x", "arch": "sm_90", "workers": 4, "bandwidth_gbs": 100})",
                           "x.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->workerFingerprint, "");
}

TEST(Target, TheFingerprintMustBeAString) {
  auto t = parseTargetJson(
      R"({"name": "x", "workers": 4, "bandwidth_gbs": 100, "worker_fingerprint": 12})", "x.json");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "x.json: \"worker_fingerprint\" must be a string");
}

TEST(Target, WorkerLimitsFromAFile) {
  auto t = parseTargetJson(R"({"name": "x", "workers": 4, "bandwidth_gbs": 100,
      "threads_per_worker": 512, "max_query_heads_per_kv_head": 8, "head_dims": [64, 128],
      "shared_bytes_per_worker": 49152, "vector_elements": 4})",
                           "x.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  const plan::WorkerLimits l = t->workerLimits();
  EXPECT_EQ(l.threads, 512u);
  EXPECT_EQ(l.maxGroup, 8u);
  EXPECT_EQ(l.headDims, (std::vector<uint32_t>{64, 128}));
  EXPECT_EQ(l.sharedBytes, 49152u);
  EXPECT_EQ(l.vectorElements, 4u);
}

TEST(Target, AFileWithoutWorkerLimitsHasTheStandardWorkers) {
  auto t = parseTargetJson(R"({"name": "x", "workers": 4, "bandwidth_gbs": 100})", "x.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  plan::WorkerLimits standard;
  standard.threads = t->threadsPerWorker;
  EXPECT_EQ(t->workerLimits(), standard);
  EXPECT_EQ(standard.maxGroup, 4u);
  EXPECT_EQ(standard.sharedBytes, 99u * 1024 - 1024);
}

TEST(Target, BadWorkerLimitsAreOneLine) {
  auto parse = [](const std::string &keys) {
    auto t = parseTargetJson(R"({"name": "x", "workers": 4, "bandwidth_gbs": 100, )" + keys + "}",
                             "x.json");
    return t.ok() ? std::string("ok") : t.status().message();
  };
  EXPECT_EQ(parse(R"("head_dims": 64)"), "x.json: \"head_dims\" must be a list of integers");
  EXPECT_EQ(parse(R"("head_dims": [64, -8])"),
            "x.json: \"head_dims\" must be a list of non-negative integers");
  EXPECT_EQ(parse(R"("head_dims": [])"), "x.json: \"head_dims\" must name at least one head_dim");
  EXPECT_EQ(parse(R"("head_dims": [63])"),
            "x.json: \"head_dims\" holds 63; a head_dim is positive and even");
  EXPECT_EQ(parse(R"("max_query_heads_per_kv_head": 0)"),
            "x.json: \"max_query_heads_per_kv_head\" must be positive");
  EXPECT_EQ(parse(R"("vector_elements": 0)"), "x.json: \"vector_elements\" must be positive");
  EXPECT_EQ(parse(R"("shared_bytes_per_worker": "lots")"),
            "x.json: \"shared_bytes_per_worker\" must be a non-negative integer");
}

TEST(Target, AStreamTargetRoundTripsThroughJson) {
  Target t = probedH200().withExecution(plan::ExecutionModel::Stream);
  // Not the defaults, so that a key the JSON drops cannot come back as one.
  t.streamStageBytes = 16 * 1024;
  t.streamRingBytes = 128 * 1024;
  t.streamMinRingBytes = 96 * 1024;
  t.streamInFlightBytes = 32 * 1024;
  t.streamHandOffInFlightBytes = 16 * 1024;
  t.ffnForm = FfnForm::GateUp; // Not the struct's default, which a dropped key reads as.
  t.streamRowPartBytes = 2048;
  EXPECT_TRUE(t.streamCopiesEvictFirst); // withExecution's, for the stream worker.
  t.streamCopiesEvictFirst = false;      // Not the default, so that a dropped key shows.
  EXPECT_FALSE(t.streamKvCopiesUnhinted); // Off unless a target file says so.
  t.streamKvCopiesUnhinted = true;
  EXPECT_EQ(t.shortMmaContext, 64u);     // withExecution's, for the stream worker.
  t.shortMmaContext = 48;
  EXPECT_EQ(t.shortMmaSplitContext, 384u); // withExecution's, for the stream worker.
  t.shortMmaSplitContext = 200;
  EXPECT_EQ(t.threadsPerWorker, plan::kStreamConsumerThreads);
  EXPECT_EQ(t.maxRegisters, plan::kStreamWorkerRegisters);
  const std::string json = targetToJson(t);
  EXPECT_NE(json.find("\"execution\": \"stream\""), std::string::npos) << json;
  auto back = parseTargetJson(json, "stream.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->execution, plan::ExecutionModel::Stream);
  EXPECT_EQ(back->streamStageBytes, t.streamStageBytes);
  EXPECT_EQ(back->streamRingBytes, t.streamRingBytes);
  EXPECT_EQ(back->streamMinRingBytes, t.streamMinRingBytes);
  EXPECT_EQ(back->streamInFlightBytes, t.streamInFlightBytes);
  EXPECT_EQ(back->streamHandOffInFlightBytes, t.streamHandOffInFlightBytes);
  EXPECT_EQ(back->ffnForm, t.ffnForm);
  EXPECT_EQ(back->streamRowPartBytes, t.streamRowPartBytes);
  EXPECT_EQ(back->streamCopiesEvictFirst, t.streamCopiesEvictFirst);
  EXPECT_TRUE(back->streamKvCopiesUnhinted);
  EXPECT_EQ(back->shortMmaContext, 48u);
  EXPECT_EQ(back->shortMmaSplitContext, 200u);
  EXPECT_FALSE(back->streamConfig().copiesEvictFirst);
  // Where no copy is hinted, the K/V rows' copies are not told apart.
  EXPECT_FALSE(back->streamConfig().kvCopiesUnhinted);
  EXPECT_EQ(targetToJson(*back), json);
}

TEST(Target, TheKvRowsCopiesGoUnhintedOnlyBesideHintedWeights) {
  Target t = probedH200().withExecution(plan::ExecutionModel::Stream);
  EXPECT_TRUE(t.streamConfig().copiesEvictFirst);
  EXPECT_FALSE(t.streamConfig().kvCopiesUnhinted);
  t.streamKvCopiesUnhinted = true;
  auto back = parseTargetJson(targetToJson(t), "kv.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->streamConfig().copiesEvictFirst);
  EXPECT_TRUE(back->streamConfig().kvCopiesUnhinted);
  auto bad = parseTargetJson(R"({"name": "x", "stream_kv_copies_unhinted": 1})", "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "bad.json: \"stream_kv_copies_unhinted\" must be true or false");
}

TEST(Target, BadStreamShapesAreOneLine) {
  auto parse = [](const std::string &keys) {
    auto t = parseTargetJson(
        R"({"name": "x", "arch": "sm_90", "workers": 4, "bandwidth_gbs": 100, )" + keys + "}",
        "x.json");
    return t.ok() ? std::string("ok") : t.status().message();
  };
  EXPECT_EQ(parse(R"("execution": "stream", "threads_per_worker": 256)"), "ok");
  EXPECT_EQ(parse(R"("execution": "fast")"),
            "x.json: \"execution\" is \"plain\" or \"stream\", not \"fast\"");
  EXPECT_EQ(parse(R"("execution": "stream")"),
            "x.json: \"threads_per_worker\" of the stream worker is 256");
  EXPECT_EQ(parse(R"("stream_stage_bytes": 24)"),
            "x.json: \"stream_stage_bytes\" must be a positive multiple of 16");
  EXPECT_EQ(parse(R"("stream_ring_bytes": 40000)"),
            "x.json: \"stream_ring_bytes\" must hold at least two stages");
  EXPECT_EQ(parse(R"("stream_min_ring_bytes": 32768)"),
            "x.json: \"stream_min_ring_bytes\" must be 0 or from two stages to \"stream_ring_bytes\"");
  EXPECT_EQ(parse(R"("stream_min_ring_bytes": 229376)"),
            "x.json: \"stream_min_ring_bytes\" must be 0 or from two stages to \"stream_ring_bytes\"");
  EXPECT_EQ(parse(R"("stream_min_ring_bytes": 65536)"), "ok");
  EXPECT_EQ(parse(R"("stream_in_flight_bytes": 1000)"),
            "x.json: \"stream_in_flight_bytes\" must be between a stage and the ring");
  EXPECT_EQ(parse(R"("stream_hand_off_in_flight_bytes": 65537)"),
            "x.json: \"stream_hand_off_in_flight_bytes\" must be at most "
            "\"stream_in_flight_bytes\"");
  EXPECT_EQ(parse(R"("stream_hand_off_in_flight_bytes": 65536)"), "ok");
  // Retired with plan format 5: files probed before say false.
  EXPECT_EQ(parse(R"("tag_chunked_attention": false)"), "ok");
  EXPECT_EQ(parse(R"("tag_chunked_attention": true)"), "ok"); // Retired: the hand-offs decide.
  auto sm86 = parseTargetJson(R"({"name": "x", "arch": "sm_86", "workers": 4, "bandwidth_gbs": 1,
                                  "execution": "stream", "threads_per_worker": 512})",
                              "x.json");
  ASSERT_FALSE(sm86.ok());
  EXPECT_EQ(sm86.status().message(), "x.json: the stream execution model needs sm_90 (the "
                                     "bulk-copy engine); \"arch\" is \"sm_86\"");
}

} // namespace
