//===- TextSupport.h - The tokenizer and text settings of a run --*- C++ -*-===//
//
// Where text mode's settings come from: the tokenizer (--tokenizer, else the
// files tipack kept in weights.bin), the end tokens (the plan's, the
// checkpoint's generation_config.json and tokenizer_config.json), and the
// default sampling of generation_config.json.
//
//===----------------------------------------------------------------------===//
#ifndef TI_TOOLS_TIRUN_TEXTSUPPORT_H
#define TI_TOOLS_TIRUN_TEXTSUPPORT_H

#include "ti/Plan/Plan.h"
#include "ti/Runtime/Sampler.h"
#include "ti/Tokenizer/Tokenizer.h"
#include "ti/Weights/WeightsFile.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace ti::tirun {

/// `overridePath` (a tokenizer.json or its directory) when given, else the
/// tokenizer kept in `weights`; an error that says how to get one otherwise.
StatusOr<Tokenizer> loadTokenizer(const std::string &overridePath, const WeightsFile *weights);

/// Reads the tokenizer's files from `weightsPath` alone (tirun tokenize).
StatusOr<Tokenizer> loadTokenizerFromWeights(const std::string &weightsPath);

/// The tokens that end a generation besides the plan's: generation_config's
/// eos_token_id (one or a list) and tokenizer_config's eos_token.
std::vector<int32_t> extraEndTokens(const Tokenizer &tokenizer, const WeightsFile *weights);

/// generation_config.json's sampling (do_sample, temperature, top_k, top_p)
/// as defaults; greedy when it says nothing.
SamplingOptions defaultSampling(const WeightsFile *weights);

/// --temperature, --top-k, --top-p, --min-p, --repeat-penalty, --seed, into `flags`.
void addSamplingOptions(CLI::App &app, SamplingOptions &flags);
/// The defaults of `weights` with the flags given on the command line over them.
SamplingOptions chooseSampling(const CLI::App &app, const SamplingOptions &flags, const WeightsFile *weights);

/// Reads all of standard input.
std::string readStandardInput();

} // namespace ti::tirun

#endif // TI_TOOLS_TIRUN_TEXTSUPPORT_H
