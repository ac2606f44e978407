//===- PlanStream.cpp - The weight stream's shape (plan-stream) -----------===//
//
// A Stream target's worker copies each task's weight rows into a ring of
// shared-memory stages ahead of the consumers (ti/Plan/Execution.h). This
// pass fixes the ring's shape for the plan, from the target:
//
// 1. A Plain target streams nothing: the module keeps an empty stream.
// 2. Stage size: the target's stream_stage_bytes. Every row a task streams (K
//    columns of a Gemv or LmHead, H of an FFN's gate, up and down rows) must
//    fit one stage; longer rows are refused at their graph op, once. A tiled
//    stage's octets stream in pieces of a stage (ti/Plan/WeightTiles.h).
// 3. Ring depth: as many stages as the target's stream_ring_bytes hold (up
//    to the worker's kMaxStreamStages barrier pairs); the
//    rest of the worker's shared memory is the tasks' (WorkerSupport.h checks
//    that every task's layout fits beside the ring).
// 4. Bulk copies in flight: the target's stream_in_flight_bytes in whole
//    stages, at least one: more delays the SM's own stores and loads behind
//    the copies, fewer leaves HBM idle. For a wave the consumers have not
//    begun, the target's stream_hand_off_in_flight_bytes in whole stages (at
//    most the former): while they finish a wave and hand off, its stores,
//    barrier arrival and polls wait behind the copies in flight, and no
//    consumer needs a stage of the next wave until the hand-off ends.
//
// Counters: streamed-stages (ring stages filled per step, over all workers).
//
//===----------------------------------------------------------------------===//
#include "ti/Passes/Passes.h"
#include "ti/Plan/WeightTiles.h"

#include <algorithm>
#include <set>

using namespace ti;
using namespace ti::tir;

namespace {

bool streamsRows(StageKind kind) {
  return kind == StageKind::Gemv || kind == StageKind::LmHead || kind == StageKind::FfnPartial;
}

class PlanStream : public Pass {
public:
  PlanStream() : Pass(PassId::PlanStream) {}

  bool run(Module &m, DiagnosticEngine &diags) override {
    m.stream = plan::StreamConfig{};
    const Target &t = m.target;
    if (t.execution == plan::ExecutionModel::Plain)
      return true;

    const plan::StreamConfig st = t.streamConfig();

    bool ok = true;
    uint64_t filled = 0;
    std::set<const char *> reported; // Once per graph op, though every layer repeats it.
    for (const Stage &s : m.stages) {
      if (!streamsRows(s.kind))
        continue;
      const uint64_t rowBytes = s.cols * plan::kWeightBytes;
      // A tiled stage streams octets in pieces of a stage (WeightTiles.h).
      if (!s.tiled && rowBytes > st.stageBytes) {
        ok = false;
        if (!reported.insert(s.loc.getPointer()).second)
          continue;
        diags.error(s.loc, "stage '" + s.name + "' streams rows of " + std::to_string(rowBytes) +
                               " bytes; a stage of target '" + t.name + "' holds " +
                               std::to_string(st.stageBytes));
        continue;
      }
      // The stage's opcode's segments, each of the task's rows (Execution.h).
      plan::Opcode opcode = plan::Opcode::Nop;
      const uint64_t segments = stageOpcode(s, opcode) ? plan::streamSegmentCount(opcode) : 0;
      for (const Task &task : s.tasks)
        filled += segments * (s.tiled ? task.rows() / plan::kTileRows *
                                            plan::tiledPiecesPerOctet(
                                                plan::octetBytes(uint32_t(rowBytes)),
                                                st.stageBytes)
                                      : plan::stagesOf(plan::StreamSegment{0, uint32_t(task.rows()),
                                                                           uint32_t(rowBytes)},
                                                       st.stageBytes));
    }
    count("streamed-stages", filled);
    if (ok)
      m.stream = st;
    return ok;
  }
};

} // namespace

std::unique_ptr<Pass> ti::createPlanStreamPass() { return std::make_unique<PlanStream>(); }
