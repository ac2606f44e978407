//===- ApiRequestFuzzer.cpp - tirun serve's request bodies ----------------===//
//
// The input is an HTTP request body, read as both endpoints' request. A body
// that parses gives a request within the limits (max_tokens, the stop
// strings, sampling the sampler accepts, a chat's messages in their roles);
// a body that does not gives an error object that is itself valid JSON.
//
//===----------------------------------------------------------------------===//
#include "ti/Serve/ApiRequest.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string_view body(reinterpret_cast<const char *>(data), size);
  ti::serve::ApiLimits limits;
  limits.maxTokens = 512;
  for (auto endpoint : {ti::serve::Endpoint::ChatCompletions, ti::serve::Endpoint::Completions}) {
    auto r = ti::serve::parseApiRequest(endpoint, body, "tiny", limits, ti::SamplingOptions{});
    if (auto *e = std::get_if<ti::serve::ApiError>(&r)) {
      if (e->status < 400 || e->status > 404 ||
          !nlohmann::json::accept(e->body()))
        std::abort();
      continue;
    }
    const ti::serve::ApiRequest &q = std::get<ti::serve::ApiRequest>(r);
    if (q.maxTokens < 1 || q.maxTokens > limits.maxTokens || q.stop.size() > limits.maxStops ||
        !q.sampling.check().ok() || q.model != "tiny")
      std::abort();
    for (const std::string &s : q.stop)
      if (s.empty() || s.size() > limits.maxStopBytes)
        std::abort();
    if (endpoint == ti::serve::Endpoint::ChatCompletions) {
      if (q.messages.empty() || q.messages.size() > limits.maxMessages)
        std::abort();
      for (const ti::ChatMessage &m : q.messages)
        if (m.role != "system" && m.role != "user" && m.role != "assistant")
          std::abort();
    }
  }
  return 0;
}
