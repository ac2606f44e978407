//===- GraphBuilder.h - Syntax tree to Graph IR -----------------*- C++ -*-===//
//
// Elaboration: resolves names, evaluates dims and attributes, substitutes loop
// variables into checkpoint names, unrolls `for`, and types every op through
// OpSchema. Every mistake in the program that is not a syntax error is reported
// here, at its location.
//
// Scoping: dims, attrs and inputs live at graph scope. Each iteration of a `for`
// body is a new scope for its weights and values. Assigning, inside a loop body,
// to a value of an enclosing scope rebinds it: the new value is what the next
// iteration and the code after the loop see (this is how the residual stream `x`
// flows through the layers). A name is defined at most once per scope, and never
// shadows a name of an enclosing scope.
//
//===----------------------------------------------------------------------===//
#ifndef TI_IR_GRAPHBUILDER_H
#define TI_IR_GRAPHBUILDER_H

#include "ti/IR/AST.h"
#include "ti/IR/Diagnostics.h"
#include "ti/IR/Graph.h"

#include <optional>

namespace ti {

/// Builds the Graph IR; returns nullopt if any error was reported.
std::optional<Graph> buildGraph(const ast::GraphAST &ast, DiagnosticEngine &diags);

} // namespace ti

#endif // TI_IR_GRAPHBUILDER_H
