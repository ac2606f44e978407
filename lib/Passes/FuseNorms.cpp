//===- FuseNorms.cpp - RMSNorm into its GEMVs (fuse-norms) ----------------===//
//
// An RMSNorm is a reduction over the whole hidden vector: as a stage of its own
// it costs a wave and a grid barrier for 4 KB of work. Every GEMV task reads the
// whole input vector anyway, so it can recompute the norm itself (the post's
// "each task recomputes the RMSNorm"): the price is re-reading the norm's scale
// (hidden x 2 bytes) once per task, which `tic --stats` reports.
//
// 1. For each RmsNorm stage, find every stage that reads its output.
// 2. If all of them are GEMVs (Gemv or LmHead) that read exactly that output
//    as their input, and none has a norm yet: give each one the norm's scale
//    and eps, point its input at the norm's input, and delete the RmsNorm.
// 3. Otherwise leave it; codegen rejects a standalone RmsNorm with the reason.
//
//===----------------------------------------------------------------------===//
#include "StageUses.h"

#include "ti/Passes/Passes.h"

using namespace ti;
using namespace ti::tir;

namespace {

class FuseNorms : public Pass {
public:
  FuseNorms() : Pass(PassId::FuseNorms) {}

  bool run(Module &m, DiagnosticEngine &diags) override {
    std::vector<bool> dead(m.stages.size());
    for (unsigned i = 0; i < m.stages.size(); ++i) {
      const Stage &norm = m.stages[i];
      if (norm.kind != StageKind::RmsNorm || isGraphOutput(m, norm.output.buffer))
        continue;
      std::vector<unsigned> readers = readersOf(m, norm.output.buffer);
      bool fusable = !readers.empty();
      for (unsigned r : readers) {
        const Stage &s = m.stages[r];
        fusable &= (s.kind == StageKind::Gemv || s.kind == StageKind::LmHead) &&
                   sameSlice(s.input, norm.output) && s.norm < 0 &&
                   !(s.residual.valid() && s.residual.buffer == norm.output.buffer);
      }
      if (!fusable)
        continue;
      for (unsigned r : readers) {
        Stage &s = m.stages[r];
        s.norm = norm.norm;
        s.eps = norm.eps;
        s.input = norm.input;
      }
      dead[i] = true;
      count("norms-fused");
      count("consumers", readers.size());
    }
    eraseStages(m, dead);
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> ti::createFuseNormsPass() { return std::make_unique<FuseNorms>(); }
