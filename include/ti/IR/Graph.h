//===- Graph.h - The model graph after elaboration --------------*- C++ -*-===//
//
// The Graph IR: what GraphBuilder makes of a syntax tree. Loops are unrolled,
// names resolved, every dim evaluated, every value typed. It is a straight-line
// SSA program for one decode step: inputs (the token, its position), weights
// (each with its checkpoint tensor), ops, outputs. The compiler lowers this to
// tasks; nothing in it is specific to a model's sizes.
//
// Ownership: a Graph owns everything in it; ops refer to values and weights by
// index. Locations point into the SourceMgr buffer that was parsed (or are
// invalid for a graph built in memory). Not thread-safe to mutate.
//
//===----------------------------------------------------------------------===//
#ifndef TI_IR_GRAPH_H
#define TI_IR_GRAPH_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include "ti/Support/DType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ti {

std::optional<DType> parseDType(llvm::StringRef name);
bool isFloat(DType dtype);

struct TensorType {
  DType dtype = DType::F32;
  llvm::SmallVector<int64_t, 2> shape;

  int64_t numElements() const;
  unsigned rank() const { return shape.size(); }
  /// `bf16[2048, 8192]`
  std::string str() const;
  bool operator==(const TensorType &o) const { return dtype == o.dtype && shape == o.shape; }
};

enum class OpKind : uint8_t {
#define TI_GRAPH_OP(Name, Spelling, NumOperands) Name,
#include "ti/IR/GraphOps.def"
};

llvm::StringRef opKindName(OpKind kind);
std::optional<OpKind> parseOpKind(llvm::StringRef name);
unsigned opNumOperands(OpKind kind);

/// A keyword attribute of an op or of the graph: a number, a string or a list
/// of integers.
struct AttrValue {
  enum class Kind : uint8_t { Int, Float, String, IntList };
  Kind kind = Kind::Int;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> list;

  static AttrValue ofInt(int64_t v) { AttrValue a; a.kind = Kind::Int; a.i = v; return a; }
  static AttrValue ofFloat(double v) { AttrValue a; a.kind = Kind::Float; a.f = v; return a; }
  static AttrValue ofString(std::string v) { AttrValue a; a.kind = Kind::String; a.s = std::move(v); return a; }
  static AttrValue ofList(std::vector<int64_t> v) { AttrValue a; a.kind = Kind::IntList; a.list = std::move(v); return a; }

  bool isNumber() const { return kind == Kind::Int || kind == Kind::Float; }
  double asDouble() const { return kind == Kind::Int ? static_cast<double>(i) : f; }
  /// The value as the language would print it: `128000`, `1e-05`, `"llama3"`, `[1, 2]`.
  std::string str() const;
};

struct NamedAttr {
  std::string name;
  AttrValue value;
  llvm::SMLoc loc;
};

/// A model parameter: one tensor of the checkpoint.
struct Weight {
  std::string name;       // Unique in the graph: `wq` or, inside loops, `wq.3`.
  std::string checkpoint; // The tensor's name in the checkpoint, placeholders substituted.
  TensorType type;
  int layer = -1;         // The iteration of the outermost loop, or -1.
  llvm::SMLoc loc;
};

/// An activation: a graph input or the result of an op.
struct Value {
  std::string name; // Unique in the graph: `x`, `h.3`; a rebinding gets a new value.
  TensorType type;
  int definingOp = -1; // -1 for a graph input.
  llvm::SMLoc loc;
};

struct Operand {
  enum class Kind : uint8_t { Value, Weight };
  Kind kind = Kind::Value;
  unsigned index = 0; // Into Graph::values or Graph::weights.
  llvm::SMLoc loc;
};

struct Op {
  OpKind kind;
  std::vector<Operand> operands;
  std::vector<NamedAttr> attrs;
  unsigned result = 0; // Into Graph::values.
  int layer = -1;      // The iteration of the outermost loop, or -1.
  llvm::SMLoc loc;

  const NamedAttr *findAttr(llvm::StringRef name) const;
};

struct Graph {
  std::string name;
  llvm::SMLoc loc; // The `graph NAME {` line: where errors about the whole graph point.
  std::vector<std::pair<std::string, int64_t>> dims; // In declaration order.
  std::vector<NamedAttr> attrs;                      // In declaration order.
  std::vector<unsigned> inputs;                      // Into values.
  std::vector<Weight> weights;
  std::vector<Value> values;
  std::vector<Op> ops; // In program order (a valid topological order).
  std::vector<unsigned> outputs; // Into values.

  std::optional<int64_t> findDim(llvm::StringRef name) const;
  const NamedAttr *findAttr(llvm::StringRef name) const;
  /// The type an operand refers to.
  const TensorType &typeOf(const Operand &operand) const;
  llvm::StringRef nameOf(const Operand &operand) const;
};

} // namespace ti

#endif // TI_IR_GRAPH_H
