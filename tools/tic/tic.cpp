//===- tic.cpp - The TileInfer compiler driver ----------------------------===//
//
//   tic model.graph --emit=graph        canonical form of the program
//   tic model.graph --emit=graph-ir     the elaborated graph (loops unrolled)
//   tic model.graph --stats             parameters and bytes per dtype
//   tic - ...                           reads the graph from standard input
//
// Exit status: 0 on success, 1 on any error (each printed as
// file:line:col: error: ...).
//
//===----------------------------------------------------------------------===//
#include "ti/IR/Diagnostics.h"
#include "ti/IR/GraphBuilder.h"
#include "ti/IR/GraphParser.h"
#include "ti/IR/Printer.h"
#include "ti/Support/AtomicFile.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <map>

namespace {

enum class Emit { None, Graph, GraphIR };

struct Options {
  std::string input;
  std::string output = "-";
  Emit emit = Emit::None;
  bool stats = false;
};

int fail(const llvm::Twine &message) {
  llvm::errs() << "tic: error: " << message << "\n";
  return 1;
}

int run(const Options &opts) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(opts.input, /*IsText=*/true);
  if (std::error_code ec = buffer.getError())
    return fail("cannot read '" + opts.input + "': " + ec.message());
  // Diagnostics name standard input "<stdin>".
  std::unique_ptr<llvm::MemoryBuffer> source = std::move(*buffer);
  if (opts.input == "-")
    source = llvm::MemoryBuffer::getMemBufferCopy(source->getBuffer(), "<stdin>");

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(source), llvm::SMLoc());
  ti::DiagnosticEngine diags(sourceMgr);

  auto ast = ti::parseGraph(diags);
  if (!ast)
    return 1;
  auto graph = ti::buildGraph(*ast, diags);
  if (!graph)
    return 1;

  std::string text;
  llvm::raw_string_ostream os(text);
  switch (opts.emit) {
  case Emit::Graph: ti::printGraphAST(*ast, os); break;
  case Emit::GraphIR: ti::printGraphIR(*graph, os); break;
  case Emit::None: break;
  }
  if (opts.stats)
    ti::printGraphStats(*graph, os);
  os.flush();
  if (opts.emit == Emit::None && !opts.stats)
    return 0;
  std::string error = ti::writeFileAtomically(opts.output, text);
  if (!error.empty())
    return fail(error);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"tic: compiles a model graph into a decode plan"};
  Options opts;
  app.add_option("input", opts.input, "the model graph ('-' for standard input)")->required();
  app.add_option("-o,--output", opts.output, "where to write what --emit/--stats print")
      ->default_str("-");
  std::map<std::string, Emit> emits{{"graph", Emit::Graph}, {"graph-ir", Emit::GraphIR}};
  app.add_option("--emit", opts.emit, "what to print: graph (canonical source), graph-ir")
      ->transform(CLI::CheckedTransformer(emits, CLI::ignore_case));
  app.add_flag("--stats", opts.stats, "print parameter and byte counts");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    app.exit(e);
    return 0;
  } catch (const CLI::ParseError &e) {
    llvm::errs() << "tic: error: " << e.what() << "\n";
    return 1;
  }
  return run(opts);
}
