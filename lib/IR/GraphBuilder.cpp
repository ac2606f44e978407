//===- GraphBuilder.cpp - Syntax tree to Graph IR -------------------------===//
//
// 1. Walk the top-level statements in order, keeping a stack of scopes that map
//    names to what they denote (dim, attr, loop variable, input, weight, value).
// 2. Evaluate every expression as soon as it is met: dims and attrs are known
//    before anything uses them, since a name must be defined before its use.
// 3. Unroll each `for` by walking its body once per iteration in a fresh scope.
//    If an iteration reports an error, the remaining ones are skipped: the same
//    mistake would only be repeated for every layer.
// 4. Type each op with OpSchema when it is created. An op that fails, or that
//    uses a value of a failed op, binds its name to "poison" so that one mistake
//    gives one error, not a cascade.
// 5. At the end: outputs, unused weights (a warning), and GraphVerifier.
//
//===----------------------------------------------------------------------===//
#include "ti/IR/GraphBuilder.h"
#include "ti/IR/GraphVerifier.h"
#include "ti/IR/OpSchema.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <set>

using namespace ti;
using namespace ti::ast;

namespace {

/// What a name denotes.
struct Binding {
  enum class Kind { Dim, Attr, LoopVar, Input, Weight, Value, Poison };
  Binding(Kind kind, int64_t intValue = 0, unsigned index = 0, llvm::SMLoc loc = {})
      : kind(kind), intValue(intValue), index(index), loc(loc) {}
  Kind kind;
  int64_t intValue = 0; // Dim, LoopVar.
  unsigned index = 0;   // Attr (into graph.attrs), Weight, Value/Input (into values).
  llvm::SMLoc loc;
};

llvm::StringRef bindingKindName(Binding::Kind kind) {
  switch (kind) {
  case Binding::Kind::Dim: return "a dim";
  case Binding::Kind::Attr: return "an attr";
  case Binding::Kind::LoopVar: return "a loop variable";
  case Binding::Kind::Input: return "an input";
  case Binding::Kind::Weight: return "a weight";
  case Binding::Kind::Value:
  case Binding::Kind::Poison: return "a value";
  }
  return "a name";
}

/// An evaluated expression: an integer or a float.
struct Number {
  bool isInt = true;
  int64_t i = 0;
  double f = 0;
  double asDouble() const { return isInt ? static_cast<double>(i) : f; }
  std::string str() const { return isInt ? std::to_string(i) : AttrValue::ofFloat(f).str(); }
};

struct Scope {
  llvm::StringMap<Binding> names;
  /// Names of enclosing scopes' values rebound in this scope (once each).
  llvm::StringMap<llvm::SMLoc> rebound;
  std::string suffix; // ".3" for layer 3; ".3.1" in a nested loop.
};

class GraphIRBuilder {
public:
  GraphIRBuilder(DiagnosticEngine &diags) : diags(diags) {}
  std::optional<Graph> build(const GraphAST &ast);

private:
  // Statements.
  void buildBody(const std::vector<StmtPtr> &body);
  void buildDim(const DimStmt &s);
  void buildAttr(const AttrStmt &s);
  void buildInput(const InputStmt &s);
  void buildWeight(const WeightStmt &s);
  void buildAssign(const AssignStmt &s);
  void buildFor(const ForStmt &s);
  void buildOutput(const OutputStmt &s);

  // Names.
  const Binding *lookup(llvm::StringRef name) const;
  bool define(llvm::StringRef name, llvm::SMLoc loc, Binding binding);
  /// Binds a value-producing statement's name, rebinding an enclosing value.
  bool defineValue(llvm::StringRef name, llvm::SMLoc loc, Binding binding);
  /// After a failed definition: later uses of the name report nothing more.
  void definePoison(llvm::StringRef name, llvm::SMLoc loc);

  // Expressions.
  std::optional<Number> eval(const Expr &e);
  std::optional<AttrValue> evalAttr(const Expr &e);
  std::optional<TensorType> evalType(const TypeExpr &t);
  std::optional<std::string> substitute(const WeightStmt &s);

  DiagnosticEngine &diags;
  Graph graph;
  std::vector<Scope> scopes;
  int currentLayer = -1;
  static constexpr int64_t kMaxIterations = 100000; // all loops together
  int64_t iterations = 0;
  llvm::StringMap<unsigned> checkpointOwner; // checkpoint name -> weight index
};

} // namespace

const Binding *GraphIRBuilder::lookup(llvm::StringRef name) const {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto found = it->names.find(name);
    if (found != it->names.end())
      return &found->second;
  }
  return nullptr;
}

bool GraphIRBuilder::define(llvm::StringRef name, llvm::SMLoc loc, Binding binding) {
  if (const Binding *previous = lookup(name)) {
    bool sameScope = scopes.back().names.count(name);
    diags.error(loc, "'" + name + "' is already defined" +
                         (sameScope ? "" : " in an enclosing scope") + " as " +
                         bindingKindName(previous->kind));
    diags.note(previous->loc, "previous definition of '" + name + "' is here");
    // Uses in this scope now refer to the rejected definition: keep them quiet.
    if (!sameScope)
      scopes.back().names.try_emplace(name, Binding::Kind::Poison, 0, 0, loc);
    return false;
  }
  binding.loc = loc;
  scopes.back().names.try_emplace(name, binding);
  return true;
}

void GraphIRBuilder::definePoison(llvm::StringRef name, llvm::SMLoc loc) {
  if (!lookup(name))
    scopes.back().names.try_emplace(name, Binding::Kind::Poison, 0, 0, loc);
}

bool GraphIRBuilder::defineValue(llvm::StringRef name, llvm::SMLoc loc, Binding binding) {
  Scope &current = scopes.back();
  Binding *outer = nullptr;
  for (auto it = scopes.rbegin() + 1; it < scopes.rend() && !outer; ++it) {
    auto found = it->names.find(name);
    if (found != it->names.end())
      outer = &found->second;
  }
  bool outerIsValue = outer && (outer->kind == Binding::Kind::Value ||
                                outer->kind == Binding::Kind::Poison);
  if (!outerIsValue || current.names.count(name))
    return define(name, loc, binding);
  // Rebinding a value of an enclosing scope: once per iteration.
  auto [it, inserted] = current.rebound.try_emplace(name, loc);
  if (!inserted) {
    diags.error(loc, "'" + name + "' is already assigned in this loop body");
    diags.note(it->second, "previous assignment of '" + name + "' is here");
    return false;
  }
  binding.loc = loc;
  *outer = binding;
  return true;
}

std::optional<Number> GraphIRBuilder::eval(const Expr &e) {
  switch (e.kind) {
  case Expr::Kind::Integer:
    return Number{true, llvm::cast<IntegerExpr>(e).value, 0};
  case Expr::Kind::Float:
    return Number{false, 0, llvm::cast<FloatExpr>(e).value};
  case Expr::Kind::Name: {
    const auto &name = llvm::cast<NameExpr>(e).name;
    const Binding *b = lookup(name);
    if (!b) {
      diags.error(e.loc, "undefined name '" + name + "'");
      return std::nullopt;
    }
    switch (b->kind) {
    case Binding::Kind::Poison:
      return std::nullopt; // Its definition failed and said so.
    case Binding::Kind::Dim:
    case Binding::Kind::LoopVar:
      return Number{true, b->intValue, 0};
    case Binding::Kind::Attr: {
      const AttrValue &v = graph.attrs[b->index].value;
      if (v.kind == AttrValue::Kind::Int)
        return Number{true, v.i, 0};
      if (v.kind == AttrValue::Kind::Float)
        return Number{false, 0, v.f};
      diags.error(e.loc, "attr '" + name + "' is " + v.str() + ", not a number");
      return std::nullopt;
    }
    default:
      diags.error(e.loc, "'" + name + "' is " + bindingKindName(b->kind) +
                             ", not a number");
      return std::nullopt;
    }
  }
  case Expr::Kind::String:
  case Expr::Kind::List:
    diags.error(e.loc, "expected a number here");
    return std::nullopt;
  case Expr::Kind::Negate: {
    auto v = eval(*llvm::cast<NegateExpr>(e).operand);
    if (!v)
      return std::nullopt;
    if (v->isInt) {
      if (v->i == INT64_MIN) { // -INT64_MIN does not exist
        diags.error(e.loc, "integer overflow in -(" + llvm::Twine(v->i) + ")");
        return std::nullopt;
      }
      v->i = -v->i;
    } else
      v->f = -v->f;
    return v;
  }
  case Expr::Kind::Binary: {
    const auto &b = llvm::cast<BinaryExpr>(e);
    auto lhs = eval(*b.lhs);
    auto rhs = eval(*b.rhs);
    if (!lhs || !rhs)
      return std::nullopt;
    if (lhs->isInt && rhs->isInt) {
      int64_t x = lhs->i, y = rhs->i, r = 0;
      bool overflow = false;
      switch (b.op) {
      case '+': overflow = __builtin_add_overflow(x, y, &r); break;
      case '-': overflow = __builtin_sub_overflow(x, y, &r); break;
      case '*': overflow = __builtin_mul_overflow(x, y, &r); break;
      case '/':
      case '%':
        if (y == 0) {
          diags.error(e.loc, "division by zero");
          return std::nullopt;
        }
        if (x == INT64_MIN && y == -1) { // the quotient does not exist; x % y traps too
          overflow = true;
          break;
        }
        if (b.op == '/' && x % y != 0) {
          diags.error(e.loc, "integer division " + llvm::Twine(x) + " / " + llvm::Twine(y) +
                                 " is not exact (write a float, e.g. 1.0, for a fraction)");
          return std::nullopt;
        }
        r = b.op == '/' ? x / y : x % y;
        break;
      }
      if (overflow) {
        diags.error(e.loc, "integer overflow in " + llvm::Twine(x) + " " +
                               llvm::Twine(b.op) + " " + llvm::Twine(y));
        return std::nullopt;
      }
      return Number{true, r, 0};
    }
    if (b.op == '%') {
      diags.error(e.loc, "'%' needs integers");
      return std::nullopt;
    }
    double x = lhs->asDouble(), y = rhs->asDouble();
    double r = b.op == '+' ? x + y : b.op == '-' ? x - y : b.op == '*' ? x * y : x / y;
    if (b.op == '/' && y == 0) {
      diags.error(e.loc, "division by zero");
      return std::nullopt;
    }
    return Number{false, 0, r};
  }
  }
  return std::nullopt;
}

std::optional<AttrValue> GraphIRBuilder::evalAttr(const Expr &e) {
  if (const auto *s = llvm::dyn_cast<StringExpr>(&e))
    return AttrValue::ofString(s->value);
  if (const auto *list = llvm::dyn_cast<ListExpr>(&e)) {
    std::vector<int64_t> values;
    for (const ExprPtr &element : list->elements) {
      auto v = eval(*element);
      if (!v)
        return std::nullopt;
      if (!v->isInt) {
        diags.error(element->loc, "list elements must be integers, not " + v->str());
        return std::nullopt;
      }
      values.push_back(v->i);
    }
    return AttrValue::ofList(std::move(values));
  }
  auto v = eval(e);
  if (!v)
    return std::nullopt;
  return v->isInt ? AttrValue::ofInt(v->i) : AttrValue::ofFloat(v->f);
}

std::optional<TensorType> GraphIRBuilder::evalType(const TypeExpr &t) {
  TensorType type;
  auto dtype = parseDType(t.dtype);
  bool ok = true;
  if (!dtype) {
    diags.error(t.dtypeLoc, "unknown dtype '" + t.dtype + "' (known: bf16, f16, f32, i32)");
    ok = false;
  } else {
    type.dtype = *dtype;
  }
  for (const ExprPtr &d : t.dims) {
    auto v = eval(*d);
    if (!v) {
      ok = false;
      continue;
    }
    if (!v->isInt || v->i <= 0) {
      diags.error(d->loc, "a shape dimension must be a positive integer, not " + v->str());
      ok = false;
      continue;
    }
    type.shape.push_back(v->i);
  }
  if (!ok)
    return std::nullopt;
  return type;
}

/// Replaces each `{name}` in a weight's checkpoint name by the integer it
/// denotes (a loop variable, usually; a dim also works).
std::optional<std::string> GraphIRBuilder::substitute(const WeightStmt &s) {
  std::string out;
  llvm::StringRef text = s.source;
  const char *base = s.sourceLoc.getPointer() + 1; // After the opening quote.
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '}') {
      diags.error(llvm::SMLoc::getFromPointer(base + i),
                  "unmatched '}' in checkpoint tensor name");
      return std::nullopt;
    }
    if (text[i] != '{') {
      out += text[i];
      continue;
    }
    size_t close = text.find('}', i);
    if (close == llvm::StringRef::npos) {
      diags.error(llvm::SMLoc::getFromPointer(base + i),
                  "unclosed '{' in checkpoint tensor name");
      return std::nullopt;
    }
    llvm::StringRef name = text.slice(i + 1, close);
    const Binding *b = lookup(name);
    if (!b || (b->kind != Binding::Kind::LoopVar && b->kind != Binding::Kind::Dim)) {
      diags.error(llvm::SMLoc::getFromPointer(base + i + 1),
                  "'{" + name + "}' in a checkpoint tensor name must name a loop variable" +
                      (b ? ", but '" + name.str() + "' is " + bindingKindName(b->kind).str()
                         : std::string()));
      return std::nullopt;
    }
    out += std::to_string(b->intValue);
    i = close;
  }
  return out;
}

void GraphIRBuilder::buildDim(const DimStmt &s) {
  auto v = eval(*s.value);
  if (!v)
    return definePoison(s.name, s.nameLoc);
  if (!v->isInt || v->i <= 0) {
    diags.error(s.value->loc, "dim '" + s.name + "' must be a positive integer, not " + v->str());
    return definePoison(s.name, s.nameLoc);
  }
  if (define(s.name, s.nameLoc, Binding{Binding::Kind::Dim, v->i}))
    graph.dims.emplace_back(s.name, v->i);
}

void GraphIRBuilder::buildAttr(const AttrStmt &s) {
  auto v = evalAttr(*s.value);
  if (!v)
    return definePoison(s.name, s.nameLoc);
  if (define(s.name, s.nameLoc,
             Binding{Binding::Kind::Attr, 0, static_cast<unsigned>(graph.attrs.size())}))
    graph.attrs.push_back(NamedAttr{s.name, std::move(*v), s.nameLoc});
}

void GraphIRBuilder::buildInput(const InputStmt &s) {
  auto type = evalType(s.type);
  if (!type)
    return definePoison(s.name, s.nameLoc);
  unsigned index = graph.values.size();
  if (!define(s.name, s.nameLoc, Binding{Binding::Kind::Input, 0, index}))
    return;
  graph.values.push_back(Value{s.name, *type, -1, s.nameLoc});
  graph.inputs.push_back(index);
}

void GraphIRBuilder::buildWeight(const WeightStmt &s) {
  auto type = evalType(s.type);
  auto checkpoint = substitute(s);
  if (!type || !checkpoint)
    return definePoison(s.name, s.nameLoc);
  unsigned index = graph.weights.size();
  auto [owner, inserted] = checkpointOwner.try_emplace(*checkpoint, index);
  if (!inserted) {
    const Weight &other = graph.weights[owner->second];
    diags.error(s.sourceLoc, "checkpoint tensor \"" + *checkpoint +
                                 "\" is already loaded by weight '" + other.name + "'" +
                                 (s.source.find('{') == std::string::npos && currentLayer >= 0
                                      ? " (inside a loop, put the loop variable in the name, "
                                        "e.g. \"layers.{l}.w\")"
                                      : ""));
    diags.note(other.loc, "weight '" + other.name + "' is declared here");
    return definePoison(s.name, s.nameLoc);
  }
  if (!define(s.name, s.nameLoc, Binding{Binding::Kind::Weight, 0, index})) {
    checkpointOwner.erase(*checkpoint);
    return;
  }
  graph.weights.push_back(
      Weight{s.name + scopes.back().suffix, *checkpoint, *type, currentLayer, s.nameLoc});
}

void GraphIRBuilder::buildAssign(const AssignStmt &s) {
  auto poison = [&] { defineValue(s.name, s.loc, Binding{Binding::Kind::Poison}); };
  auto kind = parseOpKind(s.op);
  if (!kind) {
    diags.error(s.opLoc, "unknown op '" + s.op +
                             "' (known: embed, rmsnorm, matmul, rope, attention, "
                             "silu_mul, add, argmax)");
    return poison();
  }

  Op op;
  op.kind = *kind;
  op.loc = s.opLoc;
  op.layer = currentLayer;
  bool ok = true, usesPoison = false, sawKeyword = false;
  for (const Arg &arg : s.args) {
    if (!arg.keyword.empty()) {
      sawKeyword = true;
      if (op.findAttr(arg.keyword)) {
        diags.error(arg.loc, "attribute '" + arg.keyword + "' is given twice");
        ok = false;
        continue;
      }
      auto v = evalAttr(*arg.value);
      if (!v) {
        ok = false;
        continue;
      }
      op.attrs.push_back(NamedAttr{arg.keyword, std::move(*v), arg.loc});
      continue;
    }
    if (sawKeyword) {
      diags.error(arg.loc, "operands come before keyword attributes");
      ok = false;
      continue;
    }
    const auto *name = llvm::dyn_cast<NameExpr>(arg.value.get());
    if (!name) {
      diags.error(arg.loc, "an operand of '" + s.op + "' must name a value or a weight");
      ok = false;
      continue;
    }
    const Binding *b = lookup(name->name);
    if (!b) {
      diags.error(arg.loc, "undefined name '" + name->name + "'");
      ok = false;
      continue;
    }
    Operand operand;
    operand.loc = arg.loc;
    switch (b->kind) {
    case Binding::Kind::Input:
    case Binding::Kind::Value:
      operand.kind = Operand::Kind::Value;
      operand.index = b->index;
      break;
    case Binding::Kind::Weight:
      operand.kind = Operand::Kind::Weight;
      operand.index = b->index;
      break;
    case Binding::Kind::Poison:
      usesPoison = true;
      continue;
    default:
      diags.error(arg.loc, "'" + name->name + "' is " + bindingKindName(b->kind) +
                               "; an operand of '" + s.op + "' must be a value or a weight");
      ok = false;
      continue;
    }
    op.operands.push_back(operand);
  }
  if (!ok || usesPoison)
    return poison();

  auto type = inferOpType(graph, op, diags);
  if (!type)
    return poison();
  unsigned index = graph.values.size();
  op.result = index;
  if (!defineValue(s.name, s.loc, Binding{Binding::Kind::Value, 0, index}))
    return;
  graph.values.push_back(Value{s.name + scopes.back().suffix, *type,
                               static_cast<int>(graph.ops.size()), s.loc});
  graph.ops.push_back(std::move(op));
}

void GraphIRBuilder::buildFor(const ForStmt &s) {
  auto begin = eval(*s.begin);
  auto end = eval(*s.end);
  if (!begin || !end)
    return;
  if (!begin->isInt || !end->isInt || begin->i < 0 || begin->i >= end->i) {
    diags.error(s.begin->loc, "the loop range " + begin->str() + ".." + end->str() +
                                  " is empty or invalid: it needs integers 0 <= begin < end");
    return;
  }
  if (const Binding *b = lookup(s.var)) {
    diags.error(s.varLoc, "loop variable '" + s.var + "' is already defined as " +
                              bindingKindName(b->kind));
    diags.note(b->loc, "previous definition of '" + s.var + "' is here");
    return;
  }
  // Loops unroll: a bound on all their iterations together keeps a typo
  // (layers = 100000000) from elaborating gigabytes of IR.
  if (end->i - begin->i > kMaxIterations - iterations) {
    diags.error(s.begin->loc, "the loops unroll to more than " + llvm::Twine(kMaxIterations) +
                                  " iterations (this one runs " + llvm::Twine(end->i - begin->i) + " times)");
    return;
  }
  bool outermost = currentLayer < 0;
  for (int64_t i = begin->i; i < end->i; ++i) {
    ++iterations;
    unsigned errorsBefore = diags.errorCount();
    Scope scope;
    scope.suffix = scopes.back().suffix + "." + std::to_string(i);
    scope.names.try_emplace(s.var, Binding::Kind::LoopVar, i, 0, s.varLoc);
    scopes.push_back(std::move(scope));
    if (outermost)
      currentLayer = static_cast<int>(i);
    buildBody(s.body);
    scopes.pop_back();
    if (diags.errorCount() != errorsBefore)
      break; // Every later iteration would repeat the same errors.
  }
  if (outermost)
    currentLayer = -1;
}

void GraphIRBuilder::buildOutput(const OutputStmt &s) {
  for (const OutputStmt::Name &n : s.names) {
    const Binding *b = lookup(n.name);
    if (!b) {
      diags.error(n.loc, "undefined name '" + n.name + "'");
      continue;
    }
    if (b->kind == Binding::Kind::Poison)
      continue;
    if (b->kind != Binding::Kind::Value) {
      diags.error(n.loc, "an output must be a value computed by the graph, but '" + n.name +
                             "' is " + bindingKindName(b->kind));
      continue;
    }
    if (llvm::is_contained(graph.outputs, b->index)) {
      diags.error(n.loc, "'" + n.name + "' is already an output");
      continue;
    }
    graph.outputs.push_back(b->index);
  }
}

void GraphIRBuilder::buildBody(const std::vector<StmtPtr> &body) {
  for (const StmtPtr &stmt : body) {
    switch (stmt->kind) {
    case Stmt::Kind::Dim: buildDim(llvm::cast<DimStmt>(*stmt)); break;
    case Stmt::Kind::Attr: buildAttr(llvm::cast<AttrStmt>(*stmt)); break;
    case Stmt::Kind::Input: buildInput(llvm::cast<InputStmt>(*stmt)); break;
    case Stmt::Kind::Weight: buildWeight(llvm::cast<WeightStmt>(*stmt)); break;
    case Stmt::Kind::Assign: buildAssign(llvm::cast<AssignStmt>(*stmt)); break;
    case Stmt::Kind::For: buildFor(llvm::cast<ForStmt>(*stmt)); break;
    case Stmt::Kind::Output: buildOutput(llvm::cast<OutputStmt>(*stmt)); break;
    }
  }
}

std::optional<Graph> GraphIRBuilder::build(const GraphAST &ast) {
  graph.name = ast.name;
  graph.loc = ast.loc;
  scopes.emplace_back();
  buildBody(ast.body);
  if (diags.hadError())
    return std::nullopt;

  if (graph.outputs.empty()) {
    diags.error(ast.loc, "graph '" + ast.name + "' has no output: add `output <value>`");
    return std::nullopt;
  }
  // A weight nothing reads is most likely a typo in an op's operands. Inside a
  // loop, say so once, not once per layer.
  std::vector<bool> used(graph.weights.size());
  for (const Op &op : graph.ops)
    for (const Operand &o : op.operands)
      if (o.kind == Operand::Kind::Weight)
        used[o.index] = true;
  std::set<const char *> warned;
  for (size_t i = 0; i < graph.weights.size(); ++i)
    if (!used[i] && warned.insert(graph.weights[i].loc.getPointer()).second)
      diags.warning(graph.weights[i].loc,
                    "weight '" + graph.weights[i].name + "' is never used");

  if (!verifyGraph(graph, diags))
    return std::nullopt;
  return std::move(graph);
}

std::optional<Graph> ti::buildGraph(const GraphAST &ast, DiagnosticEngine &diags) {
  return GraphIRBuilder(diags).build(ast);
}
