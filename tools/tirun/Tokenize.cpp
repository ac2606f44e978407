//===- Tokenize.cpp - tirun tokenize / detokenize -------------------------===//
//
//   echo "Hello world" | tirun tokenize weights.bin         128000 9906 1917 198
//   echo "9906 1917" | tirun detokenize --tokenizer DIR     Hello world
//
// The tokenizer is the one a run would use: --tokenizer, else the one kept in
// the weights file. Text must be valid UTF-8; ids must be in the vocabulary.
//
//===----------------------------------------------------------------------===//
#include "Tokenize.h"

#include "CommandLine.h"
#include "TextSupport.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

namespace ti::tirun {

namespace {

StatusOr<Tokenizer> tokenizerFor(const std::string &weights, const std::string &tokenizer) {
  if (!tokenizer.empty())
    return Tokenizer::fromPath(tokenizer);
  if (weights.empty())
    return Status::error("give a weights file that keeps a tokenizer, or --tokenizer FILE");
  return loadTokenizerFromWeights(weights);
}

} // namespace

int runTokenize(int argc, char **argv) {
  CLI::App app{"tirun tokenize: text on standard input, token ids on standard output"};
  std::string weights, tokenizer;
  bool noSpecial = false, timing = false;
  app.add_option("weights", weights, "a weights file that keeps its tokenizer (tipack --tokenizer)");
  app.add_option("--tokenizer", tokenizer, "a tokenizer.json, or the directory that holds it");
  app.add_flag("--no-special", noSpecial, "leave out the special tokens the tokenizer adds (a BOS)");
  app.add_flag("--time", timing, "print the loading and encoding times on standard error");
  if (auto exit = parseCommandLine(app, argc, argv))
    return *exit;
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  auto t = tokenizerFor(weights, tokenizer);
  if (!t)
    return fail(t.status().message());
  std::string text = readStandardInput();
  auto t1 = Clock::now();
  auto ids = t->encode(text, {.addSpecialTokens = !noSpecial});
  auto t2 = Clock::now();
  if (!ids)
    return fail("standard input: " + ids.status().message());
  if (timing)
    std::fprintf(stderr, "tirun tokenize: loaded in %.3f s; %zu bytes encoded into %zu tokens in %.3f s (%.2f MB/s)\n",
                 std::chrono::duration<double>(t1 - t0).count(), text.size(), ids->size(),
                 std::chrono::duration<double>(t2 - t1).count(),
                 text.size() / 1e6 / std::max(1e-9, std::chrono::duration<double>(t2 - t1).count()));
  std::string out;
  for (std::size_t i = 0; i < ids->size(); ++i)
    out += (i ? " " : "") + std::to_string((*ids)[i]);
  std::cout << out << '\n';
  return 0;
}

int runDetokenize(int argc, char **argv) {
  CLI::App app{"tirun detokenize: token ids on standard input, text on standard output"};
  std::string weights, tokenizer;
  bool skipSpecial = false;
  app.add_option("weights", weights, "a weights file that keeps its tokenizer (tipack --tokenizer)");
  app.add_option("--tokenizer", tokenizer, "a tokenizer.json, or the directory that holds it");
  app.add_flag("--skip-special", skipSpecial, "leave out special tokens");
  if (auto exit = parseCommandLine(app, argc, argv))
    return *exit;
  auto t = tokenizerFor(weights, tokenizer);
  if (!t)
    return fail(t.status().message());
  std::string input = readStandardInput();
  for (char &c : input)
    if (c == ',' || c == '\n' || c == '\t' || c == '\r')
      c = ' ';
  std::vector<int32_t> ids;
  std::size_t at = 0;
  while ((at = input.find_first_not_of(' ', at)) != std::string::npos) {
    std::size_t end = input.find(' ', at);
    std::string item = input.substr(at, end == std::string::npos ? std::string::npos : end - at);
    auto parsed = parseIntegerList(item, 0, INT32_MAX, "standard input", "a token id");
    if (!parsed)
      return fail(parsed.status().message());
    ids.push_back((*parsed)[0]);
    at = end;
  }
  auto text = t->decode(ids, {.skipSpecialTokens = skipSpecial});
  if (!text)
    return fail(text.status().message());
  std::fwrite(text->data(), 1, text->size(), stdout);
  return 0;
}

} // namespace ti::tirun
