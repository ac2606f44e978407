//===- ApiRequest.cpp - An OpenAI API request, read and checked -----------===//
#include "ti/Serve/ApiRequest.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

using namespace ti;
using namespace ti::serve;
using nlohmann::json;

std::string ApiError::body() const {
  json e = {{"message", message},
            {"type", type},
            {"param", param.empty() ? json(nullptr) : json(param)},
            {"code", code.empty() ? json(nullptr) : json(code)}};
  return json{{"error", e}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

/// Request bodies are a few levels deep (messages[i].content[j].text).
constexpr int kMaxDepth = 8;

ApiError bad(const std::string &param, const std::string &message) {
  return ApiError{400, "invalid_request_error", message, param, {}};
}

/// The request's fields, read one by one; the first problem wins.
class Reader {
public:
  Reader(const json &body, const ApiLimits &limits) : body(body), limits(limits) {}

  std::optional<ApiError> error;

  /// The field, or nullptr when it is absent or null (both mean "default").
  const json *field(const char *name) const {
    auto it = body.find(name);
    return it == body.end() || it->is_null() ? nullptr : &*it;
  }

  void number(const char *name, double lo, double hi, bool loOpen, double &out) {
    const json *v = field(name);
    if (!v || error)
      return;
    if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() > hi ||
        (loOpen ? v->get<double>() <= lo : v->get<double>() < lo)) {
      error = bad(name, "'" + std::string(name) + "' must be a number " +
                            (loOpen ? "above " + fmt(lo) + " and at most " : "from " + fmt(lo) + " to ") +
                            fmt(hi));
      return;
    }
    out = v->get<double>();
  }

  /// A whole number in [lo, hi] (JSON integers only: 2.0 is refused).
  template <typename T> void integer(const char *name, uint64_t lo, uint64_t hi, T &out) {
    const json *v = field(name);
    if (!v || error)
      return;
    uint64_t u = 0;
    bool ok = v->is_number_unsigned() || (v->is_number_integer() && v->get<int64_t>() >= 0);
    if (ok) {
      u = v->is_number_unsigned() ? v->get<uint64_t>() : uint64_t(v->get<int64_t>());
      ok = u >= lo && u <= hi;
    }
    if (!ok) {
      error = bad(name, "'" + std::string(name) + "' must be a whole number from " +
                            std::to_string(lo) + " to " + std::to_string(hi));
      return;
    }
    out = static_cast<T>(u);
  }

  void boolean(const char *name, bool &out) {
    const json *v = field(name);
    if (!v || error)
      return;
    if (!v->is_boolean()) {
      error = bad(name, "'" + std::string(name) + "' must be true or false");
      return;
    }
    out = v->get<bool>();
  }

  /// A field we cannot honour: refused unless absent, null or `harmless`.
  template <typename Harmless> void unsupported(const char *name, Harmless harmless, const char *why) {
    const json *v = field(name);
    if (!v || error || harmless(*v))
      return;
    error = bad(name, "'" + std::string(name) + "' is not supported: " + why);
  }

  void stop(std::vector<std::string> &out) {
    const json *v = field("stop");
    if (!v || error)
      return;
    std::vector<json> items;
    if (v->is_string())
      items.push_back(*v);
    else if (v->is_array())
      items.assign(v->begin(), v->end());
    else {
      error = bad("stop", "'stop' must be a string or a list of strings");
      return;
    }
    if (items.size() > limits.maxStops) {
      error = bad("stop", "'stop' has " + std::to_string(items.size()) + " strings; at most " +
                              std::to_string(limits.maxStops));
      return;
    }
    for (const json &s : items) {
      if (!s.is_string() || s.get_ref<const std::string &>().empty() ||
          s.get_ref<const std::string &>().size() > limits.maxStopBytes) {
        error = bad("stop", "each stop string must be a non-empty string of at most " +
                                std::to_string(limits.maxStopBytes) + " bytes");
        return;
      }
      out.push_back(s.get<std::string>());
    }
  }

  static std::string fmt(double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.')
      s.pop_back();
    return s;
  }

private:
  const json &body;
  const ApiLimits &limits;
};

/// Whether `v` is an object whose `key` is the string `want` (json::value
/// would throw on a key of another type: the review found "type": 5 a 500).
bool hasString(const json &v, const char *key, const char *want) {
  if (!v.is_object())
    return false;
  auto it = v.find(key);
  return it != v.end() && it->is_string() && it->get_ref<const std::string &>() == want;
}

/// A message's content: a string, or a list of text parts.
std::optional<std::string> contentText(const json &content) {
  if (content.is_string())
    return content.get<std::string>();
  if (!content.is_array())
    return std::nullopt;
  std::string text;
  for (const json &part : content) {
    if (!hasString(part, "type", "text") || !part.contains("text") || !part["text"].is_string())
      return std::nullopt;
    text += part["text"].get<std::string>();
  }
  return text;
}

} // namespace

std::variant<ApiRequest, ApiError> ti::serve::parseApiRequest(Endpoint endpoint, std::string_view text,
                                                              const std::string &modelName,
                                                              const ApiLimits &limits,
                                                              const SamplingOptions &defaults) {
  bool tooDeep = false;
  json::parser_callback_t depthLimit = [&](int depth, json::parse_event_t, json &) {
    tooDeep = tooDeep || depth > kMaxDepth;
    return !tooDeep;
  };
  json body = json::parse(text.begin(), text.end(), depthLimit, /*allow_exceptions=*/false);
  if (tooDeep)
    return bad("", "the body nests JSON deeper than " + std::to_string(kMaxDepth) + " levels");
  if (body.is_discarded())
    return bad("", "the body is not valid JSON");
  if (!body.is_object())
    return bad("", "the body must be a JSON object");

  ApiRequest r;
  r.endpoint = endpoint;
  r.sampling = defaults;
  const bool chat = endpoint == Endpoint::ChatCompletions;
  Reader read(body, limits);

  const json *model = read.field("model");
  if (!model)
    return bad("model", "'model' is required");
  if (!model->is_string())
    return bad("model", "'model' must be a string");
  r.model = model->get<std::string>();
  if (r.model != modelName)
    return ApiError{404, "invalid_request_error",
                    "the model '" + r.model + "' does not exist; this server has '" + modelName + "'",
                    "model", "model_not_found"};

  if (chat) {
    const json *messages = read.field("messages");
    if (!messages || !messages->is_array() || messages->empty())
      return bad("messages", "'messages' must be a non-empty list of messages");
    if (messages->size() > limits.maxMessages)
      return bad("messages", "'messages' has " + std::to_string(messages->size()) +
                                 " messages; at most " + std::to_string(limits.maxMessages));
    for (size_t i = 0; i < messages->size(); ++i) {
      const json &m = (*messages)[i];
      const std::string at = "messages[" + std::to_string(i) + "]";
      if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
        return bad(at + ".role", at + " must be an object with a 'role'");
      std::string role = m["role"].get<std::string>();
      if (role == "developer")
        role = "system"; // OpenAI's newer name for it
      if (role != "system" && role != "user" && role != "assistant")
        return bad(at + ".role", at + " has role '" + role +
                                     "'; the roles are system, developer, user and assistant");
      auto content = m.contains("content") ? contentText(m["content"]) : std::nullopt;
      if (!content)
        return bad(at + ".content",
                   at + ".content must be a string or a list of text parts");
      r.messages.push_back({role, *content});
    }
  } else {
    const json *prompt = read.field("prompt");
    if (prompt && prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string())
      prompt = &(*prompt)[0];
    if (!prompt || !prompt->is_string())
      return bad("prompt", "'prompt' must be a string (one prompt; token lists are not supported)");
    r.prompt = prompt->get<std::string>();
  }

  // OpenAI's defaults: 16 tokens for a completion, as many as fit for a chat.
  r.maxTokens = chat ? limits.maxTokens : std::min<int32_t>(16, limits.maxTokens);
  read.integer("max_tokens", 1, uint64_t(limits.maxTokens), r.maxTokens);
  if (chat)
    read.integer("max_completion_tokens", 1, uint64_t(limits.maxTokens), r.maxTokens);
  read.number("temperature", 0, 2, false, r.sampling.temperature);
  read.number("top_p", 0, 1, true, r.sampling.topP);
  // OpenAI takes any 64-bit seed: a negative one is its two's complement.
  if (const json *seed = read.field("seed"); seed && seed->is_number_integer() && !seed->is_number_unsigned())
    r.sampling.seed = uint64_t(seed->get<int64_t>());
  else
    read.integer("seed", 0, std::numeric_limits<uint64_t>::max(), r.sampling.seed);
  // llama.cpp's extensions, which our sampler has.
  read.integer("top_k", 0, uint64_t(std::numeric_limits<int32_t>::max()), r.sampling.topK);
  read.number("min_p", 0, 1, false, r.sampling.minP);
  read.number("repeat_penalty", 0, 10, true, r.sampling.repeatPenalty);
  read.stop(r.stop);
  read.boolean("stream", r.stream);
  if (const json *options = read.field("stream_options"); options && !read.error) {
    if (!options->is_object())
      return bad("stream_options", "'stream_options' must be an object");
    if (auto it = options->find("include_usage"); it != options->end() && !it->is_null()) {
      if (!it->is_boolean())
        return bad("stream_options.include_usage", "'include_usage' must be true or false");
      r.includeUsage = it->get<bool>();
    }
  }

  auto isOne = [](const json &v) { return v.is_number() && v.get<double>() == 1; };
  auto isFalse = [](const json &v) { return v.is_boolean() && !v.get<bool>(); };
  auto isZero = [](const json &v) { return v.is_number() && v.get<double>() == 0; };
  auto isEmpty = [](const json &v) { return (v.is_array() || v.is_object()) && v.empty(); };
  read.unsupported("n", isOne, "one choice a request (n = 1)");
  read.unsupported("best_of", isOne, "one choice a request");
  read.unsupported("presence_penalty", isZero, "use repeat_penalty");
  read.unsupported("frequency_penalty", isZero, "use repeat_penalty");
  read.unsupported("logit_bias", isEmpty, "no logit bias");
  read.unsupported("tools", isEmpty, "no tool calls");
  read.unsupported("functions", isEmpty, "no function calls");
  read.unsupported("tool_choice", [](const json &v) { return v.is_string() && v.get<std::string>() == "none"; },
                   "no tool calls");
  read.unsupported("response_format", [](const json &v) { return hasString(v, "type", "text"); },
                   "text only");
  read.unsupported("echo", isFalse, "the prompt is not echoed");
  read.unsupported("suffix", [](const json &v) { return v.is_string() && v.get<std::string>().empty(); },
                   "no suffix");
  read.unsupported("logprobs", [&](const json &v) { return isFalse(v); }, "no log probabilities");
  read.unsupported("top_logprobs", isZero, "no log probabilities");
  if (read.error)
    return *read.error;
  if (Status s = r.sampling.check(); !s.ok())
    return bad("", s.message());
  return r;
}
