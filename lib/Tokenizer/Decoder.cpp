//===- Decoder.cpp - tokenizer.json "decoder" -----------------------------===//
#include "Decoder.h"

#include "ByteLevel.h"

#include "ti/Tokenizer/Utf8.h"

namespace ti::tok {

namespace {

class SequenceDecoder final : public Decoder {
public:
  std::vector<std::unique_ptr<Decoder>> steps;
  Status apply(std::vector<std::string> &tokens) const override {
    for (const auto &step : steps)
      if (Status s = step->apply(tokens); !s) return s;
    return {};
  }
};

class ByteLevelDecoder final : public Decoder {
public:
  const std::unordered_set<std::string> *added = nullptr;
  Status apply(std::vector<std::string> &tokens) const override {
    std::vector<std::string> out;
    std::string bytes;
    bool pending = false;
    auto flush = [&] {
      if (pending) out.push_back(utf8::repair(bytes));
      bytes.clear();
      pending = false;
    };
    for (std::string &token : tokens) {
      if (added->count(token)) {
        flush();
        out.push_back(std::move(token));
      } else {
        bytelevel::decodeTo(token, bytes);
        pending = true;
      }
    }
    flush();
    tokens = std::move(out);
    return {};
  }
};

// Parses "<0xAB>".
std::optional<unsigned char> byteToken(const std::string &token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return std::nullopt;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  int hi = hex(token[3]), lo = hex(token[4]);
  if (hi < 0 || lo < 0) return std::nullopt;
  return static_cast<unsigned char>(hi * 16 + lo);
}

class ByteFallbackDecoder final : public Decoder {
public:
  Status apply(std::vector<std::string> &tokens) const override {
    std::vector<std::string> out;
    std::string bytes;
    auto flush = [&] {
      if (bytes.empty()) return;
      // The reference decodes each run with a default TextDecoder, which drops
      // a byte-order mark at the start of the run.
      std::string text = utf8::repair(bytes);
      if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
      out.push_back(std::move(text));
      bytes.clear();
    };
    for (std::string &token : tokens) {
      if (auto b = byteToken(token)) {
        bytes += static_cast<char>(*b);
      } else {
        flush();
        out.push_back(std::move(token));
      }
    }
    flush();
    tokens = std::move(out);
    return {};
  }
};

class ReplaceDecoder final : public Decoder {
public:
  Regex pattern;
  std::string content;
  Status apply(std::vector<std::string> &tokens) const override {
    for (std::string &token : tokens) {
      auto replaced = pattern.replaceAll(token, content);
      if (!replaced) return replaced.status();
      token = std::move(*replaced);
    }
    return {};
  }
};

class FuseDecoder final : public Decoder {
public:
  Status apply(std::vector<std::string> &tokens) const override {
    std::string all;
    for (const std::string &t : tokens) all += t;
    tokens.assign(1, std::move(all));
    return {};
  }
};

class StripDecoder final : public Decoder {
public:
  std::string content; // one character
  std::size_t start = 0, stop = 0;
  Status apply(std::vector<std::string> &tokens) const override {
    for (std::string &token : tokens) {
      std::string_view v = token;
      for (std::size_t i = 0; i < start && v.compare(0, content.size(), content) == 0 && !v.empty(); ++i)
        v.remove_prefix(content.size());
      for (std::size_t i = 0; i < stop && v.size() >= content.size() &&
                              v.compare(v.size() - content.size(), content.size(), content) == 0 && !v.empty();
           ++i)
        v.remove_suffix(content.size());
      token = std::string(v);
    }
    return {};
  }
};

class MetaspaceDecoder final : public Decoder {
public:
  std::string replacement = "\xE2\x96\x81";
  Status apply(std::vector<std::string> &tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      std::string out;
      const std::string &t = tokens[i];
      for (std::size_t k = 0; k < t.size();) {
        if (t.compare(k, replacement.size(), replacement) == 0) {
          out += ' ';
          k += replacement.size();
        } else {
          out += t[k++];
        }
      }
      if (i == 0 && !out.empty() && out[0] == ' ') out.erase(0, 1);
      tokens[i] = std::move(out);
    }
    return {};
  }
};

} // namespace

StatusOr<std::unique_ptr<Decoder>> Decoder::parse(const Json &node, const std::string &path,
                                                  const std::unordered_set<std::string> &addedTokens) {
  using Result = std::unique_ptr<Decoder>;
  if (node.is_null()) return Result();
  auto type = componentType(node, path);
  if (!type) return type.status();
  if (*type == "Sequence") {
    auto sequence = std::make_unique<SequenceDecoder>();
    std::string listPath = fieldPath(path, "decoders");
    if (!node.contains("decoders") || !node["decoders"].is_array()) return fieldError(listPath, "expected a list");
    for (std::size_t i = 0; i < node["decoders"].size(); ++i) {
      auto step = parse(node["decoders"][i], indexPath(listPath, i), addedTokens);
      if (!step) return step.status();
      if (*step) sequence->steps.push_back(std::move(*step));
    }
    return Result(std::move(sequence));
  }
  if (*type == "ByteLevel") {
    auto d = std::make_unique<ByteLevelDecoder>();
    d->added = &addedTokens;
    return Result(std::move(d));
  }
  if (*type == "ByteFallback") return Result(std::make_unique<ByteFallbackDecoder>());
  if (*type == "Fuse") return Result(std::make_unique<FuseDecoder>());
  if (*type == "Replace") {
    auto d = std::make_unique<ReplaceDecoder>();
    if (!node.contains("pattern")) return fieldError(fieldPath(path, "pattern"), "missing");
    auto pattern = parsePattern(node["pattern"], fieldPath(path, "pattern"));
    if (!pattern) return pattern.status();
    d->pattern = std::move(*pattern);
    auto content = optionalString(node, "content", path);
    if (!content) return content.status();
    d->content = content->value_or("");
    return Result(std::move(d));
  }
  if (*type == "Strip") {
    auto d = std::make_unique<StripDecoder>();
    auto content = optionalString(node, "content", path);
    if (!content) return content.status();
    d->content = content->value_or(" ");
    if (d->content.empty() || utf8::validSequenceLength(d->content, 0) != d->content.size())
      return fieldError(fieldPath(path, "content"), "expected one character");
    for (auto [key, field] : {std::pair{"start", &d->start}, std::pair{"stop", &d->stop}}) {
      auto it = node.find(key);
      if (it == node.end() || it->is_null()) continue;
      if (!it->is_number_unsigned() || it->get<uint64_t>() > 1024)
        return fieldError(fieldPath(path, key), "expected a count from 0 to 1024");
      *field = it->get<std::size_t>();
    }
    return Result(std::move(d));
  }
  if (*type == "Metaspace") {
    auto d = std::make_unique<MetaspaceDecoder>();
    auto replacement = optionalString(node, "replacement", path);
    if (!replacement) return replacement.status();
    if (*replacement) d->replacement = **replacement;
    if (d->replacement.empty()) return fieldError(fieldPath(path, "replacement"), "must not be empty");
    return Result(std::move(d));
  }
  return fieldError(fieldPath(path, "type"), "the decoder \"" + *type + "\" is not supported");
}

} // namespace ti::tok
