//===- GraphFuzzer.cpp - Graph text through the whole compiler ------------===//
//
// The input is a model graph's text. It is lexed, parsed and elaborated as
// `tic` does; a graph that elaborates is compiled for a built-in target (the
// input's length picks which) through the default pipeline and the plan
// builder. Properties: no crash, no sanitizer report, and a plan the compiler
// built always passes the plan verifier (a plan it refuses is a compiler bug).
//
//===----------------------------------------------------------------------===//
#include "ti/Codegen/PlanBuilder.h"
#include "ti/IR/GraphBuilder.h"
#include "ti/IR/GraphParser.h"
#include "ti/Passes/PassManager.h"
#include "ti/Passes/Passes.h"
#include "ti/Plan/PlanVerifier.h"
#include "ti/Target/Target.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.graph"), llvm::SMLoc());
  ti::DiagnosticEngine diags(sourceMgr, llvm::nulls());
  auto ast = ti::parseGraph(diags);
  if (!ast)
    return 0;
  auto graph = ti::buildGraph(*ast, diags);
  if (!graph)
    return 0;

  static const std::vector<std::string> targets = ti::builtinTargetNames();
  ti::StatusOr<ti::Target> target = ti::builtinTarget(targets[size % targets.size()]);
  if (!target)
    std::abort();
  ti::tir::Module module;
  module.graph = &*graph;
  module.target = *target;
  // A short cache keeps each run fast; the context's own limits have tests.
  int64_t maxContext = 64;
  if (const ti::NamedAttr *a = graph->findAttr("max_context"); a && a->value.kind == ti::AttrValue::Kind::Int)
    maxContext = std::min<int64_t>(maxContext, a->value.i);
  module.maxContext = static_cast<uint32_t>(maxContext);
  ti::PassManager pm;
  std::string error;
  if (!pm.addByNames(ti::defaultPipeline(), error))
    std::abort();
  if (!pm.run(module, diags))
    return 0;
  auto plan = ti::buildPlan(module, diags);
  if (!plan)
    return 0;
  std::vector<std::string> problems = ti::plan::verifyPlanAll(*plan);
  if (!problems.empty()) {
    std::fprintf(stderr, "a compiled plan does not verify: %s\n", problems.front().c_str());
    std::abort();
  }
  return 0;
}
