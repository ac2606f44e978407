//===- JinjaRender.cpp - Chat templates: evaluation -----------------------===//
//
// A tree walk. Scopes: the globals, then one per for-loop iteration (a set
// inside a loop stays in it, as in Jinja; namespaces carry values out).
// A template is untrusted input: integer arithmetic that would overflow, a
// namespace stored inside itself, a string or output past 16 MiB and more
// than a million steps (statements, expressions and loop iterations) are
// errors.
// Truth follows Python: empty strings, lists and dicts, zero, none and
// undefined are false. An undefined value prints as nothing; using one in
// arithmetic, or calling what cannot be called, is an error with its line.
//
//===----------------------------------------------------------------------===//
#include "JinjaAst.h"
#include "JinjaValue.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ti::jinja {

namespace {

constexpr std::size_t kMaxText = std::size_t(16) << 20;
constexpr uint64_t kMaxSteps = 1'000'000; // a real template takes thousands

class Renderer {
public:
  explicit Renderer(const Value &globals) { scopes.push_back(globals); }

  Status run(const std::vector<NodePtr> &body) {
    for (const NodePtr &n : body)
      if (Status s = execute(*n); !s) return s;
    return {};
  }
  std::string out;

private:
  Status error(const Node &n, const std::string &what) {
    return Status::error("line " + std::to_string(n.line) + ": " + what);
  }

  Value lookup(const std::string &name) const {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
      if (const Value *v = it->find(name)) return *v;
    return {};
  }

  Status step(const Node &n) {
    if (++steps > kMaxSteps) return error(n, "the template runs for more than a million steps");
    return {};
  }
  Status emit(const Node &n, const std::string &text) {
    if (out.size() + text.size() > kMaxText) return error(n, "the output passes 16 MiB");
    out += text;
    return {};
  }

  Status execute(const Node &n) {
    if (Status s = step(n); !s) return s;
    switch (n.kind) {
    case Node::Kind::Text: return emit(n, n.text);
    case Node::Kind::Output: {
      auto v = eval(*n.operands[0]);
      if (!v) return v.status();
      return emit(n, display(*v));
    }
    case Node::Kind::If:
      for (const auto &[condition, body] : n.branches) {
        auto c = eval(*condition);
        if (!c) return c.status();
        if (truthy(*c)) return run(body);
      }
      return run(n.elseBody);
    case Node::Kind::For: return executeFor(n);
    case Node::Kind::Set: {
      auto v = eval(*n.operands[0]);
      if (!v) return v.status();
      if (n.targets.size() == 1) {
        scopes.back().set(n.targets[0], *v);
        return {};
      }
      Value ns = lookup(n.targets[0]);
      if (ns.kind != Value::Kind::Dict || !ns.isNamespace)
        return error(n, "'" + n.targets[0] + "' is not a namespace: set " + n.targets[0] + "." + n.targets[1] +
                            " needs one");
      if (holds(*v, ns.dict.get()))
        return error(n, "set " + n.targets[0] + "." + n.targets[1] + " would store the namespace inside itself");
      ns.set(n.targets[1], *v);
      return {};
    }
    default: return error(n, "an expression where a statement belongs");
    }
  }

  Status executeFor(const Node &n) {
    auto iterable = eval(*n.operands[0]);
    if (!iterable) return iterable.status();
    std::vector<Value> items;
    if (iterable->kind == Value::Kind::List) {
      items = *iterable->list;
    } else if (iterable->kind == Value::Kind::Dict) {
      for (const auto &[k, v] : *iterable->dict) items.push_back(Value::of(k));
    } else if (iterable->kind == Value::Kind::String) {
      for (char c : iterable->text) items.push_back(Value::of(std::string(1, c)));
    } else if (iterable->kind != Value::Kind::Undefined && iterable->kind != Value::Kind::None) {
      return error(n, "a for loop over something that is not a list, a dict or a string");
    }
    if (items.empty()) return run(n.elseBody);
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (Status s = step(n); !s) return s;
      Value scope = Value::newDict();
      if (n.targets.size() == 1) {
        scope.set(n.targets[0], items[i]);
      } else {
        if (items[i].kind != Value::Kind::List || items[i].list->size() != n.targets.size())
          return error(n, "cannot unpack a loop item into " + std::to_string(n.targets.size()) + " names");
        for (std::size_t k = 0; k < n.targets.size(); ++k) scope.set(n.targets[k], (*items[i].list)[k]);
      }
      Value loop = Value::newDict();
      int64_t count = static_cast<int64_t>(items.size()), index = static_cast<int64_t>(i);
      loop.set("index0", Value::of(index));
      loop.set("index", Value::of(index + 1));
      loop.set("revindex0", Value::of(count - index - 1));
      loop.set("revindex", Value::of(count - index));
      loop.set("first", Value::of(i == 0));
      loop.set("last", Value::of(i + 1 == items.size()));
      loop.set("length", Value::of(count));
      loop.set("previtem", i > 0 ? items[i - 1] : Value());
      loop.set("nextitem", i + 1 < items.size() ? items[i + 1] : Value());
      scope.set("loop", loop);
      scopes.push_back(scope);
      Status s = run(n.body);
      scopes.pop_back();
      if (!s) return s;
    }
    return {};
  }

  StatusOr<Value> eval(const Node &n) {
    if (Status s = step(n); !s) return s;
    switch (n.kind) {
    case Node::Kind::Literal: return n.literal;
    case Node::Kind::Name: return lookup(n.text);
    case Node::Kind::Attr: {
      auto object = eval(*n.operands[0]);
      if (!object) return object;
      if (object->kind == Value::Kind::Dict) {
        const Value *v = object->find(n.text);
        return v ? *v : Value();
      }
      if (object->kind == Value::Kind::Undefined)
        return error(n, "'" + n.text + "' of an undefined value");
      return Value(); // a method, taken up by the call
    }
    case Node::Kind::Index: {
      auto object = eval(*n.operands[0]);
      if (!object) return object;
      auto key = eval(*n.operands[1]);
      if (!key) return key;
      if (object->kind == Value::Kind::List || object->kind == Value::Kind::String) {
        if (key->kind != Value::Kind::Int) return error(n, "a list index that is not an integer");
        int64_t size = object->kind == Value::Kind::List ? int64_t(object->list->size()) : int64_t(object->text.size());
        int64_t i = key->integer < 0 ? key->integer + size : key->integer;
        if (i < 0 || i >= size) return Value();
        if (object->kind == Value::Kind::List) return (*object->list)[i];
        return Value::of(std::string(1, object->text[i]));
      }
      if (object->kind == Value::Kind::Dict) {
        if (key->kind != Value::Kind::String) return Value();
        const Value *v = object->find(key->text);
        return v ? *v : Value();
      }
      if (object->kind == Value::Kind::Undefined) return error(n, "an index into an undefined value");
      return Value();
    }
    case Node::Kind::Slice: return evalSlice(n);
    case Node::Kind::Call: return evalCall(n);
    case Node::Kind::Filter: return evalFilter(n);
    case Node::Kind::Test: return evalTest(n);
    case Node::Kind::Not: {
      auto v = eval(*n.operands[0]);
      if (!v) return v;
      return Value::of(!truthy(*v));
    }
    case Node::Kind::Negate: {
      auto v = eval(*n.operands[0]);
      if (!v) return v;
      if (v->kind == Value::Kind::Int) {
        if (v->integer == INT64_MIN) return error(n, "integer overflow");
        return Value::of(-v->integer);
      }
      if (v->kind == Value::Kind::Float) return Value::of(-v->real);
      return error(n, "'-' before something that is not a number");
    }
    case Node::Kind::Binary: return evalBinary(n);
    case Node::Kind::Conditional: {
      auto c = eval(*n.operands[0]);
      if (!c) return c;
      if (truthy(*c)) return eval(*n.operands[1]);
      return n.operands[2] ? eval(*n.operands[2]) : StatusOr<Value>(Value());
    }
    case Node::Kind::ListLiteral: {
      Value list = Value::newList();
      for (const NodePtr &e : n.operands) {
        auto v = eval(*e);
        if (!v) return v;
        list.list->push_back(*v);
      }
      return list;
    }
    case Node::Kind::DictLiteral: {
      Value dict = Value::newDict();
      for (std::size_t i = 0; i + 1 < n.operands.size(); i += 2) {
        auto k = eval(*n.operands[i]);
        if (!k) return k;
        auto v = eval(*n.operands[i + 1]);
        if (!v) return v;
        if (k->kind != Value::Kind::String) return error(n, "a dict key that is not a string");
        dict.set(k->text, *v);
      }
      return dict;
    }
    default: return error(n, "a statement where an expression belongs");
    }
  }

  StatusOr<Value> evalSlice(const Node &n) {
    auto object = eval(*n.operands[0]);
    if (!object) return object;
    int64_t bounds[3] = {0, 0, 1};
    bool given[3] = {false, false, false};
    for (int k = 0; k < 3; ++k) {
      if (!n.operands[k + 1]) continue;
      auto v = eval(*n.operands[k + 1]);
      if (!v) return v;
      if (v->kind != Value::Kind::Int) return error(n, "a slice bound that is not an integer");
      bounds[k] = v->integer;
      given[k] = true;
    }
    int64_t step = bounds[2];
    if (step == 0) return error(n, "a slice step of zero");
    int64_t size = object->kind == Value::Kind::List ? int64_t(object->list->size())
                   : object->kind == Value::Kind::String ? int64_t(object->text.size())
                                                         : -1;
    if (size < 0) return error(n, "a slice of something that is not a list or a string");
    auto clampIndex = [&](int64_t i, bool isGiven, int64_t otherwise) {
      if (!isGiven) return otherwise;
      if (i < 0) i += size;
      return step > 0 ? std::clamp<int64_t>(i, 0, size) : std::clamp<int64_t>(i, -1, size - 1);
    };
    int64_t start = clampIndex(bounds[0], given[0], step > 0 ? 0 : size - 1);
    int64_t stop = clampIndex(bounds[1], given[1], step > 0 ? size : -1);
    Value out = object->kind == Value::Kind::List ? Value::newList() : Value::of(std::string());
    // i stays in [-1, size]; a step past the end ends the loop before i + step could overflow.
    for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
      if (object->kind == Value::Kind::List) out.list->push_back((*object->list)[i]);
      else out.text += object->text[i];
      if (step > 0 ? step >= stop - i : step <= stop - i) break;
      i += step;
    }
    return out;
  }

  StatusOr<std::vector<Value>> evalArguments(const Node &n, std::size_t from) {
    std::vector<Value> args;
    for (std::size_t i = from; i < n.operands.size(); ++i) {
      auto v = eval(*n.operands[i]);
      if (!v) return v.status();
      args.push_back(*v);
    }
    return args;
  }

  StatusOr<Value> evalCall(const Node &n) {
    const Node &callee = *n.operands[0];
    auto args = evalArguments(n, 1);
    if (!args) return args.status();
    if (callee.kind == Node::Kind::Name) {
      if (callee.text == "namespace") {
        Value ns = Value::newDict();
        ns.isNamespace = true;
        for (const auto &[key, valueNode] : n.keywords) {
          auto v = eval(*valueNode);
          if (!v) return v;
          ns.set(key, *v);
        }
        return ns;
      }
      if (callee.text == "raise_exception")
        return error(n, "the template raised an error: " + (args->empty() ? std::string() : display((*args)[0])));
      if (callee.text == "range") {
        int64_t lo = 0, hi = 0;
        if (args->size() == 1 && (*args)[0].kind == Value::Kind::Int) hi = (*args)[0].integer;
        else if (args->size() == 2 && (*args)[0].kind == Value::Kind::Int && (*args)[1].kind == Value::Kind::Int)
          lo = (*args)[0].integer, hi = (*args)[1].integer;
        else return error(n, "range() takes one or two integers");
        Value list = Value::newList();
        for (int64_t i = lo; i < hi && i - lo < 100000; ++i) list.list->push_back(Value::of(i));
        return list;
      }
      return error(n, "the function '" + callee.text + "' is not supported");
    }
    if (callee.kind != Node::Kind::Attr) return error(n, "a call of something that cannot be called");
    auto object = eval(*callee.operands[0]);
    if (!object) return object;
    return located(n, callMethod(*object, callee.text, *args));
  }

  // A built-in's error, with the node's line.
  template <typename T> StatusOr<T> located(const Node &n, StatusOr<T> result) {
    if (result.ok()) return result;
    return error(n, result.status().message());
  }

  StatusOr<Value> evalFilter(const Node &n) {
    auto value = eval(*n.operands[0]);
    if (!value) return value;
    auto args = evalArguments(n, 1);
    if (!args) return args.status();
    return located(n, applyFilter(n.text, *value, *args));
  }

  StatusOr<Value> evalTest(const Node &n) {
    auto value = eval(*n.operands[0]);
    if (!value) return value;
    auto yes = located(n, applyTest(n.text, *value));
    if (!yes) return yes.status();
    return Value::of(n.negated ? !*yes : *yes);
  }

  StatusOr<Value> evalBinary(const Node &n) {
    const std::string &op = n.text;
    auto left = eval(*n.operands[0]);
    if (!left) return left;
    if (op == "and") return truthy(*left) ? eval(*n.operands[1]) : left;
    if (op == "or") return truthy(*left) ? left : eval(*n.operands[1]);
    auto right = eval(*n.operands[1]);
    if (!right) return right;
    const Value &a = *left, &b = *right;
    if (op == "==") return Value::of(equal(a, b));
    if (op == "!=") return Value::of(!equal(a, b));
    auto bounded = [&](std::string text) -> StatusOr<Value> {
      if (text.size() > kMaxText) return error(n, "a string passes 16 MiB");
      return Value::of(std::move(text));
    };
    if (op == "~") {
      std::string x = display(a), y = display(b);
      if (x.size() + y.size() > kMaxText) return error(n, "a string passes 16 MiB");
      return bounded(x + y);
    }
    if (op == "in" || op == "not in") {
      bool found = false;
      if (b.kind == Value::Kind::String) {
        if (a.kind != Value::Kind::String) return error(n, "'in' a string needs a string");
        found = b.text.find(a.text) != std::string::npos;
      } else if (b.kind == Value::Kind::List) {
        found = std::any_of(b.list->begin(), b.list->end(), [&](const Value &x) { return equal(a, x); });
      } else if (b.kind == Value::Kind::Dict) {
        found = a.kind == Value::Kind::String && b.find(a.text);
      } else if (b.kind != Value::Kind::Undefined && b.kind != Value::Kind::None) {
        return error(n, "'in' something that is not a string, a list or a dict");
      }
      return Value::of(op == "in" ? found : !found);
    }
    if (op == "+" && a.kind == Value::Kind::String && b.kind == Value::Kind::String) {
      if (a.text.size() + b.text.size() > kMaxText) return error(n, "a string passes 16 MiB");
      return Value::of(a.text + b.text);
    }
    if (op == "+" && a.kind == Value::Kind::List && b.kind == Value::Kind::List) {
      Value list = Value::newList();
      *list.list = *a.list;
      list.list->insert(list.list->end(), b.list->begin(), b.list->end());
      return list;
    }
    if (op == "<" || op == ">" || op == "<=" || op == ">=") {
      bool r;
      if (isNumber(a) && isNumber(b)) {
        double x = number(a), y = number(b);
        r = op == "<" ? x < y : op == ">" ? x > y : op == "<=" ? x <= y : x >= y;
      } else if (a.kind == Value::Kind::String && b.kind == Value::Kind::String) {
        int c = a.text.compare(b.text);
        r = op == "<" ? c < 0 : op == ">" ? c > 0 : op == "<=" ? c <= 0 : c >= 0;
      } else {
        return error(n, "'" + op + "' between values that cannot be ordered");
      }
      return Value::of(r);
    }
    if (!isNumber(a) || !isNumber(b))
      return error(n, "'" + op + "' between values that are not both numbers (or strings for +)");
    bool ints = a.kind == Value::Kind::Int && b.kind == Value::Kind::Int;
    if (ints && (op == "+" || op == "-" || op == "*")) {
      int64_t r = 0;
      bool overflow = op == "+"   ? __builtin_add_overflow(a.integer, b.integer, &r)
                      : op == "-" ? __builtin_sub_overflow(a.integer, b.integer, &r)
                                  : __builtin_mul_overflow(a.integer, b.integer, &r);
      if (overflow) return error(n, "integer overflow");
      return Value::of(r);
    }
    if (op == "+") return Value::of(number(a) + number(b));
    if (op == "-") return Value::of(number(a) - number(b));
    if (op == "*") return Value::of(number(a) * number(b));
    if (op == "/") {
      if (number(b) == 0) return error(n, "division by zero");
      return Value::of(number(a) / number(b));
    }
    if (op == "//" || op == "%") {
      if (!ints) return error(n, "'" + op + "' needs integers");
      if (b.integer == 0) return error(n, "division by zero");
      if (a.integer == INT64_MIN && b.integer == -1) return error(n, "integer overflow");
      int64_t q = a.integer / b.integer, r = a.integer % b.integer;
      if (r != 0 && ((r < 0) != (b.integer < 0))) --q, r += b.integer; // Python's floor division
      return Value::of(op == "//" ? q : r);
    }
    return error(n, "the operator '" + op + "' is not supported");
  }

  std::vector<Value> scopes;
  uint64_t steps = 0;
};

} // namespace

StatusOr<std::string> render(const Program &program, const Value &globals) {
  Renderer renderer(globals);
  if (Status s = renderer.run(program.body); !s) return s;
  return std::move(renderer.out);
}

} // namespace ti::jinja
