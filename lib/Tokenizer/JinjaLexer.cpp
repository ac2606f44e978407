//===- JinjaLexer.cpp - Chat templates: preprocessing and tokens ----------===//
//
// 1. Preprocess as @huggingface/jinja does: drop one trailing newline;
//    lstrip_blocks (spaces and tabs before a {% or {# that starts a line) and
//    trim_blocks (the newline after %} or #}).
// 2. Split into text and tags; "{%-" / "{{-" strip the whitespace before the
//    tag, "-%}" / "-}}" the whitespace after it.
// 3. Tokens inside tags: names, strings (Python escapes), numbers, operators.
//
//===----------------------------------------------------------------------===//
#include "JinjaLexer.h"

#include <cctype>

namespace ti::jinja {

namespace {

bool isSpace(char c) { return c == ' ' || (c >= 9 && c <= 13); }

std::string preprocess(std::string source) {
  if (!source.empty() && source.back() == '\n') source.pop_back();
  // lstrip_blocks: spaces and tabs from a line's start to a "{#", "{%" or "{-".
  std::string stripped;
  stripped.reserve(source.size());
  for (std::size_t i = 0; i < source.size();) {
    if (i == 0 || source[i - 1] == '\n') {
      std::size_t j = i;
      while (j < source.size() && (source[j] == ' ' || source[j] == '\t')) ++j;
      if (j + 1 < source.size() && source[j] == '{' &&
          (source[j + 1] == '#' || source[j + 1] == '%' || source[j + 1] == '-')) {
        i = j;
      }
    }
    stripped += source[i++];
  }
  // trim_blocks: the newline right after "#}", "%}" or "-}".
  std::string out;
  out.reserve(stripped.size());
  for (std::size_t i = 0; i < stripped.size(); ++i) {
    if (stripped[i] == '\n' && i >= 2 && stripped[i - 1] == '}' &&
        (stripped[i - 2] == '#' || stripped[i - 2] == '%' || stripped[i - 2] == '-'))
      continue;
    out += stripped[i];
  }
  return out;
}

class Lexer {
public:
  explicit Lexer(std::string source) : src(preprocess(std::move(source))) {}

  StatusOr<std::vector<Token>> run() {
    while (at < src.size()) {
      Token::Kind last = tokens.empty() ? Token::Kind::End : tokens.back().kind;
      bool afterTag = tokens.empty() || last == Token::Kind::CloseStatement || last == Token::Kind::CloseExpression;
      if (afterTag) {
        std::size_t end = at;
        for (;;) {
          end = src.find('{', end);
          if (end == std::string::npos) { end = src.size(); break; }
          char next = end + 1 < src.size() ? src[end + 1] : 0;
          if (next == '%' || next == '{' || next == '#') break;
          ++end;
        }
        if (end > at) {
          push(Token::Kind::Text, src.substr(at, end - at));
          advance(end - at);
          continue;
        }
      }
      if (src.compare(at, 2, "{#") == 0) {
        bool stripBefore = at + 2 < src.size() && src[at + 2] == '-';
        std::size_t end = src.find("#}", at + 2);
        if (end == std::string::npos) return error("a comment {# is never closed");
        bool stripAfter = end > at + 2 && src[end - 1] == '-';
        if (stripBefore) stripTrailing();
        advance(end + 2 - at);
        if (stripAfter) skipSpace();
        // A comment leaves the lexer where text may follow.
        push(Token::Kind::CloseStatement, "#}");
        tokens.back().text = "comment";
        continue;
      }
      if (src.compare(at, 2, "{%") == 0 || src.compare(at, 2, "{{") == 0) {
        bool statement = src[at + 1] == '%';
        bool strip = at + 2 < src.size() && src[at + 2] == '-';
        if (strip) stripTrailing();
        push(statement ? Token::Kind::OpenStatement : Token::Kind::OpenExpression, src.substr(at, 2));
        advance(strip ? 3 : 2);
        if (Status s = lexTag(statement); !s) return s;
        continue;
      }
      return error("unexpected text");
    }
    // Comments were marked as closing tags only to restart text; drop them.
    std::vector<Token> out;
    for (Token &t : tokens)
      if (!(t.kind == Token::Kind::CloseStatement && t.text == "comment")) out.push_back(std::move(t));
    out.push_back({Token::Kind::End, "", line});
    return out;
  }

private:
  Status error(const std::string &what) { return Status::error("line " + std::to_string(line) + ": " + what); }
  void push(Token::Kind kind, std::string text) { tokens.push_back({kind, std::move(text), line}); }
  void advance(std::size_t n) {
    for (std::size_t i = 0; i < n && at < src.size(); ++i, ++at)
      if (src[at] == '\n') ++line;
  }
  void skipSpace() {
    while (at < src.size() && isSpace(src[at])) advance(1);
  }
  void stripTrailing() {
    if (tokens.empty() || tokens.back().kind != Token::Kind::Text) return;
    std::string &t = tokens.back().text;
    while (!t.empty() && isSpace(t.back())) t.pop_back();
    if (t.empty()) tokens.pop_back();
  }

  Status lexTag(bool statement) {
    const char close = statement ? '%' : '}';
    for (;;) {
      skipSpace();
      if (at >= src.size()) return error(statement ? "a {% is never closed" : "a {{ is never closed");
      char c = src[at];
      if (c == '-' && at + 2 < src.size() && src[at + 1] == close && src[at + 2] == '}') {
        push(statement ? Token::Kind::CloseStatement : Token::Kind::CloseExpression, "");
        advance(3);
        skipSpace();
        return {};
      }
      if (c == close && at + 1 < src.size() && src[at + 1] == '}') {
        push(statement ? Token::Kind::CloseStatement : Token::Kind::CloseExpression, "");
        advance(2);
        return {};
      }
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        std::size_t end = at;
        while (end < src.size() && (std::isalnum(static_cast<unsigned char>(src[end])) || src[end] == '_')) ++end;
        push(Token::Kind::Name, src.substr(at, end - at));
        advance(end - at);
        continue;
      }
      if (std::isdigit(static_cast<unsigned char>(c))) {
        std::size_t end = at;
        while (end < src.size() && std::isdigit(static_cast<unsigned char>(src[end]))) ++end;
        bool real = end + 1 < src.size() && src[end] == '.' && std::isdigit(static_cast<unsigned char>(src[end + 1]));
        if (real) {
          ++end;
          while (end < src.size() && std::isdigit(static_cast<unsigned char>(src[end]))) ++end;
        }
        push(real ? Token::Kind::Real : Token::Kind::Integer, src.substr(at, end - at));
        advance(end - at);
        continue;
      }
      if (c == '\'' || c == '"') {
        std::string value;
        std::size_t i = at + 1;
        for (;; ++i) {
          if (i >= src.size()) return error("a string is never closed");
          if (src[i] == c) break;
          if (src[i] != '\\') {
            value += src[i];
            continue;
          }
          if (++i >= src.size()) return error("a string is never closed");
          switch (src[i]) {
          case 'n': value += '\n'; break;
          case 't': value += '\t'; break;
          case 'r': value += '\r'; break;
          case 'b': value += '\b'; break;
          case 'f': value += '\f'; break;
          case 'v': value += '\v'; break;
          case '\'': value += '\''; break;
          case '"': value += '"'; break;
          case '\\': value += '\\'; break;
          default: return error(std::string("the escape \\") + src[i] + " in a string is not supported");
          }
        }
        push(Token::Kind::String, value);
        advance(i + 1 - at);
        continue;
      }
      static const char *const operators[] = {"//", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<",
                                              ">",  "(",  ")",  "[",  "]",  "{", "}", ",", ".", ":", "|", "="};
      bool found = false;
      for (const char *op : operators)
        if (src.compare(at, std::char_traits<char>::length(op), op) == 0) {
          push(Token::Kind::Operator, op);
          advance(std::char_traits<char>::length(op));
          found = true;
          break;
        }
      if (!found) return error(std::string("unexpected character '") + c + "'");
    }
  }

  std::string src;
  std::size_t at = 0;
  int line = 1;
  std::vector<Token> tokens;
};

} // namespace

StatusOr<std::vector<Token>> lex(std::string source) { return Lexer(std::move(source)).run(); }

} // namespace ti::jinja
