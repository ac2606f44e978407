//===- PlanTextPrinter.h - A plan as text, for FileCheck --------*- C++ -*-===//
//
// The text of a plan is what lit tests check (`tic --emit=plan-text`,
// `tic --dump-plan`), so it is stable and deterministic: no pointers, numbers
// in decimal, one item per line, tasks sorted. It reads:
//
//   plan format_version=2
//   model NAME vocab=.. hidden=.. ... eos=[a, b] rms_eps=1e-05
//   target NAME arch=sm_90 workers=.. ... [fingerprint=..]
//   attention split_context=..
//   weights bytes=.. layout_hash=<16 hex digits> tensors=N
//   arena bytes=.. buffers=N
//   params [v0, v1, ...]
//   weight NAME offset=.. bytes=.. <- CKPT[r0:r1, c0:c1] + CKPT[..]T
//   buffer NAME kind=KIND offset=.. bytes=..
//   wave N NAME barrier=KIND tasks=T
//     task W.I OPCODE rows=[b, e) layer=L weight=T+off/bytes norm=T+off
//          in=BUF+off,.. out=BUF+off,.. aux=a,b heads=H kv_heads=K head_dim=D
//          chunks=C param=P flags=residual|vcache
//
// (the task is one line). W.I is worker W's I-th task of the wave; a wave's
// tasks are sorted by worker, then plan order. Fields that mean "none" (kNone,
// an empty row range, zero aux, geometry fields and flags) are left out. Arena
// offsets are printed relative to the buffer that holds them and weights
// offsets relative to their packed tensor; an offset outside all of them
// prints as @0x...
//
// The printer accepts any Plan, valid or not: it is also how a bad plan is
// looked at.
//
//===----------------------------------------------------------------------===//
#ifndef TI_PLAN_PLANTEXTPRINTER_H
#define TI_PLAN_PLANTEXTPRINTER_H

#include "ti/Plan/Plan.h"

#include <ostream>

namespace ti::plan {

void printPlanText(const Plan &plan, std::ostream &os);

} // namespace ti::plan

#endif // TI_PLAN_PLANTEXTPRINTER_H
