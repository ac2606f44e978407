//===- PreTokenizer.cpp - tokenizer.json "pre_tokenizer" ------------------===//
#include "PreTokenizer.h"

#include "ByteLevel.h"

namespace ti::tok {

namespace {

class SequencePreTokenizer final : public PreTokenizer {
public:
  std::vector<std::unique_ptr<PreTokenizer>> steps;
  Status apply(std::vector<std::string> &pieces, std::size_t section) const override {
    for (const auto &step : steps)
      if (Status s = step->apply(pieces, section); !s) return s;
    return {};
  }
};

class Split final : public PreTokenizer {
public:
  enum class Keep { Isolated, Removed, MatchesOnly };
  Regex pattern;
  Keep keep = Keep::Isolated;
  Status apply(std::vector<std::string> &pieces, std::size_t) const override {
    std::vector<std::string> out;
    for (const std::string &piece : pieces) {
      std::size_t last = 0;
      Status s = pattern.forEachMatch(piece, [&](std::size_t begin, std::size_t end) {
        if (keep != Keep::MatchesOnly && begin > last) out.push_back(piece.substr(last, begin - last));
        if (keep != Keep::Removed && end > begin) out.push_back(piece.substr(begin, end - begin));
        last = end;
      });
      if (!s) return s;
      if (keep != Keep::MatchesOnly && last < piece.size()) out.push_back(piece.substr(last));
    }
    pieces = std::move(out);
    return {};
  }
};

// GPT-2's split, with JavaScript's \s (which has U+FEFF and not U+0085): the
// reference runs this pattern as a JavaScript regular expression.
constexpr const char *kJsSpace = "\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
                                 "\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}";

std::string gpt2Pattern() {
  std::string s = kJsSpace;
  return "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" + s + "\\p{L}\\p{N}]+|[" + s + "]+(?![^" + s +
         "])|[" + s + "]+";
}

class ByteLevelPre final : public PreTokenizer {
public:
  bool addPrefixSpace = false;
  std::optional<Regex> split;
  Status apply(std::vector<std::string> &pieces, std::size_t) const override {
    std::vector<std::string> out;
    out.reserve(pieces.size());
    for (std::string &piece : pieces) {
      if (addPrefixSpace && (piece.empty() || piece[0] != ' ')) piece.insert(piece.begin(), ' ');
      if (!split) {
        out.push_back(bytelevel::encode(piece));
        continue;
      }
      Status s = split->forEachMatch(piece, [&](std::size_t begin, std::size_t end) {
        if (end > begin) out.push_back(bytelevel::encode(std::string_view(piece).substr(begin, end - begin)));
      });
      if (!s) return s;
    }
    pieces = std::move(out);
    return {};
  }
};

class Metaspace final : public PreTokenizer {
public:
  enum class Prepend { Always, First, Never };
  std::string replacement = "\xE2\x96\x81"; // U+2581
  Prepend prepend = Prepend::Always;
  Status apply(std::vector<std::string> &pieces, std::size_t section) const override {
    for (std::string &piece : pieces) {
      std::string replaced;
      for (char c : piece) {
        if (c == ' ') replaced += replacement;
        else replaced += c;
      }
      bool wanted = prepend == Prepend::Always || (prepend == Prepend::First && section == 0);
      if (wanted && replaced.compare(0, replacement.size(), replacement) != 0) replaced.insert(0, replacement);
      piece = std::move(replaced);
    }
    return {};
  }
};

} // namespace

StatusOr<std::unique_ptr<PreTokenizer>> PreTokenizer::parse(const Json &node, const std::string &path) {
  using Result = std::unique_ptr<PreTokenizer>;
  if (node.is_null()) return Result();
  auto type = componentType(node, path);
  if (!type) return type.status();
  if (*type == "Sequence") {
    auto sequence = std::make_unique<SequencePreTokenizer>();
    std::string listPath = fieldPath(path, "pretokenizers");
    if (!node.contains("pretokenizers") || !node["pretokenizers"].is_array())
      return fieldError(listPath, "expected a list");
    for (std::size_t i = 0; i < node["pretokenizers"].size(); ++i) {
      auto step = parse(node["pretokenizers"][i], indexPath(listPath, i));
      if (!step) return step.status();
      if (*step) sequence->steps.push_back(std::move(*step));
    }
    return Result(std::move(sequence));
  }
  if (*type == "Split") {
    auto split = std::make_unique<Split>();
    if (!node.contains("pattern")) return fieldError(fieldPath(path, "pattern"), "missing");
    auto pattern = parsePattern(node["pattern"], fieldPath(path, "pattern"));
    if (!pattern) return pattern.status();
    split->pattern = std::move(*pattern);
    auto invert = optionalBool(node, "invert", path);
    auto behavior = optionalString(node, "behavior", path);
    if (!invert) return invert.status();
    if (!behavior) return behavior.status();
    std::string how = behavior->value_or("Isolated");
    if (invert->value_or(false)) split->keep = Split::Keep::MatchesOnly;
    else if (how == "Isolated") split->keep = Split::Keep::Isolated;
    else if (how == "Removed") split->keep = Split::Keep::Removed;
    else return fieldError(fieldPath(path, "behavior"), "the split behavior \"" + how + "\" is not supported");
    return Result(std::move(split));
  }
  if (*type == "ByteLevel") {
    auto byteLevel = std::make_unique<ByteLevelPre>();
    auto prefix = optionalBool(node, "add_prefix_space", path);
    auto useRegex = optionalBool(node, "use_regex", path);
    if (!prefix) return prefix.status();
    if (!useRegex) return useRegex.status();
    byteLevel->addPrefixSpace = prefix->value_or(false);
    if (useRegex->value_or(true)) {
      auto regex = Regex::compile(gpt2Pattern());
      if (!regex) return regex.status();
      byteLevel->split = std::move(*regex);
    }
    return Result(std::move(byteLevel));
  }
  if (*type == "Metaspace") {
    auto meta = std::make_unique<Metaspace>();
    auto replacement = optionalString(node, "replacement", path);
    auto scheme = optionalString(node, "prepend_scheme", path);
    auto prefix = optionalBool(node, "add_prefix_space", path);
    auto split = optionalBool(node, "split", path);
    for (const Status *s : {&replacement.status(), &scheme.status(), &prefix.status(), &split.status()})
      if (!s->ok()) return *s;
    if (*replacement) meta->replacement = **replacement;
    if (*scheme) {
      if (**scheme == "always") meta->prepend = Metaspace::Prepend::Always;
      else if (**scheme == "first") meta->prepend = Metaspace::Prepend::First;
      else if (**scheme == "never") meta->prepend = Metaspace::Prepend::Never;
      else return fieldError(fieldPath(path, "prepend_scheme"), "expected always, first or never");
    } else if (!prefix->value_or(true)) {
      meta->prepend = Metaspace::Prepend::Never;
    }
    if (split->value_or(false))
      return fieldError(fieldPath(path, "split"), "a Metaspace pre-tokenizer that splits is not supported");
    return Result(std::move(meta));
  }
  return fieldError(fieldPath(path, "type"), "the pre-tokenizer \"" + *type + "\" is not supported");
}

} // namespace ti::tok
