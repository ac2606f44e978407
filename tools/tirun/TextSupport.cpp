//===- TextSupport.cpp - The tokenizer and text settings of a run ---------===//
#include "TextSupport.h"

#include "ti/Support/CommandLineChecks.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <iterator>

namespace ti::tirun {

StatusOr<Tokenizer> loadTokenizer(const std::string &overridePath, const WeightsFile *weights) {
  if (!overridePath.empty())
    return Tokenizer::fromPath(overridePath);
  std::optional<std::string_view> json = weights ? weights->attachment("tokenizer.json") : std::nullopt;
  if (!json)
    return Status::error("'" + (weights ? weights->path() : std::string("weights.bin")) +
                         "' keeps no tokenizer: pack it with tipack --tokenizer DIR (or from a "
                         "checkpoint that has tokenizer.json), or give tirun --tokenizer FILE");
  std::string_view config = weights->attachment("tokenizer_config.json").value_or("");
  return Tokenizer::fromJson(*json, config, weights->path() + ": tokenizer.json");
}

StatusOr<Tokenizer> loadTokenizerFromWeights(const std::string &weightsPath) {
  auto weights = WeightsFile::open(weightsPath);
  if (!weights)
    return weights.status();
  return loadTokenizer("", weights->get());
}

namespace {

nlohmann::json generationConfig(const WeightsFile *weights) {
  if (!weights)
    return nullptr;
  auto text = weights->attachment("generation_config.json");
  if (!text)
    return nullptr;
  // generation_config.json is flat; refuse deep nesting rather than recurse on it.
  bool tooDeep = false;
  nlohmann::json::parser_callback_t limit = [&](int depth, nlohmann::json::parse_event_t, nlohmann::json &) {
    tooDeep = tooDeep || depth > 16;
    return !tooDeep;
  };
  nlohmann::json j = nlohmann::json::parse(*text, limit, false);
  if (tooDeep || !j.is_object())
    return nlohmann::json();
  return j;
}

} // namespace

std::vector<int32_t> extraEndTokens(const Tokenizer &tokenizer, const WeightsFile *weights) {
  std::vector<int32_t> ends;
  nlohmann::json g = generationConfig(weights);
  if (g.is_object() && g.contains("eos_token_id")) {
    const nlohmann::json &e = g["eos_token_id"];
    auto add = [&](const nlohmann::json &id) {
      if (id.is_number_integer() && id.get<int64_t>() >= 0 && id.get<int64_t>() <= INT32_MAX)
        ends.push_back(static_cast<int32_t>(id.get<int64_t>()));
    };
    if (e.is_array())
      for (const nlohmann::json &id : e)
        add(id);
    else
      add(e);
  }
  if (tokenizer.config().eosToken)
    if (auto id = tokenizer.tokenToId(*tokenizer.config().eosToken))
      ends.push_back(*id);
  return ends;
}

SamplingOptions defaultSampling(const WeightsFile *weights) {
  SamplingOptions o;
  nlohmann::json g = generationConfig(weights);
  // Fields of another type are ignored rather than trusted (the sampler's own
  // checks then see the defaults).
  auto number = [&](const char *key, double otherwise) {
    return g.contains(key) && g[key].is_number() ? g[key].get<double>() : otherwise;
  };
  if (!g.is_object() || !g.contains("do_sample") || g["do_sample"] != true)
    return o;
  o.temperature = number("temperature", 1.0);
  o.topP = number("top_p", 1.0);
  double k = number("top_k", 0);
  o.topK = k >= 0 && k <= 1e6 ? static_cast<int32_t>(k) : 0;
  o.repeatPenalty = number("repetition_penalty", 1.0);
  return o;
}

void addSamplingOptions(CLI::App &app, SamplingOptions &flags) {
  app.add_option("--temperature", flags.temperature, "sample at this temperature (0: greedy, the default)");
  app.add_option("--top-k", flags.topK, "sample from the k likeliest tokens (0: all)");
  app.add_option("--top-p", flags.topP, "sample from the likeliest tokens that reach this probability");
  app.add_option("--min-p", flags.minP, "drop tokens below this fraction of the likeliest one's probability");
  app.add_option("--repeat-penalty", flags.repeatPenalty, "divide the logits of the last 64 tokens by this (1: none)");
  app.add_option("--seed", flags.seed, "the sampler's seed (default 0)")->check(checkUnsigned64);
}

SamplingOptions chooseSampling(const CLI::App &app, const SamplingOptions &flags, const WeightsFile *weights) {
  SamplingOptions o = defaultSampling(weights);
  if (app.count("--temperature")) o.temperature = flags.temperature;
  if (app.count("--top-k")) o.topK = flags.topK;
  if (app.count("--top-p")) o.topP = flags.topP;
  if (app.count("--min-p")) o.minP = flags.minP;
  if (app.count("--repeat-penalty")) o.repeatPenalty = flags.repeatPenalty;
  if (app.count("--seed")) o.seed = flags.seed;
  return o;
}

std::string readStandardInput() {
  return std::string(std::istreambuf_iterator<char>(std::cin), {});
}

} // namespace ti::tirun
