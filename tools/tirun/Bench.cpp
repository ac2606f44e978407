//===- Bench.cpp - tirun bench: time per token against the floor ----------===//
//
//   tirun bench plan.fb weights.bin [--contexts 1,128,512,1024,2048,4096]
//               [--sessions K] [--reps N] [--warmup N] [--generate 64] [--generate-reps N]
//               [--json FILE] [--backend auto|cuda|cpu] [--threads N]
//               [--bandwidth-bytes B] [--trace-dir DIR] [--worker-mode MODE]
//               [--steps-per-launch N] [--serve]
//
// The cache is filled once, to the largest context (a step at position N
// attends to positions 0..N only, so it serves every smaller context too).
// Then `--sessions` times: the plan loaded into fresh memory (the cache copied
// over), and for each context `--warmup` untimed steps and `--reps` timed
// ones at that position (logits ready, nothing sampled). Per context: the
// median of the sessions' medians and its 95% interval over the sessions (over
// the samples when there are fewer than 6: where a load puts the weights moves
// the time more than anything within one load does); the floor, the step's bytes
// (ti/Plan/TokenBytes.h) over the streaming-read bandwidth measured in this
// process before and after; the share of the floor. With --trace-dir, one more
// step per context, traced (tirun --trace's JSON, trace-<context>.json), after
// the timed ones so that tracing never touches a timed step. Then greedy generation
// from a short prompt in tokens per second. A table on standard output, the
// same as JSON with --json (docs/benchmarking.md), progress on standard error.
//
// --steps-per-launch N times launches of N steps (positions context ..
// context + N - 1) and reports the time per step: the launch's own start and
// end shared by N tokens, as a generation of several tokens a launch runs,
// where the default (1) is one step's latency, logits ready.
//
// --worker-mode no-dependencies|stream-only|compute-only runs a diagnostic
// worker that exposes the mechanism (WorkerMode.h: no grid barriers; the
// weight stream alone; the consumers alone): its times are not the model's,
// and the header says so.
//
// --serve answers the worker protocol of docs/benchmarking.md on standard
// input and output instead, so that bench/run_bench.py can interleave our
// measurement blocks with other runtimes'.
//
// Without a GPU (or with --backend cpu) the CPU executor is measured, and the
// header says so.
//
//===----------------------------------------------------------------------===//
#include "Bench.h"

#include "BenchTarget.h"
#include "CommandLine.h"
#include "Serve.h"

#include "ti/Bench/DecodeBench.h"
#include "ti/Bench/Statistics.h"
#include "ti/Plan/TokenBytes.h"
#include "ti/Runtime/Trace.h"
#include "ti/Support/AtomicFile.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <unistd.h>

namespace ti::tirun {

namespace {

using Json = nlohmann::ordered_json;

std::string utcNow() {
  std::time_t t = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return text;
}

/// One progress line on standard error: rewritten in place on a terminal,
/// one line per call elsewhere (logs, pipes).
class Progress {
public:
  Progress() : tty(::isatty(STDERR_FILENO)) {}
  void show(const std::string &text) {
    if (tty)
      std::fprintf(stderr, "\r\033[K%s", text.c_str());
    else
      std::fprintf(stderr, "%s\n", text.c_str());
    std::fflush(stderr);
  }
  void done() {
    if (tty)
      std::fprintf(stderr, "\r\033[K");
  }

private:
  bool tty;
};

/// Sessions whose medians give the interval; below it, the samples do.
constexpr size_t kMinSessionsForInterval = 6;

struct ContextResult {
  int32_t context = 0;
  std::vector<std::vector<double>> sessions; // Each session's timed steps (ms).
  uint64_t floorBytes = 0;
};

Json contextJson(const ContextResult &r, double gbs) {
  std::vector<double> all, medians;
  for (const std::vector<double> &ms : r.sessions) {
    all.insert(all.end(), ms.begin(), ms.end());
    medians.push_back(bench::median(ms));
  }
  const bool overSessions = r.sessions.size() >= kMinSessionsForInterval;
  bench::Summary s = bench::summarize(overSessions ? medians : all);
  double floorMs = plan::floorSeconds(r.floorBytes, gbs) * 1e3;
  Json j;
  j["context"] = r.context;
  j["n"] = all.size();
  j["sessions"] = r.sessions.size();
  j["median_ms"] = s.median;
  j["ci95_ms"] = s.hasCi ? Json::array({s.ciLow, s.ciHigh}) : Json(nullptr);
  j["interval_over"] = overSessions ? "sessions" : "samples";
  j["session_medians_ms"] = medians;
  j["min_ms"] = *std::min_element(all.begin(), all.end());
  j["floor_bytes"] = r.floorBytes;
  j["floor_ms"] = floorMs;
  j["share_of_floor"] = s.median > 0 ? floorMs / s.median : 0;
  j["samples_ms"] = all;
  return j;
}

/// One more step at position `context`, traced: its trace as Chrome/Perfetto
/// JSON (ti/Runtime/Trace.h). Tracing is off again afterwards.
StatusOr<std::string> tracedStep(Executor &executor, const plan::Plan &plan, int32_t context) {
  if (Status s = executor.setTrace(true); !s.ok())
    return s;
  auto state = executor.launch(bench::measuredStep(plan, context));
  auto events = executor.trace();
  if (Status s = executor.setTrace(false); !s.ok())
    return s;
  if (!state)
    return state.status();
  if (!events)
    return events.status();
  return traceToChromeJson(plan, *events);
}

} // namespace

int runBench(int argc, char **argv) {
  CLI::App app{"tirun bench: time per token at each context against the bandwidth floor, and "
               "greedy generation in tokens per second"};
  app.name("tirun bench");
  std::string planPath, weightsPath, contextsText = "1,128,512,1024,2048,4096", jsonPath;
  int sessions = 0, reps = 0, warmup = -1, generateCount = 64, generateReps = 0;
  bool serveMode = false;
  BackendOptions backend;
  uint64_t bandwidthBytes = 0;
  app.add_option("plan", planPath, "the plan (plan.fb, from tic)")->required();
  app.add_option("weights", weightsPath, "the packed weights (weights.bin)")->required();
  app.add_option("--contexts", contextsText,
                 "positions already in the K/V cache for each measurement (default "
                 "1,128,512,1024,2048,4096)");
  app.add_option("--sessions", sessions,
                 "fresh loads of the plan, each measuring every context (default 8 on a GPU, 1 "
                 "on the CPU); at least 6 give an interval over the sessions' medians")
      ->check(CLI::Range(1, 10000));
  app.add_option("--reps", reps,
                 "timed steps per context and session (default 25 on a GPU, 6 on the CPU)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--warmup", warmup, "untimed steps first (default 10 on a GPU, 1 on the CPU)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--generate", generateCount, "tokens of the generation run (default 64; 0: none)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--generate-reps", generateReps,
                 "timed generation runs; the median counts (default 5 on a GPU, 1 on the CPU)")
      ->check(CLI::Range(1, 10000));
  app.add_option("--json", jsonPath, "also write the results here (docs/benchmarking.md)");
  app.add_option("--backend", backend.choice, "cuda, cpu, or auto (the GPU when there is one)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  app.add_option("--threads", backend.threads, "CPU backend: threads (default: all; at most 1024)")
      ->check(CLI::Range(0u, 1024u));
  app.add_option("--bandwidth-bytes", bandwidthBytes,
                 "the buffer the bandwidth test reads (default 2.5 GiB on a GPU, 256 MiB on the "
                 "CPU; 512MiB, 4GB, ...)")
      ->transform(CLI::AsSizeValue(/*kb_is_1000=*/true));
  std::string traceDir;
  app.add_option("--trace-dir", traceDir,
                 "CUDA backend: after each context's timed steps, trace one more and write it "
                 "to DIR/trace-<context>.json (Chrome/Perfetto JSON)");
  std::string modeText = "full";
  app.add_option("--worker-mode", modeText,
                 "full (default), or a diagnostic whose results are not the model's: "
                 "no-dependencies (no grid barriers), stream-only (stream plans: the "
                 "weight stream alone), compute-only (stream plans: the consumers alone)")
      ->check(CLI::IsMember({"full", "no-dependencies", "stream-only", "compute-only"}));
  int32_t stepsPerLaunch = 1;
  app.add_option("--steps-per-launch", stepsPerLaunch,
                 "steps in each timed launch (default 1); the times are per step")
      ->check(CLI::Range(1, int(plan::kMaxStepsPerLaunch)));
  app.add_flag("--serve", serveMode,
               "answer the worker protocol on standard input/output (bench/run_bench.py)");
  bool verifyWeights = false;
  addVerifyWeightsOption(app, verifyWeights);
  if (auto exit = parseCommandLine(app, argc, argv))
    return *exit;
  auto contexts = parseIntegerList(contextsText, 0, INT32_MAX, "--contexts",
                                   "a context (a count of positions)");
  if (!contexts)
    return fail(contexts.status().message());
  auto loaded = loadPlan(planPath, weightsPath, verifyWeights);
  if (!loaded)
    return fail(loaded.status().message());
  const plan::Plan &plan = (*loaded)->plan;
  // Refuse what cannot be measured before measuring anything. (--serve is
  // told its contexts and counts later, and answers errors per command.)
  for (int32_t c : serveMode ? std::vector<int32_t>() : *contexts)
    if (uint64_t(c) + uint64_t(stepsPerLaunch) > plan.model.maxContext)
      return fail("--contexts: context " + std::to_string(c) + " cannot be measured: the plan " +
                  "holds " + std::to_string(plan.model.maxContext) + " positions, and the " +
                  (stepsPerLaunch == 1 ? std::string("measured step needs one more")
                                       : "measured launch needs " +
                                             std::to_string(stepsPerLaunch) + " more"));
  // The last generated token is not fed back: prompt + count - 1 positions.
  if (!serveMode && generateCount > 0 &&
      bench::kGenerationPromptTokens + generateCount - 1 > plan.model.maxContext)
    return fail("--generate: " + std::to_string(generateCount) + " tokens after a " +
                std::to_string(bench::kGenerationPromptTokens) + "-token prompt do not fit the " +
                "plan's " + std::to_string(plan.model.maxContext) + " positions");

  BenchTarget b;
  b.plan = *loaded;
  b.options = backend;
  b.bandwidthBytes = bandwidthBytes;
  auto opened = openExecutor(b.plan, backend);
  if (!opened)
    return fail(opened.status().message());
  b.executor = std::move(*opened);
  b.mode = modeText == "stream-only"       ? WorkerMode::StreamOnly
           : modeText == "compute-only"    ? WorkerMode::ComputeOnly
           : modeText == "no-dependencies" ? WorkerMode::NoDependencies
                                           : WorkerMode::Full;
  if (Status s = b.executor->setWorkerMode(b.mode); !s.ok())
    return fail("--worker-mode: " + s.message());
  if (serveMode)
    return serve(b);
  if (!traceDir.empty()) {
    // Asked now, so that a backend that cannot trace is refused before the
    // measurement; tracing is on only around the traced steps.
    if (Status s = b.executor->setTrace(true); !s.ok())
      return fail("--trace-dir: " + s.message());
    if (Status s = b.executor->setTrace(false); !s.ok())
      return fail(s.message());
  }
  // Outputs are checked before the measurement, not after it.
  if (!traceDir.empty() && !std::filesystem::is_directory(traceDir))
    return fail("--trace-dir: " + traceDir + " is not a directory");
  AtomicFileWriter jsonOut;
  if (!jsonPath.empty())
    if (std::string e = jsonOut.open(jsonPath); !e.empty())
      return fail(e);

  const std::string kind = b.executor->backend();
  const std::string device = b.executor->device();
  const bool gpu = kind == "cuda";
  if (!sessions)
    sessions = gpu ? 8 : 1;
  if (!reps)
    reps = gpu ? 25 : 6;
  if (warmup < 0)
    warmup = gpu ? 10 : 1;
  if (!generateReps)
    generateReps = gpu ? 5 : 1;
  if (gpu)
    std::fprintf(stderr, "tirun bench: %s on %s (CUDA backend, %u workers)\n",
                 plan.model.name.c_str(), device.c_str(), plan.target.workers);
  else
    std::fprintf(stderr, "tirun bench: %s on the CPU backend (%s): %s; the CPU executor is the "
                         "reference, not a fast path\n",
                 plan.model.name.c_str(), device.c_str(),
                 backend.choice == "cpu" ? "asked for" : "no GPU found");

  Progress progress;
  progress.show("measuring the streaming-read bandwidth");
  auto before = b.bandwidth();
  if (!before)
    return fail(before.status().message());
  const int32_t largest = *std::max_element(contexts->begin(), contexts->end());
  progress.show("filling the cache to " + std::to_string(largest) + " positions");
  if (Status s = b.fillContext(largest); !s.ok())
    return fail(s.message());
  std::vector<ContextResult> results(contexts->size());
  for (size_t i = 0; i < contexts->size(); ++i)
    results[i] = {(*contexts)[i], {}, plan::floorBytes(plan, uint64_t((*contexts)[i]))};
  for (int session = 0; session < sessions; ++session) {
    if (session > 0)
      if (Status s = b.reopen(); !s.ok())
        return fail(s.message());
    for (size_t i = 0; i < contexts->size(); ++i) {
      const int32_t c = (*contexts)[i];
      const std::string where =
          (sessions > 1 ? "session " + std::to_string(session + 1) + "/" +
                              std::to_string(sessions) + ", "
                        : std::string()) +
          "[" + std::to_string(i + 1) + "/" + std::to_string(contexts->size()) + "] context " +
          std::to_string(c);
      progress.show(where + ": " + std::to_string(warmup) + " warm-up and " +
                    std::to_string(reps) + " timed steps");
      if (auto w = b.timeSteps(c, warmup, stepsPerLaunch); !w)
        return fail(w.status().message());
      auto ms = b.timeSteps(c, reps, stepsPerLaunch);
      if (!ms)
        return fail(ms.status().message());
      results[i].sessions.push_back(*ms);
      if (!traceDir.empty() && session == sessions - 1) {
        auto trace = tracedStep(*b.executor, plan, c);
        if (!trace)
          return fail(trace.status().message());
        const std::string path = traceDir + "/trace-" + std::to_string(c) + ".json";
        if (std::string e = writeFileAtomically(path, *trace); !e.empty())
          return fail(e);
      }
    }
  }
  std::vector<double> generationSeconds;
  std::vector<int32_t> generated;
  if (generateCount > 0) {
    progress.show("generation: 1 warm-up and " + std::to_string(generateReps) + " timed runs of " +
                  std::to_string(generateCount) + " tokens");
    if (auto w = bench::timeGeneration(plan, *b.executor, generateCount); !w)
      return fail(w.status().message());
    for (int r = 0; r < generateReps; ++r) {
      auto run = bench::timeGeneration(plan, *b.executor, generateCount);
      if (!run)
        return fail(run.status().message());
      generated = run->tokens;
      generationSeconds.push_back(run->seconds);
    }
  }
  progress.show("measuring the streaming-read bandwidth again");
  auto after = b.bandwidth();
  if (!after)
    return fail(after.status().message());
  progress.done();

  std::vector<double> gbs = before->gbs;
  gbs.insert(gbs.end(), after->gbs.begin(), after->gbs.end());
  const double bandwidth = bench::median(gbs);

  Json runtime;
  runtime["name"] = "tileinfer";
  runtime["label"] = std::string("TileInfer (") + (gpu ? "CUDA" : "CPU") + ")";
  runtime["backend"] = kind;
  runtime["error"] = nullptr;
  runtime["contexts"] = Json::array();
  runtime["worker_mode"] = workerModeName(b.mode);
  runtime["execution"] = plan::executionModelName(plan.stream.model);
  runtime["steps_per_launch"] = stepsPerLaunch;
  std::printf("%s on %s: %s backend; floor = bytes / %.1f GB/s (median of %zu reads of %.2f GB, "
              "measured in this process)\n",
              plan.model.name.c_str(), device.c_str(), kind.c_str(), bandwidth, gbs.size(),
              before->bytes / 1e9);
  std::printf("execution: %s worker, mode %s%s\n", plan::executionModelName(plan.stream.model),
              workerModeName(b.mode),
              b.mode == WorkerMode::Full ? "" : " (a diagnostic: not the model's results)");
  if (stepsPerLaunch > 1)
    std::printf("%d steps a launch (positions context .. context + %d): times per step\n",
                stepsPerLaunch, stepsPerLaunch - 1);
  if (sessions >= int(kMinSessionsForInterval))
    std::printf("median and 95%% interval over %d sessions (fresh loads of the plan), %d "
                "timed steps each\n", sessions, reps);
  else
    std::printf("median and 95%% interval over the timed steps (%d session%s)\n", sessions,
                sessions == 1 ? "" : "s");
  std::printf("%9s %10s %23s %10s %9s %6s\n", "context", "ms/token", "95% interval", "floor ms",
              "of floor", "steps");
  for (const ContextResult &r : results) {
    Json j = contextJson(r, bandwidth);
    std::string ci = j["ci95_ms"].is_null()
                         ? "(needs 6)"
                         : (std::ostringstream() << std::fixed << std::setprecision(4)
                                                 << j["ci95_ms"][0].get<double>() << " - "
                                                 << j["ci95_ms"][1].get<double>())
                               .str();
    std::printf("%9d %10.4f %23s %10.4f %8.1f%% %6zu\n", r.context, j["median_ms"].get<double>(),
                ci.c_str(), j["floor_ms"].get<double>(),
                100 * j["share_of_floor"].get<double>(), j["n"].get<size_t>());
    runtime["contexts"].push_back(std::move(j));
  }
  if (!generationSeconds.empty()) {
    double seconds = bench::median(generationSeconds);
    double rate = seconds > 0 ? generated.size() / seconds : 0;
    std::printf("generation: %zu tokens from a %zu-token prompt in %.2f ms: %.1f tokens/s "
                "(median of %zu runs)\n",
                generated.size(), bench::kGenerationPromptTokens, seconds * 1e3, rate,
                generationSeconds.size());
    runtime["generate"] = Json{{"tokens", generated.size()},
                               {"tokens_per_s", rate},
                               {"seconds", generationSeconds},
                               {"token_ids", generated}};
  }
  std::fflush(stdout);

  if (!jsonPath.empty()) {
    Json out;
    out["schema"] = "tileinfer-bench-1";
    out["date"] = utcNow();
    out["device"] = device;
    out["model"] = plan.model.name;
    out["plan_target"] = plan.target.name;
    std::string command;
    for (int i = 0; i < argc; ++i)
      command += (i ? " " : "tirun ") + std::string(argv[i]);
    out["commands"] = Json::array({command});
    out["bandwidth"] = Json{{"gbs", bandwidth}, {"samples", gbs}, {"bytes", before->bytes}};
    out["runtimes"] = Json::array({runtime});
    const std::string text = out.dump(1) + "\n";
    if (std::string e = jsonOut.write(text.data(), text.size()); !e.empty())
      return fail(e);
    if (std::string e = jsonOut.commit(); !e.empty())
      return fail(e);
  }
  return 0;
}

} // namespace ti::tirun
