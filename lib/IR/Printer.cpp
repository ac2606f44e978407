//===- Printer.cpp - Canonical text of a graph and of the Graph IR --------===//
#include "ti/IR/Printer.h"
#include "ti/Plan/TaskRecord.h"

#include "llvm/Support/FormatVariadic.h"

#include <map>

using namespace ti;
using namespace ti::ast;

//===----------------------------------------------------------------------===//
// Syntax tree
//===----------------------------------------------------------------------===//

static int precedence(char op) { return op == '+' || op == '-' ? 1 : 2; }

static void printExprPrec(const Expr &e, int parentPrec, bool rightOperand,
                          llvm::raw_ostream &os) {
  switch (e.kind) {
  case Expr::Kind::Integer:
    os << llvm::cast<IntegerExpr>(e).value;
    return;
  case Expr::Kind::Float:
    os << AttrValue::ofFloat(llvm::cast<FloatExpr>(e).value).str();
    return;
  case Expr::Kind::Name:
    os << llvm::cast<NameExpr>(e).name;
    return;
  case Expr::Kind::String:
    os << '"' << llvm::cast<StringExpr>(e).value << '"';
    return;
  case Expr::Kind::List: {
    os << '[';
    const auto &elements = llvm::cast<ListExpr>(e).elements;
    for (size_t i = 0; i < elements.size(); ++i) {
      if (i)
        os << ", ";
      printExprPrec(*elements[i], 0, false, os);
    }
    os << ']';
    return;
  }
  case Expr::Kind::Negate:
    os << '-';
    printExprPrec(*llvm::cast<NegateExpr>(e).operand, 3, false, os);
    return;
  case Expr::Kind::Binary: {
    const auto &b = llvm::cast<BinaryExpr>(e);
    int prec = precedence(b.op);
    // Operators are left-associative: a right operand of equal precedence
    // needs parentheses (a - (b - c)), a left one does not.
    bool parens = prec < parentPrec || (prec == parentPrec && rightOperand);
    if (parens)
      os << '(';
    printExprPrec(*b.lhs, prec, false, os);
    if (prec == 1)
      os << ' ' << b.op << ' ';
    else
      os << b.op;
    printExprPrec(*b.rhs, prec, true, os);
    if (parens)
      os << ')';
    return;
  }
  }
}

void ti::printExpr(const Expr &expr, llvm::raw_ostream &os) {
  printExprPrec(expr, 0, false, os);
}

static void printType(const TypeExpr &type, llvm::raw_ostream &os) {
  os << type.dtype << '[';
  for (size_t i = 0; i < type.dims.size(); ++i) {
    if (i)
      os << ", ";
    printExpr(*type.dims[i], os);
  }
  os << ']';
}

static void printBody(const std::vector<StmtPtr> &body, unsigned indent,
                      llvm::raw_ostream &os) {
  Stmt::Kind previous = Stmt::Kind::Dim;
  bool first = true;
  for (const StmtPtr &stmt : body) {
    // A blank line between groups of different statements, and around loops.
    if (!first && (stmt->kind != previous || stmt->kind == Stmt::Kind::For))
      os << '\n';
    first = false;
    previous = stmt->kind;
    os.indent(indent);
    switch (stmt->kind) {
    case Stmt::Kind::Dim: {
      const auto &s = llvm::cast<DimStmt>(*stmt);
      os << "dim " << s.name << " = ";
      printExpr(*s.value, os);
      break;
    }
    case Stmt::Kind::Attr: {
      const auto &s = llvm::cast<AttrStmt>(*stmt);
      os << "attr " << s.name << " = ";
      printExpr(*s.value, os);
      break;
    }
    case Stmt::Kind::Input: {
      const auto &s = llvm::cast<InputStmt>(*stmt);
      os << "input " << s.name << ": ";
      printType(s.type, os);
      break;
    }
    case Stmt::Kind::Weight: {
      const auto &s = llvm::cast<WeightStmt>(*stmt);
      os << "weight " << s.name << ": ";
      printType(s.type, os);
      os << " = \"" << s.source << '"';
      break;
    }
    case Stmt::Kind::Assign: {
      const auto &s = llvm::cast<AssignStmt>(*stmt);
      os << s.name << " = " << s.op << '(';
      for (size_t i = 0; i < s.args.size(); ++i) {
        if (i)
          os << ", ";
        if (!s.args[i].keyword.empty())
          os << s.args[i].keyword << '=';
        printExpr(*s.args[i].value, os);
      }
      os << ')';
      break;
    }
    case Stmt::Kind::For: {
      const auto &s = llvm::cast<ForStmt>(*stmt);
      os << "for " << s.var << " in ";
      printExpr(*s.begin, os);
      os << "..";
      printExpr(*s.end, os);
      os << " {\n";
      printBody(s.body, indent + 2, os);
      os.indent(indent) << '}';
      break;
    }
    case Stmt::Kind::Output: {
      const auto &s = llvm::cast<OutputStmt>(*stmt);
      os << "output ";
      for (size_t i = 0; i < s.names.size(); ++i)
        os << (i ? ", " : "") << s.names[i].name;
      break;
    }
    }
    os << '\n';
  }
}

void ti::printGraphAST(const GraphAST &graph, llvm::raw_ostream &os) {
  os << "graph " << graph.name << " {\n";
  printBody(graph.body, 2, os);
  os << "}\n";
}

//===----------------------------------------------------------------------===//
// Graph IR
//===----------------------------------------------------------------------===//

void ti::printGraphIR(const Graph &graph, llvm::raw_ostream &os) {
  os << "graph " << graph.name << " {\n";
  for (const auto &[name, value] : graph.dims)
    os << "  dim " << name << " = " << value << '\n';
  for (const NamedAttr &a : graph.attrs)
    os << "  attr " << a.name << " = " << a.value.str() << '\n';
  for (unsigned i : graph.inputs)
    os << "  input %" << graph.values[i].name << ": " << graph.values[i].type.str() << '\n';
  for (const Weight &w : graph.weights)
    os << "  weight @" << w.name << ": " << w.type.str() << " = \"" << w.checkpoint << "\"\n";
  for (const Op &op : graph.ops) {
    const Value &result = graph.values[op.result];
    os << "  %" << result.name << " = " << opKindName(op.kind) << '(';
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const Operand &o = op.operands[i];
      os << (i ? ", " : "") << (o.kind == Operand::Kind::Value ? '%' : '@')
         << graph.nameOf(o);
    }
    for (const NamedAttr &a : op.attrs)
      os << ", " << a.name << '=' << a.value.str();
    os << ") : " << result.type.str() << '\n';
  }
  os << "  output ";
  for (size_t i = 0; i < graph.outputs.size(); ++i)
    os << (i ? ", " : "") << '%' << graph.values[graph.outputs[i]].name;
  os << "\n}\n";
}

std::string ti::withThousands(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

void ti::printGraphStats(const Graph &graph, llvm::raw_ostream &os) {
  struct Tally {
    uint64_t tensors = 0, params = 0, bytes = 0;
  };
  Tally total;
  std::map<DType, Tally> byDType;
  for (const Weight &w : graph.weights) {
    uint64_t n = w.type.numElements();
    for (Tally *t : {&total, &byDType[w.type.dtype]}) {
      t->tensors += 1;
      t->params += n;
      t->bytes += n * bytesOf(w.type.dtype);
    }
  }
  std::map<llvm::StringRef, unsigned> ops;
  for (const Op &op : graph.ops)
    ++ops[opKindName(op.kind)];

  os << "graph " << graph.name << "\n";
  os << llvm::formatv("  parameters  {0,16}  in {1} tensors\n", withThousands(total.params),
                      total.tensors);
  for (const auto &[dtype, t] : byDType)
    os << llvm::formatv("  {0,-10}  {1,16}  parameters, {2} bytes\n", dtypeName(dtype),
                        withThousands(t.params), withThousands(t.bytes));
  // The plan stores every weight as plan::kWeightType, whatever the checkpoint held.
  os << llvm::formatv("  as {0,-7}  {1,16}  bytes\n", dtypeName(plan::kWeightType),
                      withThousands(total.params * plan::kWeightBytes));
  os << "  ops        ";
  for (const auto &[name, count] : ops)
    os << ' ' << name << '=' << count;
  os << '\n';
}
