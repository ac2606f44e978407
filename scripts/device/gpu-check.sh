#!/usr/bin/env bash
# The whole GPU check in one call on the lent H200 (or any NVIDIA GPU): built
# tools in, a short table and full logs out. Run from the repository root with
# the tools of a CUDA build in $TI_BIN (default .device/bin):
#   bash scripts/device/gpu-check.sh [OUTDIR]
# 1. the GPU and the worker's attributes;
# 2. TiGpuTests (the CUDA worker against the CPU executor on the tiny model
#    and on the Llama 3.2 1B and 3B shapes, reproducibility, probe);
# 3. Llama 3.2 1B with random weights: GPU tokens against CPU tokens, and the
#    time per token at three contexts.
# Any failure or mismatch is printed as FAILED and makes the exit status 1;
# the last line is PASS or FAIL.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" "${1:-}" /tmp/gpu-check

nvidia-smi -L | tee "$out/gpu.txt" || fail "nvidia-smi sees no GPU"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,memory.total --format=csv >> "$out/gpu.txt"

echo "== GPU tests"
"$bin/TiGpuTests" 2>&1 | tee "$out/gpu-tests.log" |
  grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) *\]|max|error" | head -60
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "TiGpuTests (see $out/gpu-tests.log)"
if grep -q '^\[  SKIPPED \]' "$out/gpu-tests.log"; then
  fail "TiGpuTests skipped tests on a machine with a GPU"
fi

echo "== Llama 3.2 1B, random weights: GPU against CPU"
if "$bin/tic" models/llama32-1b.graph --target h200 -o "$work/p.fb" &&
   "$bin/tipack" "$work/p.fb" --random --seed 1 -o "$work/w.bin" | tee -a "$out/1b.log"; then
  prompt=128000,791,6864
  "$bin/tirun" "$work/p.fb" "$work/w.bin" --backend cuda --prompt-tokens $prompt -n 32 \
    > "$out/1b-gpu.tokens" 2> >(tee -a "$out/1b.log" >&2) || fail "tirun --backend cuda"
  "$bin/tirun" "$work/p.fb" "$work/w.bin" --backend cpu --prompt-tokens $prompt -n 32 \
    > "$out/1b-cpu.tokens" 2> >(tee -a "$out/1b.log" >&2) || fail "tirun --backend cpu"
  if [ -s "$out/1b-gpu.tokens" ] && cmp -s "$out/1b-gpu.tokens" "$out/1b-cpu.tokens"; then
    echo "1B: GPU and CPU generate the same 32 tokens" | tee -a "$out/1b.log"
  else
    fail "1B: GPU and CPU tokens differ"
    paste "$out/1b-gpu.tokens" "$out/1b-cpu.tokens" | tee -a "$out/1b.log"
  fi

  # Time per token at a context: a prompt of C tokens, then 64 generated; the
  # decode launch's steps sit at positions C-1 .. C+62.
  for ctx in 1 512 4096; do
    ids=$(python3 -c "print(','.join(str(128000 if i == 0 else 1000 + (i * 7919) % 100000) for i in range($ctx)))")
    for rep in 1 2 3; do
      "$bin/tirun" "$work/p.fb" "$work/w.bin" --backend cuda --prompt-tokens "$ids" -n 64 \
        2>&1 >/dev/null | sed "s/^/ctx $ctx rep $rep: /" | tee -a "$out/1b-timing.log"
      [ "${PIPESTATUS[0]}" -eq 0 ] || fail "tirun at context $ctx"
    done
  done
else
  fail "compiling or packing Llama 3.2 1B"
fi

finish
