//===- Tokenizer.h - Hugging Face tokenizer.json, encode and decode -*- C++ -*-===//
//
// Reads a checkpoint's tokenizer.json (and tokenizer_config.json beside it) and
// turns text into token ids and back, as Hugging Face's tokenizers do for the
// byte-level BPE of Llama 3 and Qwen and the SentencePiece-style BPE (byte
// fallback) of Llama 2, Mistral and TinyLlama. Each step follows the file:
//
//   1. added tokens are cut out of the text first (longest match at each
//      position); the stretches between them go on,
//   2. the normalizer rewrites each stretch, and normalized added tokens are
//      cut out of the result,
//   3. the pre-tokenizer splits it into words (PCRE2 runs the patterns),
//   4. the BPE model merges each word's characters by rank,
//   5. the post-processor adds the special tokens of its template.
//
// Decoding maps ids to token strings and runs the decoder chain; the
// tokenizer_config.json switch clean_up_tokenization_spaces then removes the
// space before punctuation. A construct the implementation does not cover is
// refused when the file loads, with the field's path in the message, never
// approximated. The reference it is tested against, string by string, is
// Hugging Face's JavaScript implementation (test/tokenizer).
//
// A Tokenizer is immutable after loading: copies share it, and any number of
// threads may encode and decode at once.
//
//===----------------------------------------------------------------------===//
#ifndef TI_TOKENIZER_TOKENIZER_H
#define TI_TOKENIZER_TOKENIZER_H

#include "ti/Support/Status.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ti {

/// What tokenizer_config.json says beyond tokenizer.json.
struct TokenizerConfig {
  std::optional<std::string> bosToken, eosToken, padToken, unkToken;
  /// The Jinja chat template, empty when the checkpoint has none.
  std::string chatTemplate;
  bool cleanUpTokenizationSpaces = true; // the reference's default when absent
  std::vector<std::string> additionalSpecialTokens;
};

struct EncodeOptions {
  /// Apply the post-processor's template (the BOS token of Llama 2, say).
  bool addSpecialTokens = true;
};

struct DecodeOptions {
  bool skipSpecialTokens = false;
  /// Overrides tokenizer_config.json's clean_up_tokenization_spaces.
  std::optional<bool> cleanUpSpaces{};
};

class Tokenizer {
public:
  /// From the texts of tokenizer.json and tokenizer_config.json (empty when
  /// there is none). `name` prefixes every error ("tokenizer.json: ...").
  static StatusOr<Tokenizer> fromJson(std::string_view tokenizerJson, std::string_view configJson,
                                      std::string_view name = "tokenizer.json");
  /// From a tokenizer.json file, or a directory holding one; the
  /// tokenizer_config.json beside it is read when present.
  static StatusOr<Tokenizer> fromPath(const std::string &path);

  /// The ids of `text`, which must be valid UTF-8.
  StatusOr<std::vector<int32_t>> encode(std::string_view text, const EncodeOptions &options = {}) const;
  /// The text of `ids`; an id outside the vocabulary is an error.
  StatusOr<std::string> decode(std::span<const int32_t> ids, const DecodeOptions &options = {}) const;

  /// One more than the largest id the vocabulary or the added tokens use.
  int32_t idLimit() const;
  std::optional<int32_t> tokenToId(std::string_view token) const;
  /// The token's string, or null for an id without one.
  const std::string *idToToken(int32_t id) const;
  bool isSpecial(int32_t id) const;
  const TokenizerConfig &config() const;

  struct Impl;

private:
  std::shared_ptr<const Impl> impl;
};

} // namespace ti

#endif // TI_TOKENIZER_TOKENIZER_H
