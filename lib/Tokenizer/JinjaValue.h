//===- JinjaValue.h - Chat templates: values and built-ins ------*- C++ -*-===//
#ifndef TI_LIB_TOKENIZER_JINJAVALUE_H
#define TI_LIB_TOKENIZER_JINJAVALUE_H

#include "Jinja.h"

namespace ti::jinja {

/// Python's truth: empty strings, lists and dicts, zero, none and undefined are false.
bool truthy(const Value &v);
bool isNumber(const Value &v);
double number(const Value &v);
bool equal(const Value &a, const Value &b);
/// Python's json.dumps (", " and ": " between items), as templates expect.
std::string toJson(const Value &v);
/// The value as {{ }} prints it.
std::string display(const Value &v);
/// Whether `v` holds the dict `target`; past a depth of 64, assume it does.
bool holds(const Value &v, const void *target, int depth = 0);
/// The leading and trailing characters of `chars` (whitespace when null) removed.
std::string stripChars(const std::string &s, const std::string *chars, bool left, bool right);

StatusOr<Value> callMethod(const Value &object, const std::string &name, const std::vector<Value> &args);
StatusOr<Value> applyFilter(const std::string &name, const Value &v, const std::vector<Value> &args);
StatusOr<bool> applyTest(const std::string &name, const Value &v);

} // namespace ti::jinja

#endif // TI_LIB_TOKENIZER_JINJAVALUE_H
