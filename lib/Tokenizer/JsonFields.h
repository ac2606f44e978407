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

/// A Replace or Split pattern: {"String": text} or {"Regex": Oniguruma pattern}.
StatusOr<Regex> parsePattern(const Json &node, const std::string &path);

} // namespace ti::tok

#endif // TI_LIB_TOKENIZER_JSONFIELDS_H
