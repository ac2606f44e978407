#!/usr/bin/env bash
# The README's main command: installs what is missing, builds, then the whole
# pipeline on Llama 3.2 1B with random weights (no checkpoint can be fetched
# here): compile the plan and print its statistics, pack 2.5 GB of synthetic
# weights, and decode a few tokens (on the GPU when one is present, else on
# the CPU). Outputs go to build/run/; the weights are reused while the plan's
# layout is unchanged.
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

echo "== pack: random weights (seed 1)"
if [ -f "$weights" ] && [ "$weights" -nt "$plan" ] && "$bin/tirun" "$plan" "$weights" -n 0 >/dev/null 2>&1; then
  echo "(reusing $weights)"
else
  "$bin/tipack" "$plan" --random --seed 1 -o "$weights"
fi

echo "== decode: 8 tokens after <|begin_of_text|>The capital"
"$bin/tirun" "$plan" "$weights" --prompt-tokens 128000,791,6864 -n "${TI_TOKENS:-8}"
