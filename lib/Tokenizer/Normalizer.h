//===- Normalizer.h - tokenizer.json "normalizer" ----------------*- C++ -*-===//
//
// The text rewrites applied to each stretch of input between added tokens
// before it is split: Unicode normalization forms, Prepend, Replace, Strip,
// and Sequences of them. Other kinds are refused when the file is loaded.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_TOKENIZER_NORMALIZER_H
#define TI_LIB_TOKENIZER_NORMALIZER_H

#include "JsonFields.h"

#include <memory>
#include <string>
#include <string_view>

namespace ti::tok {

class Normalizer {
public:
  virtual ~Normalizer() = default;
  /// `text` is valid UTF-8 and the result is too.
  virtual StatusOr<std::string> apply(std::string text) const = 0;

  /// The normalizer a tokenizer.json node describes; null for a JSON null.
  static StatusOr<std::unique_ptr<Normalizer>> parse(const Json &node, const std::string &path);
};

} // namespace ti::tok

#endif // TI_LIB_TOKENIZER_NORMALIZER_H
