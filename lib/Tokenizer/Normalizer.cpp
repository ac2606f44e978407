//===- Normalizer.cpp - tokenizer.json "normalizer" -----------------------===//
#include "Normalizer.h"

#include "Regex.h"

#include "ti/Tokenizer/Utf8.h"

#include <utf8proc.h>

#include <cstdlib>
#include <vector>

namespace ti::tok {

namespace {

class SequenceNormalizer final : public Normalizer {
public:
  std::vector<std::unique_ptr<Normalizer>> steps;
  StatusOr<std::string> apply(std::string text) const override {
    for (const auto &step : steps) {
      auto next = step->apply(std::move(text));
      if (!next) return next;
      text = std::move(*next);
    }
    return text;
  }
};

class UnicodeForm final : public Normalizer {
public:
  explicit UnicodeForm(int options) : options(options) {}
  StatusOr<std::string> apply(std::string text) const override {
    utf8proc_uint8_t *out = nullptr;
    utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t *>(text.data()),
                                      static_cast<utf8proc_ssize_t>(text.size()), &out,
                                      static_cast<utf8proc_option_t>(options));
    if (n < 0) return Status::error(std::string("Unicode normalization failed: ") + utf8proc_errmsg(n));
    std::string result(reinterpret_cast<const char *>(out), static_cast<std::size_t>(n));
    std::free(out);
    return result;
  }

private:
  int options;
};

class Prepend final : public Normalizer {
public:
  std::string prefix;
  StatusOr<std::string> apply(std::string text) const override { return prefix + text; }
};

class Replace final : public Normalizer {
public:
  Regex pattern;
  std::string content;
  StatusOr<std::string> apply(std::string text) const override { return pattern.replaceAll(text, content); }
};

class Strip final : public Normalizer {
public:
  bool left = false, right = false;
  StatusOr<std::string> apply(std::string text) const override {
    std::string_view v = text;
    if (left) v = utf8::trimJsWhitespaceStart(v);
    if (right) v = utf8::trimJsWhitespaceEnd(v);
    return std::string(v);
  }
};

} // namespace

StatusOr<std::unique_ptr<Normalizer>> Normalizer::parse(const Json &node, const std::string &path) {
  if (node.is_null()) return std::unique_ptr<Normalizer>();
  auto type = componentType(node, path);
  if (!type) return type.status();
  if (*type == "Sequence") {
    auto sequence = std::make_unique<SequenceNormalizer>();
    const Json *steps = node.contains("normalizers") ? &node["normalizers"] : nullptr;
    if (!steps || !steps->is_array()) return fieldError(fieldPath(path, "normalizers"), "expected a list");
    for (std::size_t i = 0; i < steps->size(); ++i) {
      auto step = parse((*steps)[i], indexPath(fieldPath(path, "normalizers"), i));
      if (!step) return step.status();
      if (*step) sequence->steps.push_back(std::move(*step));
    }
    return std::unique_ptr<Normalizer>(std::move(sequence));
  }
  // utf8proc's options for the four forms (STABLE: no unassigned characters changed).
  if (*type == "NFC") return std::unique_ptr<Normalizer>(std::make_unique<UnicodeForm>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (*type == "NFD") return std::unique_ptr<Normalizer>(std::make_unique<UnicodeForm>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE));
  if (*type == "NFKC")
    return std::unique_ptr<Normalizer>(std::make_unique<UnicodeForm>(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT));
  if (*type == "NFKD")
    return std::unique_ptr<Normalizer>(std::make_unique<UnicodeForm>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT));
  if (*type == "Prepend") {
    auto prepend = std::make_unique<Prepend>();
    auto prefix = optionalString(node, "prepend", path);
    if (!prefix) return prefix.status();
    if (!*prefix) return fieldError(fieldPath(path, "prepend"), "missing");
    prepend->prefix = **prefix;
    return std::unique_ptr<Normalizer>(std::move(prepend));
  }
  if (*type == "Replace") {
    auto replace = std::make_unique<Replace>();
    if (!node.contains("pattern")) return fieldError(fieldPath(path, "pattern"), "missing");
    auto pattern = parsePattern(node["pattern"], fieldPath(path, "pattern"));
    if (!pattern) return pattern.status();
    replace->pattern = std::move(*pattern);
    auto content = optionalString(node, "content", path);
    if (!content) return content.status();
    replace->content = content->value_or("");
    return std::unique_ptr<Normalizer>(std::move(replace));
  }
  if (*type == "Strip") {
    auto strip = std::make_unique<Strip>();
    auto left = optionalBool(node, "strip_left", path);
    auto right = optionalBool(node, "strip_right", path);
    if (!left) return left.status();
    if (!right) return right.status();
    strip->left = left->value_or(false);
    strip->right = right->value_or(false);
    return std::unique_ptr<Normalizer>(std::move(strip));
  }
  return fieldError(fieldPath(path, "type"), "the normalizer \"" + *type + "\" is not supported");
}

} // namespace ti::tok
