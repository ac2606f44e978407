#!/usr/bin/env bash
# The measurements of docs/PERFORMANCE.md on the lent H200 (or any NVIDIA GPU
# with torch and transformers), built tools in, JSON, pictures and logs out.
# Run from the repository root:
#   TI_BIN=DIR [TI_BIN_NOTRACE=DIR] bash scripts/device/bench-check.sh PART OUTDIR [run_bench options]
# PART:
#   baselines  bench/run_bench.py: TileInfer and the Transformers baselines in
#              one run, interleaved -> OUTDIR/bench.json, bench.png, bench.md
#   traces     tirun bench --trace-dir on the same plan and weights: a traced
#              step at contexts 1 and 4,096 -> timeline pictures + accounting
#   trace-cost tirun bench with the tracer compiled in (off) and compiled out
#              (TI_BIN_NOTRACE, -DTI_WORKER_TRACE=OFF), alternated three times,
#              each one process and one load (the comparison is across processes)
# The plan, weights and checkpoint live in $TI_BENCH_WORK (default
# /tmp/ti-bench) and are reused while the machine stays up.
set -euo pipefail
part=${1:?part: baselines, traces or trace-cost}
out=${2:?output folder}
shift 2
bin=${TI_BIN:?the tools of a CUDA build}
work=${TI_BENCH_WORK:-/tmp/ti-bench}
mkdir -p "$out" "$work"
plan=$work/llama32_1b-h200.fb
weights=$work/llama32_1b-h200-checkpoint.bin
py=python3

case $part in
baselines)
  "$py" bench/run_bench.py --bin "$bin" --work "$work" --out "$out/bench.json" "$@" \
    2> "$out/bench.log" | tee "$out/bench-table.txt"
  "$py" bench/plot_bench.py "$out/bench.json" --png "$out/bench.png" --markdown "$out/bench.md"
  ;;
traces)
  [ -f "$weights" ] || { echo "bench-check: run the baselines part first ($weights)"; exit 1; }
  "$bin/tirun" bench "$plan" "$weights" --contexts 1,4096 --generate 64 \
    --trace-dir "$out" --json "$out/tirun-bench.json" 2> "$out/tirun-bench.log" \
    | tee "$out/tirun-bench.txt"
  gbs=$("$py" -c "import json, sys; print(json.load(open(sys.argv[1]))['bandwidth']['gbs'])" \
    "$out/tirun-bench.json")
  # K/V bytes per cached position, from the floors of the two contexts: the
  # floor is the weights plus that many bytes per position.
  per_position=$("$py" -c "
import json, sys
f = {c['context']: c['floor_bytes'] for c in json.load(open(sys.argv[1]))['runtimes'][0]['contexts']}
print((f[4096] - f[1]) // 4095)" "$out/tirun-bench.json")
  for c in 1 4096; do
    kv=$((c * per_position))
    "$py" bench/trace_timeline.py "$out/trace-$c.json" --bandwidth-gbs "$gbs" --kv-bytes "$kv" \
      --png "$out/timeline-$c.png" --json "$out/accounting-$c.json" | tee "$out/accounting-$c.txt"
  done
  ;;
trace-cost)
  notrace=${TI_BIN_NOTRACE:?the tirun of a -DTI_WORKER_TRACE=OFF build}
  [ -f "$weights" ] || { echo "bench-check: run the baselines part first ($weights)"; exit 1; }
  for i in 1 2 3; do
    for variant in in:"$bin" out:"$notrace"; do
      name=${variant%%:*} dir=${variant#*:}
      "$dir/tirun" bench "$plan" "$weights" --contexts 1,4096 --sessions 1 --reps 200 --generate 0 \
        --bandwidth-bytes 1GiB --json "$out/cost-$name-$i.json" 2>> "$out/cost.log" \
        | sed "s/^/tracer compiled $name, run $i: /" | tee -a "$out/cost.txt"
    done
  done
  ;;
*)
  echo "bench-check: unknown part '$part'"; exit 1 ;;
esac
