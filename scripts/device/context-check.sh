#!/usr/bin/env bash
# Llama 3.2 1B (random weights) on the GPU against the CPU executor at
# contexts 1, 400 and 4,000: the same plan and weights, the same prompt, the
# logits of the last steps compared (bench/compare_logits.py).
#   TI_BIN=build-gpu/bin bash scripts/device/context-check.sh OUTDIR
set -euo pipefail
bin=${TI_BIN:-build-gpu/bin}
out=${1:-/tmp/context-check}
mkdir -p "$out"
w=$(mktemp -d)
"$bin/tic" models/llama32-1b.graph --target h200 -o "$w/p.fb"
"$bin/tipack" "$w/p.fb" --random --seed 1 -o "$w/w.bin" -q
ids() { python3 -c "import sys; n = int(sys.argv[1]); print(','.join(str(128000 if i == 0 else 1000 + (i * 7919) % 100000) for i in range(n)))" "$1"; }
# context, first dumped position, tokens generated
for spec in "1 0 4" "400 396 1" "4000 3996 1"; do
  set -- $spec
  prompt=$(ids "$1")
  for be in cuda cpu; do
    "$bin/tirun" "$w/p.fb" "$w/w.bin" --backend $be --threads 16 --prompt-tokens "$prompt" \
      -n "$3" --dump-logits "$w/$be-$1.f32" --dump-from "$2" 2>&1 | tail -1
  done
  python3 bench/compare_logits.py "$w/cuda-$1.f32" "$w/cpu-$1.f32" 128256 | tee "$out/ctx-$1.txt" | tail -5
done
rm -rf "$w"
