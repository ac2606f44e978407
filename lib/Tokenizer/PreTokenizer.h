//===- PreTokenizer.h - tokenizer.json "pre_tokenizer" -----------*- C++ -*-===//
//
// Splits normalized text into the pieces the model encodes one by one:
// Split (a pattern, its matches kept as pieces or removed), ByteLevel (bytes
// to the byte-level alphabet, optionally GPT-2's split first), Metaspace
// (spaces to U+2581, a leading one prepended) and Sequences of them.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_TOKENIZER_PRETOKENIZER_H
#define TI_LIB_TOKENIZER_PRETOKENIZER_H

#include "JsonFields.h"

#include <memory>
#include <string>
#include <vector>

namespace ti::tok {

class PreTokenizer {
public:
  virtual ~PreTokenizer() = default;
  /// Replaces `pieces` by their pre-tokens. `section` counts the stretches of
  /// input between added tokens (Metaspace's "first" scheme reads it).
  virtual Status apply(std::vector<std::string> &pieces, std::size_t section) const = 0;

  /// The pre-tokenizer a tokenizer.json node describes; null for a JSON null.
  static StatusOr<std::unique_ptr<PreTokenizer>> parse(const Json &node, const std::string &path);
};

} // namespace ti::tok

#endif // TI_LIB_TOKENIZER_PRETOKENIZER_H
