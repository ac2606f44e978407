//===- TextSupport.cpp - The tokenizer and text settings of a run ---------===//
#include "TextSupport.h"

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
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  return j.is_object() ? j : nlohmann::json();
}

} // namespace

std::vector<int32_t> extraEndTokens(const Tokenizer &tokenizer, const WeightsFile *weights) {
  std::vector<int32_t> ends;
  nlohmann::json g = generationConfig(weights);
  if (g.is_object() && g.contains("eos_token_id")) {
    const nlohmann::json &e = g["eos_token_id"];
    if (e.is_number_integer())
      ends.push_back(e.get<int32_t>());
    else if (e.is_array())
      for (const nlohmann::json &id : e)
        if (id.is_number_integer())
          ends.push_back(id.get<int32_t>());
  }
  if (tokenizer.config().eosToken)
    if (auto id = tokenizer.tokenToId(*tokenizer.config().eosToken))
      ends.push_back(*id);
  return ends;
}

SamplingOptions defaultSampling(const WeightsFile *weights) {
  SamplingOptions o;
  nlohmann::json g = generationConfig(weights);
  if (!g.is_object() || !g.value("do_sample", false))
    return o;
  o.temperature = g.value("temperature", 1.0);
  o.topP = g.value("top_p", 1.0);
  o.topK = g.value("top_k", 0);
  if (g.contains("repetition_penalty") && g["repetition_penalty"].is_number())
    o.repeatPenalty = g["repetition_penalty"].get<double>();
  return o;
}

std::string readStandardInput() {
  return std::string(std::istreambuf_iterator<char>(std::cin), {});
}

} // namespace ti::tirun
