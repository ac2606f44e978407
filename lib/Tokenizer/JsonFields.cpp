//===- JsonFields.cpp - Reading tokenizer files' fields with paths --------===//
#include "JsonFields.h"

namespace ti::tok {

StatusOr<Regex> parsePattern(const Json &node, const std::string &path) {
  if (!node.is_object()) return fieldError(path, "expected {\"String\": ...} or {\"Regex\": ...}");
  if (auto it = node.find("String"); it != node.end() && it->is_string())
    return Regex::compile(Regex::literal(it->get<std::string>()));
  if (auto it = node.find("Regex"); it != node.end() && it->is_string()) {
    auto translated = onigurumaToPcre2(it->get<std::string>());
    if (!translated) return fieldError(path, translated.status().message());
    auto regex = Regex::compile(*translated);
    if (!regex) return fieldError(path, regex.status().message());
    return regex;
  }
  return fieldError(path, "expected {\"String\": ...} or {\"Regex\": ...}");
}

} // namespace ti::tok
