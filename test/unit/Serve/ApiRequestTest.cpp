//===- ApiRequestTest.cpp - OpenAI requests, read and checked -------------===//
#include "ti/Serve/ApiRequest.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

using namespace ti;
using namespace ti::serve;

namespace {

ApiLimits limits() {
  ApiLimits l;
  l.maxTokens = 512;
  return l;
}

std::variant<ApiRequest, ApiError> chat(const std::string &body) {
  return parseApiRequest(Endpoint::ChatCompletions, body, "tiny", limits(), SamplingOptions{});
}

/// The error's status and message, "" for a request that parsed.
std::string refusal(const std::variant<ApiRequest, ApiError> &r) {
  if (auto *e = std::get_if<ApiError>(&r))
    return std::to_string(e->status) + " " + e->message + (e->param.empty() ? "" : " [" + e->param + "]");
  return "";
}

const std::string kMessages = R"("messages": [{"role": "user", "content": "hi"}])";

} // namespace

TEST(ApiRequest, ReadsAChatRequest) {
  auto r = chat(R"({"model": "tiny", "messages": [{"role": "system", "content": "Be brief."},
      {"role": "user", "content": [{"type": "text", "text": "Hello "}, {"type": "text", "text": "there"}]},
      {"role": "developer", "content": "x"}],
      "max_tokens": 7, "temperature": 0.5, "top_p": 0.9, "seed": 18446744073709551615,
      "stop": ["\n", "END"], "stream": true, "stream_options": {"include_usage": true},
      "n": 1, "user": "someone", "presence_penalty": 0, "top_k": 40})");
  ASSERT_EQ(refusal(r), "");
  const ApiRequest &q = std::get<ApiRequest>(r);
  ASSERT_EQ(q.messages.size(), 3u);
  EXPECT_EQ(q.messages[1].content, "Hello there");
  EXPECT_EQ(q.messages[2].role, "system"); // developer is OpenAI's newer name
  EXPECT_EQ(q.maxTokens, 7);
  EXPECT_EQ(q.sampling.temperature, 0.5);
  EXPECT_EQ(q.sampling.topP, 0.9);
  EXPECT_EQ(q.sampling.topK, 40);
  EXPECT_EQ(q.sampling.seed, UINT64_MAX);
  auto negative = chat(R"({"model": "tiny", )" + kMessages + R"(, "seed": -1, "n": 1.0})");
  ASSERT_EQ(refusal(negative), ""); // OpenAI's seeds are any int64
  EXPECT_EQ(std::get<ApiRequest>(negative).sampling.seed, UINT64_MAX);
  EXPECT_EQ(q.stop, (std::vector<std::string>{"\n", "END"}));
  EXPECT_TRUE(q.stream);
  EXPECT_TRUE(q.includeUsage);
}

TEST(ApiRequest, DefaultsAreOpenAIsAndTheServers) {
  SamplingOptions defaults;
  defaults.temperature = 0.6;
  defaults.topP = 0.9;
  auto c = parseApiRequest(Endpoint::ChatCompletions, R"({"model": "tiny", )" + kMessages + "}", "tiny",
                           limits(), defaults);
  ASSERT_EQ(refusal(c), "");
  EXPECT_EQ(std::get<ApiRequest>(c).maxTokens, 512); // a chat: as many as fit
  EXPECT_EQ(std::get<ApiRequest>(c).sampling.temperature, 0.6);
  auto t = parseApiRequest(Endpoint::Completions, R"({"model": "tiny", "prompt": ["once"], "max_tokens": null})",
                           "tiny", limits(), defaults);
  ASSERT_EQ(refusal(t), "");
  EXPECT_EQ(std::get<ApiRequest>(t).maxTokens, 16); // a completion: OpenAI's 16
  EXPECT_EQ(std::get<ApiRequest>(t).prompt, "once");
}

TEST(ApiRequest, RefusesWhatItCannotHonourByName) {
  const std::string base = R"({"model": "tiny", )" + kMessages;
  auto with = [&](const std::string &field) { return refusal(chat(base + ", " + field + "}")); };
  EXPECT_EQ(with(R"("n": 2)"), "400 'n' is not supported: one choice a request (n = 1) [n]");
  EXPECT_EQ(with(R"("logprobs": true)"), "400 'logprobs' is not supported: no log probabilities [logprobs]");
  EXPECT_EQ(with(R"("tools": [{"type": "function"}])"), "400 'tools' is not supported: no tool calls [tools]");
  EXPECT_EQ(with(R"("frequency_penalty": 0.5)"),
            "400 'frequency_penalty' is not supported: use repeat_penalty [frequency_penalty]");
  EXPECT_EQ(with(R"("response_format": {"type": "json_object"})"),
            "400 'response_format' is not supported: text only [response_format]");
  // Their harmless values pass.
  EXPECT_EQ(with(R"("logprobs": false, "tools": [], "tool_choice": "none", "response_format": {"type": "text"})"), "");
}

TEST(ApiRequest, RefusesEachBadField) {
  const std::string base = R"({"model": "tiny", )" + kMessages;
  auto with = [&](const std::string &field) { return refusal(chat(base + ", " + field + "}")); };
  EXPECT_EQ(with(R"("temperature": "hot")"), "400 'temperature' must be a number from 0 to 2 [temperature]");
  EXPECT_EQ(with(R"("temperature": 2.5)"), "400 'temperature' must be a number from 0 to 2 [temperature]");
  EXPECT_EQ(with(R"("top_p": 0)"), "400 'top_p' must be a number above 0 and at most 1 [top_p]");
  EXPECT_EQ(with(R"("max_tokens": 0)"), "400 'max_tokens' must be a whole number from 1 to 512 [max_tokens]");
  EXPECT_EQ(with(R"("max_tokens": 513)"), "400 'max_tokens' must be a whole number from 1 to 512 [max_tokens]");
  EXPECT_EQ(with(R"("max_tokens": 2.0)"), "400 'max_tokens' must be a whole number from 1 to 512 [max_tokens]");
  EXPECT_EQ(with(R"("seed": 1.5)"),
            "400 'seed' must be a whole number from 0 to 18446744073709551615 [seed]");
  // A key of another type than expected is refused, not thrown (found in review: a 500).
  EXPECT_EQ(refusal(chat(R"({"model": "tiny", "messages": [{"role": "user", "content": [{"type": 5, "text": "x"}]}]})")),
            "400 messages[0].content must be a string or a list of text parts [messages[0].content]");
  EXPECT_EQ(with(R"("response_format": {"type": 1})"),
            "400 'response_format' is not supported: text only [response_format]");
  EXPECT_EQ(with(R"("stop": 5)"), "400 'stop' must be a string or a list of strings [stop]");
  EXPECT_EQ(with(R"("stop": ["a", "b", "c", "d", "e"])"), "400 'stop' has 5 strings; at most 4 [stop]");
  EXPECT_EQ(with(R"("stop": [""])"), "400 each stop string must be a non-empty string of at most 256 bytes [stop]");
  EXPECT_EQ(with(R"("stream": "yes")"), "400 'stream' must be true or false [stream]");
  EXPECT_EQ(with(R"("stream_options": {"include_usage": 1})"),
            "400 'include_usage' must be true or false [stream_options.include_usage]");
  EXPECT_EQ(refusal(chat(R"({"model": "tiny", "messages": []})")),
            "400 'messages' must be a non-empty list of messages [messages]");
  EXPECT_EQ(refusal(chat(R"({"model": "tiny", "messages": [{"role": "tool", "content": "x"}]})")),
            "400 messages[0] has role 'tool'; the roles are system, developer, user and assistant [messages[0].role]");
  EXPECT_EQ(refusal(chat(R"({"model": "tiny", "messages": [{"role": "user", "content": 5}]})")),
            "400 messages[0].content must be a string or a list of text parts [messages[0].content]");
  EXPECT_EQ(refusal(parseApiRequest(Endpoint::Completions, R"({"model": "tiny", "prompt": [1, 2]})", "tiny",
                                    limits(), {})),
            "400 'prompt' must be a string (one prompt; token lists are not supported) [prompt]");
}

TEST(ApiRequest, TheBodyAndTheModel) {
  EXPECT_EQ(refusal(chat("{not json")), "400 the body is not valid JSON");
  EXPECT_EQ(refusal(chat("[1, 2]")), "400 the body must be a JSON object");
  EXPECT_EQ(refusal(chat(std::string(20, '[') + std::string(20, ']'))),
            "400 the body nests JSON deeper than 8 levels");
  EXPECT_EQ(refusal(chat("{" + kMessages + "}")), "400 'model' is required [model]");
  EXPECT_EQ(refusal(chat(R"({"model": 7, )" + kMessages + "}")), "400 'model' must be a string [model]");
  auto other = chat(R"({"model": "gpt-4", )" + kMessages + "}");
  EXPECT_EQ(refusal(other), "404 the model 'gpt-4' does not exist; this server has 'tiny' [model]");
  EXPECT_EQ(std::get<ApiError>(other).code, "model_not_found");
  // The error object is OpenAI's shape, null where nothing applies.
  EXPECT_EQ(nlohmann::json::parse(std::get<ApiError>(chat("{")).body()),
            nlohmann::json::parse(R"({"error": {"message": "the body is not valid JSON",
                "type": "invalid_request_error", "param": null, "code": null}})"));
}
