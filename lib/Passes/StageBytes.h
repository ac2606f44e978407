//===- StageBytes.h - What a stage's tasks stream, for placement -*- C++ -*-===//
//
// balance-rows cuts a stage into tasks of equal bytes and assign-workers
// balances the bytes each worker streams over the step; both count the same
// bytes: a unit's weights (a row, or a gate and an up row, or an FFN
// partial's gate, up and down rows) and what every task reads regardless (a
// fused norm's scale).
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_PASSES_STAGEBYTES_H
#define TI_LIB_PASSES_STAGEBYTES_H

#include "ti/IR/TaskIR.h"
#include "ti/Plan/TaskRecord.h"

#include <cstdint>
#include <utility>

namespace ti::tir {

/// Bytes a task of `s` streams per unit (row), and the bytes every task reads.
inline std::pair<uint64_t, uint64_t> unitBytes(const Stage &s) {
  const uint64_t w = plan::kWeightBytes;
  uint64_t norm = s.norm >= 0 ? s.cols * w : 0;
  switch (s.kind) {
  case StageKind::Embed: return {2, 0};
  case StageKind::Gemv: return {(s.siluMul ? 2 : 1) * s.cols * w, norm}; // Gate and up rows.
  case StageKind::LmHead: return {s.cols * w, norm};
  case StageKind::FfnPartial: return {3 * s.cols * w, norm};
  case StageKind::ReduceResidual: return {4, 0}; // No weights: balance the partials read.
  default: return {1, 0};
  }
}

/// Whether the stage's tasks stream weights (the stages whose placement
/// balances the workers' bytes).
inline bool streamsWeights(const Stage &s) {
  return s.kind == StageKind::Gemv || s.kind == StageKind::LmHead || s.kind == StageKind::FfnPartial;
}

/// The weight bytes task `t` of a weight-streaming stage `s` reads.
inline uint64_t taskWeightBytes(const Stage &s, const Task &t) {
  auto [unit, common] = unitBytes(s);
  return t.rows() * unit + common;
}

} // namespace ti::tir

#endif // TI_LIB_PASSES_STAGEBYTES_H
