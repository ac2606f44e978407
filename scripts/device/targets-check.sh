#!/usr/bin/env bash
# Issue #13's "done when" figures in one call, built tools in, one table out
# (bench/issue13_targets.py: each figure beside its target); nothing is built
# on the device. Run from the repository root with the tools of a CUDA build:
#   TI_BIN=DIR [TI_PARTS="decode compile compile8b"] [TI_TARGET_FILES="a.json ..."] \
#     bash scripts/device/targets-check.sh [OUTDIR]
# Parts (TI_PARTS, default "decode compile"):
#   decode     tirun bench of Llama 3.2 1B (random weights, the h200 plan) at
#              contexts 1 to 4,096 (TI_CONTEXTS_1B) with 64-token generation,
#              its stream-only mode at context 1 (in launches of one step
#              and of 8), and the 8B at 1, 512 and 4,096 (TI_CONTEXTS_8B);
#              each against the floor measured in the
#              same process, 3 sessions (the 8B 2). With TI_TARGET_FILES,
#              both models' plans from each file too, in full mode, under the
#              file's name (their rows in the table's log part; the targets
#              are the built-in target's), the 1B at TI_TARGET_CONTEXTS_1B
#              (default: the same contexts); the 8B's only from the files
#              of TI_TARGET_FILES_8B where it is set.
#   compile    bench/run_bench.py (scripts/device/bench-check.sh baselines):
#              TileInfer and torch.compile reduce-overhead on the 1B in one
#              run, contexts 1 and 4,096, the cache sized per context (the
#              baseline at its best: docs/PERFORMANCE.md, run 6), one session
#              of 4 rounds.
#   compile8b  the same for Llama 3.1 8B (its random checkpoint is made on
#              the machine: minutes, and 16 GB of disk).
#   traces     one traced full step of each model at contexts 1, 1,024 and
#              4,096 (TI_TRACE_CONTEXTS, 1 among them), and where its time
#              went (bench/trace_timeline.py, against the floor of the same
#              process): trace-MODEL-CONTEXT.txt in the logs.
# Every GPU command runs bounded (TI_BENCH_TIMEOUT seconds for a tirun bench,
# default 200; TI_BASELINE_TIMEOUT for a run_bench.py part, default 540).
# A command that fails prints FAILED and makes the exit status 1; a target
# missed does not (the table says so). The last line is PASS or FAIL.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" "${1:-}" /tmp/targets-check
parts=${TI_PARTS:-decode compile}
contexts_1b=${TI_CONTEXTS_1B:-1,128,384,448,512,768,1024,2048,4096}
contexts_8b=${TI_CONTEXTS_8B:-1,512,4096}
bench_timeout=${TI_BENCH_TIMEOUT:-200} baseline_timeout=${TI_BASELINE_TIMEOUT:-540}
table=$out/table.txt
: > "$table"
note() { echo "$*" | tee -a "$table"; }

nvidia-smi -L | tee "$out/gpu.txt" || fail "nvidia-smi sees no GPU"
note "# $(head -1 "$out/gpu.txt"); $(date -u +%F) $(date -u +%T) UTC"

# plan NAME GRAPH [TIC OPTIONS...]: the plan and its random weights in $work.
plan() {
  local name=$1 graph=$2
  shift 2
  [ $# -gt 0 ] || set -- --target h200
  "$bin/tic" "$graph" "$@" -o "$work/$name.fb" &&
    "$bin/tipack" "$work/$name.fb" --random --seed 1 -q -o "$work/$name.bin" ||
    { fail "compiling or packing $name ($graph $*)"; return 1; }
}
# bench NAME TAG CONTEXTS SESSIONS GENERATE [MODE [STEPS]]: one tirun bench
# (STEPS steps a launch, default 1), its JSON and a line of the table's log.
bench() {
  local name=$1 tag=$2 contexts=$3 sessions=$4 generate=$5 mode=${6:-full} steps=${7:-1}
  if bounded "$bench_timeout" "$bin/tirun" bench "$work/$name.fb" "$work/$name.bin" \
       --contexts "$contexts" --sessions "$sessions" --generate "$generate" --worker-mode "$mode" \
       --steps-per-launch "$steps" \
       --json "$out/bench-$tag.json" > "$out/bench-$tag.txt" 2>&1; then
    python3 - "$out/bench-$tag.json" "$tag" <<'EOF' | tee -a "$out/runs.txt"
import json, sys
r = json.load(open(sys.argv[1]))
t = r["runtimes"][0]
cells = " ".join(f"{c['context']}:{c['median_ms']:.4f}({100 * c['share_of_floor']:.1f})" for c in t["contexts"])
gen = (t.get("generate") or {}).get("tokens_per_s")
print(f"{sys.argv[2]} {r['bandwidth']['gbs']:.0f}GB/s {cells}" + (f" gen:{gen:.1f}tok/s" if gen else ""))
EOF
  else
    fail "tirun bench, $tag (see $out/bench-$tag.txt)"
  fi
}

# traced MODEL CONTEXTS: one traced full step at each context (1 among
# them), and its accounting (trace_accounting, common.sh).
traced() {
  local model=$1 contexts=$2 c
  mkdir -p "$work/trace-$model"
  if bounded "$bench_timeout" "$bin/tirun" bench "$work/$model.fb" "$work/$model.bin" \
       --contexts "$contexts" --sessions 1 --generate 0 --trace-dir "$work/trace-$model" \
       --json "$out/trace-$model.json" > "$out/trace-$model-bench.txt" 2>&1; then
    for c in ${contexts//,/ }; do
      trace_accounting "$out/trace-$model.json" "$work/trace-$model" "$c" "$out/trace-$model-$c.txt" ||
        fail "trace_timeline.py, $model at $c (see $out/trace-$model-$c.txt)"
    done
  else
    fail "tirun bench, the traced $model steps (see $out/trace-$model-bench.txt)"
  fi
}

summary=()
for part in $parts; do
  start=$SECONDS
  case $part in
  decode)
    if plan 1b models/llama32-1b.graph; then
      bench 1b 1b "$contexts_1b" 3 64
      [ -f "$out/bench-1b.json" ] && summary+=(--decode-1b "$out/bench-1b.json")
      bench 1b 1b-stream-only 1 3 0 stream-only
      [ -f "$out/bench-1b-stream-only.json" ] && summary+=(--stream-only-1b "$out/bench-1b-stream-only.json")
      # The stream without a launch's start and end in every step.
      bench 1b 1b-stream-only-8 1 3 0 stream-only 8
      [ -f "$out/bench-1b-stream-only-8.json" ] &&
        summary+=(--stream-only-1b "$out/bench-1b-stream-only-8.json")
    fi
    for file in ${TI_TARGET_FILES:-}; do
      name=$(basename "$file" .json | tr -- '-.' '__')
      plan "1b-$name" models/llama32-1b.graph --target-file "$file" &&
        bench "1b-$name" "1b-$name" "${TI_TARGET_CONTEXTS_1B:-$contexts_1b}" 3 0
      rm -f "$work/1b-$name.bin"
    done
    if plan 8b models/llama31-8b.graph; then
      bench 8b 8b "$contexts_8b" 2 0
      [ -f "$out/bench-8b.json" ] && summary+=(--decode-8b "$out/bench-8b.json")
      for file in ${TI_TARGET_FILES_8B-${TI_TARGET_FILES:-}}; do
        name=$(basename "$file" .json | tr -- '-.' '__')
        rm -f "$work/8b.bin"
        plan "8b-$name" models/llama31-8b.graph --target-file "$file" &&
          bench "8b-$name" "8b-$name" "$contexts_8b" 2 0
        rm -f "$work/8b-$name.bin"
      done
      rm -f "$work/8b.bin"
    fi
    ;;
  compile | compile8b)
    model=1b graph=models/llama32-1b.graph
    [ "$part" = compile ] || model=8b graph=models/llama31-8b.graph
    if TI_BENCH_WORK=/tmp/ti-bench-$model bounded "$baseline_timeout" bash scripts/device/bench-check.sh \
         baselines "$out/baselines-$model" --graph "$graph" --runtimes tileinfer,compile \
         --contexts 1,4096 --rounds 4 --sessions 1 --generate-reps 0 --timeout 300 \
         --static-cache per-context > "$out/baselines-$model.log" 2>&1; then
      summary+=(--baselines-$model "$out/baselines-$model/bench.json")
      cat "$out/baselines-$model/bench-table.txt" >> "$out/runs.txt"
    else
      fail "run_bench.py, $model with torch.compile (see $out/baselines-$model.log)"
    fi
    ;;
  traces)
    for model in 1b 8b; do
      graph=models/llama32-1b.graph
      [ $model = 1b ] || graph=models/llama31-8b.graph
      plan "$model" "$graph" || continue
      traced "$model" "${TI_TRACE_CONTEXTS:-1,1024,4096}"
      rm -f "$work/$model.bin"
    done
    ;;
  *) fail "TI_PARTS: unknown part '$part' (decode, compile, compile8b, traces)" ;;
  esac
  echo "$part: $((SECONDS - start)) s" >> "$out/runs.txt"
done

if [ ${#summary[@]} -gt 0 ]; then
  python3 bench/issue13_targets.py "${summary[@]}" | tee -a "$table" ||
    fail "bench/issue13_targets.py"
fi
cat "$out/runs.txt" >> "$table" 2>/dev/null
finish
