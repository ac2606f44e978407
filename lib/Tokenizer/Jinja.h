//===- Jinja.h - The Jinja subset chat templates use -------------*- C++ -*-===//
//
// Chat templates (tokenizer_config.json's chat_template) are Jinja. This is
// the part of the language that the Llama 3 and ChatML (Qwen) templates use,
// with the semantics of Hugging Face's @huggingface/jinja, which
// Transformers.js renders them with (and which the tests compare with):
//   - text, {{ expression }}, {% statement %}, {# comment #}, the "-" that
//     strips whitespace beside a tag, and trim_blocks / lstrip_blocks on;
//   - if / elif / else, for (loop.index0, index, first, last, length,
//     revindex), set (a name or a namespace attribute), namespace(...),
//     raise_exception(...);
//   - literals, names, .attribute, [index], [start:stop:step], calls,
//     filters (length, trim, tojson, upper, lower, default, join, first, last,
//     string), tests (defined, undefined, none, string, number, boolean,
//     true, false, mapping, sequence), operators (+ - * / % ~, comparisons,
//     and or not, in, not in, a if b else c), string methods (startswith,
//     endswith, split, strip, lstrip, rstrip, upper, lower, replace, title),
//     dict .items() / .keys() / .values() / .get().
// Anything else is an error naming the construct and its line. Templates are
// untrusted: nesting past 200 levels, integer overflow, a namespace stored in
// itself, strings or output past 16 MiB and more than a million steps are
// errors too.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_TOKENIZER_JINJA_H
#define TI_LIB_TOKENIZER_JINJA_H

#include "ti/Support/Status.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ti::jinja {

/// A run-time value. Lists and dicts are shared: a namespace changed through
/// one name is changed through all.
struct Value {
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict };
  Kind kind = Kind::Undefined;
  bool boolean = false;
  int64_t integer = 0;
  double real = 0;
  std::string text;
  std::shared_ptr<std::vector<Value>> list;
  // Insertion order kept: tojson prints keys as they were given.
  std::shared_ptr<std::vector<std::pair<std::string, Value>>> dict;
  bool isNamespace = false;

  static Value none() { Value v; v.kind = Kind::None; return v; }
  static Value of(bool b) { Value v; v.kind = Kind::Bool; v.boolean = b; return v; }
  static Value of(int64_t i) { Value v; v.kind = Kind::Int; v.integer = i; return v; }
  static Value of(double d) { Value v; v.kind = Kind::Float; v.real = d; return v; }
  static Value of(std::string s) { Value v; v.kind = Kind::String; v.text = std::move(s); return v; }
  static Value newList() { Value v; v.kind = Kind::List; v.list = std::make_shared<std::vector<Value>>(); return v; }
  static Value newDict() {
    Value v;
    v.kind = Kind::Dict;
    v.dict = std::make_shared<std::vector<std::pair<std::string, Value>>>();
    return v;
  }
  const Value *find(std::string_view key) const;
  void set(const std::string &key, Value value);
};

struct Node;
using NodePtr = std::shared_ptr<const Node>;

/// A parsed template.
struct Program {
  std::vector<NodePtr> body;
};

/// Parses `source`; errors read "line N: ...".
StatusOr<Program> parse(std::string_view source);

/// Renders `program` with the global variables `globals` (a Dict).
StatusOr<std::string> render(const Program &program, const Value &globals);

} // namespace ti::jinja

#endif // TI_LIB_TOKENIZER_JINJA_H
