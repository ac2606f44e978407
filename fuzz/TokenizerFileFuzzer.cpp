//===- TokenizerFileFuzzer.cpp - tokenizer.json through the loader --------===//
//
// The input is tokenizer.json, "\n--\n", tokenizer_config.json, "\n--\n", and
// a text. A tokenizer that loads encodes the text (with and without the
// special tokens), decodes what it got, and streams it: the stream's pieces
// must add up to the decoded text, as StreamDecoder promises.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "ti/Tokenizer/ChatTemplate.h"
#include "ti/Tokenizer/StreamDecoder.h"
#include "ti/Tokenizer/Tokenizer.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view rest(reinterpret_cast<const char *>(data), size);
  std::string_view json = ti::fuzz::splitField(rest);
  std::string_view config = ti::fuzz::splitField(rest);
  auto tokenizer = ti::Tokenizer::fromJson(json, config);
  if (!tokenizer)
    return 0;
  (void)ti::ChatTemplate::of(*tokenizer);
  for (bool special : {true, false}) {
    auto ids = tokenizer->encode(rest, {.addSpecialTokens = special});
    if (!ids)
      continue;
    auto text = tokenizer->decode(*ids);
    if (!text)
      continue; // an id the vocabulary lacks (a post-processor's, say) is refused, not read
    ti::StreamDecoder stream(*tokenizer);
    std::string streamed;
    for (int32_t id : *ids) {
      auto piece = stream.push(id);
      if (!piece)
        std::abort(); // decode accepted these ids
      streamed += *piece;
    }
    auto tail = stream.finish();
    if (!tail)
      std::abort();
    streamed += *tail;
    if (streamed != *text) {
      std::fprintf(stderr, "streamed text differs from the decoded text\n");
      std::abort();
    }
  }
  return 0;
}
