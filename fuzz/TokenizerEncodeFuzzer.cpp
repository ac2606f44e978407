//===- TokenizerEncodeFuzzer.cpp - Text through the real tokenizers -------===//
//
// The tokenizers of Llama 3, Qwen3 and Llama 2 (third_party/npm) load once.
// The input's first byte picks one; the rest is text to encode, and, read as
// 32-bit ids, ids to decode. Properties: no crash; for Llama 3 (byte-level,
// no normalizer) decoding what encoding gave, without the clean-up, returns
// valid UTF-8 input unchanged; a stream of any ids adds up to their decoding.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "ti/Tokenizer/StreamDecoder.h"
#include "ti/Tokenizer/Tokenizer.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

const std::vector<ti::Tokenizer> &tokenizers() {
  static const std::vector<ti::Tokenizer> all = [] {
    std::vector<ti::Tokenizer> loaded;
    for (const char *name : {"tokenizer-llama3", "tokenizer-qwen3", "tokenizer-llama2"}) {
      std::string dir = ti::fuzz::tokenizersDir() + "/" + name + "/models";
      auto t = ti::Tokenizer::fromPath(dir);
      if (!t) {
        std::fprintf(stderr, "fuzz harness: %s (run scripts/bootstrap.sh, or set TI_FUZZ_TOKENIZERS)\n",
                     t.status().message().c_str());
        std::abort();
      }
      loaded.push_back(std::move(*t));
    }
    return loaded;
  }();
  return all;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  tokenizers();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const unsigned which = data[0] % 3;
  const ti::Tokenizer &tokenizer = tokenizers()[which];
  std::string_view text(reinterpret_cast<const char *>(data) + 1, size - 1);

  const ti::DecodeOptions raw{.cleanUpSpaces = false};
  if (auto ids = tokenizer.encode(text, {.addSpecialTokens = false}); ids && which == 0) {
    auto back = tokenizer.decode(*ids, raw);
    if (!back || *back != text) {
      std::fprintf(stderr, "Llama 3: decode(encode(text)) is not the text\n");
      std::abort();
    }
  }

  std::vector<int32_t> ids((size - 1) / 4);
  if (!ids.empty())
    std::memcpy(ids.data(), data + 1, ids.size() * 4);
  for (int32_t &id : ids)
    id = static_cast<int32_t>(static_cast<uint32_t>(id) % static_cast<uint32_t>(tokenizer.idLimit()));
  auto decoded = tokenizer.decode(ids);
  if (!decoded)
    return 0; // ids with no token (gaps in the vocabulary) are refused
  ti::StreamDecoder stream(tokenizer);
  std::string streamed;
  for (int32_t id : ids) {
    auto piece = stream.push(id);
    if (!piece)
      std::abort();
    streamed += *piece;
  }
  auto tail = stream.finish();
  if (!tail || streamed + *tail != *decoded) {
    std::fprintf(stderr, "streamed text differs from the decoded text\n");
    std::abort();
  }
  return 0;
}
