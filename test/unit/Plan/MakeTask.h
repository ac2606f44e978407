//===- MakeTask.h - A task record with nothing set, for plan tests -*- C++ -*-===//
#ifndef TI_TEST_UNIT_PLAN_MAKETASK_H
#define TI_TEST_UNIT_PLAN_MAKETASK_H

#include "ti/Plan/TaskRecord.h"

namespace ti::plan::test {

/// A task of `op` on `worker` in `wave` whose operands, layer, parameter and
/// weights are all "none": each test sets what its case needs.
inline TaskRecord makeTask(Opcode op, uint16_t worker, uint16_t wave = 0) {
  TaskRecord t{};
  t.opcode = static_cast<uint16_t>(op);
  t.worker = worker;
  t.wave = wave;
  t.layer = kNone32;
  t.param = kNone32;
  t.weight = t.norm = kNone;
  t.in[0] = t.in[1] = t.in[2] = kNone;
  t.out[0] = t.out[1] = kNone;
  return t;
}

} // namespace ti::plan::test

#endif // TI_TEST_UNIT_PLAN_MAKETASK_H
