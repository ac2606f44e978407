//===- TileWeights.cpp - GEMV weights in octet tiles (tile-weights) -------===//
//
// The stream worker's consumers multiply weights that are stored in octet
// tiles (ti/Plan/WeightTiles.h) on the tensor cores, eight rows at a time,
// with no per-row butterfly: where the target asks for it
// (stream_weight_tiles), this pass chooses the stages whose weights go in
// tiles. balance-rows then cuts their rows in whole octets, layout packs
// them tiled and codegen marks their tasks kFlagTiledWeights.
//
// 1. A Plain target, one without stream_weight_tiles, or one whose stage is
//    not whole tiles (an octet streams in pieces of a stage): nothing is
//    tiled.
// 2. A Gemv stage (a SiLU*up one too) is tiled when its K is a multiple of
//    32 and every stacked matrix's rows are whole octets, so that every
//    task's rows are (balance-rows cuts at octets, and a stack's matrices
//    start at octet boundaries of the stacked rows). The lm_head keeps its
//    rows: the embedding it shares with the token's row gather stays
//    row-major.
//
// Counters: stages-tiled, stages-untiled (Gemv stages that stay row-major).
//
//===----------------------------------------------------------------------===//
#include "ti/Passes/Passes.h"
#include "ti/Plan/WeightTiles.h"

using namespace ti;
using namespace ti::tir;

namespace {

bool tileable(const Stage &s) {
  if (s.kind != StageKind::Gemv || s.cols % plan::kTileCols || s.matrix.empty())
    return false;
  for (const WeightRows &w : s.matrix)
    if (!plan::tileable(w.rows(), s.cols))
      return false;
  return true;
}

class TileWeights : public Pass {
public:
  TileWeights() : Pass(PassId::TileWeights) {}

  bool run(Module &m, DiagnosticEngine &) override {
    // Pieces of an octet are whole tiles: a stage of other sizes keeps rows.
    const bool wanted = m.target.execution == plan::ExecutionModel::Stream &&
                        m.target.streamWeightTiles &&
                        m.target.streamStageBytes % plan::kTileBytes == 0;
    for (Stage &s : m.stages) {
      s.tiled = false;
      if (s.kind != StageKind::Gemv)
        continue;
      s.tiled = wanted && tileable(s);
      count(s.tiled ? "stages-tiled" : "stages-untiled");
    }
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> ti::createTileWeightsPass() { return std::make_unique<TileWeights>(); }
