//===- Chat.cpp - tirun chat: a conversation on the terminal --------------===//
//
//   tirun chat plan.fb weights.bin [--system TEXT] [-n 512] [sampling options]
//
// One line of standard input is one user turn; the reply streams to standard
// output. The K/V cache stays between turns: each turn renders the whole
// conversation with the checkpoint's chat template, and the decode session
// feeds only what the cache does not hold yet (the new user turn, and the
// template's tokens around it). After each reply, one line on standard error
// says what was reused, fed and generated. /reset forgets the conversation,
// /exit (or the end of input) leaves; Ctrl-C stops the current reply and
// keeps the conversation (a second Ctrl-C at the prompt leaves).
//
//===----------------------------------------------------------------------===//
#include "Chat.h"

#include "CommandLine.h"
#include "TextGenerate.h"
#include "TextSupport.h"

#include "ti/Backends/Backends.h"
#include "ti/Runtime/DecodeSession.h"
#include "ti/Runtime/LoadedPlan.h"
#include "ti/Tokenizer/TextStream.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace ti::tirun {

namespace {

std::atomic<bool> interrupted{false};

void onInterrupt(int) { interrupted = true; }

} // namespace

StatusOr<std::vector<int32_t>> renderConversation(const ChatTemplate &chat, const Tokenizer &tokenizer,
                                                  const std::vector<ChatMessage> &messages) {
  auto text = chat.render(messages, {.addGenerationPrompt = true}, tokenizer.config());
  if (!text)
    return text.status();
  return tokenizer.encode(*text, {.addSpecialTokens = false});
}

std::vector<int32_t> endOfTurnTokens(const Tokenizer &tokenizer) {
  std::vector<int32_t> ends;
  for (const char *name : {"<|eot_id|>", "<|im_end|>", "<|end|>", "</s>", "<|endoftext|>"})
    if (auto id = tokenizer.tokenToId(name); id && tokenizer.isSpecial(*id))
      ends.push_back(*id);
  return ends;
}

std::vector<int32_t> chatEndTokens(const Tokenizer &tokenizer, const WeightsFile *weights) {
  std::vector<int32_t> ends = extraEndTokens(tokenizer, weights);
  for (int32_t id : endOfTurnTokens(tokenizer))
    ends.push_back(id);
  return ends;
}

int runChat(int argc, char **argv) {
  CLI::App app{"tirun chat: a conversation with the model on the terminal"};
  std::string planPath, weightsPath, backend = "auto", tokenizerPath, system;
  unsigned threads = 0;
  int32_t maxNew = 512;
  SamplingOptions sampling;
  app.add_option("plan", planPath, "the plan (plan.fb, from tic)")->required();
  app.add_option("weights", weightsPath, "the packed weights (weights.bin, from tipack)")->required();
  app.add_option("--backend", backend, "cpu, cuda, or auto (the GPU when there is one)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  app.add_option("--threads", threads, "CPU backend: threads (default: all; at most 1024)")
      ->check(CLI::Range(0u, 1024u));
  app.add_option("--tokenizer", tokenizerPath, "a tokenizer.json or its directory (default: the one in weights.bin)");
  app.add_option("--system", system, "a system message that starts the conversation");
  app.add_option("-n,--tokens", maxNew, "tokens per reply at most (default 512)");
  addSamplingOptions(app, sampling);
  bool verifyWeights = false;
  addVerifyWeightsOption(app, verifyWeights);
  if (auto exit = parseCommandLine(app, argc, argv))
    return *exit;
  if (maxNew < 1)
    return fail("-n must be at least 1");

  auto loaded = loadPlan(planPath, weightsPath, verifyWeights);
  if (!loaded)
    return fail(loaded.status().message());
  auto tokenizer = loadTokenizer(tokenizerPath, (*loaded)->weights.get());
  if (!tokenizer)
    return fail(tokenizer.status().message());
  auto chat = ChatTemplate::of(*tokenizer);
  if (!chat)
    return fail(chat.status().message());
  SamplingOptions chosen = chooseSampling(app, sampling, (*loaded)->weights.get());
  if (Status s = chosen.check(); !s.ok())
    return fail(s.message());
  BackendOptions backendOptions;
  backendOptions.choice = backend;
  backendOptions.threads = threads;
  auto executor = openExecutor(*loaded, backendOptions);
  if (!executor)
    return fail(executor.status().message());

  const std::vector<int32_t> ends = chatEndTokens(*tokenizer, (*loaded)->weights.get());
  DecodeSession session((*loaded)->plan, **executor, {.sampling = chosen, .endTokens = ends});
  const int32_t context = static_cast<int32_t>((*loaded)->plan.model.maxContext);

  struct sigaction action {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr); // no SA_RESTART: a read at the prompt returns

  const bool terminal = ::isatty(STDIN_FILENO);
  std::vector<ChatMessage> messages;
  if (!system.empty())
    messages.push_back({"system", system});
  std::fprintf(stderr, "tirun chat: %s on %s, %d positions; /reset forgets, /exit leaves, Ctrl-C stops a reply\n",
               (*loaded)->plan.model.name.c_str(), (*executor)->backend(), context);
  std::string line;
  for (;;) {
    if (terminal) {
      std::fputs("> ", stdout);
      std::fflush(stdout);
    }
    interrupted = false;
    if (!std::getline(std::cin, line))
      break; // end of input, or Ctrl-C at the prompt
    if (line == "/exit")
      break;
    if (line == "/reset") {
      messages.clear();
      if (!system.empty())
        messages.push_back({"system", system});
      session.reset();
      std::fprintf(stderr, "tirun chat: the conversation starts again\n");
      continue;
    }
    if (line.empty())
      continue;
    messages.push_back({"user", line});
    auto ids = renderConversation(*chat, *tokenizer, messages);
    if (!ids) {
      messages.pop_back();
      std::fprintf(stderr, "tirun chat: %s\n", ids.status().message().c_str());
      continue;
    }
    if (static_cast<int32_t>(ids->size()) >= context) {
      messages.pop_back();
      std::fprintf(stderr,
                   "tirun chat: the conversation has reached the plan's context: %zu tokens of %d positions; "
                   "/reset starts again\n",
                   ids->size(), context);
      continue;
    }
    TextStream stream(*tokenizer, {});
    std::string reply;
    Status failure;
    auto print = [&](const std::string &text) {
      reply += text;
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    };
    auto turn = session.turn(*ids, maxNew, [&](std::span<const int32_t> tokens) {
      auto text = stream.push(tokens);
      if (!text) {
        failure = text.status();
        return false;
      }
      print(*text);
      return !interrupted.load();
    });
    if (!turn)
      return fail(turn.status().message());
    if (!failure.ok())
      return fail(failure.message());
    if (auto rest = stream.finish(); rest)
      print(*rest);
    std::fputs("\n", stdout);
    std::fflush(stdout);
    messages.push_back({"assistant", reply});
    const char *why = interrupted ? "Ctrl-C" : stopName(turn->stop);
    std::fprintf(stderr, "tirun chat: %d tokens reused, %d fed, %s\n", turn->reused, turn->fed,
                 turnSummary(**loaded, **executor, turn->fed, static_cast<int32_t>(turn->tokens.size()), why,
                             turn->firstTokenSeconds, turn->decodeSeconds, turn->decodeSteps,
                             static_cast<int32_t>(session.cachedTokens().size()))
                     .c_str());
    if (turn->stop == TurnResult::Stop::Context)
      std::fprintf(stderr, "tirun chat: the conversation has reached the plan's context (%d positions); /reset "
                           "starts again\n",
                   context);
    if (turn->stop == TurnResult::Stop::NonFinite)
      return fail("the model produced non-finite logits");
  }
  return 0;
}

} // namespace ti::tirun
