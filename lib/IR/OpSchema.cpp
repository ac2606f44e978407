//===- OpSchema.cpp - Operand, attribute and type rules of graph ops -------===//
//
// Activations are f32 vectors (batch one: every value is one row). Weights are
// floating-point tensors of any stored dtype (the packer converts them to the
// plan's dtype). Positions and token ids are i32[1].
//
//===----------------------------------------------------------------------===//
#include "ti/IR/OpSchema.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"

using namespace ti;

namespace {

enum class AttrKind { Int, Number, String };

struct AttrSpec {
  const char *name;
  AttrKind kind;
  bool required;
};

/// Checks one op; accumulates whether anything was wrong.
class OpChecker {
public:
  OpChecker(const Graph &graph, const Op &op, DiagnosticEngine &diags)
      : graph(graph), op(op), diags(diags), opName(opKindName(op.kind)) {}

  bool failed = false;

  void error(llvm::SMLoc loc, const llvm::Twine &message) {
    failed = true;
    diags.error(loc.isValid() ? loc : op.loc, message);
  }

  /// Operand `i` must be an activation vector of dtype `dtype`; returns its
  /// length, or -1 after an error.
  int64_t vector(unsigned i, llvm::StringRef role, DType dtype = DType::F32) {
    const Operand &operand = op.operands[i];
    if (operand.kind != Operand::Kind::Value) {
      error(operand.loc, "'" + opName + "' expects an activation as its " + role +
                             ", but '" + graph.nameOf(operand) + "' is a weight");
      return -1;
    }
    const TensorType &type = graph.typeOf(operand);
    if (type.dtype != dtype || type.rank() != 1) {
      error(operand.loc, "'" + opName + "' expects " + role + " of type " +
                             dtypeName(dtype) + "[N], but '" + graph.nameOf(operand) +
                             "' is " + type.str());
      return -1;
    }
    return type.shape[0];
  }

  /// Operand `i` must be the scalar position or token id (i32[1]).
  bool index(unsigned i, llvm::StringRef role) {
    const Operand &operand = op.operands[i];
    if (operand.kind != Operand::Kind::Value) {
      error(operand.loc, "'" + opName + "' expects an activation as its " + role +
                             ", but '" + graph.nameOf(operand) + "' is a weight");
      return false;
    }
    const TensorType &type = graph.typeOf(operand);
    if (type.dtype != DType::I32 || type.rank() != 1 || type.shape[0] != 1) {
      error(op.operands[i].loc, "'" + opName + "' expects " + role +
                                    " of type i32[1], but '" +
                                    graph.nameOf(op.operands[i]) + "' is " +
                                    graph.typeOf(op.operands[i]).str());
      return false;
    }
    return true;
  }

  /// Operand `i` must be a floating-point weight of rank `rank`.
  const TensorType *weight(unsigned i, llvm::StringRef role, unsigned rank) {
    const Operand &operand = op.operands[i];
    if (operand.kind != Operand::Kind::Weight) {
      error(operand.loc, "'" + opName + "' expects a weight as its " + role +
                             ", but '" + graph.nameOf(operand) + "' is an activation");
      return nullptr;
    }
    const TensorType &type = graph.typeOf(operand);
    if (!isFloat(type.dtype)) {
      error(operand.loc, "'" + opName + "' expects a floating-point " + role +
                             ", but weight '" + graph.nameOf(operand) + "' is " +
                             type.str());
      return nullptr;
    }
    if (type.rank() != rank) {
      error(operand.loc, "'" + opName + "' expects a rank-" + llvm::Twine(rank) + " " +
                             role + ", but weight '" + graph.nameOf(operand) +
                             "' is " + type.str());
      return nullptr;
    }
    return &type;
  }

  /// Checks the keyword attributes against `specs`: no unknown, none missing,
  /// each of the right kind.
  void attrs(llvm::ArrayRef<AttrSpec> specs) {
    bool unknown = false;
    for (const NamedAttr &a : op.attrs) {
      const AttrSpec *spec = llvm::find_if(specs, [&](const AttrSpec &s) { return a.name == s.name; });
      if (spec == specs.end()) {
        std::string known;
        for (const AttrSpec &s : specs)
          known += (known.empty() ? "" : ", ") + std::string(s.name);
        error(a.loc, "'" + opName + "' has no attribute '" + a.name + "'" +
                         (known.empty() ? std::string(" (it takes none)")
                                        : " (it takes: " + known + ")"));
        unknown = true;
        continue;
      }
      bool ok = spec->kind == AttrKind::Int      ? a.value.kind == AttrValue::Kind::Int
                : spec->kind == AttrKind::Number ? a.value.isNumber()
                                                 : a.value.kind == AttrValue::Kind::String;
      if (!ok)
        error(a.loc, "attribute '" + a.name + "' of '" + opName + "' must be " +
                         (spec->kind == AttrKind::Int      ? "an integer"
                          : spec->kind == AttrKind::Number ? "a number"
                                                           : "a string") +
                         ", not " + a.value.str());
    }
    // A misspelt attribute is reported once, not again as a missing one.
    for (const AttrSpec &s : specs)
      if (s.required && !unknown && !op.findAttr(s.name))
        error(op.loc, "'" + opName + "' needs the attribute '" + s.name + "'");
  }

  /// A present attribute that passed `attrs()`, or null.
  const AttrValue *attr(llvm::StringRef name) {
    const NamedAttr *a = op.findAttr(name);
    return a ? &a->value : nullptr;
  }

  void positive(llvm::StringRef name) {
    const NamedAttr *a = op.findAttr(name);
    if (a && a->value.isNumber() && !(a->value.asDouble() > 0))
      error(a->loc, "attribute '" + name + "' of '" + opName + "' must be positive, not " +
                        a->value.str());
  }

  const Graph &graph;
  const Op &op;
  DiagnosticEngine &diags;
  llvm::StringRef opName;
};

TensorType f32Vector(int64_t n) {
  TensorType t;
  t.dtype = DType::F32;
  t.shape = {n};
  return t;
}

} // namespace

static std::optional<TensorType> checkEmbed(OpChecker &c) {
  c.attrs({});
  const TensorType *table = c.weight(0, "table", 2);
  bool token = c.index(1, "token id");
  if (!table || !token || c.failed)
    return std::nullopt;
  return f32Vector(table->shape[1]);
}

static std::optional<TensorType> checkRmsNorm(OpChecker &c) {
  c.attrs({{"eps", AttrKind::Number, true}});
  c.positive("eps");
  int64_t n = c.vector(0, "input");
  const TensorType *w = c.weight(1, "scale", 1);
  if (n >= 0 && w && w->shape[0] != n)
    c.error(c.op.operands[1].loc, "'rmsnorm' scale '" + c.graph.nameOf(c.op.operands[1]) +
                                      "' has " + llvm::Twine(w->shape[0]) +
                                      " elements, but its input has " + llvm::Twine(n));
  if (c.failed)
    return std::nullopt;
  return f32Vector(n);
}

static std::optional<TensorType> checkMatMul(OpChecker &c) {
  c.attrs({});
  int64_t k = c.vector(0, "input");
  const TensorType *w = c.weight(1, "matrix", 2);
  if (k >= 0 && w && w->shape[1] != k)
    c.error(c.op.operands[1].loc,
            "shape mismatch in 'matmul': the input '" + c.graph.nameOf(c.op.operands[0]) +
                "' has " + llvm::Twine(k) + " elements, but the matrix '" +
                c.graph.nameOf(c.op.operands[1]) + "' is " + w->str() +
                " ([out, in]: it needs " + llvm::Twine(w->shape[1]) + ")");
  if (c.failed)
    return std::nullopt;
  return f32Vector(w->shape[0]);
}

static std::optional<TensorType> checkRope(OpChecker &c) {
  c.attrs({{"head_dim", AttrKind::Int, true},
           {"theta", AttrKind::Number, true},
           {"scaling", AttrKind::String, false},
           {"factor", AttrKind::Number, false},
           {"low_freq_factor", AttrKind::Number, false},
           {"high_freq_factor", AttrKind::Number, false},
           {"original_context", AttrKind::Int, false}});
  c.positive("theta");
  c.positive("head_dim");
  int64_t n = c.vector(0, "input");
  c.index(1, "position");
  if (c.failed)
    return std::nullopt;

  int64_t headDim = c.attr("head_dim")->i;
  if (headDim % 2 != 0)
    c.error(c.op.findAttr("head_dim")->loc,
            "'rope' needs an even head_dim, not " + llvm::Twine(headDim));
  else if (n % headDim != 0)
    c.error(c.op.operands[0].loc, "'rope' input '" + c.graph.nameOf(c.op.operands[0]) +
                                      "' has " + llvm::Twine(n) +
                                      " elements, not a multiple of head_dim " +
                                      llvm::Twine(headDim));

  // Llama 3 frequency scaling is all four numbers or none of them.
  static const char *const scalingAttrs[] = {"factor", "low_freq_factor",
                                             "high_freq_factor", "original_context"};
  const AttrValue *scaling = c.attr("scaling");
  if (scaling && scaling->s != "llama3") {
    c.error(c.op.findAttr("scaling")->loc,
            "unknown rope scaling \"" + scaling->s + "\" (known: \"llama3\")");
  } else if (scaling) {
    for (const char *name : scalingAttrs) {
      if (!c.attr(name))
        c.error(c.op.loc, "rope scaling \"llama3\" needs the attribute '" +
                              llvm::Twine(name) + "'");
      c.positive(name);
    }
    const AttrValue *low = c.attr("low_freq_factor"), *high = c.attr("high_freq_factor");
    if (low && high && !(high->asDouble() > low->asDouble()))
      c.error(c.op.findAttr("high_freq_factor")->loc,
              "rope scaling needs high_freq_factor > low_freq_factor");
  } else {
    for (const char *name : scalingAttrs)
      if (const NamedAttr *a = c.op.findAttr(name))
        c.error(a->loc, "attribute '" + llvm::Twine(name) +
                            "' of 'rope' needs scaling=\"llama3\"");
  }
  if (c.failed)
    return std::nullopt;
  return f32Vector(n);
}

static std::optional<TensorType> checkAttention(OpChecker &c) {
  c.attrs({{"heads", AttrKind::Int, true},
           {"kv_heads", AttrKind::Int, true},
           {"head_dim", AttrKind::Int, true}});
  c.positive("heads");
  c.positive("kv_heads");
  c.positive("head_dim");
  int64_t q = c.vector(0, "query");
  int64_t k = c.vector(1, "key");
  int64_t v = c.vector(2, "value");
  c.index(3, "position");
  if (c.failed)
    return std::nullopt;

  int64_t heads = c.attr("heads")->i, kvHeads = c.attr("kv_heads")->i,
          headDim = c.attr("head_dim")->i;
  if (heads % kvHeads != 0) {
    c.error(c.op.findAttr("kv_heads")->loc,
            "grouped-query attention needs heads divisible by kv_heads, but heads = " +
                llvm::Twine(heads) + " and kv_heads = " + llvm::Twine(kvHeads));
    return std::nullopt;
  }
  auto checkLength = [&](unsigned i, int64_t got, int64_t headsOfIt, llvm::StringRef what) {
    if (got != headsOfIt * headDim)
      c.error(c.op.operands[i].loc,
              "shape mismatch in 'attention': the " + what + " '" +
                  c.graph.nameOf(c.op.operands[i]) + "' has " + llvm::Twine(got) +
                  " elements, but " + llvm::Twine(headsOfIt) + " heads of " +
                  llvm::Twine(headDim) + " need " + llvm::Twine(headsOfIt * headDim));
  };
  checkLength(0, q, heads, "query");
  checkLength(1, k, kvHeads, "key");
  checkLength(2, v, kvHeads, "value");
  if (c.failed)
    return std::nullopt;
  return f32Vector(heads * headDim);
}

static std::optional<TensorType> checkElementwise(OpChecker &c) {
  c.attrs({});
  int64_t a = c.vector(0, "first operand");
  int64_t b = c.vector(1, "second operand");
  if (a >= 0 && b >= 0 && a != b)
    c.error(c.op.operands[1].loc,
            "shape mismatch in '" + c.opName + "': '" + c.graph.nameOf(c.op.operands[0]) +
                "' is " + c.graph.typeOf(c.op.operands[0]).str() + " but '" +
                c.graph.nameOf(c.op.operands[1]) + "' is " +
                c.graph.typeOf(c.op.operands[1]).str());
  if (c.failed)
    return std::nullopt;
  return f32Vector(a);
}

static std::optional<TensorType> checkArgmax(OpChecker &c) {
  c.attrs({});
  c.vector(0, "input");
  if (c.failed)
    return std::nullopt;
  TensorType t;
  t.dtype = DType::I32;
  t.shape = {1};
  return t;
}

std::optional<TensorType> ti::inferOpType(const Graph &graph, const Op &op,
                                          DiagnosticEngine &diags) {
  OpChecker c(graph, op, diags);
  unsigned expected = opNumOperands(op.kind);
  if (op.operands.size() != expected) {
    c.error(op.loc, "'" + opKindName(op.kind) + "' takes " + llvm::Twine(expected) +
                        " operand" + (expected == 1 ? "" : "s") + ", but " +
                        llvm::Twine(op.operands.size()) + " were given");
    return std::nullopt;
  }
  switch (op.kind) {
  case OpKind::Embed: return checkEmbed(c);
  case OpKind::RmsNorm: return checkRmsNorm(c);
  case OpKind::MatMul: return checkMatMul(c);
  case OpKind::Rope: return checkRope(c);
  case OpKind::Attention: return checkAttention(c);
  case OpKind::SiluMul:
  case OpKind::Add: return checkElementwise(c);
  case OpKind::Argmax: return checkArgmax(c);
  }
  return std::nullopt;
}
