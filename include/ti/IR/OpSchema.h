//===- OpSchema.h - Operand, attribute and type rules of graph ops -*- C++ -*-===//
//
// One place says what each graph op accepts and what it produces. The builder
// uses it to type ops as it creates them; the verifier uses it to re-check a
// whole graph (one built in memory, or one a pass rewrote).
//
//===----------------------------------------------------------------------===//
#ifndef TI_IR_OPSCHEMA_H
#define TI_IR_OPSCHEMA_H

#include "ti/IR/Diagnostics.h"
#include "ti/IR/Graph.h"

#include <optional>

namespace ti {

/// Checks `op`'s operands and attributes against its op's rules and returns the
/// type of its result. Reports every violation (at the operand or attribute
/// that is wrong) and returns nullopt if there was one.
std::optional<TensorType> inferOpType(const Graph &graph, const Op &op,
                                      DiagnosticEngine &diags);

} // namespace ti

#endif // TI_IR_OPSCHEMA_H
