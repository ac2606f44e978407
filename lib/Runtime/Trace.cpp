//===- Trace.cpp - A traced step as Chrome/Perfetto trace JSON -------------===//
#include "ti/Runtime/Trace.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>

using namespace ti;
using json = nlohmann::json;

std::string ti::traceToChromeJson(const plan::Plan &plan,
                                  const std::vector<std::vector<TraceEvent>> &workers) {
  uint64_t origin = UINT64_MAX;
  for (const auto &events : workers)
    for (const TraceEvent &e : events)
      origin = std::min(origin, e.begin);
  auto micros = [&](uint64_t ns) { return double(ns - origin) / 1000.0; };

  json events = json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 0},
                    {"args", {{"name", plan.model.name + " on " + plan.target.name}}}});
  for (size_t w = 0; w < workers.size(); ++w) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", w},
                      {"args", {{"name", "worker " + std::to_string(w)}}}});
    // A task's TaskInputs event, folded into the task's own as args.inputs_us.
    const TraceEvent *inputs = nullptr;
    for (const TraceEvent &e : workers[w]) {
      json args;
      std::string name, category;
      switch (static_cast<TraceKind>(e.kind)) {
      case TraceKind::TaskInputs:
        inputs = &e;
        continue;
      case TraceKind::Task: {
        if (e.index >= plan.tasks.size())
          continue;
        const plan::TaskRecord &t = plan.tasks[e.index];
        const char *op = plan::opcodeName(t.opcode);
        const std::string wave = t.wave < plan.waves.size() ? plan.waves[t.wave].name : "?";
        name = wave;
        category = op ? op : "?";
        args = {{"wave", t.wave},
                {"task", e.index},
                {"rows", {t.rowBegin, t.rowEnd}},
                {"weight_bytes", t.weightBytes},
                {"kind", op ? plan::opcodeKindName(plan::opcodeKind(plan::Opcode(t.opcode))) : "?"}};
        if (inputs != nullptr && inputs->index == e.index && inputs->begin == e.begin)
          args["inputs_us"] = double(inputs->end - inputs->begin) / 1000.0;
        inputs = nullptr;
        // Which kv head and chunk: in short mode only chunk 0's tasks work.
        if (plan::Opcode(t.opcode) == plan::Opcode::Attention) {
          args["kv_head"] = t.aux[0];
          args["chunk"] = t.aux[1];
        }
        break;
      }
      case TraceKind::GridBarrier:
        category = "barrier";
        name = e.index < plan.waves.size() ? "barrier " + plan.waves[e.index].name
                                           : "barrier (end of step)";
        args = {{"wave", e.index}};
        break;
      case TraceKind::Select:
        category = "select";
        name = "select";
        args = {{"step", e.index}};
        break;
      default:
        continue;
      }
      events.push_back({{"name", name},
                        {"cat", category},
                        {"ph", "X"},
                        {"pid", 0},
                        {"tid", w},
                        {"ts", micros(e.begin)},
                        {"dur", double(e.end - e.begin) / 1000.0},
                        {"args", args}});
    }
  }
  json root = {{"traceEvents", events}, {"displayTimeUnit", "ns"}};
  return root.dump() + "\n";
}
