"""A streamed chat against tirun serve, as a person at a chat front-end has it:
for each turn, the time to the first text (from sending the request to the
first content event) and the time per token after it (from the usage event's
completion_tokens), with the prompt tokens the cache already held. Prints one
line per turn and, from /metrics, the server's own time to first token and
time per token. The chat is bench/serve_chat.json's, which
bench/serve_latency.cjs times through the official openai client.

  serve_latency.py PORT [--turns 3] [--max-tokens 128] [--api-key KEY]
"""
import argparse
import http.client
import json
import os
import re
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("port", type=int)
ap.add_argument("--turns", type=int, default=3)
ap.add_argument("--max-tokens", type=int, default=128)
ap.add_argument("--api-key", default="")
args = ap.parse_args()
headers = {"Content-Type": "application/json"}
if args.api_key:
    headers["Authorization"] = f"Bearer {args.api_key}"


def get(path):
    c = http.client.HTTPConnection("127.0.0.1", args.port, timeout=60)
    c.request("GET", path, headers=headers)
    r = c.getresponse()
    return r.read().decode()


model = json.loads(get("/v1/models"))["data"][0]["id"]
chat = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "serve_chat.json")))
questions = chat["questions"]
messages = [{"role": "system", "content": chat["system"]}]
for turn in range(args.turns):
    messages.append({"role": "user", "content": questions[turn % len(questions)]})
    body = json.dumps({"model": model, "messages": messages, "max_tokens": args.max_tokens, "stream": True,
                       "stream_options": {"include_usage": True}, "temperature": chat["temperature"],
                       "seed": turn})
    c = http.client.HTTPConnection("127.0.0.1", args.port, timeout=300)
    sent = time.perf_counter()
    c.request("POST", "/v1/chat/completions", body=body, headers=headers)
    r = c.getresponse()
    if r.status != 200:
        sys.exit(f"turn {turn + 1}: HTTP {r.status}: {r.read().decode()}")
    first = None
    text, usage, buf = "", None, b""
    while True:
        line = r.fp.readline()
        if not line:
            break
        line = line.strip()
        if not line.startswith(b"data: "):
            continue
        data = line[6:]
        if data == b"[DONE]":
            break
        event = json.loads(data)
        if event.get("usage"):
            usage = event["usage"]
        for ch in event.get("choices", []):
            piece = ch.get("delta", {}).get("content")
            if piece:
                if first is None:
                    first = time.perf_counter()
                text += piece
    end = time.perf_counter()
    c.close()
    if usage is None or first is None:
        sys.exit(f"turn {turn + 1}: no usage event or no text")
    tokens = usage["completion_tokens"]
    per_token = (end - first) / max(1, tokens - 1) * 1e3
    print(f"turn {turn + 1}: {usage['prompt_tokens']} prompt tokens, "
          f"{usage['prompt_tokens_details']['cached_tokens']} cached; first text after "
          f"{(first - sent) * 1e3:.1f} ms; {tokens} tokens, {per_token:.3f} ms per token after the first "
          f"(client side)", flush=True)
    messages.append({"role": "assistant", "content": text})

m = {k: float(v) for k, v in re.findall(r"^(tileinfer_\w+) (\S+)$", get("/metrics"), re.M)}
print(f"server: {m['tileinfer_requests_total']:.0f} requests, time to first token "
      f"{1e3 * m['tileinfer_time_to_first_token_seconds_sum'] / max(1, m['tileinfer_time_to_first_token_seconds_count']):.1f} ms "
      f"on average, {1e3 * m['tileinfer_decode_seconds_total'] / max(1, m['tileinfer_decode_tokens_total']):.3f} "
      f"ms per token, {m['tileinfer_prompt_tokens_cached_total']:.0f} of {m['tileinfer_prompt_tokens_total']:.0f} "
      f"prompt tokens reused", flush=True)
