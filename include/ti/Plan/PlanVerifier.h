//===- PlanVerifier.h - Semantic checks of a decode plan --------*- C++ -*-===//
//
// The second layer of plan loading (the FlatBuffers verifier proves bounds of
// the file only): the structure of the plan, the weights layout and the arena's
// buffers, that every task touches memory inside the right buffer or tensor,
// and, in both attention modes, that the waves and barriers order every write
// before its reads with a single writer per byte. The compiler runs it on what
// it emits; the runtime runs it on what it loads. PlanVerifier.cpp lists the
// checks. No LLVM here.
//
// Every message is one line naming what is wrong and where; a task is named as
// `task #INDEX (OPCODE on worker W, wave N 'WAVENAME')`.
//
//===----------------------------------------------------------------------===//
#ifndef TI_PLAN_PLANVERIFIER_H
#define TI_PLAN_PLANVERIFIER_H

#include "ti/Plan/Plan.h"
#include "ti/Support/Status.h"

#include <cstddef>
#include <string>
#include <vector>

namespace ti::plan {

/// Ok, or the first violation found.
Status verifyPlan(const Plan &plan);

/// Up to `maxErrors` violations, in the order of the checks; empty if the
/// plan is valid.
std::vector<std::string> verifyPlanAll(const Plan &plan, size_t maxErrors = 20);

} // namespace ti::plan

#endif // TI_PLAN_PLANVERIFIER_H
