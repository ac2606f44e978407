//===- PlanBuilder.h - Task IR to plan --------------------------*- C++ -*-===//
//
// Turns a fully lowered module (after the default pipeline) into a plan::Plan:
// one wave per stage, one TaskRecord per task with every operand resolved to a
// byte offset, the parameters (norm eps, softmax scale, RoPE frequencies) in the
// plan's float table, the model's sizes and token ids from the graph.
//
//===----------------------------------------------------------------------===//
#ifndef TI_CODEGEN_PLANBUILDER_H
#define TI_CODEGEN_PLANBUILDER_H

#include "ti/IR/Diagnostics.h"
#include "ti/IR/TaskIR.h"
#include "ti/Plan/Plan.h"

#include <optional>

namespace ti {

/// Returns nullopt after reporting why the module cannot become a plan.
std::optional<plan::Plan> buildPlan(const tir::Module &module, DiagnosticEngine &diags);

} // namespace ti

#endif // TI_CODEGEN_PLANBUILDER_H
