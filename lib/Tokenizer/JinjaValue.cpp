//===- JinjaValue.cpp - Chat templates: values and built-ins --------------===//
//
// What a value is worth as a condition, as text and as JSON, and the
// built-ins that take values only: string and dict methods, filters, tests.
// Errors here carry no line: the renderer adds the line of the node.
//
//===----------------------------------------------------------------------===//
#include "JinjaValue.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace ti::jinja {

const Value *Value::find(std::string_view key) const {
  if (kind != Kind::Dict) return nullptr;
  for (const auto &[k, v] : *dict)
    if (k == key) return &v;
  return nullptr;
}

void Value::set(const std::string &key, Value value) {
  for (auto &[k, v] : *dict)
    if (k == key) {
      v = std::move(value);
      return;
    }
  dict->push_back({key, std::move(value)});
}


bool truthy(const Value &v) {
  switch (v.kind) {
  case Value::Kind::Undefined:
  case Value::Kind::None: return false;
  case Value::Kind::Bool: return v.boolean;
  case Value::Kind::Int: return v.integer != 0;
  case Value::Kind::Float: return v.real != 0;
  case Value::Kind::String: return !v.text.empty();
  case Value::Kind::List: return !v.list->empty();
  case Value::Kind::Dict: return v.isNamespace || !v.dict->empty();
  }
  return false;
}

bool isNumber(const Value &v) { return v.kind == Value::Kind::Int || v.kind == Value::Kind::Float; }
double number(const Value &v) { return v.kind == Value::Kind::Int ? double(v.integer) : v.real; }

bool equal(const Value &a, const Value &b) {
  if (isNumber(a) && isNumber(b)) return number(a) == number(b);
  if (a.kind != b.kind) return false;
  switch (a.kind) {
  case Value::Kind::Undefined:
  case Value::Kind::None: return true;
  case Value::Kind::Bool: return a.boolean == b.boolean;
  case Value::Kind::String: return a.text == b.text;
  case Value::Kind::List:
    return a.list->size() == b.list->size() &&
           std::equal(a.list->begin(), a.list->end(), b.list->begin(), equal);
  case Value::Kind::Dict: return a.dict == b.dict;
  default: return false;
  }
}

static void appendJson(std::string &out, const std::string &s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
    }
  }
  out += '"';
}

static std::string numberText(const Value &v) {
  if (v.kind == Value::Kind::Int) return std::to_string(v.integer);
  if (std::isfinite(v.real) && v.real == std::floor(v.real) && std::fabs(v.real) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v.real);
    return buf;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v.real);
  return buf;
}

// Python's json.dumps separators (", " and ": "), which templates expect.
std::string toJson(const Value &v) {
  switch (v.kind) {
  case Value::Kind::Undefined:
  case Value::Kind::None: return "null";
  case Value::Kind::Bool: return v.boolean ? "true" : "false";
  case Value::Kind::Int:
  case Value::Kind::Float: return numberText(v);
  case Value::Kind::String: {
    std::string out;
    appendJson(out, v.text);
    return out;
  }
  case Value::Kind::List: {
    std::string out = "[";
    for (std::size_t i = 0; i < v.list->size(); ++i) out += (i ? ", " : "") + toJson((*v.list)[i]);
    return out + "]";
  }
  case Value::Kind::Dict: {
    std::string out = "{";
    for (std::size_t i = 0; i < v.dict->size(); ++i) {
      if (i) out += ", ";
      appendJson(out, (*v.dict)[i].first);
      out += ": " + toJson((*v.dict)[i].second);
    }
    return out + "}";
  }
  }
  return "null";
}

std::string display(const Value &v) {
  switch (v.kind) {
  case Value::Kind::Undefined: return "";
  case Value::Kind::None: return "None";
  case Value::Kind::Bool: return v.boolean ? "True" : "False";
  case Value::Kind::Int:
  case Value::Kind::Float: return numberText(v);
  case Value::Kind::String: return v.text;
  case Value::Kind::List:
  case Value::Kind::Dict: return toJson(v);
  }
  return "";
}

static bool isSpaceChar(char c) { return c == ' ' || (c >= 9 && c <= 13); }

std::string stripChars(const std::string &s, const std::string *chars, bool left, bool right) {
  auto strip = [&](char c) { return chars ? chars->find(c) != std::string::npos : isSpaceChar(c); };
  std::size_t b = 0, e = s.size();
  if (left)
    while (b < e && strip(s[b])) ++b;
  if (right)
    while (e > b && strip(s[e - 1])) --e;
  return s.substr(b, e - b);
}


// Whether `v` holds the dict `target` (a namespace stored in itself would make
// printing and comparing it endless); past a depth of 64, assume it does.
bool holds(const Value &v, const void *target, int depth) {
  if (depth > 64) return true;
  if (v.kind == Value::Kind::Dict) {
    if (v.dict.get() == target) return true;
    for (const auto &[k, x] : *v.dict)
      if (holds(x, target, depth + 1)) return true;
  }
  if (v.kind == Value::Kind::List)
    for (const Value &x : *v.list)
      if (holds(x, target, depth + 1)) return true;
  return false;
}

StatusOr<Value> callMethod(const Value &object, const std::string &name, const std::vector<Value> &args) {
  auto stringArg = [&](std::size_t i) -> const std::string * {
    return i < args.size() && args[i].kind == Value::Kind::String ? &args[i].text : nullptr;
  };
  if (object.kind == Value::Kind::String) {
    const std::string &s = object.text;
    if (name == "startswith" || name == "endswith") {
      const std::string *x = stringArg(0);
      if (!x) return Status::error(name + "() takes a string");
      bool yes = name == "startswith" ? s.compare(0, x->size(), *x) == 0
                                      : s.size() >= x->size() && s.compare(s.size() - x->size(), x->size(), *x) == 0;
      return Value::of(yes);
    }
    if (name == "strip" || name == "lstrip" || name == "rstrip")
      return Value::of(stripChars(s, stringArg(0), name != "rstrip", name != "lstrip"));
    if (name == "upper" || name == "lower") {
      std::string r = s;
      for (char &c : r) c = name == "upper" ? char(std::toupper((unsigned char)c)) : char(std::tolower((unsigned char)c));
      return Value::of(r);
    }
    if (name == "title") {
      std::string r = s;
      bool start = true;
      for (char &c : r) {
        c = start ? char(std::toupper((unsigned char)c)) : char(std::tolower((unsigned char)c));
        start = !std::isalpha((unsigned char)c);
      }
      return Value::of(r);
    }
    if (name == "replace") {
      const std::string *from = stringArg(0), *to = stringArg(1);
      if (!from || !to || from->empty()) return Status::error("replace() takes two strings, the first not empty");
      std::string r;
      std::size_t last = 0;
      for (std::size_t at = s.find(*from); at != std::string::npos; at = s.find(*from, last)) {
        r.append(s, last, at - last);
        r += *to;
        last = at + from->size();
      }
      r.append(s, last);
      return Value::of(r);
    }
    if (name == "split") {
      Value list = Value::newList();
      const std::string *sep = stringArg(0);
      if (!sep) { // whitespace runs
        std::size_t i = 0;
        while (i < s.size()) {
          while (i < s.size() && isSpaceChar(s[i])) ++i;
          std::size_t j = i;
          while (j < s.size() && !isSpaceChar(s[j])) ++j;
          if (j > i) list.list->push_back(Value::of(s.substr(i, j - i)));
          i = j;
        }
        return list;
      }
      if (sep->empty()) return Status::error("split() with an empty separator");
      std::size_t last = 0;
      for (std::size_t at = s.find(*sep); at != std::string::npos; at = s.find(*sep, last)) {
        list.list->push_back(Value::of(s.substr(last, at - last)));
        last = at + sep->size();
      }
      list.list->push_back(Value::of(s.substr(last)));
      return list;
    }
  }
  if (object.kind == Value::Kind::Dict && !object.isNamespace) {
    if (name == "items" || name == "keys" || name == "values") {
      Value list = Value::newList();
      for (const auto &[k, v] : *object.dict) {
        if (name == "keys") list.list->push_back(Value::of(k));
        else if (name == "values") list.list->push_back(v);
        else {
          Value pair = Value::newList();
          pair.list->push_back(Value::of(k));
          pair.list->push_back(v);
          list.list->push_back(pair);
        }
      }
      return list;
    }
    if (name == "get") {
      const std::string *key = stringArg(0);
      if (!key) return Status::error("get() takes a string key");
      const Value *v = object.find(*key);
      return v ? *v : (args.size() > 1 ? args[1] : Value::none());
    }
  }
  if (object.kind == Value::Kind::Undefined) return Status::error("the method " + name + "() of an undefined value");
  return Status::error("the method " + name + "() is not supported");
}

StatusOr<Value> applyFilter(const std::string &f, const Value &v, const std::vector<Value> &arguments) {
  const std::vector<Value> *args = &arguments;
  if (f == "length" || f == "count") {
    if (v.kind == Value::Kind::List) return Value::of(int64_t(v.list->size()));
    if (v.kind == Value::Kind::String) return Value::of(int64_t(v.text.size()));
    if (v.kind == Value::Kind::Dict) return Value::of(int64_t(v.dict->size()));
    return Status::error("length of something that has none");
  }
  if (f == "trim") {
    if (v.kind != Value::Kind::String) return Status::error("trim of something that is not a string");
    return Value::of(stripChars(v.text, nullptr, true, true));
  }
  if (f == "tojson") return Value::of(toJson(v));
  if (f == "string") return Value::of(display(v));
  if (f == "upper" || f == "lower") return callMethod(v, f, {});
  if (f == "default") {
    bool useDefault = v.kind == Value::Kind::Undefined || (args->size() > 1 && truthy((*args)[1]) && !truthy(v));
    return useDefault ? (args->empty() ? Value::of(std::string()) : (*args)[0]) : v;
  }
  if (f == "first" || f == "last") {
    if (v.kind != Value::Kind::List) return Status::error(f + " of something that is not a list");
    if (v.list->empty()) return Value();
    return f == "first" ? v.list->front() : v.list->back();
  }
  if (f == "join") {
    if (v.kind != Value::Kind::List) return Status::error("join of something that is not a list");
    std::string sep = args->empty() ? "" : display((*args)[0]), r;
    for (std::size_t i = 0; i < v.list->size(); ++i) r += (i ? sep : "") + display((*v.list)[i]);
    return Value::of(r);
  }
  return Status::error("the filter '" + f + "' is not supported");
}

StatusOr<bool> applyTest(const std::string &t, const Value &v) {
  bool yes;
  if (t == "defined") yes = v.kind != Value::Kind::Undefined;
  else if (t == "undefined") yes = v.kind == Value::Kind::Undefined;
  else if (t == "none") yes = v.kind == Value::Kind::None;
  else if (t == "string") yes = v.kind == Value::Kind::String;
  else if (t == "number") yes = isNumber(v);
  else if (t == "boolean") yes = v.kind == Value::Kind::Bool;
  else if (t == "true") yes = v.kind == Value::Kind::Bool && v.boolean;
  else if (t == "false") yes = v.kind == Value::Kind::Bool && !v.boolean;
  else if (t == "mapping") yes = v.kind == Value::Kind::Dict;
  else if (t == "sequence" || t == "iterable")
    yes = v.kind == Value::Kind::List || v.kind == Value::Kind::String || (t == "iterable" && v.kind == Value::Kind::Dict);
  else return Status::error("the test '" + t + "' is not supported");
  return yes;
}

} // namespace ti::jinja
