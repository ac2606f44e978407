#!/usr/bin/env bash
# Issue #16's GPU part, in one call: compute-sanitizer memcheck, racecheck and
# synccheck on both workers (the stream plan and the plain plan of the h200
# target) for the tiny model and for a Llama 3.2 1B cut to LAYERS layers
# (default 2: every wave, hand-off and synchronisation of the 1B on all 132
# workers, at a size racecheck finishes; the 16-layer racecheck did not).
# Built tools in, one table out; nothing is built on the device:
#   TI_BIN=build/bin [TI_SANITIZER_LAYERS=2] bash scripts/device/sanitizer-check.sh [OUTDIR]
# Each run decodes 3 prompt tokens and 20 more at context 64 with the
# attention split at 16, so that both attention modes run, and must report no
# error or hazard (--error-exitcode). Every command is bounded (TI_SANITIZER_TIMEOUT
# seconds each, default 240). TI_SANITIZER_RUNS narrows the runs to those
# whose "model execution tool" matches an extended regular expression (e.g.
# "1b-cut .* racecheck": one that did not finish before). The last line is
# PASS or FAIL.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" "${1:-}" /tmp/sanitizer-check
layers=${TI_SANITIZER_LAYERS:-2}
limit=${TI_SANITIZER_TIMEOUT:-240}
runs=${TI_SANITIZER_RUNS:-.}
table=$out/table.txt
: > "$table"

nvidia-smi -L | tee "$out/gpu.txt" || fail "nvidia-smi sees no GPU"
sed "s/dim layers = 16/dim layers = $layers/" models/llama32-1b.graph > "$work/1b-cut.graph"
grep -q "dim layers = $layers\$" "$work/1b-cut.graph" || fail "the 1B graph's layer count was not cut"

# model NAME GRAPH CONTEXT SPLIT PROMPT: both plans compiled and packed.
model() {
  local name=$1 graph=$2 context=$3 split=$4
  for execution in stream plain; do
    "$bin/tic" "$graph" --target h200 --execution $execution --max-context "$context" \
      --attention-split-context "$split" -o "$work/$name-$execution.fb" &&
      "$bin/tipack" "$work/$name-$execution.fb" --random --seed 3 -q -o "$work/$name-$execution.bin" ||
      fail "compiling or packing $name ($execution)"
  done
}
model tiny models/tiny.graph 64 16
model 1b-cut "$work/1b-cut.graph" 64 16

for name in tiny 1b-cut; do
  for execution in stream plain; do
    for tool in memcheck racecheck synccheck; do
      echo "$name $execution $tool" | grep -Eq "$runs" || continue
      log="$out/$name-$execution-$tool.log"
      SECONDS=0
      bounded "$limit" compute-sanitizer --tool "$tool" --error-exitcode 9 "$bin/tirun" \
        "$work/$name-$execution.fb" "$work/$name-$execution.bin" --backend cuda \
        --prompt-tokens 1,5,9 -n 20 > "$log" 2>&1
      rc=$?
      summary=$(grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$log" | head -1)
      echo "$name $execution $tool: rc $rc, ${SECONDS} s, ${summary:-no summary}" | tee -a "$table"
      [ "$rc" -eq 0 ] || fail "compute-sanitizer $tool on $name ($execution): rc $rc (see $log)"
    done
  done
done
finish
