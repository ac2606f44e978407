//===- ServeEngine.h - API requests run one at a time on one executor -*- C++ -*-===//
//
// One GPU runs one request at a time. Requests wait in arrival order (a
// ticket each); past `queueLimit` waiting, a request is refused at once
// (429) rather than queued without bound. The K/V cache keeps the last
// request's tokens: a request whose prompt begins with them (a chat's next
// turn) feeds only the rest (DecodeSession), reported as cached tokens.
// Text goes out as it is made (whole characters, stop strings held back),
// to a callback called after every launch (with what the launch made, often
// nothing); its returning false (the client left) ends the generation
// within one launch. Thread-safe: every HTTP handler thread calls
// run().
//
//===----------------------------------------------------------------------===//
#ifndef TI_SERVE_SERVEENGINE_H
#define TI_SERVE_SERVEENGINE_H

#include "ti/Runtime/DecodeSession.h"
#include "ti/Runtime/LoadedPlan.h"
#include "ti/Serve/ApiRequest.h"
#include "ti/Tokenizer/ChatTemplate.h"
#include "ti/Tokenizer/Tokenizer.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <variant>

namespace ti::serve {

struct Completion {
  std::string text;
  std::string finishReason; // "stop" (an end token or a stop string), "length"
  int32_t promptTokens = 0, completionTokens = 0, cachedTokens = 0;
  double firstTokenSeconds = 0;
  bool cancelled = false;    // ended early: the client left, or the server stopped
  bool leftByClient = false; // the caller's callback ended it
};

/// What /metrics reports, all since the server started.
struct Metrics {
  uint64_t requests = 0;       // answered with a completion (cancelled ones too)
  uint64_t rejected = 0;       // refused with 429: the queue was full
  uint64_t failed = 0;         // refused at run time (a prompt past the context, ...)
  uint64_t cancelled = 0;      // ended by a client that left
  uint64_t promptTokens = 0, cachedTokens = 0, completionTokens = 0;
  double firstTokenSeconds = 0; // summed over requests
  double decodeSeconds = 0;     // launches after the first token, summed
  uint64_t decodeSteps = 0;
  uint32_t waiting = 0;         // requests in the queue now
  bool busy = false;            // one is running now
};

/// Metrics as Prometheus text (exposition format 0.0.4).
std::string prometheusText(const Metrics &m);

/// A request ready to run: its tokens, checked against the plan's context.
struct Prepared {
  ApiRequest request;
  std::vector<int32_t> ids;
};

class ServeEngine;

/// A place in the queue. Its turn comes in arrival order; dropped unused,
/// it waits for its turn and passes it on at once.
class Ticket {
public:
  Ticket(Ticket &&other) noexcept : engine(other.engine), number(other.number) { other.engine = nullptr; }
  Ticket &operator=(Ticket &&) = delete;
  ~Ticket();

private:
  friend class ServeEngine;
  Ticket(ServeEngine *engine, uint64_t number) : engine(engine), number(number) {}
  ServeEngine *engine;
  uint64_t number;
};

class ServeEngine {
public:
  ServeEngine(const LoadedPlan &loaded, Executor &executor, const Tokenizer &tokenizer,
              std::optional<ChatTemplate> chat, std::vector<int32_t> endTokens, uint32_t queueLimit);

  /// The request's tokens (its chat rendered with the checkpoint's
  /// template), or 400: a chat without a template, an empty prompt, a
  /// prompt the plan's context cannot hold. Any thread, any time.
  std::variant<Prepared, ApiError> prepare(ApiRequest request) const;
  /// A place in the queue, or 429 at once when `queueLimit` wait already.
  std::variant<Ticket, ApiError> admit();
  /// Waits for the ticket's turn, generates (`onText` gets the text each
  /// launch made, possibly empty, and returns false to end the generation),
  /// hands the executor on. A completion, or 500 if the model's logits are not finite.
  std::variant<Completion, ApiError> run(Ticket ticket, const Prepared &prepared,
                                         const std::function<bool(const std::string &)> &onText);

  /// From now on the running generation ends within a launch and every
  /// request whose turn comes is refused (503): the server is stopping.
  void shutdown() { stopping = true; }

  Metrics metrics() const;
  const std::string &modelName() const { return loaded.plan.model.name; }
  int32_t context() const { return int32_t(loaded.plan.model.maxContext); }

private:
  friend class Ticket;
  void waitForTurn(uint64_t ticket);
  void passTurn();
  std::variant<Completion, ApiError> generate(const Prepared &prepared,
                                              const std::function<bool(const std::string &)> &onText);

  const LoadedPlan &loaded;
  const Tokenizer &tokenizer;
  std::optional<ChatTemplate> chat;
  DecodeSession session;
  uint32_t queueLimit;
  std::atomic<bool> stopping{false};

  mutable std::mutex mutex;
  std::condition_variable turnChanged;
  uint64_t nextTicket = 0, serving = 0;
  Metrics counts;
};

} // namespace ti::serve

#endif // TI_SERVE_SERVEENGINE_H
