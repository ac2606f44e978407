#!/usr/bin/env bash
# The whole GPU check in one call on the lent H200 (or any NVIDIA GPU): built
# tools in, a short table and full logs out. Run from the repository root with
# the tools of a CUDA build in $TI_BIN (default .device/bin):
#   bash scripts/device/gpu-check.sh [OUTDIR]
# 1. the GPU and the worker's attributes;
# 2. TiGpuTests (tiny model: GPU against the CPU executor, reproducibility);
# 3. Llama 3.2 1B with random weights: GPU tokens against CPU tokens, and the
#    time per token at three contexts.
set -uo pipefail
root=$(pwd)
bin=${TI_BIN:-$root/.device/bin}
out=${1:-${OUT:-/tmp/gpu-check}}
mkdir -p "$out"
work=$(mktemp -d)
# The test binaries name the tools by the absolute path they were built in.
if [ -n "${TI_BUILT_ROOT:-}" ] && [ ! -e "$TI_BUILT_ROOT" ]; then
  mkdir -p "$(dirname "$TI_BUILT_ROOT")" && ln -s "$root" "$TI_BUILT_ROOT"
fi

nvidia-smi -L | tee "$out/gpu.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,memory.total --format=csv >> "$out/gpu.txt"

echo "== GPU tests (tiny model)"
"$bin/TiGpuTests" 2>&1 | tee "$out/gpu-tests.log" | grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) *\]|max|error" | head -40

echo "== Llama 3.2 1B, random weights"
"$bin/tic" models/llama32-1b.graph --target h200 -o "$work/p.fb" || exit 1
"$bin/tipack" "$work/p.fb" --random --seed 1 -o "$work/w.bin" | tee -a "$out/1b.log"
prompt=128000,791,6864
"$bin/tirun" "$work/p.fb" "$work/w.bin" --backend cuda --prompt-tokens $prompt -n 32 \
  > "$out/1b-gpu.tokens" 2> >(tee -a "$out/1b.log" >&2)
"$bin/tirun" "$work/p.fb" "$work/w.bin" --backend cpu --prompt-tokens $prompt -n 32 \
  > "$out/1b-cpu.tokens" 2> >(tee -a "$out/1b.log" >&2)
if cmp -s "$out/1b-gpu.tokens" "$out/1b-cpu.tokens"; then
  echo "1B: GPU and CPU generate the same 32 tokens" | tee -a "$out/1b.log"
else
  echo "1B: GPU and CPU tokens DIFFER" | tee -a "$out/1b.log"
  paste "$out/1b-gpu.tokens" "$out/1b-cpu.tokens" | tee -a "$out/1b.log"
fi

# Time per token at a context: a prompt of C tokens, then 64 generated; the
# decode launch's steps sit at positions C-1 .. C+62.
for ctx in 1 512 4096; do
  ids=$(python3 -c "print(','.join(str(128000 if i == 0 else 1000 + (i * 7919) % 100000) for i in range($ctx)))")
  for rep in 1 2 3; do
    "$bin/tirun" "$work/p.fb" "$work/w.bin" --backend cuda --prompt-tokens "$ids" -n 64 \
      2>&1 >/dev/null | sed "s/^/ctx $ctx rep $rep: /" | tee -a "$out/1b-timing.log"
  done
done
rm -rf "$work"
