//===- Lexer.cpp - Tokens of the graph language ---------------------------===//
#include "ti/IR/Lexer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <cctype>

using namespace ti;

llvm::StringRef ti::tokenKindName(TokenKind kind) {
  switch (kind) {
  case TokenKind::Eof: return "end of file";
  case TokenKind::Error: return "invalid token";
  case TokenKind::Identifier: return "identifier";
  case TokenKind::Integer: return "integer";
  case TokenKind::Float: return "number";
  case TokenKind::String: return "string";
  case TokenKind::LBrace: return "'{'";
  case TokenKind::RBrace: return "'}'";
  case TokenKind::LParen: return "'('";
  case TokenKind::RParen: return "')'";
  case TokenKind::LBracket: return "'['";
  case TokenKind::RBracket: return "']'";
  case TokenKind::Comma: return "','";
  case TokenKind::Colon: return "':'";
  case TokenKind::Equal: return "'='";
  case TokenKind::Plus: return "'+'";
  case TokenKind::Minus: return "'-'";
  case TokenKind::Star: return "'*'";
  case TokenKind::Slash: return "'/'";
  case TokenKind::Percent: return "'%'";
  case TokenKind::DotDot: return "'..'";
  case TokenKind::KwGraph: return "'graph'";
  case TokenKind::KwDim: return "'dim'";
  case TokenKind::KwAttr: return "'attr'";
  case TokenKind::KwInput: return "'input'";
  case TokenKind::KwWeight: return "'weight'";
  case TokenKind::KwFor: return "'for'";
  case TokenKind::KwIn: return "'in'";
  case TokenKind::KwOutput: return "'output'";
  }
  return "token";
}

bool Lexer::skipTrivia() {
  bool newline = false;
  const char *end = buffer.end();
  while (cur != end) {
    char c = *cur;
    if (c == '\n') {
      newline = true;
      ++cur;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++cur;
    } else if (c == '#') {
      while (cur != end && *cur != '\n')
        ++cur;
    } else {
      break;
    }
  }
  return newline;
}

/// A byte that starts no token and is not trivia: part of a run of stray
/// bytes.
static bool isStray(char c) {
  unsigned char byte = static_cast<unsigned char>(c);
  if (std::isalnum(byte) || std::isspace(byte))
    return false;
  return !llvm::StringRef("_\"{}()[],:=+-*/%.#").contains(c);
}

Token Lexer::make(TokenKind kind, const char *start) {
  Token tok;
  tok.kind = kind;
  tok.text = llvm::StringRef(start, cur - start);
  tok.loc = llvm::SMLoc::getFromPointer(start);
  tok.atLineStart = sawNewline;
  sawNewline = false;
  return tok;
}

Token Lexer::next() {
  if (skipTrivia())
    sawNewline = true;
  const char *start = cur;
  if (cur == buffer.end())
    return make(TokenKind::Eof, start);

  char c = *cur++;
  if (std::isalpha(static_cast<unsigned char>(c)) || c == '_')
    return lexIdentifier(start);
  if (std::isdigit(static_cast<unsigned char>(c)))
    return lexNumber(start);

  switch (c) {
  case '"': return lexString(start);
  case '{': return make(TokenKind::LBrace, start);
  case '}': return make(TokenKind::RBrace, start);
  case '(': return make(TokenKind::LParen, start);
  case ')': return make(TokenKind::RParen, start);
  case '[': return make(TokenKind::LBracket, start);
  case ']': return make(TokenKind::RBracket, start);
  case ',': return make(TokenKind::Comma, start);
  case ':': return make(TokenKind::Colon, start);
  case '=': return make(TokenKind::Equal, start);
  case '+': return make(TokenKind::Plus, start);
  case '-': return make(TokenKind::Minus, start);
  case '*': return make(TokenKind::Star, start);
  case '/': return make(TokenKind::Slash, start);
  case '%': return make(TokenKind::Percent, start);
  case '.':
    if (cur != buffer.end() && *cur == '.') {
      ++cur;
      return make(TokenKind::DotDot, start);
    }
    break;
  default:
    break;
  }

  // One error per run of stray bytes is enough: the run (a multi-byte UTF-8
  // character, say) is one error token. A non-ASCII byte is shown by its
  // code, a printable one as itself.
  while (cur != buffer.end() && isStray(*cur))
    ++cur;
  const size_t more = cur - start - 1;
  const std::string rest =
      more ? " and " + std::to_string(more) + " more byte" + (more > 1 ? "s" : "") +
                 " that are not part of the language"
           : "";
  unsigned char byte = static_cast<unsigned char>(c);
  if (std::isprint(byte))
    diags.error(llvm::SMLoc::getFromPointer(start),
                llvm::Twine("unexpected character '") + llvm::Twine(c) + "'" + rest);
  else
    diags.error(llvm::SMLoc::getFromPointer(start),
                "unexpected byte 0x" + llvm::utohexstr(byte, /*LowerCase=*/true) + rest);
  return make(TokenKind::Error, start);
}

Token Lexer::lexIdentifier(const char *start) {
  while (cur != buffer.end() &&
         (std::isalnum(static_cast<unsigned char>(*cur)) || *cur == '_'))
    ++cur;
  llvm::StringRef text(start, cur - start);
  TokenKind kind = llvm::StringSwitch<TokenKind>(text)
                       .Case("graph", TokenKind::KwGraph)
                       .Case("dim", TokenKind::KwDim)
                       .Case("attr", TokenKind::KwAttr)
                       .Case("input", TokenKind::KwInput)
                       .Case("weight", TokenKind::KwWeight)
                       .Case("for", TokenKind::KwFor)
                       .Case("in", TokenKind::KwIn)
                       .Case("output", TokenKind::KwOutput)
                       .Default(TokenKind::Identifier);
  return make(kind, start);
}

// number := digits ('.' digits)? ([eE] [+-]? digits)?
// A '.' not followed by a digit is left alone, so `0..layers` lexes as
// Integer DotDot Identifier.
Token Lexer::lexNumber(const char *start) {
  auto isDigit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)); };
  const char *end = buffer.end();
  bool isFloat = false;
  while (cur != end && isDigit(*cur))
    ++cur;
  if (cur + 1 < end && *cur == '.' && isDigit(cur[1])) {
    isFloat = true;
    ++cur;
    while (cur != end && isDigit(*cur))
      ++cur;
  }
  if (cur != end && (*cur == 'e' || *cur == 'E')) {
    const char *exp = cur + 1;
    if (exp != end && (*exp == '+' || *exp == '-'))
      ++exp;
    if (exp != end && isDigit(*exp)) {
      isFloat = true;
      cur = exp;
      while (cur != end && isDigit(*cur))
        ++cur;
    }
  }
  if (cur != end && (std::isalpha(static_cast<unsigned char>(*cur)) || *cur == '_')) {
    while (cur != end && (std::isalnum(static_cast<unsigned char>(*cur)) || *cur == '_'))
      ++cur;
    diags.error(llvm::SMLoc::getFromPointer(start),
                "invalid number '" + llvm::StringRef(start, cur - start) + "'");
    return make(TokenKind::Error, start);
  }
  return make(isFloat ? TokenKind::Float : TokenKind::Integer, start);
}

// A string holds a checkpoint tensor name: printable characters, no escapes,
// on one line.
Token Lexer::lexString(const char *start) {
  const char *end = buffer.end();
  while (cur != end && *cur != '"' && *cur != '\n')
    ++cur;
  if (cur == end || *cur == '\n') {
    diags.error(llvm::SMLoc::getFromPointer(start), "unterminated string");
    return make(TokenKind::Error, start);
  }
  ++cur; // closing quote
  Token tok = make(TokenKind::String, start);
  tok.text = tok.text.drop_front().drop_back();
  return tok;
}
