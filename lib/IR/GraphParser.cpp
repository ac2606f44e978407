//===- GraphParser.cpp - Text to syntax tree ------------------------------===//
//
// Each parse function carries the grammar rule it implements. Functions return
// null (or false) after reporting an error; the statement loop then skips to the
// next line that can start a statement.
//
//===----------------------------------------------------------------------===//
#include "ti/IR/GraphParser.h"
#include "ti/IR/Lexer.h"

#include "llvm/ADT/StringExtras.h"

#include <cerrno>
#include <cstdlib>

using namespace ti;
using namespace ti::ast;

namespace {

class Parser {
public:
  Parser(llvm::StringRef buffer, DiagnosticEngine &diags)
      : lexer(buffer, diags), diags(diags) {
    tok = lexer.next();
  }

  std::unique_ptr<GraphAST> parseFile();

private:
  void consume() {
    prevEnd = tok.text.end();
    if (tok.is(TokenKind::String))
      ++prevEnd; // The closing quote.
    tok = lexer.next();
  }
  /// Reports "expected X, found Y". A statement ends with its line, so a
  /// token on the next line is reported as "end of line", at that end.
  void errorExpected(const llvm::Twine &what);
  bool consumeIf(TokenKind kind) {
    if (tok.isNot(kind))
      return false;
    consume();
    return true;
  }
  /// Reports "expected X <context>" at the current token unless it is of `kind`.
  bool expect(TokenKind kind, llvm::StringRef context);
  void errorHere(const llvm::Twine &message);
  unsigned column(llvm::SMLoc loc) const {
    return diags.getSourceMgr().getLineAndColumn(loc).second;
  }
  static bool startsStatement(const Token &t);
  void skipToNextStatement();

  /// How a block of statements ended.
  enum class BlockEnd { Closed, EndOfFile, Unclosed };
  BlockEnd parseStatements(std::vector<StmtPtr> &body, llvm::SMLoc owner);
  StmtPtr parseStatement(bool topLevel);
  StmtPtr parseDim();
  StmtPtr parseAttr();
  StmtPtr parseInput();
  StmtPtr parseWeight();
  StmtPtr parseAssign();
  StmtPtr parseFor();
  StmtPtr parseOutput();
  bool parseType(TypeExpr &type);
  bool parseArg(Arg &arg);
  ExprPtr parseValue();
  ExprPtr parseExpr();
  ExprPtr parseTerm();
  ExprPtr parseFactor();

  Lexer lexer;
  DiagnosticEngine &diags;
  Token tok;
  const char *prevEnd = nullptr; // One past the previous token.

  // Nesting past kMaxNesting levels (parentheses, unary minus, each link of a
  // chain of + - * / %, for blocks) is refused: the parser, the evaluator and
  // the destructors recurse once per level, and 20,000 levels overflowed the
  // stack. A Nest holds one level while it lives.
  static constexpr int kMaxNesting = 256;
  int nesting = 0;
  struct Nest {
    Parser &parser;
    int levels = 0;
    explicit Nest(Parser &parser) : parser(parser) {}
    ~Nest() { parser.nesting -= levels; }
    /// One level more; false (after the diagnostic) past the limit.
    bool deeper() {
      ++levels;
      if (++parser.nesting <= kMaxNesting)
        return true;
      parser.errorHere("expressions or blocks nested deeper than " + llvm::Twine(kMaxNesting) + " levels");
      return false;
    }
  };
};

} // namespace

void Parser::errorHere(const llvm::Twine &message) {
  // A malformed token was reported by the lexer already; one error is enough.
  if (tok.is(TokenKind::Error))
    return;
  diags.error(tok.loc, message);
}

void Parser::errorExpected(const llvm::Twine &what) {
  if (tok.is(TokenKind::Error))
    return;
  if (tok.atLineStart && prevEnd && tok.isNot(TokenKind::Eof)) {
    diags.error(llvm::SMLoc::getFromPointer(prevEnd), "expected " + what + ", found end of line");
    return;
  }
  if (tok.is(TokenKind::Eof) || tok.is(TokenKind::String))
    diags.error(tok.loc, "expected " + what + ", found " +
                             (tok.is(TokenKind::Eof) ? "end of file" : "a string"));
  else
    diags.error(tok.loc, "expected " + what + ", found '" + tok.text + "'");
}

bool Parser::expect(TokenKind kind, llvm::StringRef context) {
  if (tok.is(kind)) {
    consume();
    return true;
  }
  errorExpected(tokenKindName(kind) + " " + context);
  return false;
}

bool Parser::startsStatement(const Token &t) {
  switch (t.kind) {
  case TokenKind::KwDim:
  case TokenKind::KwAttr:
  case TokenKind::KwInput:
  case TokenKind::KwWeight:
  case TokenKind::KwFor:
  case TokenKind::KwOutput:
  case TokenKind::Identifier:
  case TokenKind::RBrace:
  case TokenKind::Eof:
    return true;
  default:
    return false;
  }
}

/// Skips the rest of a bad statement, including any block it opens (a `for`
/// whose header is wrong), up to the next line that can start a statement.
void Parser::skipToNextStatement() {
  unsigned depth = 0;
  do {
    if (tok.is(TokenKind::LBrace))
      ++depth;
    else if (tok.is(TokenKind::RBrace) && depth > 0)
      --depth;
    consume();
  } while (tok.isNot(TokenKind::Eof) &&
           (depth > 0 || !(tok.atLineStart && startsStatement(tok))));
}

// file := 'graph' IDENT '{' stmt* '}'
std::unique_ptr<GraphAST> Parser::parseFile() {
  auto graph = std::make_unique<GraphAST>();
  graph->loc = tok.loc;
  if (!expect(TokenKind::KwGraph, "at the start of the file"))
    return nullptr;
  graph->name = tok.text.str();
  if (!expect(TokenKind::Identifier, "after 'graph' (the graph's name)"))
    return nullptr;
  llvm::SMLoc open = tok.loc;
  if (!expect(TokenKind::LBrace, "to open the graph"))
    return nullptr;
  if (parseStatements(graph->body, llvm::SMLoc()) != BlockEnd::Closed) {
    diags.error(open, "'{' is never closed: expected '}' before the end of file");
    return nullptr;
  }
  consume(); // '}'
  if (tok.isNot(TokenKind::Eof))
    errorHere("expected end of file after the graph's closing '}'");
  if (diags.hadError())
    return nullptr;
  return graph;
}

/// Parses statements up to a '}' (left as the current token). `owner` is the
/// `for` whose body this is, or invalid for the graph's body.
///
/// A loop body whose '}' is missing is recognised by indentation, so that the
/// error points at the loop: a line that starts left of the `for` with a '}'
/// or a graph-scope statement (output, dim, ...) cannot belong to its body.
Parser::BlockEnd Parser::parseStatements(std::vector<StmtPtr> &body, llvm::SMLoc owner) {
  bool topLevel = !owner.isValid();
  auto outdented = [&] {
    if (topLevel || !tok.atLineStart)
      return false;
    unsigned col = column(tok.loc), ownerCol = column(owner);
    switch (tok.kind) {
    case TokenKind::RBrace: return col < ownerCol;
    case TokenKind::KwDim:
    case TokenKind::KwAttr:
    case TokenKind::KwInput:
    case TokenKind::KwOutput: return col <= ownerCol;
    default: return false;
    }
  };
  while (tok.isNot(TokenKind::RBrace) || outdented()) {
    if (tok.is(TokenKind::Eof))
      return BlockEnd::EndOfFile;
    if (outdented())
      return BlockEnd::Unclosed;
    llvm::SMLoc start = tok.loc;
    if (StmtPtr stmt = parseStatement(topLevel)) {
      body.push_back(std::move(stmt));
      // The language is line-oriented: one statement per line.
      if (!tok.atLineStart && tok.isNot(TokenKind::RBrace) && tok.isNot(TokenKind::Eof)) {
        errorHere("expected a new line after the statement, found '" + tok.text + "'");
        skipToNextStatement();
      }
      continue;
    }
    // Resume at the next line that can start a statement; always make progress.
    if (tok.loc == start || !(tok.atLineStart && startsStatement(tok)))
      skipToNextStatement();
  }
  return BlockEnd::Closed;
}

StmtPtr Parser::parseStatement(bool topLevel) {
  switch (tok.kind) {
  case TokenKind::KwDim:
  case TokenKind::KwAttr:
  case TokenKind::KwInput:
  case TokenKind::KwOutput:
    if (!topLevel) {
      errorHere("'" + tok.text + "' is only allowed at graph scope, not inside 'for'");
      return nullptr;
    }
    if (tok.is(TokenKind::KwDim))
      return parseDim();
    if (tok.is(TokenKind::KwAttr))
      return parseAttr();
    if (tok.is(TokenKind::KwInput))
      return parseInput();
    return parseOutput();
  case TokenKind::KwWeight:
    return parseWeight();
  case TokenKind::KwFor:
    return parseFor();
  case TokenKind::Identifier:
    return parseAssign();
  default:
    if (tok.is(TokenKind::Error))
      return nullptr;
    errorHere("expected a statement (dim, attr, input, weight, for, output or "
              "'name = op(...)'), found '" + tok.text + "'");
    return nullptr;
  }
}

// stmt := 'dim' IDENT '=' expr
StmtPtr Parser::parseDim() {
  auto stmt = std::make_unique<DimStmt>(tok.loc);
  consume();
  stmt->name = tok.text.str();
  stmt->nameLoc = tok.loc;
  if (!expect(TokenKind::Identifier, "after 'dim'") ||
      !expect(TokenKind::Equal, "after the dim's name"))
    return nullptr;
  if (!(stmt->value = parseExpr()))
    return nullptr;
  return stmt;
}

// stmt := 'attr' IDENT '=' value
StmtPtr Parser::parseAttr() {
  auto stmt = std::make_unique<AttrStmt>(tok.loc);
  consume();
  stmt->name = tok.text.str();
  stmt->nameLoc = tok.loc;
  if (!expect(TokenKind::Identifier, "after 'attr'") ||
      !expect(TokenKind::Equal, "after the attr's name"))
    return nullptr;
  if (!(stmt->value = parseValue()))
    return nullptr;
  return stmt;
}

// stmt := 'input' IDENT ':' type
StmtPtr Parser::parseInput() {
  auto stmt = std::make_unique<InputStmt>(tok.loc);
  consume();
  stmt->name = tok.text.str();
  stmt->nameLoc = tok.loc;
  if (!expect(TokenKind::Identifier, "after 'input'") ||
      !expect(TokenKind::Colon, "after the input's name") || !parseType(stmt->type))
    return nullptr;
  return stmt;
}

// stmt := 'weight' IDENT ':' type '=' STRING
StmtPtr Parser::parseWeight() {
  auto stmt = std::make_unique<WeightStmt>(tok.loc);
  consume();
  stmt->name = tok.text.str();
  stmt->nameLoc = tok.loc;
  if (!expect(TokenKind::Identifier, "after 'weight'") ||
      !expect(TokenKind::Colon, "after the weight's name") || !parseType(stmt->type))
    return nullptr;
  if (tok.isNot(TokenKind::Equal) || tok.atLineStart) {
    diags.error(stmt->nameLoc, "weight '" + stmt->name +
                                   "' has no checkpoint tensor: write `= \"name.in.checkpoint\"` "
                                   "after its type");
    return nullptr;
  }
  consume();
  stmt->source = tok.text.str();
  stmt->sourceLoc = tok.loc;
  if (!expect(TokenKind::String, "(the checkpoint tensor's name) after '='"))
    return nullptr;
  if (stmt->source.empty()) {
    diags.error(stmt->sourceLoc, "the checkpoint tensor's name is empty");
    return nullptr;
  }
  return stmt;
}

// stmt := IDENT '=' IDENT '(' args? ')'
StmtPtr Parser::parseAssign() {
  auto stmt = std::make_unique<AssignStmt>(tok.loc);
  stmt->name = tok.text.str();
  consume();
  if (!expect(TokenKind::Equal, "after '" + stmt->name + "' (assignments are 'name = op(...)')"))
    return nullptr;
  stmt->op = tok.text.str();
  stmt->opLoc = tok.loc;
  if (!expect(TokenKind::Identifier, "(an op's name) after '='") ||
      !expect(TokenKind::LParen, "after the op's name"))
    return nullptr;
  if (!consumeIf(TokenKind::RParen)) {
    do {
      Arg arg;
      if (!parseArg(arg))
        return nullptr;
      stmt->args.push_back(std::move(arg));
    } while (consumeIf(TokenKind::Comma));
    if (!expect(TokenKind::RParen, "to close the argument list"))
      return nullptr;
  }
  return stmt;
}

// arg := IDENT '=' value | expr
bool Parser::parseArg(Arg &arg) {
  arg.loc = tok.loc;
  if (tok.is(TokenKind::Identifier)) {
    Token name = tok;
    consume();
    if (consumeIf(TokenKind::Equal)) {
      arg.keyword = name.text.str();
      arg.value = parseValue();
      return arg.value != nullptr;
    }
    // A positional operand: usually a bare name, possibly the start of an
    // expression. Re-parse from the name.
    ExprPtr lhs = std::make_unique<NameExpr>(name.loc, name.text.str());
    if (tok.is(TokenKind::Comma) || tok.is(TokenKind::RParen)) {
      arg.value = std::move(lhs);
      return true;
    }
    errorExpected("',' or ')' after the operand '" + name.text + "'");
    return false;
  }
  arg.value = parseValue();
  return arg.value != nullptr;
}

// stmt := 'for' IDENT 'in' expr '..' expr '{' stmt* '}'
StmtPtr Parser::parseFor() {
  auto stmt = std::make_unique<ForStmt>(tok.loc);
  consume();
  stmt->var = tok.text.str();
  stmt->varLoc = tok.loc;
  if (!expect(TokenKind::Identifier, "(the loop variable) after 'for'") ||
      !expect(TokenKind::KwIn, "after the loop variable"))
    return nullptr;
  if (!(stmt->begin = parseExpr()))
    return nullptr;
  if (!expect(TokenKind::DotDot, "in the loop range 'begin..end'"))
    return nullptr;
  if (!(stmt->end = parseExpr()))
    return nullptr;
  llvm::SMLoc open = tok.loc;
  Nest nest(*this);
  if (!nest.deeper() || !expect(TokenKind::LBrace, "to open the loop body"))
    return nullptr;
  switch (parseStatements(stmt->body, stmt->loc)) {
  case BlockEnd::Closed:
    break;
  case BlockEnd::EndOfFile:
    diags.error(open, "'{' is never closed: expected '}' before the end of file");
    return nullptr;
  case BlockEnd::Unclosed:
    diags.error(open, "'{' is never closed: expected '}' at the end of the loop body");
    return nullptr;
  }
  consume(); // '}'
  return stmt;
}

// stmt := 'output' IDENT (',' IDENT)*
StmtPtr Parser::parseOutput() {
  auto stmt = std::make_unique<OutputStmt>(tok.loc);
  consume();
  do {
    OutputStmt::Name name{tok.text.str(), tok.loc};
    if (!expect(TokenKind::Identifier, "(a value's name) in 'output'"))
      return nullptr;
    stmt->names.push_back(std::move(name));
  } while (consumeIf(TokenKind::Comma));
  return stmt;
}

// type := IDENT '[' expr (',' expr)* ']'
bool Parser::parseType(TypeExpr &type) {
  type.dtype = tok.text.str();
  type.dtypeLoc = tok.loc;
  if (!expect(TokenKind::Identifier, "(a dtype such as bf16) in the type") ||
      !expect(TokenKind::LBracket, "after the dtype (types are written dtype[dims])"))
    return false;
  do {
    ExprPtr dim = parseExpr();
    if (!dim)
      return false;
    type.dims.push_back(std::move(dim));
  } while (consumeIf(TokenKind::Comma));
  return expect(TokenKind::RBracket, "to close the shape");
}

// value := expr | STRING | '[' (expr (',' expr)*)? ']'
ExprPtr Parser::parseValue() {
  if (tok.is(TokenKind::String)) {
    auto str = std::make_unique<StringExpr>(tok.loc, tok.text.str());
    consume();
    return str;
  }
  if (tok.is(TokenKind::LBracket)) {
    llvm::SMLoc loc = tok.loc;
    consume();
    std::vector<ExprPtr> elements;
    if (tok.isNot(TokenKind::RBracket)) {
      do {
        ExprPtr e = parseExpr();
        if (!e)
          return nullptr;
        elements.push_back(std::move(e));
      } while (consumeIf(TokenKind::Comma));
    }
    if (!expect(TokenKind::RBracket, "to close the list"))
      return nullptr;
    return std::make_unique<ListExpr>(loc, std::move(elements));
  }
  return parseExpr();
}

// expr := term (('+' | '-') term)*
ExprPtr Parser::parseExpr() {
  ExprPtr lhs = parseTerm();
  Nest nest(*this);
  while (lhs && (tok.is(TokenKind::Plus) || tok.is(TokenKind::Minus))) {
    if (!nest.deeper())
      return nullptr;
    char op = tok.text[0];
    llvm::SMLoc loc = tok.loc;
    consume();
    ExprPtr rhs = parseTerm();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(loc, op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

// term := factor (('*' | '/' | '%') factor)*
ExprPtr Parser::parseTerm() {
  ExprPtr lhs = parseFactor();
  Nest nest(*this);
  while (lhs && (tok.is(TokenKind::Star) || tok.is(TokenKind::Slash) ||
                 tok.is(TokenKind::Percent))) {
    if (!nest.deeper())
      return nullptr;
    char op = tok.text[0];
    llvm::SMLoc loc = tok.loc;
    consume();
    ExprPtr rhs = parseFactor();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(loc, op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

// factor := INTEGER | NUMBER | IDENT | '(' expr ')' | '-' factor
ExprPtr Parser::parseFactor() {
  llvm::SMLoc loc = tok.loc;
  Nest nest(*this);
  if ((tok.is(TokenKind::LParen) || tok.is(TokenKind::Minus)) && !nest.deeper())
    return nullptr;
  switch (tok.kind) {
  case TokenKind::Integer: {
    int64_t value;
    if (tok.text.getAsInteger(10, value)) {
      errorHere("integer '" + tok.text + "' does not fit in 64 bits");
      return nullptr;
    }
    consume();
    return std::make_unique<IntegerExpr>(loc, value);
  }
  case TokenKind::Float: {
    std::string text = tok.text.str();
    errno = 0;
    double value = std::strtod(text.c_str(), nullptr);
    if (errno == ERANGE) {
      errorHere("number '" + tok.text + "' is out of range");
      return nullptr;
    }
    consume();
    return std::make_unique<FloatExpr>(loc, value);
  }
  case TokenKind::Identifier: {
    auto name = std::make_unique<NameExpr>(loc, tok.text.str());
    consume();
    return name;
  }
  case TokenKind::LParen: {
    consume();
    ExprPtr inner = parseExpr();
    if (!inner || !expect(TokenKind::RParen, "to close the parenthesis"))
      return nullptr;
    return inner;
  }
  case TokenKind::Minus: {
    consume();
    ExprPtr operand = parseFactor();
    if (!operand)
      return nullptr;
    return std::make_unique<NegateExpr>(loc, std::move(operand));
  }
  default:
    errorExpected("an expression");
    return nullptr;
  }
}

std::unique_ptr<GraphAST> ti::parseGraph(DiagnosticEngine &diags) {
  llvm::SourceMgr &sm = diags.getSourceMgr();
  const llvm::MemoryBuffer *buffer = sm.getMemoryBuffer(sm.getMainFileID());
  Parser parser(buffer->getBuffer(), diags);
  return parser.parseFile();
}
