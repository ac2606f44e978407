//===- Serve.cpp - tirun bench --serve: the worker protocol ---------------===//
//
// One command per line in, one JSON object per line out (flushed: the driver
// waits on it). A bad command is answered with {"error": ...} and the worker
// goes on, except after a failed reload, which leaves no executor.
//
//===----------------------------------------------------------------------===//
#include "Serve.h"

#include "ti/Bench/DecodeBench.h"
#include "ti/Bench/Statistics.h"
#include "ti/Plan/TokenBytes.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>
#include <sstream>

namespace ti::tirun {

namespace {

using Json = nlohmann::ordered_json;

void reply(const Json &j) { std::cout << j.dump() << std::endl; }

void replyError(const std::string &message) { reply(Json{{"error", message}}); }

/// A command line: a word and at most one integer. Strict, as the Python
/// workers are: "measure abc", "context 12x" and extra words are errors.
struct Command {
  std::string word;
  std::optional<long long> count;
};

StatusOr<Command> parseCommand(const std::string &line) {
  std::istringstream in(line);
  Command c;
  std::string number, extra;
  in >> c.word >> number >> extra;
  if (!extra.empty())
    return Status::error("'" + line + "': one argument at most");
  if (!number.empty()) {
    size_t used = 0;
    try {
      c.count = std::stoll(number, &used);
    } catch (...) {
      used = 0;
    }
    if (used != number.size() || used == 0 || *c.count < 0 || *c.count > INT32_MAX)
      return Status::error("'" + line + "': '" + number + "' is not a count");
  }
  return c;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

int serve(BenchTarget &b) {
  const plan::Plan &plan = b.plan->plan;
  Json ready;
  ready["ready"] = true;
  ready["runtime"] = "tileinfer";
  ready["device"] = b.executor->device();
  ready["detail"] = "tirun " + std::string(b.executor->backend()) + " backend, plan for " +
                    plan.target.name + " (" +
                    std::to_string(plan.target.workers) + " workers)";
  ready["weight_floor_bytes"] = plan::tokenBytes(plan).floorWeights();
  ready["kv_bytes_per_position"] = plan::kvCacheBytes(plan, 1);
  ready["reload"] = true; // Understands 'reload'.
  reply(ready);

  int32_t context = -1; // The context 'measure' measures; -1: none.
  uint64_t contextFloorBytes = 0; // Its floor's bytes.
  int32_t filled = 0;   // Positions 0..filled-1 hold the standard sequence.
  std::string line;
  while (std::getline(std::cin, line)) {
    auto parsed = parseCommand(line);
    if (!parsed) {
      replyError(parsed.status().message());
      continue;
    }
    const std::string &word = parsed->word;
    const long long n = parsed->count.value_or(-1);
    // What each command needs: no count, a context (>= 0), or a count (>= 1).
    const bool wantsContext = word == "context";
    const bool wantsCount = word == "measure" || word == "generate" || word == "gaps";
    if (word.empty())
      continue;
    if ((wantsContext && n < 0) || (wantsCount && n < 1)) {
      replyError("'" + word + "' needs " + (wantsContext ? "a context" : "a count of at least 1") +
                 ": '" + line + "'");
      continue;
    }
    if (!wantsContext && !wantsCount && parsed->count) {
      replyError("'" + word + "' takes no argument: '" + line + "'");
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    if (word == "quit") {
      return 0;
    } else if (word == "reload") {
      // A fresh load of the plan; the cache is copied over.
      if (Status s = b.reopen(); !s.ok()) {
        replyError(s.message());
        return 1; // No executor is left.
      }
      reply(Json{{"reloaded", true}, {"seconds", secondsSince(start)}});
    } else if (word == "bandwidth") {
      auto bw = b.bandwidth();
      if (!bw) {
        replyError(bw.status().message());
        continue;
      }
      reply(Json{{"gbs", bench::median(bw->gbs)}, {"samples", bw->gbs}, {"bytes", bw->bytes}});
    } else if (word == "context") {
      // Only the positions not yet filled: a step attends to the positions up
      // to its own, so a cache filled further serves a smaller context.
      context = -1;
      if (Status s = b.fillContext(int32_t(n), filled); !s.ok()) {
        filled = 0; // A failed fill leaves the cache partly overwritten.
        replyError(s.message());
        continue;
      }
      context = int32_t(n);
      contextFloorBytes = plan::floorBytes(plan, uint64_t(context));
      filled = std::max(filled, context);
      reply(Json{{"context", context}, {"seconds", secondsSince(start)}});
    } else if (word == "measure") {
      if (context < 0) {
        replyError("'measure' before any 'context'");
        continue;
      }
      auto ms = b.timeSteps(context, int(n));
      if (!ms) {
        context = -1;
        filled = 0;
        replyError(ms.status().message());
        continue;
      }
      // The step wrote the sequence's own values into slot `context`.
      filled = std::max(filled, context + 1);
      reply(Json{{"context", context}, {"ms", *ms},
                 {"floor_bytes", contextFloorBytes}});
    } else if (word == "generate") {
      context = -1; // The cache now holds the generation.
      filled = 0;
      auto run = bench::timeGeneration(plan, *b.executor, int32_t(n));
      if (!run)
        replyError(run.status().message());
      else
        reply(Json{{"tokens", run->tokens}, {"seconds", run->seconds}});
    } else if (word == "gaps") {
      context = -1;
      filled = 0;
      auto run = bench::generationGaps(plan, *b.executor, int32_t(n));
      if (!run)
        replyError(run.status().message());
      else
        reply(Json{{"tokens", run->tokens}, {"top2_gap", run->top2Gaps}});
    } else {
      replyError("unknown command '" + line + "'");
    }
  }
  return 0;
}

} // namespace ti::tirun
