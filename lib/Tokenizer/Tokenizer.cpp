//===- Tokenizer.cpp - Hugging Face tokenizer.json, encode and decode -----===//
#include "ti/Tokenizer/Tokenizer.h"

#include "Bpe.h"
#include "CleanUp.h"
#include "Decoder.h"
#include "JsonFields.h"
#include "Normalizer.h"
#include "PreTokenizer.h"
#include "TokenSplitter.h"

#include "ti/Tokenizer/Utf8.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_set>

namespace ti {

using tok::Json;

namespace {

struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool lstrip = false, rstrip = false, special = false, normalized = false;
};

// tokenizer_config.json names tokens as strings or as {"content": ...}.
std::optional<std::string> tokenName(const Json &config, const char *key) {
  auto it = config.find(key);
  if (it == config.end()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
    return (*it)["content"].get<std::string>();
  return std::nullopt;
}

// JavaScript's trim().split(/\s+/).join(" ") (tokenizer_config.json remove_space).
std::string collapseSpaces(std::string_view text) {
  text = utf8::trimJsWhitespaceEnd(utf8::trimJsWhitespaceStart(text));
  std::string out;
  bool inSpace = false;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = utf8::validSequenceLength(text, i);
    bool space = n > 0 && utf8::isJsWhitespace(utf8::decodeAt(text, i, n));
    if (n == 0) n = 1;
    if (space) {
      if (!inSpace) out += ' ';
    } else {
      out.append(text.substr(i, n));
    }
    inSpace = space;
    i += n;
  }
  return out;
}

StatusOr<std::string> readFile(const std::string &path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return Status::error(path + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error(path + ": cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::error(path + ": read failed");
  return text.str();
}

} // namespace

struct Tokenizer::Impl {
  TokenizerConfig config;
  bool removeSpace = false;
  std::vector<AddedToken> added;
  std::unordered_map<std::string, std::size_t> addedByText; // content, and normalized content
  std::unordered_set<std::string> addedContents;
  tok::TokenSplitter unnormalizedSplitter, normalizedSplitter;
  std::unique_ptr<tok::Normalizer> normalizer;
  std::unique_ptr<tok::PreTokenizer> preTokenizer;
  std::optional<tok::Bpe> model;
  // The post-processor's template for one sequence: ids, -1 for the sequence.
  std::vector<int32_t> postTemplate{-1};
  std::unordered_map<int32_t, int32_t> remap; // a model id whose string an added token claims
  std::unique_ptr<tok::Decoder> decoder;
  std::vector<std::optional<std::string>> tokenOf;
  std::unordered_set<std::string> specialTokens;
  std::vector<bool> specialIds;

  Status load(const Json &file, const Json &configFile);
  Status loadConfig(const Json &configFile);
  Status loadAddedTokens(const Json &list);
  Status loadPostProcessor(const Json &node);
  StatusOr<int32_t> idOfText(const std::string &text) const;
  void cutAddedTokens(std::vector<tok::TokenSplitter::Piece> &pieces) const;
  Status encodeSection(std::string_view text, std::size_t section, std::vector<int32_t> &ids,
                       std::unordered_map<std::string, std::vector<int32_t>> &cache) const;
};

Status Tokenizer::Impl::loadConfig(const Json &c) {
  if (c.is_null()) return {};
  if (!c.is_object()) return tok::fieldError("", "expected an object");
  config.bosToken = tokenName(c, "bos_token");
  config.eosToken = tokenName(c, "eos_token");
  config.padToken = tokenName(c, "pad_token");
  config.unkToken = tokenName(c, "unk_token");
  if (auto it = c.find("chat_template"); it != c.end() && !it->is_null()) {
    if (it->is_string()) {
      config.chatTemplate = it->get<std::string>();
    } else if (it->is_array()) { // [{"name": ..., "template": ...}]: the default one
      for (const Json &entry : *it)
        if (entry.is_object() && entry.contains("name") && entry["name"] == "default" && entry.contains("template") &&
            entry["template"].is_string())
          config.chatTemplate = entry["template"].get<std::string>();
    } else {
      return tok::fieldError("chat_template", "expected a string or a list of named templates");
    }
  }
  auto clean = tok::optionalBool(c, "clean_up_tokenization_spaces", "");
  if (!clean) return clean.status();
  config.cleanUpTokenizationSpaces = clean->value_or(true);
  auto remove = tok::optionalBool(c, "remove_space", "");
  if (!remove) return remove.status();
  removeSpace = remove->value_or(false);
  auto lower = tok::optionalBool(c, "do_lowercase_and_remove_accent", "");
  if (!lower) return lower.status();
  if (lower->value_or(false)) return tok::fieldError("do_lowercase_and_remove_accent", "true is not supported");
  if (auto it = c.find("additional_special_tokens"); it != c.end() && it->is_array())
    for (const Json &t : *it)
      if (t.is_string()) config.additionalSpecialTokens.push_back(t.get<std::string>()); // objects never match, as in the reference
  return {};
}

Status Tokenizer::Impl::loadAddedTokens(const Json &list) {
  if (list.is_null()) return {};
  if (!list.is_array()) return tok::fieldError("added_tokens", "expected a list");
  for (std::size_t i = 0; i < list.size(); ++i) {
    std::string path = tok::indexPath("added_tokens", i);
    const Json &t = list[i];
    if (!t.is_object()) return tok::fieldError(path, "expected an object");
    AddedToken token;
    auto content = tok::optionalString(t, "content", path);
    if (!content) return content.status();
    if (!*content || (*content)->empty()) return tok::fieldError(tok::fieldPath(path, "content"), "missing or empty");
    if (utf8::firstInvalidByte(**content)) return tok::fieldError(tok::fieldPath(path, "content"), "not valid UTF-8");
    token.content = **content;
    if (!t.contains("id") || !t["id"].is_number_integer() || t["id"].get<int64_t>() < 0 ||
        t["id"].get<int64_t>() > tok::kMaxTokenId)
      return tok::fieldError(tok::fieldPath(path, "id"), "expected an id from 0 to 2^24-1");
    token.id = static_cast<int32_t>(t["id"].get<int64_t>());
    auto lstrip = tok::optionalBool(t, "lstrip", path), rstrip = tok::optionalBool(t, "rstrip", path);
    auto special = tok::optionalBool(t, "special", path), normalized = tok::optionalBool(t, "normalized", path);
    for (const Status *s : {&lstrip.status(), &rstrip.status(), &special.status(), &normalized.status()})
      if (!s->ok()) return *s;
    token.lstrip = lstrip->value_or(false);
    token.rstrip = rstrip->value_or(false);
    token.special = special->value_or(false);
    token.normalized = normalized->value_or(!token.special);
    added.push_back(std::move(token));
  }
  return {};
}

StatusOr<int32_t> Tokenizer::Impl::idOfText(const std::string &text) const {
  if (auto it = addedByText.find(text); it != addedByText.end()) return added[it->second].id;
  if (auto it = model->vocabulary().find(text); it != model->vocabulary().end()) return it->second;
  return Status::error("\"" + text + "\" is not in the vocabulary");
}

Status Tokenizer::Impl::loadPostProcessor(const Json &node) {
  // Each step maps the token list to a new one; composed here into one template.
  std::vector<std::optional<std::string>> current{std::nullopt}; // nullopt: the sequence
  std::function<Status(const Json &, const std::string &)> step = [&](const Json &n, const std::string &path) -> Status {
    if (n.is_null()) return {};
    auto type = tok::componentType(n, path);
    if (!type) return type.status();
    if (*type == "ByteLevel") return {};
    if (*type == "Sequence") {
      if (!n.contains("processors") || !n["processors"].is_array())
        return tok::fieldError(tok::fieldPath(path, "processors"), "expected a list");
      for (std::size_t i = 0; i < n["processors"].size(); ++i)
        if (Status s = step(n["processors"][i], tok::indexPath(tok::fieldPath(path, "processors"), i)); !s) return s;
      return {};
    }
    if (*type != "TemplateProcessing")
      return tok::fieldError(tok::fieldPath(path, "type"), "the post-processor \"" + *type + "\" is not supported");
    std::string singlePath = tok::fieldPath(path, "single");
    if (!n.contains("single") || !n["single"].is_array()) return tok::fieldError(singlePath, "expected a list");
    std::vector<std::optional<std::string>> next;
    for (std::size_t i = 0; i < n["single"].size(); ++i) {
      const Json &item = n["single"][i];
      std::string itemPath = tok::indexPath(singlePath, i);
      if (item.contains("SpecialToken") && item["SpecialToken"].is_object() &&
          item["SpecialToken"].contains("id") && item["SpecialToken"]["id"].is_string()) {
        next.push_back(item["SpecialToken"]["id"].get<std::string>());
      } else if (item.contains("Sequence") && item["Sequence"].is_object()) {
        if (item["Sequence"].contains("id") && item["Sequence"]["id"] == "A") next.insert(next.end(), current.begin(), current.end());
      } else {
        return tok::fieldError(itemPath, "expected {\"SpecialToken\": ...} or {\"Sequence\": ...}");
      }
    }
    current = std::move(next);
    return {};
  };
  if (Status s = step(node, "post_processor"); !s) return s;
  postTemplate.clear();
  for (const auto &item : current) {
    if (!item) {
      postTemplate.push_back(-1);
      continue;
    }
    auto id = idOfText(*item);
    if (!id) return tok::fieldError("post_processor", "the special token " + id.status().message());
    postTemplate.push_back(*id);
  }
  return {};
}

Status Tokenizer::Impl::load(const Json &file, const Json &configFile) {
  if (!file.is_object()) return tok::fieldError("", "expected an object");
  if (!file.contains("model")) return tok::fieldError("model", "missing");
  if (Status s = loadConfig(configFile); !s) return Status::error("tokenizer_config.json: " + s.message());
  auto bpe = tok::Bpe::parse(file["model"], "model");
  if (!bpe) return bpe.status();
  model = std::move(*bpe);
  auto norm = tok::Normalizer::parse(tok::fieldOrNull(file, "normalizer"), "normalizer");
  if (!norm) return norm.status();
  normalizer = std::move(*norm);
  auto pre = tok::PreTokenizer::parse(tok::fieldOrNull(file, "pre_tokenizer"), "pre_tokenizer");
  if (!pre) return pre.status();
  preTokenizer = std::move(*pre);
  if (Status s = loadAddedTokens(tok::fieldOrNull(file, "added_tokens")); !s) return s;

  // The vocabulary by id, then the added tokens over it.
  int32_t limit = 0;
  for (const auto &[text, id] : model->vocabulary()) limit = std::max(limit, id + 1);
  for (const AddedToken &t : added) limit = std::max(limit, t.id + 1);
  tokenOf.assign(static_cast<std::size_t>(limit), std::nullopt);
  specialIds.assign(static_cast<std::size_t>(limit), false);
  for (const auto &[text, id] : model->vocabulary()) tokenOf[id] = text;
  for (std::size_t i = 0; i < added.size(); ++i) {
    const AddedToken &t = added[i];
    model->setToken(t.content, t.id);
    tokenOf[t.id] = t.content;
    addedContents.insert(t.content);
    addedByText[t.content] = i;
    if (t.special) {
      specialTokens.insert(t.content);
      specialIds[t.id] = true;
    }
    if (t.normalized && normalizer) {
      auto normalizedText = normalizer->apply(t.content);
      if (!normalizedText) return normalizedText.status();
      addedByText[*normalizedText] = i;
      normalizedSplitter.add(*normalizedText);
    } else {
      unnormalizedSplitter.add(t.content);
    }
  }
  for (const std::string &t : config.additionalSpecialTokens) specialTokens.insert(t);
  for (const auto &[text, index] : addedByText)
    if (auto it = model->vocabulary().find(text); it != model->vocabulary().end() && it->second != added[index].id)
      remap[it->second] = added[index].id;
  if (Status s = loadPostProcessor(tok::fieldOrNull(file, "post_processor")); !s) return s;
  auto dec = tok::Decoder::parse(tok::fieldOrNull(file, "decoder"), "decoder", addedContents);
  if (!dec) return dec.status();
  decoder = std::move(*dec);
  return {};
}

StatusOr<Tokenizer> Tokenizer::fromJson(std::string_view tokenizerJson, std::string_view configJson,
                                        std::string_view name) {
  std::string prefix = std::string(name) + ": ";
  bool tooDeep = false;
  Json file = tok::parseBounded(tokenizerJson, tooDeep);
  if (file.is_discarded())
    return Status::error(prefix + (tooDeep ? "nested deeper than 64 levels" : "not valid JSON"));
  Json config;
  if (!configJson.empty()) {
    config = tok::parseBounded(configJson, tooDeep);
    if (config.is_discarded())
      return Status::error(prefix + "tokenizer_config.json: " + (tooDeep ? "nested deeper than 64 levels" : "not valid JSON"));
  }
  auto impl = std::make_shared<Impl>();
  if (Status s = impl->load(file, config); !s) return Status::error(prefix + s.message());
  Tokenizer tokenizer;
  tokenizer.impl = std::move(impl);
  return tokenizer;
}

StatusOr<Tokenizer> Tokenizer::fromPath(const std::string &path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path file = path;
  if (fs::is_directory(file, ec)) file /= "tokenizer.json";
  auto text = readFile(file.string());
  if (!text) return text.status();
  std::string configText;
  fs::path configPath = file.parent_path() / "tokenizer_config.json";
  if (fs::exists(configPath, ec)) {
    auto c = readFile(configPath.string());
    if (!c) return c.status();
    configText = std::move(*c);
  }
  return fromJson(*text, configText, file.string());
}

void Tokenizer::Impl::cutAddedTokens(std::vector<tok::TokenSplitter::Piece> &pieces) const {
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (!pieces[i].isToken) continue;
    const AddedToken &t = added[addedByText.at(std::string(pieces[i].text))];
    if (t.lstrip && i > 0 && !pieces[i - 1].isToken) pieces[i - 1].text = utf8::trimJsWhitespaceEnd(pieces[i - 1].text);
    if (t.rstrip && i + 1 < pieces.size() && !pieces[i + 1].isToken)
      pieces[i + 1].text = utf8::trimJsWhitespaceStart(pieces[i + 1].text);
  }
}

Status Tokenizer::Impl::encodeSection(std::string_view text, std::size_t section, std::vector<int32_t> &ids,
                                      std::unordered_map<std::string, std::vector<int32_t>> &cache) const {
  std::string processed = removeSpace ? collapseSpaces(text) : std::string(text);
  if (normalizer) {
    auto n = normalizer->apply(std::move(processed));
    if (!n) return n.status();
    processed = std::move(*n);
  }
  auto pieces = normalizedSplitter.empty()
                    ? std::vector<tok::TokenSplitter::Piece>{{processed, false}}
                    : normalizedSplitter.split(processed);
  cutAddedTokens(pieces);
  for (const auto &piece : pieces) {
    if (piece.text.empty()) continue;
    if (auto it = addedByText.find(std::string(piece.text)); it != addedByText.end()) {
      ids.push_back(added[it->second].id);
      continue;
    }
    std::vector<std::string> words{std::string(piece.text)};
    if (preTokenizer)
      if (Status s = preTokenizer->apply(words, section); !s) return s;
    std::size_t from = ids.size();
    model->encode(words, ids, &cache);
    if (!remap.empty())
      for (std::size_t k = from; k < ids.size(); ++k)
        if (auto it = remap.find(ids[k]); it != remap.end()) ids[k] = it->second;
  }
  return {};
}

StatusOr<std::vector<int32_t>> Tokenizer::encode(std::string_view text, const EncodeOptions &options) const {
  if (auto bad = utf8::firstInvalidByte(text))
    return Status::error("the text is not valid UTF-8 (byte " + std::to_string(*bad) + ")");
  std::vector<int32_t> body;
  std::unordered_map<std::string, std::vector<int32_t>> cache;
  auto sections = impl->unnormalizedSplitter.split(text);
  impl->cutAddedTokens(sections);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    std::string_view section = sections[i].text;
    if (section.empty()) continue;
    if (auto it = impl->addedByText.find(std::string(section)); it != impl->addedByText.end()) {
      body.push_back(impl->added[it->second].id);
      continue;
    }
    if (Status s = impl->encodeSection(section, i, body, cache); !s) return s;
  }
  std::vector<int32_t> ids;
  ids.reserve(body.size() + impl->postTemplate.size());
  for (int32_t item : impl->postTemplate) {
    if (item < 0) ids.insert(ids.end(), body.begin(), body.end());
    else if (options.addSpecialTokens) ids.push_back(item);
  }
  return ids;
}

StatusOr<std::string> Tokenizer::decode(std::span<const int32_t> ids, const DecodeOptions &options) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0 || id >= static_cast<int32_t>(impl->tokenOf.size()) || !impl->tokenOf[id])
      return Status::error("token id " + std::to_string(id) + " is not in the vocabulary");
    const std::string &token = *impl->tokenOf[id];
    if (options.skipSpecialTokens && impl->specialTokens.count(token)) continue;
    tokens.push_back(token);
  }
  std::string text;
  if (impl->decoder) {
    if (Status s = impl->decoder->apply(tokens); !s) return s;
    for (const std::string &t : tokens) text += t;
    if (const std::string &suffix = impl->model->endOfWordSuffix(); !suffix.empty()) {
      tok::replaceAll(text, suffix, " ");
      if (options.skipSpecialTokens) text = std::string(utf8::trimJsWhitespaceEnd(utf8::trimJsWhitespaceStart(text)));
    }
  } else {
    for (std::size_t i = 0; i < tokens.size(); ++i) text += (i ? " " : "") + tokens[i];
  }
  if (options.cleanUpSpaces.value_or(impl->config.cleanUpTokenizationSpaces))
    tok::cleanUpSpaces(text);
  return text;
}

int32_t Tokenizer::idLimit() const { return static_cast<int32_t>(impl->tokenOf.size()); }

std::optional<int32_t> Tokenizer::tokenToId(std::string_view token) const {
  auto id = impl->idOfText(std::string(token));
  if (!id) return std::nullopt;
  return *id;
}

const std::string *Tokenizer::idToToken(int32_t id) const {
  if (id < 0 || id >= idLimit() || !impl->tokenOf[id]) return nullptr;
  return &*impl->tokenOf[id];
}

bool Tokenizer::isSpecial(int32_t id) const { return id >= 0 && id < idLimit() && impl->specialIds[id]; }

const TokenizerConfig &Tokenizer::config() const { return impl->config; }

} // namespace ti
