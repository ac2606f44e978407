//===- LexerTest.cpp ------------------------------------------------------===//
#include "ti/IR/Lexer.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <vector>

using namespace ti;

namespace {

struct Lexed {
  std::vector<Token> tokens;
  std::string diagnostics;
};

Lexed lex(const std::string &text) {
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "t.graph"), llvm::SMLoc());
  Lexed out;
  llvm::raw_string_ostream os(out.diagnostics);
  DiagnosticEngine diags(sm, os);
  Lexer lexer(sm.getMemoryBuffer(1)->getBuffer(), diags);
  for (Token t = lexer.next();; t = lexer.next()) {
    out.tokens.push_back(t);
    if (t.is(TokenKind::Eof))
      break;
  }
  os.flush();
  // Token texts point into the SourceMgr's buffer, which dies here: keep kinds only.
  for (Token &t : out.tokens)
    t.text = {};
  return out;
}

std::vector<TokenKind> kinds(const Lexed &l) {
  std::vector<TokenKind> k;
  for (const Token &t : l.tokens)
    k.push_back(t.kind);
  return k;
}

using K = TokenKind;

TEST(Lexer, KeywordsIdentifiersAndPunctuation) {
  auto l = lex("graph g { dim n = 4 }");
  EXPECT_EQ(kinds(l), (std::vector<K>{K::KwGraph, K::Identifier, K::LBrace, K::KwDim,
                                      K::Identifier, K::Equal, K::Integer, K::RBrace, K::Eof}));
  EXPECT_TRUE(l.diagnostics.empty());
}

TEST(Lexer, RangeIsNotAFloat) {
  // `0..layers` must not lex as the float `0.` followed by `.layers`.
  EXPECT_EQ(kinds(lex("0..layers")),
            (std::vector<K>{K::Integer, K::DotDot, K::Identifier, K::Eof}));
  EXPECT_EQ(kinds(lex("1.5..2")), (std::vector<K>{K::Float, K::DotDot, K::Integer, K::Eof}));
}

TEST(Lexer, Numbers) {
  EXPECT_EQ(kinds(lex("1e-5 2.0 3E+2 42")),
            (std::vector<K>{K::Float, K::Float, K::Float, K::Integer, K::Eof}));
  // An `e` without digits after it is not an exponent: it runs into the number.
  auto l = lex("7e");
  EXPECT_EQ(l.tokens[0].kind, K::Error);
  EXPECT_NE(l.diagnostics.find("t.graph:1:1: error: invalid number '7e'"), std::string::npos);
}

TEST(Lexer, CommentsAndLineStarts) {
  auto l = lex("a # comment ( not a token\n  b c\n#only a comment\nd");
  ASSERT_EQ(kinds(l), (std::vector<K>{K::Identifier, K::Identifier, K::Identifier,
                                      K::Identifier, K::Eof}));
  EXPECT_TRUE(l.tokens[0].atLineStart);
  EXPECT_TRUE(l.tokens[1].atLineStart);
  EXPECT_FALSE(l.tokens[2].atLineStart);
  EXPECT_TRUE(l.tokens[3].atLineStart);
}

TEST(Lexer, Strings) {
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy("\"model.layers.{l}.w\"", "t"),
                        llvm::SMLoc());
  std::string diagText;
  llvm::raw_string_ostream os(diagText);
  DiagnosticEngine diags(sm, os);
  Lexer lexer(sm.getMemoryBuffer(1)->getBuffer(), diags);
  Token t = lexer.next();
  EXPECT_EQ(t.kind, K::String);
  EXPECT_EQ(t.text, "model.layers.{l}.w"); // Without the quotes.
  EXPECT_EQ(lexer.next().kind, K::Eof);

  auto bad = lex("\"no end\nx");
  EXPECT_EQ(bad.tokens[0].kind, K::Error);
  EXPECT_NE(bad.diagnostics.find("1:1: error: unterminated string"), std::string::npos);
}

TEST(Lexer, StrayCharacters) {
  auto l = lex("a $ b");
  EXPECT_EQ(kinds(l), (std::vector<K>{K::Identifier, K::Error, K::Identifier, K::Eof}));
  EXPECT_NE(l.diagnostics.find("1:3: error: unexpected character '$'"), std::string::npos);
  auto bytes = lex("\xc3\xa9");
  EXPECT_NE(bytes.diagnostics.find("unexpected byte 0xc3"), std::string::npos);
  auto dot = lex("a.b");
  EXPECT_NE(dot.diagnostics.find("unexpected character '.'"), std::string::npos);
}

TEST(Lexer, EofIsSticky) {
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy("", "t"), llvm::SMLoc());
  DiagnosticEngine diags(sm, llvm::nulls());
  Lexer lexer(sm.getMemoryBuffer(1)->getBuffer(), diags);
  EXPECT_EQ(lexer.next().kind, K::Eof);
  EXPECT_EQ(lexer.next().kind, K::Eof);
}

} // namespace
