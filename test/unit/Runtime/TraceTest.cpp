//===- TraceTest.cpp - Traced events as Chrome/Perfetto trace JSON --------===//
#include "ti/Runtime/Trace.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace ti;

TEST(TraceTest, WritesOneThreadPerWorkerAndACompleteEventPerInterval) {
  plan::Plan p;
  p.model.name = "tiny";
  p.target.name = "four";
  p.waves = {plan::Wave{"select", plan::BarrierKind::None}, plan::Wave{"L0.q+k+v", plan::BarrierKind::Grid}};
  plan::TaskRecord t{};
  t.opcode = static_cast<uint16_t>(plan::Opcode::Gemv);
  t.wave = 1;
  t.rowBegin = 0;
  t.rowEnd = 8;
  t.weightBytes = 4096;
  p.tasks = {t};
  std::vector<std::vector<TraceEvent>> workers = {
      {TraceEvent{1000, 1500, uint32_t(TraceKind::Select), 1},
       TraceEvent{1500, 4000, uint32_t(TraceKind::Task), 0},
       TraceEvent{4000, 5000, uint32_t(TraceKind::GridBarrier), 1}},
      {TraceEvent{1200, 5000, uint32_t(TraceKind::GridBarrier), 2}}};
  nlohmann::json j = nlohmann::json::parse(traceToChromeJson(p, workers));
  std::vector<nlohmann::json> complete;
  int threads = 0;
  for (const auto &e : j["traceEvents"]) {
    if (e["ph"] == "X")
      complete.push_back(e);
    if (e["name"] == "thread_name")
      ++threads;
  }
  EXPECT_EQ(threads, 2);
  ASSERT_EQ(complete.size(), 4u);
  EXPECT_EQ(complete[0]["name"], "select");
  EXPECT_DOUBLE_EQ(complete[0]["ts"].get<double>(), 0.0); // From the earliest event.
  EXPECT_EQ(complete[1]["name"], "L0.q+k+v");
  EXPECT_EQ(complete[1]["cat"], "gemv");
  EXPECT_DOUBLE_EQ(complete[1]["ts"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(complete[1]["dur"].get<double>(), 2.5);
  EXPECT_EQ(complete[1]["args"]["weight_bytes"], 4096);
  EXPECT_EQ(complete[1]["args"]["kind"], "stream"); // Opcodes.def's kind of gemv.
  EXPECT_EQ(complete[2]["name"], "barrier L0.q+k+v");
  EXPECT_EQ(complete[3]["name"], "barrier (end of step)");
  EXPECT_EQ(complete[3]["tid"], 1);
  EXPECT_FALSE(complete[1]["args"].contains("chunk")); // Attention's alone.
}

TEST(TraceTest, NamesAnAttentionTasksKvHeadAndChunk) {
  plan::Plan p;
  p.waves = {plan::Wave{"L0.a", plan::BarrierKind::Grid}};
  plan::TaskRecord t{};
  t.opcode = static_cast<uint16_t>(plan::Opcode::Attention);
  t.aux[0] = 3; // kv head
  t.aux[1] = 5; // chunk
  p.tasks = {t};
  std::vector<std::vector<TraceEvent>> workers = {{TraceEvent{0, 10, uint32_t(TraceKind::Task), 0}}};
  nlohmann::json j = nlohmann::json::parse(traceToChromeJson(p, workers));
  int found = 0;
  for (const auto &e : j["traceEvents"])
    if (e["ph"] == "X") {
      EXPECT_EQ(e["args"]["kv_head"], 3);
      EXPECT_EQ(e["args"]["chunk"], 5);
      ++found;
    }
  EXPECT_EQ(found, 1);
}

TEST(TraceTest, FoldsATasksInputsMarkIntoItsEvent) {
  plan::Plan p;
  p.waves = {plan::Wave{"L0.a", plan::BarrierKind::Tagged}};
  plan::TaskRecord t{};
  t.opcode = static_cast<uint16_t>(plan::Opcode::Attention);
  p.tasks = {t, t};
  // Task 0 marked its inputs 1.25 us after its start; task 1 marked none.
  std::vector<std::vector<TraceEvent>> workers = {
      {TraceEvent{2000, 3250, uint32_t(TraceKind::TaskInputs), 0},
       TraceEvent{2000, 6000, uint32_t(TraceKind::Task), 0},
       TraceEvent{6000, 9000, uint32_t(TraceKind::Task), 1}}};
  nlohmann::json j = nlohmann::json::parse(traceToChromeJson(p, workers));
  std::vector<nlohmann::json> complete;
  for (const auto &e : j["traceEvents"])
    if (e["ph"] == "X")
      complete.push_back(e);
  ASSERT_EQ(complete.size(), 2u); // The mark is no event of its own.
  EXPECT_DOUBLE_EQ(complete[0]["args"]["inputs_us"].get<double>(), 1.25);
  EXPECT_DOUBLE_EQ(complete[0]["dur"].get<double>(), 4.0);
  EXPECT_FALSE(complete[1]["args"].contains("inputs_us"));
}
