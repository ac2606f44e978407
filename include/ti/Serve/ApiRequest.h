//===- ApiRequest.h - An OpenAI API request, read and checked ----*- C++ -*-===//
//
// `tirun serve` answers the OpenAI HTTP API (docs/serving.md). A request body
// comes from anyone who can reach the port, so it is read as hostile: JSON
// nested at most a few levels, every field of the right type and in range,
// every field we cannot honour refused by name (n > 1, logprobs, tools, a
// penalty), fields we do not know ignored (clients send many). A failure is
// an ApiError: the HTTP status and OpenAI's error object.
//
//===----------------------------------------------------------------------===//
#ifndef TI_SERVE_APIREQUEST_H
#define TI_SERVE_APIREQUEST_H

#include "ti/Runtime/Sampler.h"
#include "ti/Tokenizer/ChatTemplate.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ti::serve {

/// An OpenAI-style error: `{"error": {"message", "type", "param", "code"}}`.
struct ApiError {
  int status = 400;
  std::string type = "invalid_request_error";
  std::string message;
  std::string param; // the field at fault, or empty (JSON null)
  std::string code;  // e.g. "model_not_found", or empty (JSON null)
  std::string body() const;
};

enum class Endpoint { ChatCompletions, Completions };

/// What a request may ask for at most.
struct ApiLimits {
  uint64_t maxBodyBytes = 4u << 20;   // checked by the server before parsing
  int32_t maxTokens = 4096;           // max_tokens at most (and the default)
  uint32_t maxMessages = 1024;        // chat messages
  uint32_t maxStops = 4;              // OpenAI's own limit
  uint32_t maxStopBytes = 256;        // each stop string
};

struct ApiRequest {
  Endpoint endpoint = Endpoint::ChatCompletions;
  std::string model;
  std::vector<ChatMessage> messages; // ChatCompletions
  std::string prompt;                // Completions
  int32_t maxTokens = 0;
  SamplingOptions sampling{};
  std::vector<std::string> stop{};
  bool stream = false;
  bool includeUsage = false; // stream_options.include_usage
};

/// Reads `body` as a request to `endpoint` for the model called `modelName`,
/// with `defaults` for the sampling fields it leaves out. The result passes
/// SamplingOptions::check.
std::variant<ApiRequest, ApiError> parseApiRequest(Endpoint endpoint, std::string_view body,
                                                   const std::string &modelName,
                                                   const ApiLimits &limits,
                                                   const SamplingOptions &defaults);

} // namespace ti::serve

#endif // TI_SERVE_APIREQUEST_H
