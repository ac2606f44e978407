//===- JinjaAst.h - The parsed form of a chat template ----------*- C++ -*-===//
#ifndef TI_LIB_TOKENIZER_JINJAAST_H
#define TI_LIB_TOKENIZER_JINJAAST_H

#include "Jinja.h"

namespace ti::jinja {

struct Node {
  enum class Kind {
    // Statements.
    Text, Output, If, For, Set,
    // Expressions.
    Literal, Name, Attr, Index, Slice, Call, Filter, Test, Not, Negate, Binary, Conditional, ListLiteral,
    DictLiteral,
  };
  Kind kind;
  int line = 0;
  std::string text;                  // Text; a name; an operator; a filter or test name
  Value literal;                     // Literal
  std::vector<NodePtr> operands;     // expressions: in order (Slice: object, start, stop, step; null if absent)
  std::vector<std::pair<std::string, NodePtr>> keywords; // a call's name=value arguments
  bool negated = false;              // Test: "is not"
  // If: (condition, body) per branch; elseBody. For: body, elseBody.
  std::vector<std::pair<NodePtr, std::vector<NodePtr>>> branches;
  std::vector<NodePtr> body, elseBody;
  std::vector<std::string> targets;  // For: loop variables. Set: name, or namespace and attribute
};

} // namespace ti::jinja

#endif // TI_LIB_TOKENIZER_JINJAAST_H
