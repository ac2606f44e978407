"""tirun serve against its promises (issue #15), on the CPU backend: the
endpoints, the same text as tirun --prompt for the same seed (by raw HTTP and
by the official openai npm client), prefix reuse, every error status, the
queue's 429, a client that leaves, and a bounded load test. Prints one line
per check for FileCheck; any failure exits 1 with the reason.

  serve_check.py TIRUN PLAN WEIGHTS WORKDIR [NODE NODE_MODULES]

TI_SERVE_BACKEND (default cpu) runs it on another backend: the lent GPU's
scripts/device/serve-check.sh gives cuda.
"""
import atexit
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

tirun, plan, weights, work = sys.argv[1:5]
node, node_modules = (sys.argv[5], sys.argv[6]) if len(sys.argv) > 6 else (None, None)
if node == "none":  # serve-check.sh on a machine without Node.js (the lent GPU's)
    node = None
BACKEND = os.environ.get("TI_SERVE_BACKEND", "cpu")
MODEL = None  # the server's, from /v1/models


servers = []  # started and not yet stopped


@atexit.register
def kill_servers():
    """A failure (die, or an exception) must not leave a server running."""
    for server in servers:
        server.proc.kill()
        server.proc.wait()


def die(message):
    print(f"serve_check: FAILED: {message}", flush=True)
    sys.exit(1)


class Server:
    """tirun serve on a free port, stopped with SIGTERM at the end."""

    def __init__(self, *extra):
        self.log = open(os.path.join(work, f"serve-{len(os.listdir(work))}.log"), "w+")
        threads = ["--threads", "2"] if BACKEND == "cpu" else []
        # In the sanitizer build, AddressSanitizer's quarantine holds freed
        # memory (256 MB by default) and would read as growth; a small one
        # keeps the memory check about leaks, and LeakSanitizer checks the
        # rest at exit (stop() wants status 0). Other builds ignore it.
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS", ""), "quarantine_size_mb=4"]))
        self.proc = subprocess.Popen([tirun, "serve", plan, weights, "--backend", BACKEND, *threads,
                                      "--port", "0", *extra], stderr=self.log, stdout=self.log, env=env)
        servers.append(self)
        deadline = time.time() + 60
        while time.time() < deadline:
            self.log.seek(0)
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/v1", self.log.read())
            if m:
                self.port = int(m.group(1))
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.log.seek(0)
        die(f"tirun serve did not start: {self.log.read()}")

    def request(self, method, path, body=None, headers=None, timeout=60):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        data = body if isinstance(body, (bytes, str)) or body is None else json.dumps(body)
        conn.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
        r = conn.getresponse()
        text = r.read().decode("utf-8")
        conn.close()
        return r.status, text

    def post(self, path, body, **kw):
        status, text = self.request("POST", path, body, **kw)
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def rss_kb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

    def metrics(self):
        status, text = self.request("GET", "/metrics")
        assert status == 200, text
        return {m.group(1): float(m.group(2)) for m in re.finditer(r"^(tileinfer_\w+) (\S+)$", text, re.M)}

    def stop(self):
        servers.remove(self)
        self.proc.terminate()
        try:
            code = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            die("tirun serve did not stop on SIGTERM within 30 s")
        self.log.seek(0)
        text = self.log.read()
        if "tirun serve: stopped" not in text or code != 0:
            die(f"tirun serve ended without stopping cleanly (status {code}): {text[-2000:]}")


def tirun_text(prompt, n, seed, temperature, chat):
    """What tirun --prompt prints for the same request (its last newline is its own)."""
    args = [tirun, plan, weights, "--backend", BACKEND, "--prompt", prompt, "-n", str(n), "--seed", str(seed),
            "--temperature", str(temperature)] + (["--chat"] if chat else [])
    out = subprocess.run(args, capture_output=True, timeout=120)
    if out.returncode != 0:
        die(f"tirun --prompt failed: {out.stderr.decode()}")
    assert out.stdout.endswith(b"\n")
    return out.stdout[:-1].decode("utf-8")


def expect(cond, message):
    if not cond:
        die(message)


def error_of(status, body, want_status, want_fragment):
    expect(status == want_status, f"wanted {want_status}, got {status}: {body}")
    expect(isinstance(body, dict) and "error" in body and want_fragment in body["error"]["message"],
           f"wanted an error object saying '{want_fragment}': {body}")
    print(f"status {status}: {body['error']['message']}", flush=True)


def wait_for_metrics(server, ready, failure, pause=0.05):
    """Polls the server's /metrics until ready(metrics) holds; dies with `failure` after 30 s."""
    deadline = time.time() + 30
    while not ready(server.metrics()):
        expect(time.time() < deadline, failure)
        time.sleep(pause)


def expect_cancelled(before, who, what):
    """The server's cancelled count rises within 30 s of `before`, short of the 400 tokens asked for."""
    key = "tileinfer_requests_cancelled_total"
    wait_for_metrics(s, lambda m: m[key] > before[key], f"{who} did not cancel its generation within 30 s")
    m = s.metrics()
    expect(m["tileinfer_generated_tokens_total"] - before["tileinfer_generated_tokens_total"] < 400,
           f"{what} ran to its end")


def stream_events(server, path, body, leave_after=None):
    """The data lines of a streamed reply; with leave_after, the socket is closed after that many."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=60)
    data = json.dumps(body).encode()
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
    buf, events = b"", []
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        buf += chunk
        events = re.findall(rb"data: (.*?)\n\n", buf)
        if leave_after is not None and len(events) >= leave_after:
            sock.close()
            return events
        if events and events[-1] == b"[DONE]":
            break
    sock.close()
    return events


# --- One server for the endpoints, the texts and the errors -------------------
s = Server("--max-body-bytes", "65536", "--queue", "16")
status, text = s.request("GET", "/health")
expect(status == 200 and json.loads(text)["status"] == "ok", f"/health: {status} {text}")
status, text = s.request("GET", "/v1/models")
expect(status == 200 and json.loads(text)["data"][0]["object"] == "model", f"/v1/models: {text}")
MODEL = json.loads(text)["data"][0]["id"]
CONTEXT = json.loads(text)["data"][0]["context_length"]
print("health and models: ok", flush=True)

requests = {
    "chat_sampled": {"chat": True, "text": "Tell me a story", "max_tokens": 24, "temperature": 0.9, "seed": 11},
    "chat_greedy": {"chat": True, "text": "Hello there", "max_tokens": 16, "temperature": 0, "seed": 0},
    "text_sampled": {"chat": False, "text": "Once upon a time", "max_tokens": 20, "temperature": 0.8, "seed": 5},
}
expected = {name: tirun_text(r["text"], r["max_tokens"], r["seed"], r["temperature"], r["chat"])
            for name, r in requests.items()}
for name, r in requests.items():
    body = {"model": MODEL, "max_tokens": r["max_tokens"], "temperature": r["temperature"], "seed": r["seed"]}
    if r["chat"]:
        body["messages"] = [{"role": "user", "content": r["text"]}]
        path = "/v1/chat/completions"
    else:
        body["prompt"] = r["text"]
        path = "/v1/completions"
    status, reply = s.post(path, body)
    expect(status == 200, f"{name}: {status} {reply}")
    choice = reply["choices"][0]
    got = choice["message"]["content"] if r["chat"] else choice["text"]
    expect(got == expected[name], f"{name}: the server's text {got!r} is not tirun --prompt's {expected[name]!r}")
    events = stream_events(s, path, {**body, "stream": True})
    expect(events[-1] == b"[DONE]", f"{name}: the stream did not end with [DONE]")
    chunks = [json.loads(e) for e in events[:-1]]
    streamed = "".join((c["choices"][0]["delta"].get("content") or "") if r["chat"] else c["choices"][0]["text"]
                       for c in chunks if c["choices"])
    expect(streamed == got, f"{name}: streamed {streamed!r}, whole {got!r}")
    expect(chunks[-1]["choices"][0]["finish_reason"] == choice["finish_reason"], f"{name}: finish reasons differ")
    u = reply["usage"]
    expect(u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"], f"{name}: usage {u}")
    print(f"{name}: the text of tirun --prompt, whole and streamed ({len(chunks)} events)", flush=True)

# The next turn of a conversation feeds only what the cache lacks.
first = [{"role": "user", "content": "Hello there"}]
status, a = s.post("/v1/chat/completions", {"model": MODEL, "messages": first, "max_tokens": 8, "seed": 1})
expect(status == 200, f"turn 1: {a}")
turn2 = first + [{"role": "assistant", "content": a["choices"][0]["message"]["content"]},
                 {"role": "user", "content": "And then?"}]
status, b = s.post("/v1/chat/completions", {"model": MODEL, "messages": turn2, "max_tokens": 8, "seed": 1})
expect(status == 200, f"turn 2: {b}")
cached = b["usage"]["prompt_tokens_details"]["cached_tokens"]
expect(cached >= a["usage"]["prompt_tokens"], f"turn 2 reused {cached} tokens; turn 1's prompt had "
       f"{a['usage']['prompt_tokens']}")
print(f"prefix reuse: turn 2 reused {cached} of {b['usage']['prompt_tokens']} prompt tokens", flush=True)

# The official client, when it is installed.
if node and node_modules and os.path.isdir(os.path.join(node_modules, "openai")):
    out = subprocess.run([node, os.path.join(os.path.dirname(__file__), "openai_client.cjs"), node_modules,
                          f"http://127.0.0.1:{s.port}/v1", MODEL, "unused", json.dumps(requests)],
                         capture_output=True, timeout=300)
    expect(out.returncode == 0, f"the openai client failed: {out.stderr.decode()}")
    got = json.loads(out.stdout)
    for name in requests:
        expect(got[name]["whole"] == expected[name] and got[name]["streamed"] == expected[name],
               f"openai client, {name}: {got[name]} against {expected[name]!r}")
    expect(got["chat_sampled"]["streamUsage"]["completion_tokens"] == got["chat_sampled"]["usage"]["completion_tokens"],
           f"openai client: the streamed usage differs: {got['chat_sampled']}")
    expect(got["error"] == {"status": 404, "code": "model_not_found"}, f"openai client's error: {got['error']}")
    print("openai client: the same texts, whole and streamed; an unknown model raises 404 model_not_found",
          flush=True)
    # The timed chat the lent GPU's serve-check.sh runs, through the client.
    latency = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "serve_latency.cjs")
    out = subprocess.run([node, latency, node_modules, str(s.port), "--turns", "2", "--max-tokens", "8"],
                         capture_output=True, timeout=300)
    expect(out.returncode == 0, f"serve_latency.cjs failed: {out.stderr.decode()}")
    turns = re.findall(r"^turn \d: (\d+) prompt tokens, (\d+) cached; first text after [\d.]+ ms; \d+ tokens, "
                       r"[\d.]+ ms per token after the first \(openai client\)$", out.stdout.decode(), re.M)
    expect(len(turns) == 2, f"serve_latency.cjs printed {out.stdout.decode()!r}")
    (prompt1, _), (prompt2, cached2) = [(int(p), int(c)) for p, c in turns]
    expect(cached2 >= prompt1, f"serve_latency.cjs: turn 2 reused {cached2} tokens; turn 1's prompt had {prompt1}")
    print(f"openai client, a streamed chat of 2 turns: timed; turn 2 reused {cached2} of {prompt2} prompt tokens",
          flush=True)
else:
    print("openai client: the same texts, whole and streamed; an unknown model raises 404 model_not_found "
          "(NOT RUN: no node or no openai package)", flush=True)
    print("openai client, a streamed chat of 2 turns: timed (NOT RUN: no node or no openai package)", flush=True)

# Every error status, each an OpenAI error object.
chat = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
error_of(*s.post("/v1/chat/completions", "{not json"), 400, "not valid JSON")
error_of(*s.post("/v1/chat/completions", {**chat, "temperature": "hot"}), 400, "'temperature' must be a number")
error_of(*s.post("/v1/chat/completions", {**chat, "n": 2}), 400, "'n' is not supported")
error_of(*s.post("/v1/chat/completions", {**chat, "max_tokens": 0}), 400, "'max_tokens' must be a whole number")
error_of(*s.post("/v1/chat/completions", {**chat, "messages": [{"role": "robot", "content": "x"}]}), 400,
         "has role 'robot'")
error_of(*s.post("/v1/completions", {"model": MODEL, "prompt": "word " * (CONTEXT + 10)}), 400,
         "the plan's context holds")
error_of(*s.post("/v1/chat/completions", {**chat, "model": "gpt-4"}), 404, "does not exist")
error_of(*s.post("/v1/nothing", chat), 404, "no such endpoint")
error_of(*s.post("/v1/chat/completions", {**chat, "messages": [{"role": "user", "content": [{"type": 5}]}]}),
         400, "must be a string or a list of text parts")
status, body = s.post("/v1/chat/completions", chat, headers={"Range": "bytes=0-20"})
expect(status == 200 and isinstance(body, dict) and body["object"] == "chat.completion",
       f"a Range header cut the reply: {status} {body}")
print("a Range header: ignored, the reply whole", flush=True)
error_of(*s.post("/v1/completions", {"model": MODEL, "prompt": "x" * 70000}), 413, "larger than 65536 bytes")

# Idle connections (a request line and no more) do not hold the threads that
# answer others.
idle = [socket.create_connection(("127.0.0.1", s.port), timeout=30) for _ in range(8)]
for sock in idle:
    sock.sendall(b"GET /health HTTP/1.1\r\n")
started = time.time()
status, _ = s.request("GET", "/health", timeout=30)
expect(status == 200 and time.time() - started < 2, f"/health beside 8 idle connections took "
       f"{time.time() - started:.1f} s")
for sock in idle:
    sock.close()
print("8 idle connections: /health answered at once", flush=True)

# A client that leaves mid-stream ends its generation within a launch.
before = s.metrics()
events = stream_events(s, "/v1/completions", {"model": MODEL, "prompt": "Once", "max_tokens": 400,
                                              "stream": True}, leave_after=1)
expect_cancelled(before, "a client that left", "the cancelled generation")
print("a client that leaves: its generation cancelled", flush=True)

# So does one that asked for a whole reply and closed its connection at once:
# nothing is written until the end, so the server looks after each launch.
before = s.metrics()
sock = socket.create_connection(("127.0.0.1", s.port), timeout=60)
data = json.dumps({"model": MODEL, "prompt": "Once", "max_tokens": 400}).encode()
sock.sendall(f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
sock.close()
expect_cancelled(before, "a client that left a whole reply", "the cancelled whole reply")
print("a client that leaves a whole reply: its generation cancelled", flush=True)

# Load: 200 sequential requests, then 50 at once; each answered once, with a
# completion or 429; the server's memory flat.
ids = set()
for i in range(200):
    if i == 50:
        rss0 = s.rss_kb()  # after a warm-up: the allocators' pools filled
    status, r = s.post("/v1/completions", {"model": MODEL, "prompt": f"Number {i}", "max_tokens": 2}, timeout=30)
    expect(status == 200, f"sequential request {i}: {status} {r}")
    ids.add(r["id"])
expect(len(ids) == 200, "sequential requests: ids repeat")
results = [None] * 50


def one(i):
    try:
        results[i] = s.post("/v1/completions", {"model": MODEL, "prompt": f"Thread {i}", "max_tokens": 3},
                            timeout=60)
    except Exception as e:  # a lost request
        results[i] = (None, repr(e))


threads = [threading.Thread(target=one, args=(i,)) for i in range(50)]
for t in threads:
    t.start()
for t in threads:
    t.join(timeout=120)
ok = [r for r in results if r and r[0] == 200]
busy = [r for r in results if r and r[0] == 429]
expect(len(ok) + len(busy) == 50, f"concurrent requests lost or failed: {[r for r in results if not r or r[0] not in (200, 429)]}")
new_ids = {r[1]["id"] for r in ok}
expect(len(new_ids) == len(ok) and not (new_ids & ids), "concurrent requests: an id answered twice")
rss1 = s.rss_kb()
expect(rss1 - rss0 < 32 * 1024, f"memory grew from {rss0} KB to {rss1} KB over 200 requests")
print(f"(memory: {rss0} KB after 50 requests, {rss1} KB after 250)", file=sys.stderr, flush=True)
m = s.metrics()
expect(m["tileinfer_queue_length"] == 0 and m["tileinfer_busy"] == 0, f"the queue did not drain: {m}")
print(f"load: 200 sequential answered; 50 at once: each answered once ({len(ok)} completions, "
      f"{len(busy)} refused with 429); memory flat", flush=True)
s.stop()

# The queue's bound: one runs, none waits, the rest get 429 at once.
q = Server("--queue", "0")
long = {"model": MODEL, "prompt": "Once", "max_tokens": 300}
answers = [None] * 4


def ask(i):
    answers[i] = q.post("/v1/completions", long, timeout=120)


threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
codes = sorted(a[0] for a in answers)
expect(codes.count(200) >= 1 and codes.count(429) >= 1 and set(codes) <= {200, 429}, f"--queue 0: {codes}")
error_of(*[a for a in answers if a[0] == 429][0], 429, "the server is busy")
q.stop()

# SIGTERM with a generation running and two waiting: the running one ends
# within a launch, the waiting ones are refused (503), the server leaves.
# The signal goes once the server says so (/metrics: busy, two waiting), not
# after a guessed pause: on a GPU the first generation can end in less.
t = Server()
long = {"model": MODEL, "prompt": "Once", "max_tokens": 400}
answers = [None] * 3
threads = [threading.Thread(target=lambda i=i: answers.__setitem__(i, t.post("/v1/completions", long, timeout=60)))
           for i in range(3)]

threads[0].start()
wait_for_metrics(t, lambda m: m["tileinfer_busy"] == 1, "the server never had a request running", 0.002)
for th in threads[1:]:
    th.start()
wait_for_metrics(t, lambda m: m["tileinfer_queue_length"] == 2, "the server never had two requests waiting", 0.002)
started = time.time()
t.stop()
for th in threads:
    th.join(timeout=60)
expect(time.time() - started < 10, f"SIGTERM took {time.time() - started:.1f} s with requests in the queue")
expect(all(a and a[0] == 503 for a in answers), f"requests cut by SIGTERM: {[a and a[0] for a in answers]}")
print(f"SIGTERM with 3 requests: left in {time.time() - started:.1f} s; each refused with 503", flush=True)

# An API key.
k = Server("--api-key", "sesame")
status, body = k.post("/v1/chat/completions", chat)
error_of(status, body, 401, "no API key")
error_of(*k.post("/v1/chat/completions", chat, headers={"Authorization": "Bearer wrong"}), 401, "not the server's")
status, body = k.post("/v1/chat/completions", chat, headers={"Authorization": "Bearer sesame"})
expect(status == 200, f"with the key: {status} {body}")
status, _ = k.request("GET", "/health")
expect(status == 200, "/health needs no key")
k.stop()
print("serve_check: PASS", flush=True)
