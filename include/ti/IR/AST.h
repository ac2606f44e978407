//===- AST.h - Syntax tree of the graph language ----------------*- C++ -*-===//
//
// The parser's output: the program as written, with a location on every node.
// Loops are not unrolled and names are not resolved; GraphBuilder does that.
// The canonical printer (`tic --emit=graph`) prints this tree.
//
// Grammar (one statement per line by convention, `#` starts a comment):
//
//   file      := 'graph' IDENT '{' stmt* '}'
//   stmt      := 'dim' IDENT '=' expr
//              | 'attr' IDENT '=' value
//              | 'input' IDENT ':' type
//              | 'weight' IDENT ':' type '=' STRING
//              | IDENT '=' IDENT '(' args? ')'
//              | 'for' IDENT 'in' expr '..' expr '{' stmt* '}'
//              | 'output' IDENT (',' IDENT)*
//   type      := IDENT '[' expr (',' expr)* ']'         e.g. bf16[heads*head_dim, hidden]
//   args      := arg (',' arg)*
//   arg       := IDENT '=' value | expr                 keyword or positional
//   value     := expr | STRING | '[' (expr (',' expr)*)? ']'
//   expr      := term (('+' | '-') term)*
//   term      := factor (('*' | '/' | '%') factor)*
//   factor    := INTEGER | NUMBER | IDENT | '(' expr ')' | '-' factor
//
// Ownership: a GraphAST owns its whole tree through unique_ptrs. Locations point
// into the SourceMgr buffer the parser read, which must outlive the tree.
//
//===----------------------------------------------------------------------===//
#ifndef TI_IR_AST_H
#define TI_IR_AST_H

#include "llvm/Support/Casting.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ti::ast {

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

struct Expr {
  enum class Kind { Integer, Float, Name, String, List, Negate, Binary };
  Expr(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
  virtual ~Expr() = default;
  const Kind kind;
  llvm::SMLoc loc;
};
using ExprPtr = std::unique_ptr<Expr>;

struct IntegerExpr : Expr {
  IntegerExpr(llvm::SMLoc loc, int64_t value) : Expr(Kind::Integer, loc), value(value) {}
  int64_t value;
  static bool classof(const Expr *e) { return e->kind == Kind::Integer; }
};

struct FloatExpr : Expr {
  FloatExpr(llvm::SMLoc loc, double value) : Expr(Kind::Float, loc), value(value) {}
  double value;
  static bool classof(const Expr *e) { return e->kind == Kind::Float; }
};

/// A reference to a dim, an attr, a loop variable, or (as an op operand) a
/// value or weight.
struct NameExpr : Expr {
  NameExpr(llvm::SMLoc loc, std::string name) : Expr(Kind::Name, loc), name(std::move(name)) {}
  std::string name;
  static bool classof(const Expr *e) { return e->kind == Kind::Name; }
};

struct StringExpr : Expr {
  StringExpr(llvm::SMLoc loc, std::string value) : Expr(Kind::String, loc), value(std::move(value)) {}
  std::string value;
  static bool classof(const Expr *e) { return e->kind == Kind::String; }
};

struct ListExpr : Expr {
  ListExpr(llvm::SMLoc loc, std::vector<ExprPtr> elements)
      : Expr(Kind::List, loc), elements(std::move(elements)) {}
  std::vector<ExprPtr> elements;
  static bool classof(const Expr *e) { return e->kind == Kind::List; }
};

struct NegateExpr : Expr {
  NegateExpr(llvm::SMLoc loc, ExprPtr operand) : Expr(Kind::Negate, loc), operand(std::move(operand)) {}
  ExprPtr operand;
  static bool classof(const Expr *e) { return e->kind == Kind::Negate; }
};

struct BinaryExpr : Expr {
  BinaryExpr(llvm::SMLoc loc, char op, ExprPtr lhs, ExprPtr rhs)
      : Expr(Kind::Binary, loc), op(op), lhs(std::move(lhs)), rhs(std::move(rhs)) {}
  char op; // One of + - * / %
  ExprPtr lhs, rhs;
  static bool classof(const Expr *e) { return e->kind == Kind::Binary; }
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

/// `bf16[heads*head_dim, hidden]`
struct TypeExpr {
  std::string dtype;
  llvm::SMLoc dtypeLoc;
  std::vector<ExprPtr> dims;
};

struct Stmt {
  enum class Kind { Dim, Attr, Input, Weight, Assign, For, Output };
  Stmt(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
  virtual ~Stmt() = default;
  const Kind kind;
  llvm::SMLoc loc; // The statement's first token.
};
using StmtPtr = std::unique_ptr<Stmt>;

struct DimStmt : Stmt {
  DimStmt(llvm::SMLoc loc) : Stmt(Kind::Dim, loc) {}
  std::string name;
  llvm::SMLoc nameLoc;
  ExprPtr value;
  static bool classof(const Stmt *s) { return s->kind == Kind::Dim; }
};

struct AttrStmt : Stmt {
  AttrStmt(llvm::SMLoc loc) : Stmt(Kind::Attr, loc) {}
  std::string name;
  llvm::SMLoc nameLoc;
  ExprPtr value; // An expression, a string or a list.
  static bool classof(const Stmt *s) { return s->kind == Kind::Attr; }
};

struct InputStmt : Stmt {
  InputStmt(llvm::SMLoc loc) : Stmt(Kind::Input, loc) {}
  std::string name;
  llvm::SMLoc nameLoc;
  TypeExpr type;
  static bool classof(const Stmt *s) { return s->kind == Kind::Input; }
};

struct WeightStmt : Stmt {
  WeightStmt(llvm::SMLoc loc) : Stmt(Kind::Weight, loc) {}
  std::string name;
  llvm::SMLoc nameLoc;
  TypeExpr type;
  /// The checkpoint tensor, with `{var}` placeholders for loop variables.
  std::string source;
  llvm::SMLoc sourceLoc; // The opening quote.
  static bool classof(const Stmt *s) { return s->kind == Kind::Weight; }
};

struct Arg {
  std::string keyword; // Empty for a positional argument.
  llvm::SMLoc loc;
  ExprPtr value;
};

/// `name = op(args)`
struct AssignStmt : Stmt {
  AssignStmt(llvm::SMLoc loc) : Stmt(Kind::Assign, loc) {}
  std::string name;
  std::string op;
  llvm::SMLoc opLoc;
  std::vector<Arg> args;
  static bool classof(const Stmt *s) { return s->kind == Kind::Assign; }
};

struct ForStmt : Stmt {
  ForStmt(llvm::SMLoc loc) : Stmt(Kind::For, loc) {}
  std::string var;
  llvm::SMLoc varLoc;
  ExprPtr begin, end;
  std::vector<StmtPtr> body;
  static bool classof(const Stmt *s) { return s->kind == Kind::For; }
};

struct OutputStmt : Stmt {
  OutputStmt(llvm::SMLoc loc) : Stmt(Kind::Output, loc) {}
  struct Name {
    std::string name;
    llvm::SMLoc loc;
  };
  std::vector<Name> names;
  static bool classof(const Stmt *s) { return s->kind == Kind::Output; }
};

struct GraphAST {
  std::string name;
  llvm::SMLoc loc;
  std::vector<StmtPtr> body;
};

} // namespace ti::ast

#endif // TI_IR_AST_H
