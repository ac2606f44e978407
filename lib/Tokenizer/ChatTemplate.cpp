//===- ChatTemplate.cpp - A checkpoint's chat template, rendered ----------===//
#include "ti/Tokenizer/ChatTemplate.h"

#include "Jinja.h"

#include "ti/Tokenizer/Utf8.h"

#include <nlohmann/json.hpp>

#include <functional>

namespace ti {

struct ChatTemplate::Parsed {
  jinja::Program program;
};

namespace {

jinja::Value fromJson(const nlohmann::json &j) {
  using jinja::Value;
  switch (j.type()) {
  case nlohmann::json::value_t::null: return Value::none();
  case nlohmann::json::value_t::boolean: return Value::of(j.get<bool>());
  case nlohmann::json::value_t::number_integer:
  case nlohmann::json::value_t::number_unsigned: return Value::of(j.get<int64_t>());
  case nlohmann::json::value_t::number_float: return Value::of(j.get<double>());
  case nlohmann::json::value_t::string: return Value::of(j.get<std::string>());
  case nlohmann::json::value_t::array: {
    Value list = Value::newList();
    for (const auto &item : j) list.list->push_back(fromJson(item));
    return list;
  }
  case nlohmann::json::value_t::object: {
    Value dict = Value::newDict();
    for (auto it = j.begin(); it != j.end(); ++it) dict.set(it.key(), fromJson(it.value()));
    return dict;
  }
  default: return Value();
  }
}

} // namespace

StatusOr<ChatTemplate> ChatTemplate::parse(std::string_view source) {
  auto program = jinja::parse(source);
  if (!program) return Status::error("chat template: " + program.status().message());
  ChatTemplate t;
  t.parsed = std::make_shared<Parsed>(Parsed{std::move(*program)});
  return t;
}

StatusOr<ChatTemplate> ChatTemplate::of(const Tokenizer &tokenizer) {
  if (tokenizer.config().chatTemplate.empty())
    return Status::error("the tokenizer has no chat template (tokenizer_config.json has no chat_template)");
  return parse(tokenizer.config().chatTemplate);
}

StatusOr<std::string> ChatTemplate::render(const std::vector<ChatMessage> &messages, const ChatOptions &options,
                                           const TokenizerConfig &config) const {
  for (std::size_t i = 0; i < messages.size(); ++i)
    for (const std::string *text : {&messages[i].role, &messages[i].content})
      if (auto bad = utf8::firstInvalidByte(*text))
        return Status::error("message " + std::to_string(i + 1) + " is not valid UTF-8 (byte " + std::to_string(*bad) + ")");
  for (const auto *token : {&config.bosToken, &config.eosToken})
    if (*token && utf8::firstInvalidByte(**token)) return Status::error("a special token is not valid UTF-8");
  nlohmann::ordered_json variables;
  variables["messages"] = nlohmann::ordered_json::array();
  for (const ChatMessage &m : messages)
    variables["messages"].push_back({{"role", m.role}, {"content", m.content}});
  variables["add_generation_prompt"] = options.addGenerationPrompt;
  if (config.bosToken) variables["bos_token"] = *config.bosToken;
  if (config.eosToken) variables["eos_token"] = *config.eosToken;
  if (options.enableThinking) variables["enable_thinking"] = *options.enableThinking;
  return renderJson(variables.dump());
}

StatusOr<std::string> ChatTemplate::renderJson(std::string_view variables) const {
  // ordered_json keeps the keys in the order given (tojson prints them so).
  bool tooDeep = false;
  nlohmann::ordered_json::parser_callback_t limit = [&](int depth, nlohmann::ordered_json::parse_event_t,
                                                        nlohmann::ordered_json &) {
    tooDeep = tooDeep || depth > 64;
    return !tooDeep;
  };
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(variables, limit, false);
  if (tooDeep) return Status::error("chat template variables: nested deeper than 64 levels");
  if (j.is_discarded() || !j.is_object()) return Status::error("chat template variables: not a JSON object");
  std::function<jinja::Value(const nlohmann::ordered_json &)> convert = [&](const nlohmann::ordered_json &x) {
    using jinja::Value;
    if (x.is_object()) {
      Value d = Value::newDict();
      for (auto it = x.begin(); it != x.end(); ++it) d.set(it.key(), convert(it.value()));
      return d;
    }
    if (x.is_array()) {
      Value l = Value::newList();
      for (const auto &item : x) l.list->push_back(convert(item));
      return l;
    }
    return fromJson(nlohmann::json(x));
  };
  auto text = jinja::render(parsed->program, convert(j));
  if (!text) return Status::error("chat template: " + text.status().message());
  return text;
}

} // namespace ti
