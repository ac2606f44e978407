#!/usr/bin/env bash
# Text in and out on the lent H200 (issue #14), in one call: built tools in,
# a short table and full logs out. Run from the repository root with the
# tools of a CUDA build in $TI_BIN (default .device/bin) and the tokenizer
# folders in $TI_TOKENIZERS (default .device/tokenizers: tokenizer-llama3/,
# tokenizer-llama2/ with each package's models/ files):
#   bash scripts/device/text-check.sh [OUTDIR]
# 1. The tiny model given Llama 3's vocabulary: greedy and sampled text on
#    the GPU equal to the CPU's (same prompt, same seed).
# 2. Llama 3.2 1B, random weights, the Llama 3 tokenizer: greedy and sampled
#    text, the summary lines (time to first token, ms per token, share of the
#    floor), beside tirun bench at context 1 in the same call.
# 3. A scripted tirun chat of three turns: each later turn reuses the cache.
# 4. Transformers: our tokenizer and Rust's agree on a text prompt, greedy
#    tokens agree (near-ties listed), and the streamed text is what
#    Transformers decodes (bench/hf_compare.py --prompt), when torch is there.
# Any failure prints FAILED and makes the exit status 1; the last line is
# PASS or FAIL.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" "${1:-}" /tmp/text-check
tok=${TI_TOKENIZERS:-$root/.device/tokenizers}
table=$out/table.txt
: > "$table"
row() { echo "$*" | tee -a "$table"; }

echo "== 1. tiny model, Llama 3 vocabulary: GPU text against CPU text"
sed -e 's/dim vocab = 320/dim vocab = 128256/' -e 's/attr bos_token = 1$/attr bos_token = 128000/' \
    -e 's/attr eos_tokens = \[2\]/attr eos_tokens = [128001]/' models/tiny.graph > "$work/tiny.graph"
"$bin/tic" "$work/tiny.graph" --target h200 -o "$work/tiny.fb" &&
  "$bin/tipack" "$work/tiny.fb" --random --seed 2 -q --tokenizer "$tok/tokenizer-llama3" -o "$work/tiny.bin" ||
  fail "tiny: compile or pack"
for mode in greedy sampled; do
  extra=(); [ "$mode" = sampled ] && extra=(--temperature 0.9 --top-k 40 --top-p 0.95 --seed 11)
  for b in cuda cpu; do
    bounded 120 "$bin/tirun" "$work/tiny.fb" "$work/tiny.bin" --backend $b --prompt "Once upon a time" -n 64 \
      "${extra[@]}" > "$out/tiny-$mode-$b.txt" 2>> "$out/tiny.log" || fail "tiny $mode on $b"
  done
  if cmp -s "$out/tiny-$mode-cuda.txt" "$out/tiny-$mode-cpu.txt"; then
    row "tiny $mode: GPU text = CPU text ($(wc -c < "$out/tiny-$mode-cuda.txt") bytes)"
  else
    fail "tiny $mode: GPU and CPU text differ"
  fi
done

echo "== 2. Llama 3.2 1B, random weights, the Llama 3 tokenizer"
"$bin/tic" models/llama32-1b.graph --target h200 -o "$work/1b.fb" &&
  "$bin/tipack" "$work/1b.fb" --random --seed 1 -q --tokenizer "$tok/tokenizer-llama3" -o "$work/1b.bin" ||
  fail "1B: compile or pack"
bounded 120 "$bin/tirun" bench "$work/1b.fb" "$work/1b.bin" --contexts 1 --sessions 2 --generate 0 \
  > "$out/1b-bench.txt" 2>&1 || fail "1B: tirun bench"
row "1B tirun bench: $(grep -E '^ +1 ' "$out/1b-bench.txt" | head -1)"
for run in 1 2; do
  bounded 120 "$bin/tirun" "$work/1b.fb" "$work/1b.bin" --backend cuda --prompt "The capital of France is" \
    -n 256 > "$out/1b-greedy.txt" 2> "$out/1b-greedy-$run.log" || fail "1B greedy text"
  row "1B greedy ($run): $(tail -1 "$out/1b-greedy-$run.log")"
  bounded 120 "$bin/tirun" "$work/1b.fb" "$work/1b.bin" --backend cuda --prompt "The capital of France is" \
    -n 256 --temperature 0.8 --top-k 40 --top-p 0.95 --seed 3 > "$out/1b-sampled-$run.txt" \
    2> "$out/1b-sampled-$run.log" || fail "1B sampled text"
  row "1B sampled ($run): $(tail -1 "$out/1b-sampled-$run.log")"
done
cmp -s "$out/1b-sampled-1.txt" "$out/1b-sampled-2.txt" || fail "1B: the same seed gave other text"

echo "== 3. tirun chat, three turns"
printf 'Hello there\nWhat is two plus two?\nAnd three?\n' |
  bounded 120 "$bin/tirun" chat "$work/1b.fb" "$work/1b.bin" --backend cuda -n 32 --system "Be brief." \
  > "$out/chat.txt" 2> "$out/chat.log" || fail "tirun chat"
grep "tokens reused" "$out/chat.log" | tee -a "$table"
[ "$(grep -c 'tokens reused' "$out/chat.log")" -eq 3 ] || fail "tirun chat: not three turns"
grep -q "^tirun chat: 0 tokens reused" <(grep "tokens reused" "$out/chat.log" | tail -2) &&
  fail "tirun chat: a later turn fed the whole conversation again"

echo "== 4. Transformers"
if python3 -c "import torch, transformers" 2>/dev/null; then
  bounded 400 python3 bench/hf_compare.py "$bin/tic" "$bin/tipack" "$bin/tirun" models/llama32-1b.graph \
    "$work/hf" --steps 64 --prompt "The capital of France is" --tokenizer "$tok/tokenizer-llama3" \
    > "$out/hf.log" 2>&1 || fail "hf_compare --prompt (see hf.log)"
  row "transformers: $(grep -E '^greedy tokens' "$out/hf.log")"
  grep -E "^prompt " "$out/hf.log" | cut -c1-200 | tee -a "$table"
else
  row "transformers: not installed here; skipped"
fi
finish
