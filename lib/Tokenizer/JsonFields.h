//===- JsonFields.h - Reading tokenizer files' fields with paths -*- C++ -*-===//
//
// Every complaint about tokenizer.json or tokenizer_config.json names the
// field by its path (`pre_tokenizer.pretokenizers[0].pattern`), so a damaged
// or unsupported file gets one line that says where.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_TOKENIZER_JSONFIELDS_H
#define TI_LIB_TOKENIZER_JSONFIELDS_H

#include "Regex.h"

#include "ti/Support/Status.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace ti::tok {

using Json = nlohmann::json;

/// Token ids run from 0 to below this: large enough for any vocabulary we know
/// of (256K), small enough that the id -> token table cannot exhaust memory.
constexpr int64_t kMaxTokenId = (int64_t(1) << 24) - 1;

inline std::string fieldPath(const std::string &parent, const std::string &key) {
  return parent.empty() ? key : parent + "." + key;
}
inline std::string indexPath(const std::string &parent, std::size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

inline Status fieldError(const std::string &path, const std::string &what) {
  return Status::error(path + ": " + what);
}

/// `object[key]` as a string: nothing when absent or null, an error when of
/// another type.
inline StatusOr<std::optional<std::string>> optionalString(const Json &object, const std::string &key,
                                                           const std::string &path) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) return fieldError(fieldPath(path, key), "expected a string");
  return std::optional<std::string>(it->get<std::string>());
}

inline StatusOr<std::optional<bool>> optionalBool(const Json &object, const std::string &key,
                                                  const std::string &path) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::optional<bool>();
  if (!it->is_boolean()) return fieldError(fieldPath(path, key), "expected true or false");
  return std::optional<bool>(it->get<bool>());
}

/// The component's "type" field, which must be present.
inline StatusOr<std::string> componentType(const Json &object, const std::string &path) {
  if (!object.is_object()) return fieldError(path, "expected an object");
  auto type = optionalString(object, "type", path);
  if (!type) return type.status();
  if (!*type) return fieldError(path, "has no \"type\"");
  return **type;
}

/// Parses JSON text, refusing nesting deeper than `maxDepth` (the parsers of
/// the components recurse once per level, and so does copying a value): a
/// discarded value (is_discarded()) on any error; `tooDeep` says which.
inline Json parseBounded(std::string_view text, bool &tooDeep, int maxDepth = 64) {
  tooDeep = false;
  Json::parser_callback_t limit = [&](int depth, Json::parse_event_t, Json &) {
    if (depth > maxDepth) tooDeep = true;
    return !tooDeep;
  };
  Json j = Json::parse(text, limit, false);
  if (tooDeep) return Json(Json::value_t::discarded);
  return j;
}

/// `object[key]`, or null, without copying.
inline const Json &fieldOrNull(const Json &object, const char *key) {
  static const Json null;
  auto it = object.find(key);
  return it == object.end() ? null : *it;
}

/// A Replace or Split pattern: {"String": text} or {"Regex": Oniguruma pattern}.
StatusOr<Regex> parsePattern(const Json &node, const std::string &path);

} // namespace ti::tok

#endif // TI_LIB_TOKENIZER_JSONFIELDS_H
