//===- tirun.cpp - Runs a plan: validate, load, decode ----------------------===//
//
//   tirun plan.fb weights.bin --prompt "The capital of France is" -n 32
//   tirun plan.fb weights.bin --prompt-file p.txt --temperature 0.8 --top-p 0.95
//   tirun plan.fb weights.bin --prompt-tokens 128000,791,6864 -n 32
//   tirun plan.fb weights.bin --backend cpu --threads 2
//   tirun plan.fb weights.bin --chat --system "Be brief." --prompt "Hi"
//   tirun chat plan.fb weights.bin      (Chat.cpp)
//   tirun serve plan.fb weights.bin     (HttpServe.cpp)
//   tirun tokenize weights.bin < text   tirun detokenize weights.bin < ids
//   tirun probe -o target.json          (Probe.cpp)
//   tirun bench plan.fb weights.bin     (Bench.cpp)
//
// Loads and checks the plan and its weights (nothing runs on a bad input),
// then decodes. With a text prompt, the text streams to standard output as it
// is made (TextGenerate.cpp); with token ids, the generated ids are printed.
// Greedy unless sampling options (or the checkpoint's generation_config.json)
// say otherwise. One summary line on standard error. Exit status 0 or 1.
//
// The subcommands are told apart by argv[1] before anything is parsed: a
// CLI11 subcommand beside the two required positionals would make them
// optional for every run (a plan file named probe can be given as ./probe).
//
//===----------------------------------------------------------------------===//
#include "Bench.h"
#include "Chat.h"
#include "HttpServe.h"
#include "CommandLine.h"
#include "Probe.h"
#include "TextGenerate.h"
#include "TextSupport.h"
#include "Tokenize.h"

#include "ti/Backends/Backends.h"
#include "ti/Runtime/DecodeSession.h"
#include "ti/Runtime/Generate.h"
#include "ti/Runtime/LoadedPlan.h"
#include "ti/Runtime/Trace.h"
#include "ti/Support/AtomicFile.h"
#include "ti/Support/CommandLineChecks.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>

using ti::tirun::fail;

int main(int argc, char **argv) {
  if (argc > 1 && std::string(argv[1]) == "probe")
    return ti::tirun::runProbe(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "bench")
    return ti::tirun::runBench(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "chat")
    return ti::tirun::runChat(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "serve")
    return ti::tirun::runServe(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "tokenize")
    return ti::tirun::runTokenize(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "detokenize")
    return ti::tirun::runDetokenize(argc - 1, argv + 1);
  CLI::App app{"tirun: runs a decode plan"};
  app.footer("tirun probe [-o target.json]: measures this GPU and writes a target file for "
             "tic --target-file (tirun probe --help)\n"
             "tirun bench plan.fb weights.bin: time per token against the bandwidth floor "
             "(tirun bench --help)\n"
             "tirun chat plan.fb weights.bin: a conversation on the terminal (tirun chat --help)\n"
             "tirun serve plan.fb weights.bin: the OpenAI HTTP API on this machine (tirun serve --help)\n"
             "tirun tokenize|detokenize [weights.bin] [--tokenizer FILE]: text to ids and back");
  std::string planPath, weightsPath, promptText, backend = "auto";
  int32_t count = 16;
  unsigned threads = 0;
  app.add_option("plan", planPath, "the plan (plan.fb, from tic)")->required();
  app.add_option("weights", weightsPath, "the packed weights (weights.bin, from tipack)")->required();
  std::string promptWords, promptFile, tokenizerPath;
  std::vector<std::string> stops;
  auto *tokensOption =
      app.add_option("--prompt-tokens", promptText, "the prompt as token ids: 128000,791,6864");
  auto *textOption = app.add_option("--prompt", promptWords, "the prompt as text (printed back as text)");
  auto *fileOption = app.add_option("--prompt-file", promptFile, "the prompt as text, from a file");
  tokensOption->excludes(textOption)->excludes(fileOption);
  textOption->excludes(fileOption);
  app.add_option("--tokenizer", tokenizerPath,
                 "a tokenizer.json or its directory (default: the one kept in weights.bin)");
  app.add_option("--stop", stops, "end the text before this string (may be repeated)");
  bool chatMode = false;
  std::string systemText;
  app.add_flag("--chat", chatMode, "wrap the prompt in the checkpoint's chat template as one user message");
  app.add_option("--system", systemText, "with --chat: a system message before it");
  ti::SamplingOptions sampling;
  ti::tirun::addSamplingOptions(app, sampling);
  app.add_option("-n,--tokens", count, "tokens to generate at most (default 16)");
  app.add_option("--backend", backend, "cpu, cuda, or auto (the GPU when there is one)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  app.add_option("--threads", threads, "CPU backend: threads (default: all; at most 1024)")
      ->check(CLI::Range(0u, 1024u));
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
  bool verifyWeights = false;
  ti::tirun::addVerifyWeightsOption(app, verifyWeights);
  if (auto exit = ti::tirun::parseCommandLine(app, argc, argv))
    return *exit;

  for (const auto &[option, path] : {std::pair{"--dump-logits", &dumpLogits}, std::pair{"--trace", &tracePath}})
    if (app.count(option))
      if (std::string e = ti::checkOutputPath(option, *path, {planPath, weightsPath, promptFile}); !e.empty())
        return fail(e);
  auto loaded = ti::loadPlan(planPath, weightsPath, verifyWeights);
  if (!loaded)
    return fail(loaded.status().message());
  const ti::plan::Plan &plan = (*loaded)->plan;

  // Text mode: the tokenizer, the prompt's ids, the end tokens, the sampling.
  const bool textMode = !promptWords.empty() || app.count("--prompt") || !promptFile.empty();
  std::optional<ti::Tokenizer> tokenizer;
  ti::SamplingOptions chosen = ti::tirun::chooseSampling(app, sampling, (*loaded)->weights.get());
  if (ti::Status s = chosen.check(); !s.ok())
    return fail(s.message());
  if (!stops.empty() && !textMode)
    return fail("--stop needs a text prompt (--prompt or --prompt-file)");
  if (textMode) {
    auto t = ti::tirun::loadTokenizer(tokenizerPath, (*loaded)->weights.get());
    if (!t)
      return fail(t.status().message());
    tokenizer.emplace(*t);
    if (!promptFile.empty()) {
      std::ifstream in(promptFile, std::ios::binary);
      if (!in)
        return fail("cannot read --prompt-file '" + promptFile + "'");
      promptWords.assign(std::istreambuf_iterator<char>(in), {});
    }
    for (const std::string &stop : stops)
      if (stop.empty())
        return fail("--stop: a stop string must not be empty");
  }

  std::vector<int32_t> prompt;
  if ((chatMode || !systemText.empty()) && !textMode)
    return fail("--chat and --system need a text prompt (--prompt or --prompt-file)");
  if (!systemText.empty() && !chatMode)
    return fail("--system needs --chat");
  std::vector<int32_t> chatEnds;
  if (chatMode) {
    auto chat = ti::ChatTemplate::of(*tokenizer);
    if (!chat)
      return fail(chat.status().message());
    std::vector<ti::ChatMessage> messages;
    if (!systemText.empty())
      messages.push_back({"system", systemText});
    messages.push_back({"user", promptWords});
    auto ids = ti::tirun::renderConversation(*chat, *tokenizer, messages);
    if (!ids)
      return fail(ids.status().message());
    prompt = *ids;
    chatEnds = ti::tirun::endOfTurnTokens(*tokenizer);
  } else if (textMode) {
    auto ids = tokenizer->encode(promptWords);
    if (!ids)
      return fail((promptFile.empty() ? "--prompt: " : "--prompt-file: ") + ids.status().message());
    prompt = *ids;
    if (prompt.empty())
      return fail("the prompt is empty: give some text");
  } else if (promptText.empty()) {
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

  if (textMode) {
    if (!dumpLogits.empty() || !tracePath.empty())
      return fail("--dump-logits and --trace run with --prompt-tokens");
    ti::tirun::TextRun run;
    run.promptIds = prompt;
    run.maxNew = count;
    run.stops = stops;
    run.endTokens = ti::tirun::extraEndTokens(*tokenizer, (*loaded)->weights.get());
    run.endTokens.insert(run.endTokens.end(), chatEnds.begin(), chatEnds.end());
    run.sampling = chosen;
    return ti::tirun::runTextGeneration(**loaded, executor, *tokenizer, run);
  }
  if (!chosen.greedy()) {
    // Sampled token ids: one session turn, printed as ids.
    if (!dumpLogits.empty() || !tracePath.empty())
      return fail("--dump-logits and --trace decode greedily: leave out the sampling options");
    ti::DecodeSession session(plan, executor, {.sampling = chosen});
    auto turn = session.turn(prompt, count);
    if (!turn)
      return fail(turn.status().message());
    std::ostringstream ids;
    for (size_t i = 0; i < turn->tokens.size(); ++i)
      ids << (i ? " " : "") << turn->tokens[i];
    std::cout << ids.str() << std::endl;
    std::fprintf(stderr, "tirun: %s\n",
                 ti::tirun::turnSummary(**loaded, executor, turn->fed, static_cast<int32_t>(turn->tokens.size()),
                                        ti::stopName(turn->stop), turn->firstTokenSeconds, turn->decodeSeconds,
                                        turn->decodeSteps, static_cast<int32_t>(session.cachedTokens().size()))
                     .c_str());
    return turn->stop == ti::TurnResult::Stop::NonFinite ? 1 : 0;
  }

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
