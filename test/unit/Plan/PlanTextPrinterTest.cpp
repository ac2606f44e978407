//===- PlanTextPrinterTest.cpp --------------------------------------------===//
//
// The plan text is what lit tests check, so these compare whole strings.
//
//===----------------------------------------------------------------------===//
#include "ti/Plan/PlanTextPrinter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

using namespace ti::plan;

namespace {

std::string text(const Plan &plan) {
  std::ostringstream os;
  printPlanText(plan, os);
  return os.str();
}

Plan smallPlan() {
  Plan p;
  p.model = {"tiny", 256, 64, 128, 2, 4, 2, 16, 128, 1, {2, 3}, 1e-5};
  p.target = {"h200", "sm_90", 132, 256, 128, 4800, ""};
  p.attention = {64};
  p.weights = {
      {"embed", 0, 32768, {{"model.embed_tokens.weight", {256, 64}, 0, 256, 0, 64, false}}},
      {"layer0.wqkv",
       32768,
       16384,
       {{"q_proj", {64, 64}, 0, 64, 0, 64, false}, {"k_proj", {32, 64}, 0, 32, 0, 64, true}}},
      {"layer0.norm", 49152, 256, {{"input_layernorm", {64}, 0, 1, 0, 64, false}}},
  };
  p.weightsBytes = 49408;
  p.layoutHash = 0x00c0ffee12345678;
  p.buffers = {{"x.0", BufferKind::Activation, 0, 256},
               {"qkv.0", BufferKind::Activation, 256, 512},
               {"v.0", BufferKind::VCache, 1024, 4096},
               {"tokens", BufferKind::TokenSlots, 5120, 528}};
  p.arenaBytes = 5888;
  p.waves = {{"embed", BarrierKind::Grid}, {"layer0.qkv", BarrierKind::GridIfLong}};
  // Plan order is (worker, wave); the printer regroups by wave.
  // opcode, flags, wave, worker, layer, rowBegin, rowEnd, param, weight, weightBytes, norm,
  // in, out, aux
  // clang-format off
  p.tasks = {
      {uint16_t(Opcode::Embed), 0, 0, 0, kNone32, 0, 32, kNone32, 0, 4096, kNone,
       {5120, kNone, kNone}, {0, kNone}, {64, 256}},
      {uint16_t(Opcode::Gemv), kFlagResidual | kFlagVCache, 1, 0, 0, 0, 48, 0, 32768, 6144, 49152,
       {0, 128, kNone}, {256, 1024}, {64, 32}},
      {uint16_t(Opcode::Gemv), 0, 1, 0, 0, 48, 64, 0, 38912, 2048, 49152,
       {0, kNone, kNone}, {448, kNone}, {64, 0}},
      {uint16_t(Opcode::Embed), 0, 0, 1, kNone32, 32, 64, kNone32, 0, 4096, kNone,
       {5124, kNone, kNone}, {128, kNone}, {64, 256}},
      {uint16_t(Opcode::Nop), 0, 1, 1, kNone32, 0, 0, kNone32, kNone, 0, kNone,
       {kNone, kNone, kNone}, {kNone, kNone}, {0, 0}},
  };
  // clang-format on
  p.params = {1e-5f, 0.125f};
  return p;
}

TEST(PlanTextPrinter, SmallPlan) {
  EXPECT_EQ(text(smallPlan()),
            "plan format_version=5\n"
            "model tiny vocab=256 hidden=64 ffn=128 layers=2 heads=4 kv_heads=2 head_dim=16 "
            "max_context=128 bos=1 eos=[2, 3] rms_eps=1e-05\n"
            "target h200 arch=sm_90 workers=132 threads_per_worker=256 max_registers=128 "
            "bandwidth_gbs=4800 fingerprint=none\n"
            "attention split_context=64\n"
            "weights bytes=49408 layout_hash=00c0ffee12345678 tensors=3\n"
            "arena bytes=5888 buffers=4\n"
            "params [1e-05, 0.125]\n"
            "weight embed offset=0 bytes=32768 <- model.embed_tokens.weight[0:256, 0:64]\n"
            "weight layer0.wqkv offset=32768 bytes=16384 <- q_proj[0:64, 0:64] + "
            "k_proj[0:32, 0:64]T\n"
            "weight layer0.norm offset=49152 bytes=256 <- input_layernorm[0:1, 0:64]\n"
            "buffer x.0 kind=activation offset=0 bytes=256\n"
            "buffer qkv.0 kind=activation offset=256 bytes=512\n"
            "buffer v.0 kind=v_cache offset=1024 bytes=4096\n"
            "buffer tokens kind=token_slots offset=5120 bytes=528\n"
            "wave 0 embed barrier=grid tasks=2\n"
            "  task 0.0 embed rows=[0, 32) weight=embed+0/4096 in=tokens+0 out=x.0+0 "
            "aux=64,256\n"
            "  task 1.0 embed rows=[32, 64) weight=embed+0/4096 in=tokens+4 out=x.0+128 "
            "aux=64,256\n"
            "wave 1 layer0.qkv barrier=grid_if_long tasks=3\n"
            "  task 0.0 gemv rows=[0, 48) layer=0 weight=layer0.wqkv+0/6144 "
            "norm=layer0.norm+0 in=x.0+0,x.0+128 out=qkv.0+0,v.0+0 aux=64,32 param=0 "
            "flags=residual|vcache\n"
            "  task 0.1 gemv rows=[48, 64) layer=0 weight=layer0.wqkv+6144/2048 "
            "norm=layer0.norm+0 in=x.0+0 out=qkv.0+192 aux=64,0 param=0\n"
            "  task 1.0 nop\n");
}

TEST(PlanTextPrinter, EmptyPlan) {
  EXPECT_EQ(text(Plan()),
            "plan format_version=5\n"
            "model \"\" vocab=0 hidden=0 ffn=0 layers=0 heads=0 kv_heads=0 head_dim=0 "
            "max_context=0 bos=-1 eos=[] rms_eps=0\n"
            "target \"\" arch=\"\" workers=0 threads_per_worker=0 max_registers=0 "
            "bandwidth_gbs=0 fingerprint=none\n"
            "attention split_context=0\n"
            "weights bytes=0 layout_hash=0000000000000000 tensors=0\n"
            "arena bytes=0 buffers=0\n"
            "params []\n");
}

/// Only the task lines of a plan's text.
std::string taskLines(const Plan &plan) {
  std::istringstream in(text(plan));
  std::string line, out;
  while (std::getline(in, line))
    if (line.rfind("  task ", 0) == 0 || line.rfind("wave ", 0) == 0)
      out += line + '\n';
  return out;
}

TEST(PlanTextPrinter, AttentionTasksShowTheirHeadChunkAndGeometry) {
  Plan p = smallPlan();
  // clang-format off
  p.tasks = {{uint16_t(Opcode::Attention), 0, 1, 3, 1, 0, 0, 1, kNone, 0, kNone,
              {256, 1024, 1024}, {0, 1024}, {1, 2}, {4, 2, 16, 4}}};
  // clang-format on
  EXPECT_EQ(taskLines(p), "wave 0 embed barrier=grid tasks=0\n"
                          "wave 1 layer0.qkv barrier=grid_if_long tasks=1\n"
                          "  task 3.0 attention layer=1 in=qkv.0+0,v.0+0,v.0+0 "
                          "out=x.0+0,v.0+0 aux=1,2 heads=4 kv_heads=2 head_dim=16 chunks=4 "
                          "param=1\n");
}

TEST(PlanTextPrinter, BrokenPlansStillPrint) {
  Plan p = smallPlan();
  // clang-format off
  p.tasks = {
      // Offsets outside every buffer and tensor, an unused slot before a used
      // one, unknown flags and an unknown opcode, in a wave the plan lacks.
      {99, kFlagRecord | 0x8000, 5, 2, kNone32, 1, 2, kNone32, 0x100000, 8, kNone,
       {kNone, 5888, kNone}, {0xdeadbeef, kNone}, {0, 7}},
      {uint16_t(Opcode::Gemv), 0, 0, 0, kNone32, 0, 0, kNone32, kNone, 16, kNone,
       {kNone, kNone, kNone}, {kNone, kNone}, {0, 0}},
  };
  // clang-format on
  p.buffers.push_back({"odd", static_cast<BufferKind>(42), 9000, 0});
  p.waves[0].barrier = static_cast<BarrierKind>(9);
  std::string all = text(p);
  EXPECT_NE(all.find("buffer odd kind=unknown(42) offset=9000 bytes=0\n"), std::string::npos)
      << all;
  EXPECT_EQ(taskLines(p), "wave 0 embed barrier=unknown(9) tasks=1\n"
                          "  task 0.0 gemv weight=none/16\n"
                          "wave 1 layer0.qkv barrier=grid_if_long tasks=0\n"
                          "wave 5 (missing) tasks=1\n"
                          "  task 2.0 opcode(99) rows=[1, 2) weight=@0x100000/8 "
                          "in=-,@0x1700 out=@0xdeadbeef aux=0,7 flags=record|0x8000\n");
}

TEST(PlanTextPrinter, OverlappingBuffersNameTheLatestStart) {
  Plan p = smallPlan();
  p.buffers.push_back({"x.0.hi", BufferKind::Activation, 128, 64});
  // clang-format off
  p.tasks = {{uint16_t(Opcode::ReduceResidual), 0, 0, 0, kNone32, 0, 64, kNone32, kNone, 0, kNone,
              {100, 130, 200}, {kNone, kNone}, {64, 2}}};
  // clang-format on
  EXPECT_EQ(taskLines(p), "wave 0 embed barrier=grid tasks=1\n"
                          "  task 0.0 reduce_residual rows=[0, 64) in=x.0+100,x.0.hi+2,x.0+200 "
                          "aux=64,2\n"
                          "wave 1 layer0.qkv barrier=grid_if_long tasks=0\n");
}

TEST(PlanTextPrinter, NumbersPrintShortestAndExact) {
  Plan p;
  p.model.rmsEps = 1e-6;
  p.target.bandwidthGBs = 4915.2;
  p.params = {0.1f, -0.0f, NAN, 3e38f};
  std::string all = text(p);
  EXPECT_NE(all.find("rms_eps=1e-06\n"), std::string::npos) << all;
  EXPECT_NE(all.find("bandwidth_gbs=4915.2 fingerprint=none\n"), std::string::npos) << all;
  EXPECT_NE(all.find("params [0.1, -0, nan, 3e+38]\n"), std::string::npos) << all;
}

} // namespace
