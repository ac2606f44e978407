//===- ServeEngine.cpp - API requests run one at a time on one executor ---===//
#include "ti/Serve/ServeEngine.h"

#include "ti/Tokenizer/TextStream.h"

#include <cstdio>

using namespace ti;
using namespace ti::serve;

namespace {

ApiError refusal(int status, const std::string &message, const std::string &code = {},
                 const std::string &type = "invalid_request_error") {
  return ApiError{status, type, message, {}, code};
}

} // namespace

std::string ti::serve::prometheusText(const Metrics &m) {
  std::string out;
  auto metric = [&](const char *name, const char *type, const char *help, double value) {
    char line[256];
    std::snprintf(line, sizeof line, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type, name,
                  value);
    out += line;
  };
  metric("tileinfer_requests_total", "counter", "Requests answered with a completion (cancelled ones included).",
         double(m.requests));
  metric("tileinfer_requests_rejected_total", "counter", "Requests refused with 429: the queue was full.",
         double(m.rejected));
  metric("tileinfer_requests_failed_total", "counter",
         "Requests refused when their turn came (a prompt past the context, ...).", double(m.failed));
  metric("tileinfer_requests_cancelled_total", "counter", "Generations ended because the client left.",
         double(m.cancelled));
  metric("tileinfer_prompt_tokens_total", "counter", "Prompt tokens of answered requests.",
         double(m.promptTokens));
  metric("tileinfer_prompt_tokens_cached_total", "counter",
         "Prompt tokens the K/V cache already held (not fed again).", double(m.cachedTokens));
  metric("tileinfer_generated_tokens_total", "counter", "Tokens generated.", double(m.completionTokens));
  {
    // A summary without quantiles: its sum and count.
    char lines[512];
    std::snprintf(lines, sizeof lines,
                  "# HELP tileinfer_time_to_first_token_seconds Time from a request's turn to its first token.\n"
                  "# TYPE tileinfer_time_to_first_token_seconds summary\n"
                  "tileinfer_time_to_first_token_seconds_sum %.17g\n"
                  "tileinfer_time_to_first_token_seconds_count %.17g\n",
                  m.firstTokenSeconds, double(m.requests));
    out += lines;
  }
  metric("tileinfer_decode_seconds_total", "counter", "Time of the launches after each first token.",
         m.decodeSeconds);
  metric("tileinfer_decode_tokens_total", "counter",
         "Tokens of those launches: decode_seconds_total / decode_tokens_total is the time per token.",
         double(m.decodeSteps));
  metric("tileinfer_queue_length", "gauge", "Requests waiting for the GPU.", double(m.waiting));
  metric("tileinfer_busy", "gauge", "1 while a request runs.", m.busy ? 1 : 0);
  return out;
}

ServeEngine::ServeEngine(const LoadedPlan &loaded, Executor &executor, const Tokenizer &tokenizer,
                         std::optional<ChatTemplate> chat, std::vector<int32_t> endTokens, uint32_t queueLimit)
    : loaded(loaded), tokenizer(tokenizer), chat(std::move(chat)),
      session(loaded.plan, executor, {.endTokens = std::move(endTokens)}), queueLimit(queueLimit) {}

Metrics ServeEngine::metrics() const {
  std::lock_guard<std::mutex> lock(mutex);
  return counts;
}

Ticket::~Ticket() {
  if (!engine)
    return;
  engine->waitForTurn(number);
  engine->passTurn();
}

std::variant<Ticket, ApiError> ServeEngine::admit() {
  std::lock_guard<std::mutex> lock(mutex);
  // One runs, queueLimit wait; the next is refused at once.
  const uint64_t ahead = nextTicket - serving;
  if (ahead > queueLimit) {
    ++counts.rejected;
    return refusal(429, "the server is busy: " + std::to_string(ahead) + " requests are ahead of this one; retry later",
                   "rate_limit_exceeded", "rate_limit_error");
  }
  ++counts.waiting;
  return Ticket(this, nextTicket++);
}

void ServeEngine::waitForTurn(uint64_t ticket) {
  std::unique_lock<std::mutex> lock(mutex);
  turnChanged.wait(lock, [&] { return serving == ticket; });
  --counts.waiting;
  counts.busy = true;
}

void ServeEngine::passTurn() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    ++serving;
    counts.busy = false;
  }
  turnChanged.notify_all();
}

std::variant<Prepared, ApiError> ServeEngine::prepare(ApiRequest request) const {
  std::vector<int32_t> ids;
  if (request.endpoint == Endpoint::ChatCompletions) {
    if (!chat)
      return refusal(400, "the model has no chat template: use /v1/completions");
    auto text = chat->render(request.messages, {.addGenerationPrompt = true}, tokenizer.config());
    if (!text)
      return refusal(400, "the chat template: " + text.status().message());
    auto encoded = tokenizer.encode(*text, {.addSpecialTokens = false});
    if (!encoded)
      return refusal(400, "the conversation: " + encoded.status().message());
    ids = std::move(*encoded);
  } else {
    auto encoded = tokenizer.encode(request.prompt);
    if (!encoded)
      return refusal(400, "'prompt': " + encoded.status().message());
    ids = std::move(*encoded);
  }
  if (ids.empty())
    return refusal(400, "the prompt is empty");
  if (int64_t(ids.size()) >= context())
    return refusal(400,
                   "the prompt has " + std::to_string(ids.size()) + " tokens; the plan's context holds " +
                       std::to_string(context()) + " positions, one of them for the reply",
                   "context_length_exceeded");
  return Prepared{std::move(request), std::move(ids)};
}

std::variant<Completion, ApiError> ServeEngine::run(Ticket ticket, const Prepared &prepared,
                                                    const std::function<bool(const std::string &)> &onText) {
  waitForTurn(ticket.number);
  ticket.engine = nullptr; // Its turn came: passed on below, however this ends.
  struct PassOn {
    ServeEngine &engine;
    ~PassOn() { engine.passTurn(); }
  } passOn{*this};
  auto result = stopping ? std::variant<Completion, ApiError>(refusal(
                               503, "the server is stopping", {}, "server_error"))
                         : generate(prepared, onText);
  if (auto *c = std::get_if<Completion>(&result); c && stopping && c->cancelled && !c->leftByClient)
    result = refusal(503, "the server stopped during this request", {}, "server_error");
  std::lock_guard<std::mutex> lock(mutex);
  if (auto *c = std::get_if<Completion>(&result)) {
    ++counts.requests;
    counts.cancelled += c->cancelled;
    counts.promptTokens += uint64_t(c->promptTokens);
    counts.cachedTokens += uint64_t(c->cachedTokens);
    counts.completionTokens += uint64_t(c->completionTokens);
    counts.firstTokenSeconds += c->firstTokenSeconds;
  } else {
    ++counts.failed;
  }
  return result;
}

std::variant<Completion, ApiError> ServeEngine::generate(const Prepared &prepared,
                                                         const std::function<bool(const std::string &)> &onText) {
  const ApiRequest &request = prepared.request;
  const std::vector<int32_t> &ids = prepared.ids;
  session.setSampling(request.sampling);
  TextStream stream(tokenizer, request.stop);
  Completion c;
  bool gone = false;
  Status failure;
  // After every launch, with what it made (often nothing): the caller's
  // chance to say that its client has gone.
  auto emit = [&](const std::string &text) {
    if (gone)
      return;
    c.text += text;
    if (onText && !onText(text))
      gone = true;
  };
  const int32_t room = context() - int32_t(ids.size());
  auto turn = session.turn(ids, std::min(request.maxTokens, room), [&](std::span<const int32_t> tokens) {
    auto text = stream.push(tokens);
    if (!text) {
      failure = text.status();
      return false;
    }
    emit(*text);
    return !stream.stopped() && !gone && !stopping;
  });
  if (!turn)
    return refusal(500, turn.status().message(), {}, "server_error");
  if (!failure.ok())
    return refusal(500, failure.message(), {}, "server_error");
  if (turn->stop == TurnResult::Stop::NonFinite)
    return refusal(500, "the model produced non-finite logits", {}, "server_error");
  if (!gone)
    if (auto rest = stream.finish(); rest)
      emit(*rest);
  const bool stopped = stream.stopped();
  c.cancelled = gone || (stopping && !stopped && turn->stop == TurnResult::Stop::Callback);
  c.leftByClient = gone;
  c.finishReason = stopped || turn->stop == TurnResult::Stop::EndToken ? "stop" : "length";
  c.promptTokens = int32_t(ids.size());
  c.cachedTokens = turn->reused;
  c.completionTokens = int32_t(turn->tokens.size());
  c.firstTokenSeconds = turn->firstTokenSeconds;
  std::lock_guard<std::mutex> lock(mutex);
  counts.decodeSeconds += turn->decodeSeconds;
  counts.decodeSteps += uint64_t(turn->decodeSteps);
  return c;
}
