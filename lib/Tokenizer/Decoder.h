//===- Decoder.h - tokenizer.json "decoder" ----------------------*- C++ -*-===//
//
// Turns the tokens' strings back into text, as a chain of steps over the list
// of strings: ByteLevel (alphabet back to bytes, then UTF-8), ByteFallback
// (<0xAB> runs to UTF-8), Replace, Fuse, Strip, Metaspace, Sequence.
// Invalid UTF-8 becomes U+FFFD per maximal subpart.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_TOKENIZER_DECODER_H
#define TI_LIB_TOKENIZER_DECODER_H

#include "JsonFields.h"

#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

namespace ti::tok {

class Decoder {
public:
  virtual ~Decoder() = default;
  virtual Status apply(std::vector<std::string> &tokens) const = 0;

  /// `addedTokens`: the added tokens' contents, which ByteLevel passes through
  /// as they are. Null for a JSON null.
  static StatusOr<std::unique_ptr<Decoder>> parse(const Json &node, const std::string &path,
                                                  const std::unordered_set<std::string> &addedTokens);
};

} // namespace ti::tok

#endif // TI_LIB_TOKENIZER_DECODER_H
