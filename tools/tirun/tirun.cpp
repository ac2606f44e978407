//===- tirun.cpp - Runs a plan: validate, load, decode ----------------------===//
//
//   tirun plan.fb weights.bin --prompt-tokens 128000,791,6864 -n 32
//   tirun plan.fb weights.bin --backend cpu --threads 2
//   tirun probe -o target.json          (Probe.cpp)
//   tirun bench plan.fb weights.bin     (Bench.cpp)
//
// Loads and checks the plan and its weights (nothing runs on a bad input),
// decodes greedily, prints the generated token ids on standard output and the
// timing on standard error. Exit status 0 or 1.
//
// `probe` and `bench` are told apart by argv[1] before anything is parsed: a
// CLI11 subcommand beside the two required positionals would make them
// optional for every run (a plan file named probe can be given as ./probe).
//
//===----------------------------------------------------------------------===//
#include "Bench.h"
#include "CommandLine.h"
#include "Probe.h"

#include "ti/Backends/Backends.h"
#include "ti/Runtime/Generate.h"
#include "ti/Runtime/LoadedPlan.h"
#include "ti/Runtime/Trace.h"
#include "ti/Support/AtomicFile.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <sstream>

using ti::tirun::fail;

int main(int argc, char **argv) {
  if (argc > 1 && std::string(argv[1]) == "probe")
    return ti::tirun::runProbe(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "bench")
    return ti::tirun::runBench(argc - 1, argv + 1);
  CLI::App app{"tirun: runs a decode plan"};
  app.footer("tirun probe [-o target.json]: measures this GPU and writes a target file for "
             "tic --target-file (tirun probe --help)\n"
             "tirun bench plan.fb weights.bin: time per token against the bandwidth floor "
             "(tirun bench --help)");
  std::string planPath, weightsPath, promptText, backend = "auto";
  int32_t count = 16;
  unsigned threads = 0;
  app.add_option("plan", planPath, "the plan (plan.fb, from tic)")->required();
  app.add_option("weights", weightsPath, "the packed weights (weights.bin, from tipack)")->required();
  app.add_option("--prompt-tokens", promptText, "the prompt as token ids: 128000,791,6864");
  app.add_option("-n,--tokens", count, "tokens to generate at most (default 16)");
  app.add_option("--backend", backend, "cpu, cuda, or auto (the GPU when there is one)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  app.add_option("--threads", threads, "CPU backend: threads (default: all)");
  std::string dumpLogits;
  int32_t dumpFrom = 0;
  app.add_option("--dump-from", dumpFrom,
                 "with --dump-logits: only the steps at this position and later");
  app.add_option("--dump-logits", dumpLogits,
                 "run one step per launch and write every step's logits to this file "
                 "(float32, vocab values per step, prompt steps included)");
  std::string tracePath;
  app.add_option("--trace", tracePath,
                 "CUDA backend: record every worker's tasks and barrier waits over one step of "
                 "the last launch (its second step, or its only one) and write them as "
                 "Chrome/Perfetto trace JSON to this file");
  if (auto exit = ti::tirun::parseCommandLine(app, argc, argv))
    return *exit;

  auto loaded = ti::loadPlan(planPath, weightsPath);
  if (!loaded)
    return fail(loaded.status().message());
  const ti::plan::Plan &plan = (*loaded)->plan;

  std::vector<int32_t> prompt;
  if (promptText.empty()) {
    if (plan.model.bos < 0)
      return fail("the plan's model has no bos token: give --prompt-tokens");
    prompt = {plan.model.bos};
  } else {
    auto parsed = ti::tirun::parseIntegerList(promptText, INT32_MIN, INT32_MAX,
                                              "--prompt-tokens", "a token id");
    if (!parsed)
      return fail(parsed.status().message());
    prompt = *parsed;
  }
  if (ti::Status s = ti::checkPrompt(prompt, plan); !s.ok())
    return fail(s.message());
  if (count < 0)
    return fail("-n must not be negative");

  // The backend: the GPU when asked for, or when there is one and auto.
  ti::BackendOptions backendOptions;
  backendOptions.choice = backend;
  backendOptions.threads = threads;
  auto opened = ti::openExecutor(*loaded, backendOptions);
  if (!opened)
    return fail(opened.status().message());
  ti::Executor &executor = **opened;
  if (!tracePath.empty())
    if (ti::Status s = executor.setTrace(true); !s.ok())
      return fail("--trace: " + s.message());

  ti::GenerateOptions options;
  std::unique_ptr<ti::AtomicFileWriter> logitsOut;
  if (!dumpLogits.empty()) {
    logitsOut = std::make_unique<ti::AtomicFileWriter>();
    if (std::string e = logitsOut->open(dumpLogits); !e.empty())
      return fail(e);
    options.stepsPerLaunch = 1;
    options.afterLaunch = [&, position = int32_t(0)](const ti::plan::StepState &state) mutable
        -> ti::Status {
      if (state.steps == 0)
        return ti::Status();
      position += state.steps; // One step per launch: the step just run was at position - 1.
      if (position - 1 < dumpFrom)
        return ti::Status();
      auto logits = executor.logits();
      if (!logits)
        return logits.status();
      if (std::string e = logitsOut->write(logits->data(), logits->size() * sizeof(float));
          !e.empty())
        return ti::Status::error(e);
      return ti::Status();
    };
  }
  auto result = ti::generate(plan, executor, prompt, count, options);
  if (!result)
    return fail(result.status().message());
  if (logitsOut)
    if (std::string e = logitsOut->commit(); !e.empty())
      return fail(e);
  if (!tracePath.empty()) {
    auto events = executor.trace();
    if (!events)
      return fail(events.status().message());
    if (std::string e = ti::writeFileAtomically(tracePath, ti::traceToChromeJson(plan, *events));
        !e.empty())
      return fail(e);
  }

  std::ostringstream out;
  for (size_t i = 0; i < result->tokens.size(); ++i)
    out << (i ? " " : "") << result->tokens[i];
  std::cout << out.str() << std::endl; // Before the timing line on stderr.
  // A step is one token through the model: the time per token.
  double perStep = result->decodeSteps ? result->decodeSeconds / result->decodeSteps : 0;
  std::fprintf(stderr,
               "tirun: %s: %zu prompt tokens, %zu generated (stop: %s) in %d launches; "
               "%d steps in %.3f s: %.2f ms per token\n",
               executor.backend(), prompt.size(), result->tokens.size(),
               ti::stopReason(result->stop),
               result->launches, result->decodeSteps, result->decodeSeconds, 1e3 * perStep);
  return result->stop == ti::GenerateResult::Stop::Error ? 1 : 0;
}
