//===- NaiveLlamaTool.cpp - The reference forward pass as a command -------===//
//
//   naive-llama --config config.json --random-seed 1 --prompt-tokens 128000,791 -n 2
//               [--dump-logits FILE]
//
// Runs NaiveLlama (double precision, written from the model's math) on the
// weights `tipack --random --seed N` packs for a plan of the same model, and
// prints the greedy tokens it generates as tirun does (ids on one line), so
// that lit tests can hold tirun's output against an oracle that shares no code
// with the compiler, the plan or the executors. The model comes from a Hugging
// Face config.json, not from a graph or a plan. Every step's logits (prompt
// steps included, as tirun --dump-logits writes them) go to --dump-logits as
// float32.
//
// The only code it shares with the runtime is the generator of the synthetic
// checkpoint values (RandomWeights.h): the values themselves, rounded to bf16
// as a bf16 checkpoint holds them, are the input both sides are given.
//
// Exit status 0, or 1 with one error line.
//
//===----------------------------------------------------------------------===//
#include "NaiveLlama.h"

#include "ti/Weights/RandomWeights.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

using namespace ti::reference;
using json = nlohmann::json;

namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "naive-llama: error: %s\n", message.c_str());
  return 1;
}

/// A Llama config.json (Hugging Face's LlamaConfig keys).
LlamaConfig readConfig(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read '" + path + "'");
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    throw std::runtime_error("'" + path + "' is not a JSON object");
  auto need = [&](const char *key) -> const json & {
    if (!j.contains(key))
      throw std::runtime_error("'" + path + "' has no \"" + key + "\"");
    return j[key];
  };
  LlamaConfig c;
  c.vocab = need("vocab_size").get<int>();
  c.hidden = need("hidden_size").get<int>();
  c.ffn = need("intermediate_size").get<int>();
  c.layers = need("num_hidden_layers").get<int>();
  c.heads = need("num_attention_heads").get<int>();
  c.kvHeads = j.value("num_key_value_heads", c.heads);
  c.headDim = j.value("head_dim", c.hidden / c.heads);
  c.rmsEps = j.value("rms_norm_eps", c.rmsEps);
  c.ropeTheta = j.value("rope_theta", c.ropeTheta);
  c.tiedEmbeddings = j.value("tie_word_embeddings", false);
  if (j.contains("rope_scaling") && j["rope_scaling"].is_object()) {
    const json &s = j["rope_scaling"];
    std::string type = s.value("rope_type", s.value("type", std::string()));
    if (type != "llama3")
      throw std::runtime_error("rope_scaling type '" + type + "' is not llama3");
    c.llama3Scaling = true;
    c.ropeFactor = s.value("factor", c.ropeFactor);
    c.lowFreqFactor = s.value("low_freq_factor", c.lowFreqFactor);
    c.highFreqFactor = s.value("high_freq_factor", c.highFreqFactor);
    c.originalContext = s.value("original_max_position_embeddings", c.originalContext);
  }
  return c;
}

/// The bf16 nearest to a finite float, ties to even, as a float: the bit form
/// of NaiveLlama::roundToBf16 (NaiveLlamaTest holds the two against each
/// other), twenty times faster on the 1.2 billion values of a 1B model.
float roundToBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
  std::memcpy(&value, &bits, sizeof bits);
  return value;
}

/// The values `tipack --random --seed N` packs for checkpoint tensor `name`:
/// its shape from the config, each value rounded to bf16.
WeightFn randomCheckpoint(const LlamaConfig &c, uint64_t seed) {
  return [c, seed](const std::string &name) {
    auto has = [&](const char *s) { return name.find(s) != std::string::npos; };
    const size_t h = c.hidden, q = size_t(c.heads) * c.headDim,
                 kv = size_t(c.kvHeads) * c.headDim, f = c.ffn;
    size_t elements = 0;
    unsigned rank = 2;
    if (name == "model.embed_tokens.weight" || name == "lm_head.weight")
      elements = size_t(c.vocab) * h;
    else if (has("layernorm") || name == "model.norm.weight")
      elements = h, rank = 1;
    else if (has("q_proj") || has("o_proj"))
      elements = q * h;
    else if (has("k_proj") || has("v_proj"))
      elements = kv * h;
    else if (has("gate_proj") || has("up_proj") || has("down_proj"))
      elements = f * h;
    else
      throw std::runtime_error("no shape for tensor " + name);
    std::vector<float> values(elements);
    ti::randomWeights(seed, name, rank, 0, elements, values.data());
    for (float &x : values)
      x = roundToBf16(x);
    return values;
  };
}

std::vector<int> parseTokens(const std::string &text) {
  std::vector<int> tokens;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    int id = std::stoi(item, &used);
    if (used != item.size())
      throw std::runtime_error("--prompt-tokens: '" + item + "' is not a token id");
    tokens.push_back(id);
  }
  if (tokens.empty())
    throw std::runtime_error("--prompt-tokens: no tokens");
  return tokens;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"naive-llama: the reference forward pass on tipack's random weights"};
  std::string configPath, promptText, dumpPath;
  uint64_t seed = 0;
  int count = 16;
  app.add_option("--config", configPath, "the model's config.json (Hugging Face keys)")
      ->required();
  app.add_option("--random-seed", seed, "the weights of tipack --random --seed N")->required();
  app.add_option("--prompt-tokens", promptText, "the prompt as token ids: 128000,791")
      ->required();
  app.add_option("-n,--tokens", count, "tokens to generate (default 16)");
  app.add_option("--dump-logits", dumpPath, "every step's logits, float32, to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    app.exit(e);
    return 0;
  } catch (const CLI::ParseError &e) {
    return fail(e.what());
  }

  try {
    const LlamaConfig config = readConfig(configPath);
    const std::vector<int> prompt = parseTokens(promptText);
    NaiveLlama model(config, randomCheckpoint(config, seed));
    std::ofstream dump;
    if (!dumpPath.empty()) {
      dump.open(dumpPath, std::ios::binary);
      if (!dump)
        return fail("cannot write '" + dumpPath + "'");
    }
    std::vector<int> generated;
    int token = prompt[0];
    for (size_t step = 0; generated.size() < size_t(count); ++step) {
      std::vector<double> logits = model.step(token);
      if (dump)
        for (double v : logits) {
          float f = static_cast<float>(v);
          dump.write(reinterpret_cast<const char *>(&f), sizeof f);
        }
      if (step + 1 < prompt.size()) {
        token = prompt[step + 1];
        continue;
      }
      token = NaiveLlama::argmax(logits);
      generated.push_back(token);
    }
    if (dump && !dump.flush())
      return fail("writing '" + dumpPath + "' failed");
    std::ostringstream out;
    for (size_t i = 0; i < generated.size(); ++i)
      out << (i ? " " : "") << generated[i];
    std::cout << out.str() << std::endl;
  } catch (const std::exception &e) {
    return fail(e.what());
  }
  return 0;
}
