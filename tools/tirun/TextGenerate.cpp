//===- TextGenerate.cpp - tirun --prompt: text in, text out ---------------===//
//
// One turn of a DecodeSession: the text of each launch's tokens goes through
// a TextStream (whole characters, clean-ups, stop strings), then to
// standard output, flushed, so that a reader sees it as it is made. Special
// tokens (the end of turn) are not printed.
//
//===----------------------------------------------------------------------===//
#include "TextGenerate.h"

#include "CommandLine.h"

#include "ti/Plan/TokenBytes.h"
#include "ti/Runtime/DecodeSession.h"
#include "ti/Tokenizer/TextStream.h"

#include <cstdio>

namespace ti::tirun {

std::string turnSummary(const LoadedPlan &loaded, const Executor &executor, int32_t promptTokens,
                        int32_t generated, const char *stop, double firstTokenSeconds,
                        double decodeSeconds, int32_t decodeSteps, int32_t endPosition) {
  char buf[512];
  int n = std::snprintf(buf, sizeof buf, "%s: %d prompt tokens, %d generated (stop: %s); first token after %.1f ms",
                        executor.backend(), promptTokens, generated, stop, 1e3 * firstTokenSeconds);
  std::string line(buf, n);
  if (decodeSteps > 0) {
    double perToken = decodeSeconds / decodeSteps;
    n = std::snprintf(buf, sizeof buf, "; %.3f ms per token", 1e3 * perToken);
    line.append(buf, n);
    const plan::Plan &p = loaded.plan;
    // The floor at the middle of the generated positions, at the target's
    // bandwidth: meaningful on the GPU the plan was made for.
    if (std::string(executor.backend()) == "cuda" && p.target.bandwidthGBs > 0) {
      uint64_t middle = static_cast<uint64_t>(std::max(0, endPosition - decodeSteps / 2));
      double floor = plan::floorSeconds(plan::floorBytes(p, middle), p.target.bandwidthGBs);
      n = std::snprintf(buf, sizeof buf, ", %.1f%% of the %s floor (%.3f ms)", 100 * floor / perToken,
                        p.target.name.c_str(), 1e3 * floor);
      line.append(buf, n);
    }
  }
  return line;
}

int runTextGeneration(const LoadedPlan &loaded, Executor &executor, const Tokenizer &tokenizer,
                      const TextRun &run) {
  DecodeSession session(loaded.plan, executor, {.sampling = run.sampling, .endTokens = run.endTokens});
  TextStream stream(tokenizer, run.stops);
  Status failure;
  auto print = [](const std::string &text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  };
  auto turn = session.turn(run.promptIds, run.maxNew, [&](std::span<const int32_t> tokens) {
    auto text = stream.push(tokens);
    if (!text) {
      failure = text.status();
      return false;
    }
    print(*text);
    return !stream.stopped();
  });
  if (!turn)
    return fail(turn.status().message());
  if (!failure.ok())
    return fail(failure.message());
  auto rest = stream.finish();
  if (!rest)
    return fail(rest.status().message());
  print(*rest);
  print("\n");
  const char *why = stream.stopped() ? "stop string" : stopName(turn->stop);
  std::string summary = turnSummary(loaded, executor, turn->fed, static_cast<int32_t>(turn->tokens.size()), why,
                                    turn->firstTokenSeconds, turn->decodeSeconds, turn->decodeSteps,
                                    static_cast<int32_t>(session.cachedTokens().size()));
  std::fprintf(stderr, "tirun: %s\n", summary.c_str());
  return turn->stop == TurnResult::Stop::NonFinite ? 1 : 0;
}

} // namespace ti::tirun
