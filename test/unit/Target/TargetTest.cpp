//===- TargetTest.cpp - Target files: what tirun probe writes, tic reads --===//
//
// A probed target (with its worker fingerprint) must come back from its JSON
// exactly; the fingerprint is a string or an error, and a target without one
// (a hand-written file) has none.
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
  // Every field, including any this test does not name.
  EXPECT_EQ(targetToJson(*back), json);
}

TEST(Target, TheProbesDefaultsAreTheBuiltinH200s) {
  // tirun probe takes what it does not measure from Target's initializers.
  auto h200 = builtinTarget("h200");
  ASSERT_TRUE(h200.ok());
  Target defaults;
  defaults.name = h200->name;
  defaults.gpu = h200->gpu;
  defaults.arch = h200->arch;
  defaults.workers = h200->workers;
  defaults.threadsPerWorker = h200->threadsPerWorker;
  defaults.maxRegisters = h200->maxRegisters;
  defaults.bandwidthGBs = h200->bandwidthGBs;
  EXPECT_EQ(targetToJson(defaults), targetToJson(*h200));
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

} // namespace
