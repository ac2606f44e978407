//===- Printer.h - Canonical text of a graph and of the Graph IR -*- C++ -*-===//
//
// printGraphAST writes the canonical form of a program (`tic --emit=graph`):
// two-space indentation, one statement per line, expressions with the fewest
// parentheses, numbers in their shortest exact spelling, comments dropped.
// Parsing the output and printing again gives the same text.
//
// printGraphIR writes the elaborated graph (`tic --emit=graph-ir`): every value
// typed, loops unrolled, checkpoint names substituted. For tests and for
// reading what the compiler sees; it is not parsed back.
//
//===----------------------------------------------------------------------===//
#ifndef TI_IR_PRINTER_H
#define TI_IR_PRINTER_H

#include "ti/IR/AST.h"
#include "ti/IR/Graph.h"

#include "llvm/Support/raw_ostream.h"

namespace ti {

void printGraphAST(const ast::GraphAST &graph, llvm::raw_ostream &os);
void printExpr(const ast::Expr &expr, llvm::raw_ostream &os);
void printGraphIR(const Graph &graph, llvm::raw_ostream &os);

/// Parameter and byte counts of a graph's weights (`tic --stats`).
void printGraphStats(const Graph &graph, llvm::raw_ostream &os);

/// 1235814400 -> "1,235,814,400"
std::string withThousands(uint64_t n);

} // namespace ti

#endif // TI_IR_PRINTER_H
