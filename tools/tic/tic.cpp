//===- tic.cpp - The TileInfer compiler driver ----------------------------===//
//
//   tic model.graph --target h200 -o plan.fb   compile a plan
//   tic model.graph --stats                    graph and plan statistics
//   tic model.graph --emit=graph|graph-ir      the front end's views
//   tic model.graph --emit=task-ir|plan-text   the compiler's views
//   tic --target h200 --emit=target            a target as JSON, to edit for --target-file
//   tic --dump-plan plan.fb                    a plan file as text
//   tic - ...                                  reads the graph from standard input
//
// Exit status: 0 on success, 1 on any error (each printed as
// file:line:col: error: ... where it concerns the graph).
//
//===----------------------------------------------------------------------===//
#include "ti/Support/CommandLineChecks.h"
#include "ti/Plan/WeightTiles.h"
#include "ti/Codegen/PlanBuilder.h"
#include "ti/Codegen/PlanStats.h"
#include "ti/IR/Diagnostics.h"
#include "ti/IR/GraphBuilder.h"
#include "ti/IR/GraphParser.h"
#include "ti/IR/Printer.h"
#include "ti/Passes/PassManager.h"
#include "ti/Passes/Passes.h"
#include "ti/Plan/PlanFile.h"
#include "ti/Plan/PlanTextPrinter.h"
#include "ti/Plan/PlanVerifier.h"
#include "ti/Support/AtomicFile.h"
#include "ti/Target/Target.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

namespace {

enum class Emit { None, Graph, GraphIR, TaskIR, PlanText, Target };

struct Options {
  std::string input;
  std::string output;
  Emit emit = Emit::None;
  bool stats = false;
  std::string target = "h200";
  std::string targetFile;
  uint32_t maxContext = 0;         // 0: the default (see run()).
  uint32_t attentionSplitContext = 0;
  std::string execution; // Empty: the target's.
  std::string ffnForm;   // Empty: the target's.
  std::string handOffs;  // Empty: the target's.
  std::optional<uint32_t> streamKvContext; // Unset: the target's.
  std::optional<uint32_t> shortMmaContext;  // Unset: the target's.
  std::string weightTiles; // Empty: the target's.
  std::string spreadWeightWaves; // Empty: the target's.
  std::string passes;
  std::vector<std::string> printAfter;
  bool printAfterAll = false;
  bool verifyEach = false;
  bool passStats = false;
  std::string dumpPlan;
};

constexpr uint32_t kDefaultMaxContext = 8192;

int fail(const llvm::Twine &message) {
  llvm::errs() << "tic: error: " << message << "\n";
  return 1;
}

int dumpPlanFile(const std::string &path) {
  auto plan = ti::plan::readPlanFile(path);
  if (!plan)
    return fail(plan.status().message());
  if (ti::Status s = ti::plan::verifyPlan(*plan); !s.ok())
    return fail("'" + path + "': " + s.message());
  std::ostringstream os;
  ti::plan::printPlanText(*plan, os);
  llvm::outs() << os.str();
  return 0;
}

std::nullopt_t noTarget(const llvm::Twine &message) {
  fail(message);
  return std::nullopt;
}

// The target: built-in or from a file, then the command line's overrides.
// Prints what is wrong and returns nothing when one of them is.
std::optional<ti::Target> resolveTarget(const Options &opts) {
  ti::StatusOr<ti::Target> found = opts.targetFile.empty() ? ti::builtinTarget(opts.target)
                                                           : ti::readTargetFile(opts.targetFile);
  if (!found)
    return noTarget(found.status().message());
  std::optional<ti::Target> target = std::move(*found);
  if (!opts.execution.empty()) {
    const auto model = opts.execution == "stream" ? ti::plan::ExecutionModel::Stream
                                                  : ti::plan::ExecutionModel::Plain;
    if (model == ti::plan::ExecutionModel::Stream && target->arch != ti::plan::kStreamArch)
      return noTarget(llvm::Twine("--execution stream needs an ") + ti::plan::kStreamArch +
                      " target (the bulk-copy engine); '" + target->name + "' is " + target->arch);
    // Switching the model takes the new model's choices (Target::withExecution);
    // naming the target's own model keeps the target's, explicit keys included.
    if (model != target->execution)
      *target = target->withExecution(model);
  }
  if (!opts.ffnForm.empty() && !ti::parseFfnForm(opts.ffnForm, target->ffnForm))
    return noTarget("--ffn-form: '" + opts.ffnForm + "' is not partials or gate_up");
  if (!opts.handOffs.empty() && !ti::parseHandOffs(opts.handOffs, target->handOffs))
    return noTarget("--hand-offs: '" + opts.handOffs + "' is not grid or tags");
  // After the model switch, which takes the stream worker's own choice.
  if (opts.attentionSplitContext) { // The split of every plan, short mode's form whatever.
    target->attentionSplitContext = opts.attentionSplitContext;
    target->shortMmaSplitContext = 0;
  }
  if (opts.streamKvContext)
    target->streamKvContext = *opts.streamKvContext;
  if (opts.shortMmaContext)
    target->shortMmaContext = *opts.shortMmaContext;
  if (!opts.weightTiles.empty()) {
    target->streamWeightTiles = opts.weightTiles == "on";
    if (target->streamWeightTiles && target->streamStageBytes % ti::plan::kTileBytes)
      return noTarget("--weight-tiles on: the target's stage of " +
                      llvm::Twine(target->streamStageBytes) + " bytes is not whole tiles of " +
                      llvm::Twine(ti::plan::kTileBytes));
  }

  if (!opts.spreadWeightWaves.empty())
    target->spreadWeightWaves = opts.spreadWeightWaves == "on";
  return target;
}

int run(const Options &opts) {
  if (!opts.dumpPlan.empty())
    return dumpPlanFile(opts.dumpPlan);
  if (opts.emit == Emit::Target) { // Needs no graph: a file to edit for --target-file.
    std::optional<ti::Target> target = resolveTarget(opts);
    if (!target)
      return 1;
    std::string error = ti::writeFileAtomically(opts.output.empty() ? "-" : opts.output,
                                                ti::targetToJson(*target));
    return error.empty() ? 0 : fail(error);
  }
  if (opts.input.empty())
    return fail("no input graph (see --help)");

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(opts.input, /*IsText=*/true);
  if (std::error_code ec = buffer.getError())
    return fail("cannot read '" + opts.input + "': " + ec.message());
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
  auto finish = [&]() {
    os.flush();
    if (text.empty())
      return 0;
    std::string error = ti::writeFileAtomically(opts.output.empty() ? "-" : opts.output, text);
    return error.empty() ? 0 : fail(error);
  };

  // The front end's views need no target.
  if (opts.emit == Emit::Graph || opts.emit == Emit::GraphIR) {
    if (opts.emit == Emit::Graph)
      ti::printGraphAST(*ast, os);
    else
      ti::printGraphIR(*graph, os);
    if (opts.stats)
      ti::printGraphStats(*graph, os);
    return finish();
  }

  std::optional<ti::Target> target = resolveTarget(opts);
  if (!target)
    return 1;

  ti::tir::Module module;
  module.graph = &*graph;
  module.target = *target;
  int64_t graphMax = kDefaultMaxContext;
  if (const ti::NamedAttr *a = graph->findAttr("max_context"); a && a->value.kind == ti::AttrValue::Kind::Int)
    graphMax = a->value.i;
  module.maxContext = opts.maxContext ? opts.maxContext
                                      : static_cast<uint32_t>(std::min<int64_t>(graphMax, kDefaultMaxContext));
  if (module.maxContext > graphMax)
    return fail("--max-context " + llvm::Twine(module.maxContext) + " exceeds the graph's max_context " +
                llvm::Twine(graphMax));

  ti::PassManager pm;
  std::vector<std::string> names = ti::defaultPipeline();
  if (!opts.passes.empty()) {
    names.clear();
    for (llvm::StringRef n : llvm::split(opts.passes, ','))
      names.push_back(n.trim().str());
  }
  std::string error;
  if (!pm.addByNames(names, error))
    return fail(error);
  const std::vector<std::string> known = ti::defaultPipeline();
  for (const std::string &n : opts.printAfter) {
    if (std::find(known.begin(), known.end(), n) == known.end())
      return fail("--print-after: unknown pass '" + n + "'");
    pm.printAfter(n);
  }
  pm.setPrintAfterAll(opts.printAfterAll);
  if (opts.verifyEach)
    pm.setVerifyEach(true);
  pm.setPrintStream(llvm::outs());
  if (!pm.run(module, diags))
    return 1;
  if (opts.passStats)
    pm.printStatistics(os);
  if (!opts.passes.empty()) {
    // A partial pipeline: its module is all there is to show.
    if (opts.emit == Emit::TaskIR)
      ti::tir::printModule(module, os);
    return finish();
  }

  auto plan = ti::buildPlan(module, diags);
  if (!plan)
    return 1;
  std::vector<std::string> problems = ti::plan::verifyPlanAll(*plan);
  for (const std::string &p : problems)
    llvm::errs() << "tic: error: the plan does not verify: " << p << "\n";
  if (!problems.empty())
    return 1;

  if (!opts.output.empty() && opts.emit == Emit::None && !opts.stats) {
    if (ti::Status s = ti::plan::writePlanFile(*plan, opts.output); !s.ok())
      return fail(s.message());
    return 0;
  }
  if (opts.emit == Emit::TaskIR)
    ti::tir::printModule(module, os);
  std::ostringstream planText;
  if (opts.emit == Emit::PlanText)
    ti::plan::printPlanText(*plan, planText);
  if (opts.stats) {
    ti::printGraphStats(*graph, os);
    ti::printPlanStats(*plan, planText);
  }
  os << planText.str();
  return finish();
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"tic: compiles a model graph into a decode plan"};
  Options opts;
  app.add_option("input", opts.input, "the model graph ('-' for standard input)");
  app.add_option("-o,--output", opts.output,
                 "the plan file to write; with --emit or --stats, where to print");
  std::map<std::string, Emit> emits{{"graph", Emit::Graph},
                                    {"graph-ir", Emit::GraphIR},
                                    {"task-ir", Emit::TaskIR},
                                    {"plan-text", Emit::PlanText},
                                    {"target", Emit::Target}};
  app.add_option("--emit", opts.emit,
                 "print: graph, graph-ir, task-ir, plan-text, or target (the target after the "
                 "command line's choices, as JSON for --target-file; needs no graph)")
      ->transform(CLI::CheckedTransformer(emits, CLI::ignore_case));
  app.add_flag("--stats", opts.stats, "print graph and plan statistics");
  app.add_option("--target", opts.target, "a built-in target: h200 (default), rtx3050");
  app.add_option("--target-file", opts.targetFile, "a target description (JSON, from tirun probe)");
  app.add_option("--max-context", opts.maxContext,
                 "positions the K/V cache holds (default: the graph's max_context, at most 8192)");
  app.add_option("--attention-split-context", opts.attentionSplitContext,
                 "override the target's context above which attention runs in chunks (in every "
                 "plan: the target's short_mma_split_context no longer applies)");
  app.add_option("--ffn-form", opts.ffnForm,
                 "the MLP's form: partials (FFN partial sums and a reduce wave) or gate_up "
                 "(a silu(gate)*up wave, then the down projection) (default: the target's)")
      ->check(CLI::IsMember({"partials", "gate_up"}));
  app.add_option("--stream-kv-context", opts.streamKvContext,
                 "override the target's context above which the stream worker's attention takes "
                 "its cached K/V rows through the weight stream (0: every step in chunks)");
  app.add_option("--short-mma-context", opts.shortMmaContext,
                 "override the target's context above which the stream worker's short-mode "
                 "attention streams its cached K/V rows too, scoring them on the tensor cores "
                 "(0: never)");
  app.add_option("--weight-tiles", opts.weightTiles,
                 "whether the stream worker's GEMV weights go in octet tiles for the tensor cores "
                 "(on or off; default: the target's)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--spread-weight-waves", opts.spreadWeightWaves,
                 "whether every weight wave runs on all the workers it can use, each worker's bytes "
                 "balanced over the step (on or off; default: the target's)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--hand-offs", opts.handOffs,
                 "how a wave hands its outputs on: grid (a grid barrier after it) or tags (tagged "
                 "values each reader waits for) (default: the target's)")
      ->check(CLI::IsMember({"grid", "tags"}));
  app.add_option("--execution", opts.execution,
                 "the worker's execution model: plain or stream (default: the target's)")
      ->check(CLI::IsMember({"plain", "stream"}));
  app.add_option("--passes", opts.passes, "run only these passes (comma-separated), then stop");
  app.add_option("--print-after", opts.printAfter, "print the task IR after this pass");
  app.add_flag("--print-after-all", opts.printAfterAll, "print the task IR after every pass");
  app.add_flag("--verify-each", opts.verifyEach, "check the task IR after every pass");
  app.add_flag("--pass-stats", opts.passStats, "print each pass's counters");
  app.add_option("--dump-plan", opts.dumpPlan, "read a plan file, verify it and print it as text");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    app.exit(e);
    return 0;
  } catch (const CLI::ParseError &e) {
    llvm::errs() << "tic: error: " << e.what() << "\n";
    return 1;
  }
  if (app.count("--output"))
    if (std::string e = ti::checkOutputPath("-o", opts.output, {opts.input, opts.targetFile, opts.dumpPlan});
        !e.empty()) {
      llvm::errs() << "tic: error: " << e << "\n";
      return 1;
    }
  return run(opts);
}
