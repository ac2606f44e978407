//===- Compile.h - Run the front end on a string, for unit tests -*- C++ -*-===//
#ifndef TI_TEST_UNIT_IR_COMPILE_H
#define TI_TEST_UNIT_IR_COMPILE_H

#include "ti/IR/Diagnostics.h"
#include "ti/IR/GraphBuilder.h"
#include "ti/IR/GraphParser.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>

namespace ti::test {

/// Owns the source and everything made from it; diagnostics are captured as text.
struct Compilation {
  explicit Compilation(const std::string &text, const std::string &name = "test.graph")
      : os(diagText), diags(sourceMgr, os) {
    sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name),
                                 llvm::SMLoc());
  }

  /// Parses; returns false (with diagnostics in diagText) on a syntax error.
  bool parse() {
    ast = parseGraph(diags);
    os.flush();
    return ast != nullptr;
  }

  /// Parses and elaborates.
  bool build() {
    if (!parse())
      return false;
    graph = buildGraph(*ast, diags);
    os.flush();
    return graph.has_value();
  }

  /// The diagnostics printed so far.
  const std::string &diagnostics() {
    os.flush();
    return diagText;
  }

  llvm::SourceMgr sourceMgr;
  std::string diagText;
  llvm::raw_string_ostream os;
  DiagnosticEngine diags;
  std::unique_ptr<ast::GraphAST> ast;
  std::optional<Graph> graph;
};

} // namespace ti::test

#endif // TI_TEST_UNIT_IR_COMPILE_H
