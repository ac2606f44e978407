//===- HttpServe.cpp - tirun serve: the OpenAI HTTP API --------------------===//
//
//   tirun serve plan.fb weights.bin [--host 127.0.0.1] [--port 8080] [--api-key KEY]
//
// POST /v1/chat/completions and /v1/completions (whole, or streamed as
// server-sent events), GET /v1/models, /health and /metrics (docs/serving.md).
// cpp-httplib (Debian's libcpp-httplib-dev) runs the connections, each on a
// thread of its pool; the ServeEngine runs their requests on the executor one
// at a time, in arrival order. A handler reads and checks the request and
// its tokens first (400, 401, 404 and 429 go out before any generation), then
// waits for its turn. A streamed reply's events are written as its text is
// made; a client that leaves (a write fails, or PeerWatch finds its
// connection closed after a launch) ends the generation within one launch,
// whole replies included.
//
//===----------------------------------------------------------------------===//
#include "HttpServe.h"

#include "Chat.h"
#include "CommandLine.h"
#include "PeerWatch.h"
#include "TextSupport.h"

#include "ti/Backends/Backends.h"
#include "ti/Runtime/LoadedPlan.h"
#include "ti/Serve/ServeEngine.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <pthread.h>
#include <thread>

namespace ti::tirun {

namespace {

using nlohmann::json;
using serve::ApiError;
using serve::ApiRequest;
using serve::Completion;
using serve::Endpoint;

std::string dump(const json &j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void sendError(httplib::Response &res, const ApiError &e) {
  res.status = e.status;
  res.set_content(e.body(), "application/json");
}

int64_t now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

json usage(const Completion &c) {
  return {{"prompt_tokens", c.promptTokens},
          {"completion_tokens", c.completionTokens},
          {"total_tokens", c.promptTokens + c.completionTokens},
          {"prompt_tokens_details", {{"cached_tokens", c.cachedTokens}}}};
}

/// The parts of a reply that both endpoints' objects share.
struct Reply {
  Endpoint endpoint;
  std::string id, model;
  int64_t created;

  json whole(const Completion &c) const {
    json choice = {{"index", 0}, {"finish_reason", c.finishReason}, {"logprobs", nullptr}};
    if (endpoint == Endpoint::ChatCompletions)
      choice["message"] = {{"role", "assistant"}, {"content", c.text}};
    else
      choice["text"] = c.text;
    return {{"id", id},
            {"object", endpoint == Endpoint::ChatCompletions ? "chat.completion" : "text_completion"},
            {"created", created},
            {"model", model},
            {"choices", json::array({choice})},
            {"usage", usage(c)}};
  }
  bool includeUsage = false; // each chunk says "usage": null, as OpenAI's do

  /// One event's data: a piece of text, the role first, or the end.
  json chunk(const std::string *text, const char *finish, bool role = false) const {
    json choice = {{"index", 0}, {"finish_reason", finish ? json(finish) : json(nullptr)}, {"logprobs", nullptr}};
    if (endpoint == Endpoint::ChatCompletions) {
      json delta = json::object();
      if (role)
        delta["role"] = "assistant";
      if (text)
        delta["content"] = *text;
      choice["delta"] = delta;
    } else {
      choice["text"] = text ? *text : "";
    }
    json out = {{"id", id},
                {"object", endpoint == Endpoint::ChatCompletions ? "chat.completion.chunk" : "text_completion"},
                {"created", created},
                {"model", model},
                {"choices", json::array({choice})}};
    if (includeUsage)
      out["usage"] = nullptr;
    return out;
  }
};

/// SIGINT and SIGTERM stop the server from a thread of their own (stop() is
/// not for a signal handler). Made before any other thread (the CPU
/// executor's, httplib's), so that every thread inherits the signals
/// blocked and only this one takes them. The first signal ends the running
/// generation within a launch, refuses the waiting requests (503) and stops
/// the server once it listens (a signal before then would otherwise be
/// lost: httplib's stop() does nothing to a server not yet running); a
/// second one leaves at once.
class Stopper {
public:
  explicit Stopper(httplib::Server &server) {
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    thread = std::thread([this, &server] {
      int signal = 0;
      sigwait(&signals, &signal);
      if (finished)
        return; // Woken by the destructor: no signal came.
      stopping = true;
      if (serve::ServeEngine *e = engine.load())
        e->shutdown();
      while (!finished && !server.is_running())
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (!finished)
        server.stop();
      sigwait(&signals, &signal);
      if (!finished)
        _exit(128 + signal); // A second signal: leave now.
    });
  }
  ~Stopper() {
    finished = true;
    pthread_kill(thread.native_handle(), SIGTERM); // Wake it wherever it waits.
    thread.join();
  }
  bool requested() const { return stopping; }
  void attach(serve::ServeEngine &e) { engine = &e; }

private:
  sigset_t signals;
  std::atomic<bool> stopping{false}, finished{false};
  std::atomic<serve::ServeEngine *> engine{nullptr};
  std::thread thread;
};

/// Whether two strings are equal, in a time that does not depend on where
/// they first differ (an API key must not be guessed byte by byte).
bool sameKey(const std::string &a, const std::string &b) {
  unsigned char diff = a.size() != b.size();
  for (size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

bool sendEvent(httplib::DataSink &sink, const std::string &data) {
  const std::string event = "data: " + data + "\n\n";
  return sink.write(event.data(), event.size());
}

} // namespace

int runServe(int argc, char **argv) {
  CLI::App app{"tirun serve: the OpenAI HTTP API (chat and text completions) on one GPU"};
  std::string planPath, weightsPath, backend = "auto", tokenizerPath, host = "127.0.0.1", apiKey, modelName;
  int port = 8080;
  unsigned threads = 0;
  uint32_t queue = 16;
  serve::ApiLimits limits;
  int32_t maxTokens = 0;
  bool verifyWeights = false;
  app.add_option("plan", planPath, "the plan (plan.fb, from tic)")->required();
  app.add_option("weights", weightsPath, "the packed weights (weights.bin, from tipack)")->required();
  app.add_option("--host", host, "the address to listen on (default 127.0.0.1: this machine only)");
  app.add_option("--port", port, "the port (default 8080; 0: any free one, printed)")->check(CLI::Range(0, 65535));
  app.add_option("--api-key", apiKey,
                 "require 'Authorization: Bearer KEY' on every request but /health (default: none; or "
                 "the environment's TIRUN_API_KEY)");
  app.add_option("--model-name", modelName, "the model's name in the API (default: the plan's model name)");
  app.add_option("--queue", queue, "requests that may wait while one runs; the next gets 429 at once (default 16)")
      ->check(CLI::Range(0, 4096));
  app.add_option("--max-tokens", maxTokens,
                 "max_tokens at most, and a chat's default (default: the plan's context)")
      ->check(CLI::Range(1, 1 << 30));
  app.add_option("--max-body-bytes", limits.maxBodyBytes, "a request body's size at most (default 4 MiB)")
      ->check(CLI::Range(uint64_t(1024), uint64_t(1) << 30));
  app.add_option("--backend", backend, "cuda, cpu, or auto (the GPU when there is one)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  app.add_option("--threads", threads, "CPU backend: threads (default: all; at most 1024)")
      ->check(CLI::Range(0u, 1024u));
  app.add_option("--tokenizer", tokenizerPath, "a tokenizer.json or its directory (default: the one in weights.bin)");
  addVerifyWeightsOption(app, verifyWeights);
  if (auto exit = parseCommandLine(app, argc, argv))
    return *exit;
  httplib::Server server;
  Stopper stopper(server);
  if (apiKey.empty())
    if (const char *env = std::getenv("TIRUN_API_KEY"))
      apiKey = env;

  auto loaded = loadPlan(planPath, weightsPath, verifyWeights);
  if (!loaded)
    return fail(loaded.status().message());
  auto tokenizer = loadTokenizer(tokenizerPath, (*loaded)->weights.get());
  if (!tokenizer)
    return fail(tokenizer.status().message());
  std::optional<ChatTemplate> chat;
  if (auto c = ChatTemplate::of(*tokenizer))
    chat = std::move(*c);
  const SamplingOptions defaults = defaultSampling((*loaded)->weights.get());
  if (Status s = defaults.check(); !s.ok())
    return fail("the weights' generation_config.json: " + s.message());
  BackendOptions backendOptions;
  backendOptions.choice = backend;
  backendOptions.threads = threads;
  auto executor = openExecutor(*loaded, backendOptions);
  if (!executor)
    return fail(executor.status().message());
  const int32_t context = int32_t((*loaded)->plan.model.maxContext);
  limits.maxTokens = maxTokens ? std::min(maxTokens, context) : context;
  if (modelName.empty())
    modelName = (*loaded)->plan.model.name;

  const std::vector<int32_t> ends = chatEndTokens(*tokenizer, (*loaded)->weights.get());
  serve::ServeEngine engine(**loaded, **executor, *tokenizer, std::move(chat), ends, queue);
  stopper.attach(engine);
  if (stopper.requested())
    engine.shutdown(); // A signal during the load.
  std::atomic<uint64_t> ids{0};
  const int64_t started = now();

  // httplib holds a thread per connection, idle keep-alive ones and slow
  // senders included: the queue's, the one running, and plenty more to
  // answer health checks and refusals while those wait. Idle connections
  // close after 2 s, slow bodies after 10 s (found in review: five silent
  // sockets held a pool of five for 35 s).
  const size_t pool = queue + 1 + 32;
  server.new_task_queue = [pool] { return new httplib::ThreadPool(pool); };
  // A streamed reply is many small writes: with Nagle's algorithm each one
  // waited for the client's delayed ACK, so text arrived in bursts (on the
  // H200, 5 ms a token at the client for 0.8 at the server).
  server.set_tcp_nodelay(true);
  server.set_payload_max_length(limits.maxBodyBytes);
  server.set_keep_alive_timeout(2);
  server.set_read_timeout(10, 0);
  server.set_write_timeout(30, 0);
  // Ranges are for files: every reply here is whole. httplib would cut any
  // reply, an error object too, to a Range header's bytes (found in review:
  // a 206 of 21 bytes of JSON), so the ranges it parsed are dropped before
  // routing: a server may ignore Range (RFC 9110, 14.2). The request object
  // is the server's own, handed to this hook as const.
  server.set_pre_routing_handler([](const httplib::Request &req, httplib::Response &) {
    const_cast<httplib::Request &>(req).ranges.clear();
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server.set_exception_handler([](const httplib::Request &, httplib::Response &res, std::exception_ptr) {
    sendError(res, {500, "server_error", "the server failed on this request", {}, {}});
  });

  auto authorized = [&](const httplib::Request &req, httplib::Response &res) {
    if (apiKey.empty() || sameKey(req.get_header_value("Authorization"), "Bearer " + apiKey))
      return true;
    sendError(res, {401, "invalid_request_error",
                    req.has_header("Authorization") ? "the API key is not the server's" : "the request has no API key "
                                                                                         "(Authorization: Bearer KEY)",
                    {}, "invalid_api_key"});
    return false;
  };

  server.Get("/health", [](const httplib::Request &, httplib::Response &res) {
    res.set_content(R"({"status":"ok"})", "application/json");
  });
  server.Get("/metrics", [&](const httplib::Request &req, httplib::Response &res) {
    if (authorized(req, res))
      res.set_content(serve::prometheusText(engine.metrics()), "text/plain; version=0.0.4");
  });
  server.Get("/v1/models", [&](const httplib::Request &req, httplib::Response &res) {
    if (!authorized(req, res))
      return;
    json model = {{"id", modelName}, {"object", "model"}, {"created", started}, {"owned_by", "tileinfer"},
                  {"context_length", context}};
    res.set_content(dump({{"object", "list"}, {"data", json::array({model})}}), "application/json");
  });

  auto completions = [&](Endpoint endpoint) {
    return [&, endpoint](const httplib::Request &req, httplib::Response &res) {
      if (!authorized(req, res))
        return;
      auto parsed = serve::parseApiRequest(endpoint, req.body, modelName, limits, defaults);
      if (auto *e = std::get_if<ApiError>(&parsed))
        return sendError(res, *e);
      auto prepared = engine.prepare(std::move(std::get<ApiRequest>(parsed)));
      if (auto *e = std::get_if<ApiError>(&prepared))
        return sendError(res, *e);
      auto admitted = engine.admit();
      if (auto *e = std::get_if<ApiError>(&admitted)) {
        res.set_header("Connection", "close"); // A busy server keeps no idle connection.
        return sendError(res, *e);
      }
      auto shared = std::make_shared<serve::Prepared>(std::move(std::get<serve::Prepared>(prepared)));
      auto ticket = std::make_shared<serve::Ticket>(std::move(std::get<serve::Ticket>(admitted)));
      Reply reply{endpoint,
                  (endpoint == Endpoint::ChatCompletions ? "chatcmpl-" : "cmpl-") + std::to_string(started) + "-" +
                      std::to_string(ids++),
                  modelName, now(), shared->request.includeUsage};
      const PeerWatch peer(req);
      if (!shared->request.stream) {
        auto result = engine.run(std::move(*ticket), *shared, [&peer](const std::string &) { return !peer.gone(); });
        if (auto *e = std::get_if<ApiError>(&result))
          return sendError(res, *e);
        res.set_content(dump(reply.whole(std::get<Completion>(result))), "application/json");
        return;
      }
      res.set_header("Cache-Control", "no-cache");
      res.set_chunked_content_provider(
          "text/event-stream", [&engine, shared, ticket, reply, peer](size_t, httplib::DataSink &sink) {
            // A chat's first event names the role.
            bool open = shared->request.endpoint != Endpoint::ChatCompletions ||
                        sendEvent(sink, dump(reply.chunk(nullptr, nullptr, true)));
            if (!open)
              return false; // Gone already: the ticket passes its turn on unused.
            std::variant<Completion, ApiError> result;
            try {
              result = engine.run(std::move(*ticket), *shared, [&](const std::string &text) {
                if (!text.empty())
                  open = open && sendEvent(sink, dump(reply.chunk(&text, nullptr)));
                open = open && !peer.gone();
                return open;
              });
            } catch (const std::exception &) { // httplib does not catch in a provider
              result = ApiError{500, "server_error", "the server failed on this request", {}, {}};
            }
            if (!open)
              return false; // The client left.
            if (auto *e = std::get_if<ApiError>(&result)) {
              sendEvent(sink, e->body()); // After the headers, the error is an event.
            } else {
              const Completion &c = std::get<Completion>(result);
              sendEvent(sink, dump(reply.chunk(nullptr, c.finishReason.c_str())));
              if (shared->request.includeUsage) {
                json last = reply.chunk(nullptr, nullptr);
                last["choices"] = json::array();
                last["usage"] = usage(c);
                sendEvent(sink, dump(last));
              }
            }
            sendEvent(sink, "[DONE]");
            sink.done();
            return true;
          });
    };
  };
  server.Post("/v1/chat/completions", completions(Endpoint::ChatCompletions));
  server.Post("/v1/completions", completions(Endpoint::Completions));
  // Everything else, and httplib's own refusals (413 for a body past the
  // limit, 400 for a malformed request), as OpenAI error objects.
  server.set_error_handler([&](const httplib::Request &req, httplib::Response &res) {
    if (!res.body.empty())
      return;
    const int status = res.status;
    std::string message = status == 404   ? "no such endpoint: " + req.method + " " + req.path
                          : status == 413 ? "the body is larger than " + std::to_string(limits.maxBodyBytes) + " bytes"
                                          : "the request was refused (HTTP " + std::to_string(status) + ")";
    sendError(res, {status, status >= 500 ? "server_error" : "invalid_request_error", message, {}, {}});
  });

  const int bound = port == 0 ? server.bind_to_any_port(host) : server.bind_to_port(host, port) ? port : -1;
  if (bound < 0)
    return fail("cannot listen on " + host + ":" + std::to_string(port) + " (in use, or not an address here)");
  std::fprintf(stderr, "tirun serve: %s on %s, %d positions; listening on http://%s:%d/v1%s\n", modelName.c_str(),
               (*executor)->backend(), context, host.c_str(), bound, apiKey.empty() ? "" : " (API key required)");
  std::fflush(stderr);
  if (!stopper.requested())
    server.listen_after_bind();
  std::fprintf(stderr, "tirun serve: stopped\n");
  return 0;
}

} // namespace ti::tirun
