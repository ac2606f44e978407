"""Greedy decoding by tirun against Hugging Face Transformers, same weights.

1. A randomly initialised LlamaForCausalLM with the exact config of the
   graph's published model (seeded; norm scales perturbed around 1 so a
   dropped scale would show), in BF16, saved with save_pretrained as
   safetensors (bench/llama_checkpoint.py; WORKDIR/checkpoint-NAME is reused
   when it holds the one for --seed).
2. tipack packs that checkpoint for the plan; tirun decodes N greedy steps from
   a fixed prompt and dumps every step's logits (--dump-logits).
3. Transformers runs the same token sequence (prompt + tirun's tokens) in one
   causal forward pass (eager attention, on the GPU) and gives the logits at
   every position. By default it computes in float32 on the BF16 weights
   (held exactly): the arithmetic tirun's kernel does, but for its BF16 K/V
   cache. --reference-dtype bfloat16 runs Transformers' usual BF16 path, whose
   own rounding (every activation to BF16) moves logits by several BF16 ULPs
   and so makes more near-ties. Reported: per-step relative logit error (max |a - b| /
   max |b|), and for every generated token whether Transformers' argmax agrees;
   a disagreement is listed with Transformers' top-2 gap and one BF16 ULP at
   that logit (a near-tie when the gap is at most one ULP).

With --prompt TEXT --tokenizer DIR the prompt is text: our tokenizer (tirun
tokenize) and Transformers' (PreTrainedTokenizerFast over the same
tokenizer.json, Rust's tokenizers) must give the same ids, which are then
compared as above; and `tirun --prompt TEXT` must print the text that
Transformers decodes from the generated ids.

usage: hf_compare.py TIC TIPACK TIRUN GRAPH WORKDIR [--steps 64] [--backend cuda]
                     [--prompt TEXT --tokenizer DIR] [--reference-dtype float32|bfloat16]
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch
import transformers
from transformers import LlamaForCausalLM

from llama_checkpoint import build_checkpoint, graph_name

p = argparse.ArgumentParser()
p.add_argument("tic")
p.add_argument("tipack")
p.add_argument("tirun")
p.add_argument("graph")
p.add_argument("work")
p.add_argument("--steps", type=int, default=64)
p.add_argument("--backend", default="cuda")
p.add_argument("--seed", type=int, default=1234)
p.add_argument("--prompt", help="a text prompt (needs --tokenizer)")
p.add_argument("--tokenizer", help="the folder of tokenizer.json and tokenizer_config.json")
p.add_argument("--reference-dtype", choices=["float32", "bfloat16"], default="float32",
               help="what Transformers computes in (the weights are BF16 either way)")
args = p.parse_args()
if bool(args.prompt) != bool(args.tokenizer):
    sys.exit("--prompt and --tokenizer go together")
os.makedirs(args.work, exist_ok=True)
model_name = graph_name(args.graph)
ckpt = build_checkpoint(os.path.join(args.work, f"checkpoint-{model_name}"), args.seed,
                        model=model_name)
print(f"transformers {transformers.__version__}, torch {torch.__version__}: checkpoint {ckpt}")
model = LlamaForCausalLM.from_pretrained(ckpt, dtype=getattr(torch, args.reference_dtype),
                                         attn_implementation="eager")
print(f"reference: Transformers in {args.reference_dtype}")
config = model.config

plan = os.path.join(args.work, "plan.fb")
weights = os.path.join(args.work, "weights.bin")
logits_file = os.path.join(args.work, "logits.f32")
subprocess.run([args.tic, args.graph, "--target", "h200", "-o", plan], check=True)
pack = [args.tipack, plan, "--checkpoint", ckpt, "-o", weights]
if args.tokenizer:
    pack += ["--tokenizer", args.tokenizer]
subprocess.run(pack, check=True)
prompt = [128000, 791, 6864, 315, 9822, 374]
hf_tokenizer = None
if args.prompt:
    from transformers import PreTrainedTokenizerFast
    # From the folder, so that tokenizer_config.json's settings (clean-up of
    # spaces, special tokens) apply as they do in ours.
    hf_tokenizer = PreTrainedTokenizerFast.from_pretrained(args.tokenizer)
    theirs_ids = hf_tokenizer(args.prompt)["input_ids"]
    ours_ids = [int(t) for t in subprocess.run([args.tirun, "tokenize", weights], input=args.prompt,
                                               check=True, capture_output=True, text=True).stdout.split()]
    print(f"prompt {args.prompt!r}: ours {ours_ids}, transformers {theirs_ids}")
    if ours_ids != theirs_ids:
        sys.exit("the tokenizers disagree on the prompt")
    prompt = ours_ids
run = subprocess.run([args.tirun, plan, weights, "--backend", args.backend, "--prompt-tokens",
                      ",".join(map(str, prompt)), "-n", str(args.steps), "--dump-logits",
                      logits_file], check=True, capture_output=True, text=True)
print(run.stderr.strip())
generated = [int(t) for t in run.stdout.split()]
ours = np.fromfile(logits_file, dtype=np.float32).reshape(-1, config.vocab_size)

sequence = prompt + generated[:-1]  # The tokens fed, one per step.
assert ours.shape[0] == len(sequence), (ours.shape, len(sequence))
model = model.cuda().eval()
with torch.no_grad():
    theirs = model(torch.tensor([sequence], device="cuda")).logits[0].float().cpu().numpy()

errors = np.abs(ours - theirs).max(axis=1) / np.abs(theirs).max(axis=1)
report = {"steps": len(sequence), "max_rel_error": float(errors.max()),
          "median_rel_error": float(np.median(errors)), "disagreements": []}
agree = 0
for i, token in enumerate(generated):
    step = len(prompt) - 1 + i
    row = theirs[step]
    top2 = np.argsort(row)[-2:][::-1]
    if top2[0] == token:
        agree += 1
        continue
    gap = float(row[top2[0]] - row[top2[1]])
    # One BF16 unit in the last place at the top logit: our K/V cache is BF16
    # (and with --reference-dtype bfloat16 so is every activation of theirs),
    # so two logits one ULP apart are a tie to rounding.
    resolution = float(2.0 ** (np.floor(np.log2(abs(row[top2[0]]))) - 7))
    report["disagreements"].append({"generated": i, "ours": token, "transformers": int(top2[0]),
                                    "top2_gap": gap, "bf16_ulp": resolution,
                                    "near_tie": gap <= resolution})
report["generated"] = len(generated)
report["agree"] = agree
print(json.dumps(report, indent=1))
real = [d for d in report["disagreements"] if not d["near_tie"]]
if args.prompt:
    # Bytes, decoded here: text mode would turn the model's "\r\n" into "\n".
    text = subprocess.run([args.tirun, plan, weights, "--backend", args.backend, "--prompt", args.prompt,
                           "-n", str(args.steps)], check=True, capture_output=True)
    print(text.stderr.decode("utf-8", "replace").strip())
    out = text.stdout.decode("utf-8")
    streamed = out[:-1] if out.endswith("\n") else out
    decoded = hf_tokenizer.decode(generated, skip_special_tokens=True)
    print(f"text: ours {streamed!r}\n      transformers' decode of our ids {decoded!r}")
    if streamed != decoded:
        real.append({"text": "tirun --prompt printed other text than Transformers decodes"})
print(f"greedy tokens: {agree}/{len(generated)} agree; "
      f"{len(report['disagreements']) - len(real)} near-ties, {len(real)} real disagreements; "
      f"logits relative error: max {report['max_rel_error']:.3g}, "
      f"median {report['median_rel_error']:.3g}")
sys.exit(1 if real else 0)
