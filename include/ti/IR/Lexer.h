//===- Lexer.h - Tokens of the graph language ------------------*- C++ -*-===//
//
// The graph language is line-oriented text with `#` comments. The lexer stamps
// every token with its location (a pointer into the SourceMgr's buffer) and with
// whether it is the first token on its line, which the parser uses to resume
// after an error at the next statement.
//
// Ownership: the lexer borrows the buffer; tokens point into it.
//
//===----------------------------------------------------------------------===//
#ifndef TI_IR_LEXER_H
#define TI_IR_LEXER_H

#include "ti/IR/Diagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

namespace ti {

enum class TokenKind {
  Eof,
  Error, // A malformed token; the lexer has already reported it.
  Identifier,
  Integer,
  Float,
  String, // The text excludes the quotes.
  LBrace, RBrace, LParen, RParen, LBracket, RBracket,
  Comma, Colon, Equal, Plus, Minus, Star, Slash, Percent, DotDot,
  // Keywords.
  KwGraph, KwDim, KwAttr, KwInput, KwWeight, KwFor, KwIn, KwOutput,
};

/// A human-readable name of a token kind for "expected X" messages.
llvm::StringRef tokenKindName(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::Eof;
  llvm::StringRef text;
  llvm::SMLoc loc;
  bool atLineStart = false;

  bool is(TokenKind k) const { return kind == k; }
  bool isNot(TokenKind k) const { return kind != k; }
};

class Lexer {
public:
  Lexer(llvm::StringRef buffer, DiagnosticEngine &diags)
      : buffer(buffer), cur(buffer.begin()), diags(diags) {}

  /// Returns the next token; Eof forever once the buffer is exhausted.
  Token next();

private:
  Token make(TokenKind kind, const char *start);
  Token lexIdentifier(const char *start);
  Token lexNumber(const char *start);
  Token lexString(const char *start);
  /// Skips blanks and comments; returns true if a newline was crossed.
  bool skipTrivia();

  llvm::StringRef buffer;
  const char *cur;
  DiagnosticEngine &diags;
  bool sawNewline = true; // The first token is at the start of a line.
};

} // namespace ti

#endif // TI_IR_LEXER_H
