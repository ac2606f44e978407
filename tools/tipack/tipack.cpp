//===- tipack.cpp - Pack a checkpoint into a plan's weights layout ---------===//
//
//   tipack plan.fb --checkpoint DIR -o weights.bin   from a safetensors checkpoint
//   tipack plan.fb --random [--seed N] -o weights.bin synthetic weights
//   --threads N (default: one per hardware thread), --quiet
//
// Reads the plan and verifies it (as tirun will) before packing, so that a
// broken plan is refused here rather than packed. Prints one summary line.
// Exit status: 0 on success, 1 on any error, printed as `tipack: error: ...`.
//
//===----------------------------------------------------------------------===//
#include "ti/Plan/PlanFile.h"
#include "ti/Plan/PlanVerifier.h"
#include "ti/Weights/Packer.h"

#include <CLI/CLI.hpp>

#include <cstdio>

namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "tipack: error: %s\n", message.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"tipack: packs a checkpoint into a plan's weights layout (weights.bin)"};
  std::string planPath, output;
  ti::PackOptions opts;
  bool quiet = false;
  app.add_option("plan", planPath, "The plan file (from tic -o)")->required();
  auto *checkpoint = app.add_option("--checkpoint", opts.checkpoint,
                                    "A safetensors checkpoint: directory, index or file");
  auto *random = app.add_flag("--random", opts.random, "Synthetic weights instead");
  app.add_option("--seed", opts.seed, "Seed of the synthetic weights (default 0)")->needs(random);
  app.add_option("-o,--output", output, "The weights file to write")->required();
  app.add_option("--threads", opts.threads, "Threads (default: one per hardware thread)");
  app.add_flag("-q,--quiet", quiet, "Print nothing on success");
  checkpoint->excludes(random);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    if (e.get_exit_code() == 0)
      return app.exit(e);
    return fail(e.what());
  }
  if (opts.checkpoint.empty() && !opts.random)
    return fail("say where the weights come from: --checkpoint DIR or --random");

  auto plan = ti::plan::readPlanFile(planPath);
  if (!plan)
    return fail(plan.status().message());
  if (ti::Status s = ti::plan::verifyPlan(*plan); !s.ok())
    return fail("'" + planPath + "' does not verify: " + s.message());

  ti::PackReport report;
  if (ti::Status s = ti::packWeights(*plan, opts, output, &report); !s.ok())
    return fail(s.message());
  if (!quiet) {
    for (const std::string &note : report.notes)
      std::printf("tipack: note: %s\n", note.c_str());
    double gb = report.bytes / 1e9;
    std::printf("tipack: %llu tensors, %.3f GB in %.2f s (%.2f GB/s) -> %s\n",
                static_cast<unsigned long long>(report.tensors), gb, report.seconds,
                report.seconds > 0 ? gb / report.seconds : 0.0, output.c_str());
  }
  return 0;
}
