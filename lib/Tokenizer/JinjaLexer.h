//===- JinjaLexer.h - Chat templates: preprocessing and tokens --*- C++ -*-===//
#ifndef TI_LIB_TOKENIZER_JINJALEXER_H
#define TI_LIB_TOKENIZER_JINJALEXER_H

#include "ti/Support/Status.h"

#include <string>
#include <vector>

namespace ti::jinja {

struct Token {
  enum class Kind { Text, OpenStatement, CloseStatement, OpenExpression, CloseExpression, Name, String, Integer,
                    Real, Operator, End };
  Kind kind;
  std::string text;
  int line;
};

/// The template's tokens, ending with an End token; errors read "line N: ...".
StatusOr<std::vector<Token>> lex(std::string source);

} // namespace ti::jinja

#endif // TI_LIB_TOKENIZER_JINJALEXER_H
