//===- GraphParser.h - Text to syntax tree ----------------------*- C++ -*-===//
//
// A recursive-descent parser for the grammar in AST.h. On a syntax error it
// reports `file:line:col: error: ...` and resumes at the next line that starts a
// statement, so one run reports several independent mistakes.
//
//===----------------------------------------------------------------------===//
#ifndef TI_IR_GRAPHPARSER_H
#define TI_IR_GRAPHPARSER_H

#include "ti/IR/AST.h"
#include "ti/IR/Diagnostics.h"

#include <memory>

namespace ti {

/// Parses the main buffer of the engine's SourceMgr. Returns null if any error
/// was reported (every error has been printed by then).
std::unique_ptr<ast::GraphAST> parseGraph(DiagnosticEngine &diags);

} // namespace ti

#endif // TI_IR_GRAPHPARSER_H
