//===- Bpe.h - tokenizer.json "model": byte-pair encoding --------*- C++ -*-===//
//
// A pre-token becomes its characters, then adjacent pairs merge, the pair of
// lowest rank first (the leftmost among equals), until no pair has a rank.
// Pieces the vocabulary lacks become byte tokens (<0xAB>) under byte_fallback,
// else the unknown token (consecutive ones fused under fuse_unk), else
// nothing, as the reference does. ignore_merges takes a pre-token that is in
// the vocabulary whole.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_TOKENIZER_BPE_H
#define TI_LIB_TOKENIZER_BPE_H

#include "JsonFields.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ti::tok {

class Bpe {
public:
  static StatusOr<Bpe> parse(const Json &model, const std::string &path);

  /// Encodes the pre-tokens of one stretch of text into vocabulary ids.
  /// `cache` (may be null) remembers words already encoded by this caller.
  void encode(const std::vector<std::string> &pieces, std::vector<int32_t> &ids,
              std::unordered_map<std::string, std::vector<int32_t>> *cache) const;

  /// Makes `token` spell `id`, as the tokenizer's added tokens do: the model
  /// then emits it when a word or a merge spells it.
  void setToken(const std::string &token, int32_t id);

  /// token -> id, as the model's vocabulary has it (added tokens included).
  const std::unordered_map<std::string, int32_t> &vocabulary() const { return vocab; }
  const std::optional<std::string> &unknownToken() const { return unkToken; }
  const std::string &endOfWordSuffix() const { return endOfWord; }

private:
  void encodeWord(std::string_view word, std::vector<int32_t> &ids) const;
  void emitPiece(std::string_view piece, int32_t symbol, std::vector<int32_t> &ids) const;
  int32_t symbolOf(std::string_view text) const;

  std::unordered_map<std::string, int32_t> vocab;
  // Every string a merge names, interned: symbol -> text, and its vocabulary id.
  std::unordered_map<std::string, int32_t> symbols;
  std::vector<std::string> symbolText;
  std::vector<int32_t> symbolId; // -1: not in the vocabulary
  std::vector<int32_t> asciiSymbol;  // symbols of the one-byte characters, -1 where none
  // (left symbol, right symbol) -> (rank, merged symbol)
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges;
  std::optional<std::string> unkToken;
  std::optional<int32_t> unkId;
  std::string endOfWord;
  bool byteFallback = false, fuseUnknown = false, ignoreMerges = false;
  // SentencePiece-style files have no pre-tokenizer: a whole stretch of text
  // is one word. When no merge joins a symbol ending in another character to
  // one starting with U+2581, a word splits exactly before each U+2581 that
  // follows another character (the pieces merge alone as they would
  // together); parse() checks that from the merges.
  bool splitsAtMetaspace = false;
  int32_t byteIds[256]; // the ids of <0x00>..<0xFF>, -1 where missing
};

} // namespace ti::tok

#endif // TI_LIB_TOKENIZER_BPE_H
