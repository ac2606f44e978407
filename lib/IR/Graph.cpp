//===- Graph.cpp - The model graph after elaboration ----------------------===//
#include "ti/IR/Graph.h"

#include "llvm/ADT/StringSwitch.h"

#include <charconv>

using namespace ti;

std::optional<DType> ti::parseDType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<DType>>(name)
      .Case("bf16", DType::BF16)
      .Case("f16", DType::F16)
      .Case("f32", DType::F32)
      .Case("i32", DType::I32)
      .Default(std::nullopt);
}

bool ti::isFloat(DType dtype) { return dtype != DType::I32; }

int64_t TensorType::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string TensorType::str() const {
  std::string s = std::string(dtypeName(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

llvm::StringRef ti::opKindName(OpKind kind) {
  switch (kind) {
#define TI_GRAPH_OP(Name, Spelling, NumOperands)                                \
  case OpKind::Name:                                                           \
    return Spelling;
#include "ti/IR/GraphOps.def"
  }
  return "?";
}

std::optional<OpKind> ti::parseOpKind(llvm::StringRef name) {
#define TI_GRAPH_OP(Name, Spelling, NumOperands)                                \
  if (name == Spelling)                                                        \
    return OpKind::Name;
#include "ti/IR/GraphOps.def"
  return std::nullopt;
}

unsigned ti::opNumOperands(OpKind kind) {
  switch (kind) {
#define TI_GRAPH_OP(Name, Spelling, NumOperands)                                \
  case OpKind::Name:                                                           \
    return NumOperands;
#include "ti/IR/GraphOps.def"
  }
  return 0;
}

/// The shortest text that reads back as the same double, always with a '.' or
/// an exponent so that it reads back as a float, not an integer.
static std::string formatFloat(double v) {
  char buf[400];
  // Plain decimals read best (500000.0, 0.00001); very large or very small
  // numbers fall back to the shortest scientific form (1e-12).
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed);
  std::string s(buf, res.ptr);
  if (res.ec != std::errc() || s.size() > 12) {
    res = std::to_chars(buf, buf + sizeof(buf), v);
    s.assign(buf, res.ptr);
  }
  if (s.find_first_of(".eEn") == std::string::npos) // n: inf, nan
    s += ".0";
  return s;
}

std::string AttrValue::str() const {
  switch (kind) {
  case Kind::Int: return std::to_string(i);
  case Kind::Float: return formatFloat(f);
  case Kind::String: return "\"" + s + "\"";
  case Kind::IntList: {
    std::string out = "[";
    for (size_t k = 0; k < list.size(); ++k)
      out += (k ? ", " : "") + std::to_string(list[k]);
    return out + "]";
  }
  }
  return "";
}

const NamedAttr *Op::findAttr(llvm::StringRef name) const {
  for (const NamedAttr &a : attrs)
    if (a.name == name)
      return &a;
  return nullptr;
}

std::optional<int64_t> Graph::findDim(llvm::StringRef name) const {
  for (const auto &[n, v] : dims)
    if (n == name)
      return v;
  return std::nullopt;
}

const NamedAttr *Graph::findAttr(llvm::StringRef name) const {
  for (const NamedAttr &a : attrs)
    if (a.name == name)
      return &a;
  return nullptr;
}

const TensorType &Graph::typeOf(const Operand &operand) const {
  return operand.kind == Operand::Kind::Value ? values[operand.index].type
                                              : weights[operand.index].type;
}

llvm::StringRef Graph::nameOf(const Operand &operand) const {
  return operand.kind == Operand::Kind::Value ? values[operand.index].name
                                              : weights[operand.index].name;
}
