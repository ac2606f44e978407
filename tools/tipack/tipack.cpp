//===- tipack.cpp - Pack a checkpoint into a plan's weights layout ---------===//
//
//   tipack plan.fb --checkpoint DIR -o weights.bin   from a safetensors checkpoint
//   tipack plan.fb --random [--seed N] -o weights.bin synthetic weights
//   --tokenizer DIR|tokenizer.json, --threads N (default: one per hardware
//   thread), --quiet
//
// Reads the plan and verifies it (as tirun will) before packing, so that a
// broken plan is refused here rather than packed. The tokenizer files
// (tokenizer.json, tokenizer_config.json, generation_config.json) go into
// weights.bin beside the weights: from --tokenizer, else from the checkpoint's
// directory when it has them. They are loaded and checked against the plan's
// vocabulary first. Prints one summary line.
// Exit status: 0 on success, 1 on any error, printed as `tipack: error: ...`.
//
//===----------------------------------------------------------------------===//
#include "ti/Plan/PlanFile.h"
#include "ti/Plan/PlanVerifier.h"
#include "ti/Support/CommandLineChecks.h"
#include "ti/Tokenizer/Tokenizer.h"
#include "ti/Weights/Packer.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "tipack: error: %s\n", message.c_str());
  return 1;
}

ti::StatusOr<std::string> readText(const std::filesystem::path &path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return ti::Status::error("'" + path.string() + "' is not a regular file");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof())
    return ti::Status::error("cannot read '" + path.string() + "'");
  return text.str();
}

/// The tokenizer files to keep in weights.bin: from `tokenizer` (a
/// tokenizer.json or a directory), else from the checkpoint's directory when
/// it has a tokenizer.json; none when neither names one. Each is checked.
ti::Status gatherTokenizerFiles(const std::string &tokenizer, const std::string &checkpoint,
                                const ti::plan::Plan &plan, ti::PackOptions &opts,
                                std::string &from) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path file;
  if (!tokenizer.empty()) {
    file = fs::is_directory(tokenizer, ec) ? fs::path(tokenizer) / "tokenizer.json" : fs::path(tokenizer);
  } else if (!checkpoint.empty()) {
    fs::path dir = fs::is_directory(checkpoint, ec) ? fs::path(checkpoint) : fs::path(checkpoint).parent_path();
    if (!fs::exists(dir / "tokenizer.json", ec))
      return ti::Status();
    file = dir / "tokenizer.json";
  } else {
    return ti::Status();
  }
  auto json = readText(file);
  if (!json)
    return json.status();
  fs::path dir = file.parent_path();
  std::string config;
  if (fs::exists(dir / "tokenizer_config.json", ec)) {
    auto text = readText(dir / "tokenizer_config.json");
    if (!text)
      return text.status();
    config = *text;
  }
  auto loaded = ti::Tokenizer::fromJson(*json, config, file.string());
  if (!loaded)
    return loaded.status();
  if (static_cast<uint64_t>(loaded->idLimit()) > plan.model.vocab)
    return ti::Status::error(file.string() + ": its ids reach " + std::to_string(loaded->idLimit() - 1) +
                             ", past the model's vocabulary of " + std::to_string(plan.model.vocab));
  opts.attachments.push_back({"tokenizer.json", *json});
  if (!config.empty())
    opts.attachments.push_back({"tokenizer_config.json", config});
  if (fs::exists(dir / "generation_config.json", ec)) {
    auto text = readText(dir / "generation_config.json");
    if (!text)
      return text.status();
    if (!nlohmann::json::accept(*text))
      return ti::Status::error((dir / "generation_config.json").string() + ": not valid JSON");
    opts.attachments.push_back({"generation_config.json", *text});
  }
  from = dir.string();
  return ti::Status();
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
  app.add_option("--seed", opts.seed, "Seed of the synthetic weights (default 0)")
      ->needs(random)
      ->check(ti::checkUnsigned64);
  app.add_option("-o,--output", output, "The weights file to write")->required();
  std::string tokenizer;
  app.add_option("--tokenizer", tokenizer,
                 "A tokenizer.json, or the directory holding it (and tokenizer_config.json, "
                 "generation_config.json), to keep in the weights file (default: the checkpoint's)");
  app.add_option("--threads", opts.threads, "Threads (default: one per hardware thread; at most 1024)")
      ->check(CLI::Range(0u, 1024u));
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
  if (std::string e = ti::checkOutputPath("-o", output, {planPath, opts.checkpoint, tokenizer}); !e.empty())
    return fail(e);

  auto plan = ti::plan::readPlanFile(planPath);
  if (!plan)
    return fail(plan.status().message());
  if (ti::Status s = ti::plan::verifyPlan(*plan); !s.ok())
    return fail("'" + planPath + "' does not verify: " + s.message());

  std::string tokenizerFrom;
  if (ti::Status s = gatherTokenizerFiles(tokenizer, opts.checkpoint, *plan, opts, tokenizerFrom); !s.ok())
    return fail(s.message());

  ti::PackReport report;
  if (ti::Status s = ti::packWeights(*plan, opts, output, &report); !s.ok())
    return fail(s.message());
  if (!quiet) {
    for (const std::string &note : report.notes)
      std::printf("tipack: note: %s\n", note.c_str());
    if (!tokenizerFrom.empty()) {
      std::string names;
      for (const auto &[name, contents] : opts.attachments)
        names += (names.empty() ? "" : ", ") + name;
      std::printf("tipack: note: kept %s from %s\n", names.c_str(), tokenizerFrom.c_str());
    }
    double gb = report.bytes / 1e9;
    std::printf("tipack: %llu tensors, %.3f GB in %.2f s (%.2f GB/s) -> %s\n",
                static_cast<unsigned long long>(report.tensors), gb, report.seconds,
                report.seconds > 0 ? gb / report.seconds : 0.0, output.c_str());
  }
  return 0;
}
