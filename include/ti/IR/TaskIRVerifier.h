//===- TaskIRVerifier.h - Structural checks of the task IR ------*- C++ -*-===//
//
// What must hold of a module between any two passes: every slice inside its
// buffer, every stage's tasks tiling its units in order, every worker in the
// target's range. The pass manager runs it after each pass with
// --verify-each (on by default in debug builds). The plan verifier
// (ti/Plan/PlanVerifier.h) checks the finished plan far more closely.
//
//===----------------------------------------------------------------------===//
#ifndef TI_IR_TASKIRVERIFIER_H
#define TI_IR_TASKIRVERIFIER_H

#include "ti/IR/Diagnostics.h"
#include "ti/IR/TaskIR.h"

namespace ti {

/// Reports each problem at its stage's graph op; false if there was one.
[[nodiscard]] bool verifyModule(const tir::Module &module, DiagnosticEngine &diags);

} // namespace ti

#endif // TI_IR_TASKIRVERIFIER_H
