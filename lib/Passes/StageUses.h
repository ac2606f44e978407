//===- StageUses.h - Who reads what, for the fusion passes ------*- C++ -*-===//
#ifndef TI_LIB_PASSES_STAGEUSES_H
#define TI_LIB_PASSES_STAGEUSES_H

#include "ti/IR/TaskIR.h"

#include <vector>

namespace ti::tir {

/// The slices a stage reads (input, input2, input3, residual), valid or not.
inline std::vector<const Slice *> readSlices(const Stage &s) {
  return {&s.input, &s.input2, &s.input3, &s.residual};
}

/// Indices of the stages that read any element of `buffer`.
inline std::vector<unsigned> readersOf(const Module &m, int buffer) {
  std::vector<unsigned> readers;
  for (unsigned i = 0; i < m.stages.size(); ++i)
    for (const Slice *s : readSlices(m.stages[i]))
      if (s->valid() && s->buffer == buffer) {
        readers.push_back(i);
        break;
      }
  return readers;
}

inline bool sameSlice(const Slice &a, const Slice &b) {
  return a.buffer == b.buffer && a.offset == b.offset && a.length == b.length;
}

/// Whether `s` is the whole output of stage `producer`.
inline bool isWholeOutput(const Stage &producer, const Slice &s) {
  return sameSlice(producer.output, s);
}

/// Whether a graph output lives in `buffer`: such a buffer must stay.
inline bool isGraphOutput(const Module &m, int buffer) {
  for (const Stage &s : m.stages)
    if (s.kind == StageKind::Argmax && s.input.buffer == buffer)
      return true;
  return m.buffers[buffer].kind == plan::BufferKind::Logits;
}

/// Removes the stages marked in `dead`, keeping the order of the rest.
inline void eraseStages(Module &m, const std::vector<bool> &dead) {
  std::vector<Stage> kept;
  for (unsigned i = 0; i < m.stages.size(); ++i)
    if (!dead[i])
      kept.push_back(std::move(m.stages[i]));
  m.stages = std::move(kept);
}

} // namespace ti::tir

#endif // TI_LIB_PASSES_STAGEUSES_H
