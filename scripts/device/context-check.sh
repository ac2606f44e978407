#!/usr/bin/env bash
# Llama 3.2 1B (random weights) on the GPU against the CPU executor at
# contexts 1, 400 and 4,000 (or those in $TI_CONTEXTS): the same plan and
# weights, the same prompt, the logits of the last steps compared
# (bench/compare_logits.py: the argmaxes agree unless the CPU's top two are a
# near-tie, and the relative error is at most 2e-3, the GPU tests' tolerance).
# The CPU's 4,000 steps alone take most of a lent machine's 10-minute call:
#   TI_BIN=build-gpu/bin bash scripts/device/context-check.sh OUTDIR
#   TI_CONTEXTS="1 400" ... ; TI_CONTEXTS=4000 ...   (two calls)
# Any failure or mismatch makes the exit status 1; the last line is PASS or FAIL.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" "${1:-}" /tmp/context-check
w=$work
"$bin/tic" models/llama32-1b.graph --target h200 -o "$w/p.fb" || { echo FAIL; exit 1; }
"$bin/tipack" "$w/p.fb" --random --seed 1 -o "$w/w.bin" -q || { echo FAIL; exit 1; }
ids() { python3 -c "import sys; n = int(sys.argv[1]); print(','.join(str(128000 if i == 0 else 1000 + (i * 7919) % 100000) for i in range(n)))" "$1"; }
# context, first dumped position, tokens generated: context 1 generates 4
# tokens and compares them all, a longer one its last 4 prompt steps and 1.
for context in ${TI_CONTEXTS:-1 400 4000}; do
  if [ "$context" -eq 1 ]; then set -- 1 0 4; else set -- "$context" $((context - 4)) 1; fi
  prompt=$(ids "$1")
  for be in cuda cpu; do
    "$bin/tirun" "$w/p.fb" "$w/w.bin" --backend $be --threads 16 --prompt-tokens "$prompt" \
      -n "$3" --dump-logits "$w/$be-$1.f32" --dump-from "$2" 2>&1 | tail -1
    [ "${PIPESTATUS[0]}" -eq 0 ] || fail "tirun --backend $be at context $1"
  done
  python3 bench/compare_logits.py "$w/cuda-$1.f32" "$w/cpu-$1.f32" 128256 --max-error 2e-3 \
    > "$out/ctx-$1.txt" || fail "context $1: GPU and CPU logits differ ($out/ctx-$1.txt)"
  tail -5 "$out/ctx-$1.txt"
done
finish
