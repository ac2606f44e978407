//===- JinjaParser.cpp - Chat templates: syntax --------------------------===//
//
// Recursive descent over JinjaLexer.cpp's tokens, in Jinja's precedence:
// conditional, or, and, not, comparison (with in / not in), ~, + -,
// * / // %, unary -, then a primary with its postfixes (.name, [index or
// slice], (call)), filters and tests.
//
//===----------------------------------------------------------------------===//
#include "JinjaAst.h"
#include "JinjaLexer.h"

#include <cctype>
#include <charconv>

namespace ti::jinja {

namespace {

class Parser {
public:
  explicit Parser(std::vector<Token> tokens) : tokens(std::move(tokens)) {}

  StatusOr<Program> run() {
    Program program;
    std::string stoppedAt;
    if (Status s = parseBody(program.body, {}, stoppedAt); !s) return s;
    return program;
  }

private:
  const Token &peek(std::size_t ahead = 0) const { return tokens[std::min(pos + ahead, tokens.size() - 1)]; }
  Token next() { return tokens[std::min(pos++, tokens.size() - 1)]; }
  bool isOp(const char *op, std::size_t ahead = 0) const {
    return peek(ahead).kind == Token::Kind::Operator && peek(ahead).text == op;
  }
  bool isName(const char *name, std::size_t ahead = 0) const {
    return peek(ahead).kind == Token::Kind::Name && peek(ahead).text == name;
  }
  Status error(const std::string &what) const {
    return Status::error("line " + std::to_string(peek().line) + ": " + what);
  }
  Status expectOp(const char *op) {
    if (!isOp(op)) return error(std::string("expected '") + op + "'");
    ++pos;
    return {};
  }
  Status expectClose(Token::Kind kind) {
    if (peek().kind != kind) return error(kind == Token::Kind::CloseStatement ? "expected %}" : "expected }}");
    ++pos;
    return {};
  }
  std::shared_ptr<Node> node(Node::Kind kind) {
    auto n = std::make_shared<Node>();
    n->kind = kind;
    n->line = peek().line;
    return n;
  }

  // Statements until one of `stops` ({% endif %}, ...), whose keyword is left in `stoppedAt`.
  Status parseBody(std::vector<NodePtr> &body, std::vector<std::string> stops, std::string &stoppedAt) {
    Deeper guard(depth);
    if (Status s = checkDepth(); !s) return s;
    for (;;) {
      const Token &t = peek();
      if (t.kind == Token::Kind::End) {
        if (!stops.empty()) return error("the template ends before {% " + stops.back() + " %}");
        return {};
      }
      if (t.kind == Token::Kind::Text) {
        auto n = node(Node::Kind::Text);
        n->text = next().text;
        body.push_back(n);
        continue;
      }
      if (t.kind == Token::Kind::OpenExpression) {
        ++pos;
        auto n = node(Node::Kind::Output);
        auto e = parseExpression();
        if (!e) return e.status();
        n->operands.push_back(*e);
        if (Status s = expectClose(Token::Kind::CloseExpression); !s) return s;
        body.push_back(n);
        continue;
      }
      if (t.kind != Token::Kind::OpenStatement) return error("unexpected '" + t.text + "'");
      ++pos;
      if (peek().kind != Token::Kind::Name) return error("expected a statement after {%");
      std::string keyword = peek().text;
      for (const std::string &stop : stops)
        if (keyword == stop) {
          stoppedAt = keyword;
          ++pos;
          return {};
        }
      ++pos;
      StatusOr<NodePtr> statement = Status::error("");
      if (keyword == "if") statement = parseIf();
      else if (keyword == "for") statement = parseFor();
      else if (keyword == "set") statement = parseSet();
      else return Status::error("line " + std::to_string(t.line) + ": the statement '" + keyword + "' is not supported");
      if (!statement) return statement.status();
      body.push_back(*statement);
    }
  }

  StatusOr<NodePtr> parseIf() {
    auto n = node(Node::Kind::If);
    for (;;) {
      auto condition = parseExpression();
      if (!condition) return condition.status();
      if (Status s = expectClose(Token::Kind::CloseStatement); !s) return s;
      std::vector<NodePtr> body;
      std::string stopped;
      if (Status s = parseBody(body, {"elif", "else", "endif"}, stopped); !s) return s;
      n->branches.push_back({*condition, std::move(body)});
      if (stopped == "elif") continue;
      if (stopped == "else") {
        if (Status s = expectClose(Token::Kind::CloseStatement); !s) return s;
        if (Status s = parseBody(n->elseBody, {"endif"}, stopped); !s) return s;
      }
      if (Status s = expectClose(Token::Kind::CloseStatement); !s) return s;
      return NodePtr(n);
    }
  }

  StatusOr<NodePtr> parseFor() {
    auto n = node(Node::Kind::For);
    for (;;) {
      if (peek().kind != Token::Kind::Name) return error("expected a loop variable");
      n->targets.push_back(next().text);
      if (!isOp(",")) break;
      ++pos;
    }
    if (!isName("in")) return error("expected 'in'");
    ++pos;
    auto iterable = parseConditionalFree();
    if (!iterable) return iterable.status();
    n->operands.push_back(*iterable);
    if (isName("if")) return error("a filtered for loop ('for ... if') is not supported");
    if (Status s = expectClose(Token::Kind::CloseStatement); !s) return s;
    std::string stopped;
    if (Status s = parseBody(n->body, {"else", "endfor"}, stopped); !s) return s;
    if (stopped == "else") {
      if (Status s = expectClose(Token::Kind::CloseStatement); !s) return s;
      if (Status s = parseBody(n->elseBody, {"endfor"}, stopped); !s) return s;
    }
    if (Status s = expectClose(Token::Kind::CloseStatement); !s) return s;
    return NodePtr(n);
  }

  StatusOr<NodePtr> parseSet() {
    auto n = node(Node::Kind::Set);
    if (peek().kind != Token::Kind::Name) return error("expected a name after set");
    n->targets.push_back(next().text);
    if (isOp(".")) {
      ++pos;
      if (peek().kind != Token::Kind::Name) return error("expected an attribute name");
      n->targets.push_back(next().text);
    }
    if (!isOp("=")) return error("a block set ({% set x %}...{% endset %}) is not supported");
    ++pos;
    auto value = parseExpression();
    if (!value) return value.status();
    n->operands.push_back(*value);
    if (Status s = expectClose(Token::Kind::CloseStatement); !s) return s;
    return NodePtr(n);
  }

  // expression: or ['if' or ['else' expression]]
  StatusOr<NodePtr> parseExpression() {
    auto value = parseOr();
    if (!value) return value;
    if (!isName("if")) return value;
    ++pos;
    auto n = node(Node::Kind::Conditional);
    auto condition = parseOr();
    if (!condition) return condition;
    NodePtr otherwise;
    if (isName("else")) {
      ++pos;
      Deeper guard(depth);
      if (Status s = checkDepth(); !s) return s;
      auto e = parseExpression();
      if (!e) return e;
      otherwise = *e;
    }
    n->operands = {*condition, *value, otherwise};
    return NodePtr(n);
  }
  // A for loop's iterable: no 'if' (that would be a loop filter).
  StatusOr<NodePtr> parseConditionalFree() { return parseOr(); }

  // A chain (a + b + c, x.a.b[0]|f) builds a tree one level deeper per link,
  // which the renderer and the destructor walk recursively: each link counts
  // against the depth limit until the chain ends.
  class Chain {
  public:
    explicit Chain(Parser &parser) : parser(parser) {}
    ~Chain() { parser.depth -= links; }
    Status link() {
      ++links;
      ++parser.depth;
      return parser.checkDepth();
    }

  private:
    Parser &parser;
    int links = 0;
  };
  Status checkDepth() const {
    if (depth > kMaxDepth)
      return error("blocks and expressions nested deeper than " + std::to_string(kMaxDepth) + " levels");
    return {};
  }

  StatusOr<NodePtr> binary(StatusOr<NodePtr> (Parser::*operand)(), std::vector<std::string> ops) {
    auto left = (this->*operand)();
    if (!left) return left;
    Chain chain(*this);
    for (;;) {
      std::string op;
      for (const std::string &o : ops) {
        bool word = std::isalpha(static_cast<unsigned char>(o[0]));
        if ((word && isName(o.c_str())) || (!word && isOp(o.c_str()))) op = o;
      }
      if (op.empty()) return left;
      if (Status s = chain.link(); !s) return s;
      auto n = node(Node::Kind::Binary);
      ++pos;
      auto right = (this->*operand)();
      if (!right) return right;
      n->text = op;
      n->operands = {*left, *right};
      left = NodePtr(n);
    }
  }
  StatusOr<NodePtr> parseOr() { return binary(&Parser::parseAnd, {"or"}); }
  StatusOr<NodePtr> parseAnd() { return binary(&Parser::parseNot, {"and"}); }
  StatusOr<NodePtr> parseNot() {
    if (!isName("not")) return parseComparison();
    Deeper guard(depth);
    if (Status s = checkDepth(); !s) return s;
    auto n = node(Node::Kind::Not);
    ++pos;
    auto operand = parseNot();
    if (!operand) return operand;
    n->operands.push_back(*operand);
    return NodePtr(n);
  }
  StatusOr<NodePtr> parseComparison() {
    auto left = parseConcat();
    if (!left) return left;
    Chain chain(*this);
    for (;;) {
      std::string op;
      for (const char *o : {"==", "!=", "<=", ">=", "<", ">"})
        if (isOp(o)) op = o;
      if (isName("in")) op = "in";
      if (isName("not") && isName("in", 1)) op = "not in";
      if (op.empty()) return left;
      if (Status s = chain.link(); !s) return s;
      auto n = node(Node::Kind::Binary);
      pos += op == "not in" ? 2 : 1;
      auto right = parseConcat();
      if (!right) return right;
      n->text = op;
      n->operands = {*left, *right};
      left = NodePtr(n);
    }
  }
  StatusOr<NodePtr> parseConcat() { return binary(&Parser::parseSum, {"~"}); }
  StatusOr<NodePtr> parseSum() { return binary(&Parser::parseProduct, {"+", "-"}); }
  StatusOr<NodePtr> parseProduct() { return binary(&Parser::parseUnary, {"*", "//", "/", "%"}); }
  StatusOr<NodePtr> parseUnary() {
    Deeper guard(depth);
    if (Status s = checkDepth(); !s) return s;
    if (isOp("-")) {
      auto n = node(Node::Kind::Negate);
      ++pos;
      auto operand = parseUnary();
      if (!operand) return operand;
      n->operands.push_back(*operand);
      return NodePtr(n);
    }
    auto primary = parsePrimary();
    if (!primary) return primary;
    return parsePostfix(*primary);
  }

  Status parseArguments(Node &call) {
    // '(' already taken.
    while (!isOp(")")) {
      if (peek().kind == Token::Kind::Name && isOp("=", 1)) {
        std::string key = next().text;
        ++pos;
        auto value = parseExpression();
        if (!value) return value.status();
        call.keywords.push_back({key, *value});
      } else {
        auto value = parseExpression();
        if (!value) return value.status();
        call.operands.push_back(*value);
      }
      if (!isOp(",")) break;
      ++pos;
    }
    return expectOp(")");
  }

  StatusOr<NodePtr> parsePostfix(NodePtr value) {
    Chain chain(*this);
    for (;;) {
      bool more = isOp(".") || isOp("[") || isOp("(") || isOp("|") || isName("is");
      if (more)
        if (Status s = chain.link(); !s) return s;
      if (isOp(".")) {
        ++pos;
        if (peek().kind != Token::Kind::Name) return error("expected an attribute name after '.'");
        auto n = node(Node::Kind::Attr);
        n->text = next().text;
        n->operands.push_back(value);
        value = n;
      } else if (isOp("[")) {
        ++pos;
        NodePtr parts[3];
        bool slice = false;
        for (int k = 0; k < 3; ++k) {
          if (!isOp(":") && !isOp("]")) {
            auto e = parseExpression();
            if (!e) return e;
            parts[k] = *e;
          }
          if (k < 2 && isOp(":")) {
            slice = true;
            ++pos;
            continue;
          }
          break;
        }
        if (!slice && !parts[0]) return error("expected an index between '[' and ']'"); // x[] (an index is never empty)
        if (Status s = expectOp("]"); !s) return s;
        auto n = node(slice ? Node::Kind::Slice : Node::Kind::Index);
        n->operands = {value, parts[0]};
        if (slice) n->operands.insert(n->operands.end(), {parts[1], parts[2]});
        value = n;
      } else if (isOp("(")) {
        ++pos;
        auto n = node(Node::Kind::Call);
        n->operands.push_back(value);
        if (Status s = parseArguments(*n); !s) return s;
        value = n;
      } else if (isOp("|")) {
        ++pos;
        if (peek().kind != Token::Kind::Name) return error("expected a filter name after '|'");
        auto n = node(Node::Kind::Filter);
        n->text = next().text;
        n->operands.push_back(value);
        if (isOp("(")) {
          ++pos;
          if (Status s = parseArguments(*n); !s) return s;
        }
        value = n;
      } else if (isName("is")) {
        ++pos;
        auto n = node(Node::Kind::Test);
        if (isName("not")) {
          n->negated = true;
          ++pos;
        }
        if (peek().kind != Token::Kind::Name) return error("expected a test name after 'is'");
        n->text = next().text;
        n->operands.push_back(value);
        value = n;
      } else {
        return value;
      }
    }
  }

  StatusOr<NodePtr> parsePrimary() {
    const Token &t = peek();
    auto literal = [&](Value v) {
      auto n = node(Node::Kind::Literal);
      n->literal = std::move(v);
      ++pos;
      return NodePtr(n);
    };
    switch (t.kind) {
    case Token::Kind::String: {
      // Adjacent strings join, as in Python.
      std::string joined;
      while (peek().kind == Token::Kind::String) joined += next().text;
      --pos;
      return literal(Value::of(joined));
    }
    case Token::Kind::Integer: {
      int64_t v = 0;
      auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
      if (ec != std::errc() || end != t.text.data() + t.text.size()) return error("the number " + t.text + " is too large");
      return literal(Value::of(v));
    }
    case Token::Kind::Real: {
      double v = 0;
      auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
      if (ec != std::errc() || end != t.text.data() + t.text.size()) return error("the number " + t.text + " is out of range");
      return literal(Value::of(v));
    }
    case Token::Kind::Name:
      if (t.text == "true" || t.text == "True") return literal(Value::of(true));
      if (t.text == "false" || t.text == "False") return literal(Value::of(false));
      if (t.text == "none" || t.text == "None") return literal(Value::none());
      {
        auto n = node(Node::Kind::Name);
        n->text = next().text;
        return NodePtr(n);
      }
    case Token::Kind::Operator:
      if (t.text == "(") {
        ++pos;
        auto inner = parseExpression();
        if (!inner) return inner;
        if (Status s = expectOp(")"); !s) return s;
        return inner;
      }
      if (t.text == "[") {
        ++pos;
        auto n = node(Node::Kind::ListLiteral);
        while (!isOp("]")) {
          auto e = parseExpression();
          if (!e) return e;
          n->operands.push_back(*e);
          if (!isOp(",")) break;
          ++pos;
        }
        if (Status s = expectOp("]"); !s) return s;
        return NodePtr(n);
      }
      if (t.text == "{") {
        ++pos;
        auto n = node(Node::Kind::DictLiteral);
        while (!isOp("}")) {
          auto key = parseExpression();
          if (!key) return key;
          if (Status s = expectOp(":"); !s) return s;
          auto value = parseExpression();
          if (!value) return value;
          n->operands.push_back(*key);
          n->operands.push_back(*value);
          if (!isOp(",")) break;
          ++pos;
        }
        if (Status s = expectOp("}"); !s) return s;
        return NodePtr(n);
      }
      return error("unexpected '" + t.text + "'");
    default:
      return error("expected an expression");
    }
  }

  // Nesting deeper than this (parentheses, brackets, blocks) is refused: the
  // parser and the renderer recurse once per level.
  static constexpr int kMaxDepth = 200;
  struct Deeper {
    int &depth;
    explicit Deeper(int &d) : depth(++d) {}
    ~Deeper() { --depth; }
  };
  std::vector<Token> tokens;
  std::size_t pos = 0;
  int depth = 0;
};

} // namespace

StatusOr<Program> parse(std::string_view source) {
  auto tokens = lex(std::string(source));
  if (!tokens) return tokens.status();
  Parser parser(std::move(*tokens));
  return parser.run();
}

} // namespace ti::jinja
