//===- FuseFfn.cpp - The MLP as per-worker partials (fuse-ffn) ------------===//
//
// The MLP is 83% of a layer's bytes. Split the usual way it is three waves
// (gate/up, down, and a barrier between), because every down-projection row
// needs all of SiLU(gate)*up. The post's form needs no barrier in between: each
// task owns a slice of the intermediate units, computes its gate/up rows and
// SiLU*up for them, and multiplies by the matching *columns* of the down
// projection, producing a partial sum for every output. A reduce wave then adds
// the partials in a fixed order (no atomics: the same bits every run) and the
// residual.
//
// 1. Find a Gemv with a SiLU*up epilogue over [gate; up] whose output is read
//    only by a Gemv (the down projection) with a residual epilogue.
// 2. Replace the pair with an FfnPartial stage (units = intermediate rows,
//    matrix = gate, up, down; output: the layer's partials buffer) and a
//    ReduceResidual stage (units = hidden rows).
//
// The target chooses the form (Target.h: ffnForm). With FfnForm::GateUp the
// pass leaves a pair whose down projection fits the worker alone: it stays a
// GateUp wave (the SiLU*up GEMV) and the down projection's Gemv, a barrier
// between them. The down Gemv keeps its whole input (the intermediate units)
// in shared memory beside the weight stream's ring and the worker's schedule.
// Where that does not fit, the pass narrows the module's ring by whole stages,
// down to the target's stream_min_ring_bytes, until it does (Llama 3.1 8B's
// 14,336 units, 57 KB, fit beside 5 stages of 32 KB on the H200, not 6): the
// ring is one per plan, so every later pass and the plan stream from the
// narrower ring. Where even that does not fit, the pair becomes partials as
// above.
//
//===----------------------------------------------------------------------===//
#include "StageUses.h"

#include "ti/Passes/Passes.h"
#include "ti/Plan/WorkerLayout.h"

using namespace ti;
using namespace ti::tir;

namespace {

/// Whether `down`, as the Gemv of the GateUp form, fits a worker of the
/// target: its largest task's shared memory (WorkerLayout.h), the ring, and
/// the schedule's barrier kinds for a wave per stage of `m` (a bound: the
/// plan's waves are its stages).
bool downFits(const Module &m, const Stage &down) {
  const Target &t = m.target;
  const plan::StreamConfig st = t.streamConfig();
  plan::TaskRecord largest{};
  largest.opcode = uint16_t(plan::Opcode::Gemv);
  largest.aux[0] = uint32_t(down.cols);
  largest.rowEnd = uint32_t((down.units + t.workers - 1) / std::max(t.workers, 1u));
  const uint64_t scratch =
      uint64_t(plan::sharedFloatsFor(largest, t.threadsPerWorker, st.rowPartBytes)) *
      sizeof(float);
  const uint64_t schedule = plan::scheduleBytesFor(uint32_t(m.stages.size()));
  return scratch + st.ringFootprint() + schedule <= t.sharedBytesPerWorker;
}

/// Narrows the module's ring a stage at a time, down to the target's
/// stream_min_ring_bytes, until `down` fits beside it; leaves it as it was
/// when none does. Returns whether `down` fits now.
bool narrowRingFor(Module &m, const Stage &down) {
  Target &t = m.target;
  if (t.execution != plan::ExecutionModel::Stream || t.streamMinRingBytes == 0)
    return false;
  const uint32_t original = t.streamRingBytes;
  const uint32_t stage = t.streamStageBytes;
  // Whole stages: the ring's depth is ringBytes / stageBytes (Target::streamConfig).
  for (uint32_t ring = original / stage * stage - stage; ring >= t.streamMinRingBytes && ring >= 2 * stage;
       ring -= stage) {
    t.streamRingBytes = ring;
    if (downFits(m, down))
      return true;
  }
  t.streamRingBytes = original;
  return false;
}

class FuseFfn : public Pass {
public:
  FuseFfn() : Pass(PassId::FuseFfn) {}

  bool run(Module &m, DiagnosticEngine &diags) override {
    std::vector<Stage> out;
    for (unsigned i = 0; i < m.stages.size(); ++i) {
      Stage &up = m.stages[i];
      if (up.kind != StageKind::Gemv || !up.siluMul || up.matrix.size() != 2 ||
          i + 1 >= m.stages.size()) {
        out.push_back(std::move(up));
        continue;
      }
      Stage &down = m.stages[i + 1];
      std::vector<unsigned> readers = readersOf(m, up.output.buffer);
      if (down.kind != StageKind::Gemv || !down.residual.valid() || down.matrix.size() != 1 ||
          !sameSlice(down.input, up.output) || readers.size() != 1 || readers[0] != i + 1 ||
          down.cols != up.output.length || down.norm >= 0) {
        out.push_back(std::move(up));
        continue;
      }
      if (m.target.ffnForm == FfnForm::GateUp) {
        const uint32_t ringBefore = m.target.streamRingBytes;
        if (downFits(m, down) || narrowRingFor(m, down)) {
          if (m.target.streamRingBytes != ringBefore)
            count("ring-stages-narrowed", (ringBefore - m.target.streamRingBytes) / m.target.streamStageBytes);
          out.push_back(std::move(up)); // The down projection follows as it is.
          count("ffns-gate-up");
          continue;
        }
        count("ffns-partials-for-shared-memory");
      }
      // One partials buffer per layer: every element of a step has one writer.
      int partials = m.addBuffer("L" + std::to_string(up.layer) + ".ffn_partials",
                                 plan::BufferKind::Partials, 0); // Sized by layout.

      Stage ffn(StageKind::FfnPartial);
      ffn.name = "L" + std::to_string(up.layer) + ".ffn";
      ffn.layer = up.layer;
      ffn.loc = up.loc;
      ffn.input = up.input;
      ffn.norm = up.norm;
      ffn.eps = up.eps;
      ffn.matrix = {up.matrix[0], up.matrix[1], down.matrix[0]};
      ffn.cols = up.cols;
      ffn.units = up.output.length;
      ffn.output = Slice{partials, 0, 0};

      Stage reduce(StageKind::ReduceResidual);
      reduce.name = "L" + std::to_string(up.layer) + ".ffn_reduce";
      reduce.layer = up.layer;
      reduce.loc = down.loc;
      reduce.input = Slice{partials, 0, 0};
      reduce.residual = down.residual;
      reduce.output = down.output;
      reduce.units = down.output.length;

      out.push_back(std::move(ffn));
      out.push_back(std::move(reduce));
      ++i; // The down projection is consumed.
      count("ffns-fused");
    }
    m.stages = std::move(out);
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> ti::createFuseFfnPass() { return std::make_unique<FuseFfn>(); }
