//===- GraphVerifier.h - Invariants of the Graph IR -------------*- C++ -*-===//
//
// Checks a whole Graph: every op well typed (OpSchema), SSA order (a value is
// defined before it is used), unique names and checkpoint tensors, outputs
// present, and the decode-step rules the compiler relies on (token ids and
// positions come straight from graph inputs). GraphBuilder runs it last; tests
// and passes run it on graphs they build or rewrite.
//
//===----------------------------------------------------------------------===//
#ifndef TI_IR_GRAPHVERIFIER_H
#define TI_IR_GRAPHVERIFIER_H

#include "ti/IR/Diagnostics.h"
#include "ti/IR/Graph.h"

namespace ti {

/// Returns true if the graph is valid; reports each violation otherwise.
[[nodiscard]] bool verifyGraph(const Graph &graph, DiagnosticEngine &diags);

} // namespace ti

#endif // TI_IR_GRAPHVERIFIER_H
