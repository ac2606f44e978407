//===- GraphVerifier.cpp - Invariants of the Graph IR ---------------------===//
//
// 1. Names: values, weights and checkpoint tensors are each unique.
// 2. Ops in order: every operand index is in range; a value operand is a graph
//    input or the result of an earlier op; the result is a fresh value that
//    names this op as its definer; OpSchema accepts the op and infers exactly
//    the result's type.
// 3. Decode-step rules: the token id of `embed` and the position of `rope` and
//    `attention` are graph inputs (the runtime feeds them; the K/V cache is
//    indexed by the position).
// 4. Outputs: at least one, each a value.
// 5. Sizes: every dimension of a weight or value fits the plan's 32-bit row,
//    column and unit fields (at most 2^31-1); larger ones were truncated
//    into wrong sizes in later messages ("a task needs 2212558688 bytes").
// 6. The graph attributes the toolchain reads have their types and ranges:
//    bos_token an id, eos_tokens an id or a list of ids, max_context a count
//    of positions (a string or a negative number was dropped or blamed on a
//    flag nobody gave).
//
//===----------------------------------------------------------------------===//
#include "ti/IR/GraphVerifier.h"
#include "ti/IR/OpSchema.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace ti;

static void checkModelAttrs(const Graph &graph, DiagnosticEngine &diags) {
  constexpr int64_t kMaxId = INT32_MAX;
  for (const NamedAttr &a : graph.attrs) {
    const AttrValue &v = a.value;
    if (a.name == "bos_token" && !(v.kind == AttrValue::Kind::Int && v.i >= 0 && v.i <= kMaxId))
      diags.error(a.loc, "attr bos_token = " + v.str() + " must be a token id (0 to 2^31-1)");
    if (a.name == "eos_tokens") {
      bool ok = v.kind == AttrValue::Kind::Int ? v.i >= 0 && v.i <= kMaxId
                : v.kind == AttrValue::Kind::IntList
                    ? llvm::all_of(v.list, [&](int64_t id) { return id >= 0 && id <= kMaxId; })
                    : false;
      if (!ok)
        diags.error(a.loc, "attr eos_tokens = " + v.str() +
                               " must be a token id or a list of token ids (0 to 2^31-1)");
    }
    if (a.name == "max_context" && !(v.kind == AttrValue::Kind::Int && v.i >= 1 && v.i <= kMaxId))
      diags.error(a.loc, "attr max_context = " + v.str() + " must be a count of positions (1 to 2^31-1)");
  }
}

bool ti::verifyGraph(const Graph &graph, DiagnosticEngine &diags) {
  unsigned errorsBefore = diags.errorCount();
  checkModelAttrs(graph, diags);

  llvm::StringSet<> valueNames, weightNames, checkpoints;
  for (const Value &v : graph.values)
    if (!valueNames.insert(v.name).second)
      diags.error(v.loc, "value name '" + v.name + "' is not unique");
  for (const Weight &w : graph.weights) {
    if (!weightNames.insert(w.name).second)
      diags.error(w.loc, "weight name '" + w.name + "' is not unique");
    if (!checkpoints.insert(w.checkpoint).second)
      diags.error(w.loc, "checkpoint tensor \"" + w.checkpoint + "\" is loaded twice");
  }
  // Once per declaration: a loop's weights and values repeat one location.
  llvm::DenseSet<const char *> sizeReported;
  auto checkDims = [&](const char *what, const std::string &name, const TensorType &type, llvm::SMLoc loc) {
    for (int64_t d : type.shape)
      if (d > INT32_MAX && sizeReported.insert(loc.getPointer()).second) {
        diags.error(loc, llvm::Twine(what) + " '" + name + "' is " + type.str() +
                             "; dimensions past 2^31-1 are not supported");
        return;
      }
  };
  for (const Weight &w : graph.weights)
    checkDims("weight", w.name, w.type, w.loc);
  for (const Value &v : graph.values)
    checkDims("value", v.name, v.type, v.loc);

  for (unsigned input : graph.inputs)
    if (input >= graph.values.size() || graph.values[input].definingOp != -1)
      diags.error(graph.loc, "graph input #" + llvm::Twine(input) + " is not an input value");

  std::vector<bool> defined(graph.values.size());
  for (unsigned input : graph.inputs)
    if (input < defined.size())
      defined[input] = true;

  auto isInput = [&](const Operand &o) {
    return o.kind == Operand::Kind::Value && graph.values[o.index].definingOp == -1;
  };

  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const Op &op = graph.ops[i];
    bool operandsOk = true;
    for (const Operand &o : op.operands) {
      size_t limit = o.kind == Operand::Kind::Value ? graph.values.size() : graph.weights.size();
      if (o.index >= limit) {
        diags.error(op.loc, "operand of '" + opKindName(op.kind) + "' is out of range");
        operandsOk = false;
      } else if (o.kind == Operand::Kind::Value && !defined[o.index]) {
        diags.error(o.loc.isValid() ? o.loc : op.loc,
                    "'" + graph.values[o.index].name + "' is used before it is defined");
        operandsOk = false;
      }
    }
    if (op.result >= graph.values.size() || defined[op.result] ||
        graph.values[op.result].definingOp != static_cast<int>(i)) {
      diags.error(op.loc, "the result of '" + opKindName(op.kind) + "' is not a fresh value");
      continue;
    }
    defined[op.result] = true;
    if (!operandsOk)
      continue;

    auto type = inferOpType(graph, op, diags);
    if (type && !(*type == graph.values[op.result].type))
      diags.error(op.loc, "'" + graph.values[op.result].name + "' is declared " +
                              graph.values[op.result].type.str() + " but '" +
                              opKindName(op.kind) + "' produces " + type->str());

    auto requireInput = [&](unsigned operand, llvm::StringRef role) {
      if (operand < op.operands.size() && !isInput(op.operands[operand]))
        diags.error(op.operands[operand].loc.isValid() ? op.operands[operand].loc : op.loc,
                    "the " + role + " of '" + opKindName(op.kind) +
                        "' must be a graph input, not the computed value '" +
                        graph.nameOf(op.operands[operand]) + "'");
    };
    if (op.kind == OpKind::Embed)
      requireInput(1, "token id");
    if (op.kind == OpKind::Rope)
      requireInput(1, "position");
    if (op.kind == OpKind::Attention)
      requireInput(3, "position");
  }

  if (graph.outputs.empty())
    diags.error(graph.loc, "graph '" + graph.name + "' has no output");
  for (unsigned out : graph.outputs)
    if (out >= graph.values.size())
      diags.error(graph.loc, "an output is out of range");

  return diags.errorCount() == errorsBefore;
}
