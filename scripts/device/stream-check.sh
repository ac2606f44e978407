#!/usr/bin/env bash
# Issue #13's one call: the stream worker's checks and its benchmark, built
# tools in, one table out; nothing is built on the device. Run from the
# repository root with the tools of a CUDA build in $TI_BIN (default
# .device/bin), and optionally a second build's in $TI_BASELINE_BIN:
#   TI_BIN=build/bin [TI_BASELINE_BIN=.device/base] [TI_TARGET_FILES="a.json ..."] \
#     bash scripts/device/stream-check.sh [OUTDIR]
# 1. TiGpuTests; compute-sanitizer memcheck, racecheck and synccheck on the
#    tiny model's stream plan and racecheck on its plain plan (3 prompt
#    tokens, 20 generated);
# 2. Llama 3.2 1B with random weights, the h200 plan: `tirun bench` at
#    contexts 1, 128 and 4,096 in the worker modes full, no-dependencies,
#    stream-only and compute-only (each against the floor measured in the
#    same process). With
#    a baseline, its tools compile and pack their own plan, and its full mode
#    and this build's alternate twice in the same call: the kernel's speed
#    moves by about 1% with changes far from a loop (docs/PERFORMANCE.md), so
#    a change is only measured against its parent in one call; then the
#    full step and the stream alone in launches of 8 steps (the launch's
#    own start and end shared: --steps-per-launch), and the full step of
#    the h200 plan in the other FFN form (`tic --ffn-form partials`, its own
#    packed weights: the build "partials");
#    with target files (TI_TARGET_FILES), the 1B's plan of each (this build's
#    tools: a stage size, a ring or a walk to try) in full mode, under the
#    file's name, in the same two rounds as this build (every plan's weights
#    on disk until the rounds end); with variant builds (TI_VARIANTS="name=DIR ...",
#    each DIR holding a build's tic, tipack and tirun; names without dashes),
#    each compiles and packs its own plan and joins the rounds of full mode
#    between the baseline and this build, under its name (a folder with a
#    tirun and no tic, the baseline's too, runs this build's plan and
#    weights: a kernel change alone);
#    with TI_NCU=1, Nsight Compute's warp-stall samples of one launch of
#    this build's plan at context 1 in full and compute-only modes, exported
#    per instruction to ncu-sass-MODE.csv (in logs.tgz): on the development
#    machine, `python3 bench/ncu_source_lines.py ncu-sass-full.csv --cubin
#    BUILD/lib/Runtime/cuda/stream-worker-keep/StreamWorker.sm_90.cubin
#    --function workerKernelILb0E` gives them by source line (the cubin of
#    the build whose tools ran);
# 3. one table: build, mode, context, ms per token (median), share of floor;
#    where builds or target files alternated, the same runs side by side
#    (bench/variants_table.py: each round beside its floor, and every one's
#    change against the baseline's, or this build's without one);
#    then the consumers' speed (issue #13, item 7): a traced compute-only
#    step of the 1B, its streaming tasks by wave against one worker's share
#    of the bandwidth (bench/trace_timeline.py's last table), and one at the
#    longest of the contexts, its tasks by opcode (the streamed attention's
#    and the merge's among them).
# Options for a measuring call that leaves the checks to another:
# TI_SKIP_CHECKS=1 skips step 1 (the tests and the sanitizers);
# TI_SKIP_EXTRAS=1 skips the launches of 8 steps and the partials form;
# TI_SKIP_MODES=1 skips the modes other than full and the consumers' traces;
# TI_SESSIONS sets each benchmark's sessions (default 3) and TI_ROUNDS the
# rounds builds and target files alternate in (default 2);
# TI_LOGIT_CHECK=1 compares every build's logits (this one's, the
# baseline's, the variants') at context 1 (one prompt token, 4 steps) with
# the CPU executor's of this build's plan (bench/compare_logits.py, 3e-3 of
# the largest);
# TI_TRACE_FULL=1 adds a traced full-mode step of this build at context 1,
# its accounting (bench/trace_timeline.py) in trace-full.txt, and one at each
# further context of TI_TRACE_CONTEXTS (e.g. "4096"; its K/V bytes counted
# in the floor) in trace-full-CONTEXT.txt; the same of each variant build
# (TI_VARIANTS) in trace-full-NAME.txt and trace-full-NAME-CONTEXT.txt, so
# that a change's step can be read wave by wave beside its parent's.
# Every GPU command runs bounded (common.sh): the tests TI_TESTS_TIMEOUT
# seconds (default 420), each benchmark TI_BENCH_TIMEOUT (default 150).
# On the lent machine ($OUT set) the logs end up in OUTDIR/logs.tgz.
# Any failure prints FAILED and makes the exit status 1; the last line is PASS
# or FAIL.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" "${1:-}" /tmp/stream-check
base=${TI_BASELINE_BIN:-}
contexts=${TI_CONTEXTS:-1,128,4096}
sessions=${TI_SESSIONS:-3} rounds=${TI_ROUNDS:-2}
alternated=() # NAME=JSON of every round's run, for bench/variants_table.py.
variants=()   # NAME=DIR of the variant builds that compiled and packed.
longest=$(tr ',' '\n' <<< "$contexts" | sort -n | tail -1)

nvidia-smi -L | tee "$out/gpu.txt" || fail "nvidia-smi sees no GPU"

tests_timeout=${TI_TESTS_TIMEOUT:-420} bench_timeout=${TI_BENCH_TIMEOUT:-150}
if [ -z "${TI_SKIP_CHECKS:-}" ]; then
  echo "== GPU tests"
  bounded "$tests_timeout" "$bin/TiGpuTests" > "$out/gpu-tests.log" 2>&1 ||
    fail "TiGpuTests (see $out/gpu-tests.log)"
  grep -E "^\[ *(PASSED|FAILED) *\]" "$out/gpu-tests.log"
  if grep -q '^\[  SKIPPED \]' "$out/gpu-tests.log"; then
    fail "TiGpuTests skipped tests on a machine with a GPU"
  fi

  echo "== compute-sanitizer, tiny model"
  if "$bin/tic" models/tiny.graph --target h200 --execution stream --max-context 64 -o "$work/tiny-s.fb" &&
     "$bin/tic" models/tiny.graph --target h200 --execution plain --max-context 64 -o "$work/tiny-p.fb" &&
     "$bin/tipack" "$work/tiny-s.fb" --random --seed 3 -q -o "$work/tiny-s.bin" &&
     "$bin/tipack" "$work/tiny-p.fb" --random --seed 3 -q -o "$work/tiny-p.bin"; then
    for check in memcheck:s racecheck:s synccheck:s racecheck:p; do
      tool=${check%:*} plan=${check#*:}
      log="$out/sanitizer-$tool-$plan.log"
      bounded 240 compute-sanitizer --tool "$tool" --error-exitcode 9 "$bin/tirun" \
        "$work/tiny-$plan.fb" "$work/tiny-$plan.bin" --backend cuda --prompt-tokens 1,5,9 -n 20 \
        > "$log" 2>&1 || fail "compute-sanitizer $tool on the tiny model's $plan plan (see $log)"
      echo "$tool ($plan): $(grep -h SUMMARY "$log")"
    done
  else
    fail "compiling or packing the tiny model"
  fi
fi

echo "== Llama 3.2 1B, random weights: tirun bench"
# compile BUILD BIN [TIC OPTIONS...]: the build's own plan (the h200 target
# unless options say otherwise) and weights (a layout may change).
# A build whose folder has a tirun but no tic (a kernel variant) runs this
# build's plan and weights.
compile() {
  local build=$1 tools=$2
  shift 2
  if [ ! -x "$tools/tic" ] && [ -f "$work/new.bin" ]; then
    ln -sf "$work/new.fb" "$work/$build.fb" && ln -sf "$work/new.bin" "$work/$build.bin"
    return
  fi
  [ $# -gt 0 ] || set -- --target h200
  "$tools/tic" models/llama32-1b.graph "$@" -o "$work/$build.fb" &&
    "$tools/tipack" "$work/$build.fb" --random --seed 1 -q -o "$work/$build.bin"
}
# bench BUILD BIN MODE TAG: one tirun bench, its JSON kept for the table.
bench() {
  bounded "$bench_timeout" "$2/tirun" bench "$work/$1.fb" "$work/$1.bin" --contexts "$contexts" \
    --sessions "$sessions" --generate 0 --worker-mode "$3" --json "$out/bench-$4.json" \
    > "$out/bench-$4.txt" 2>&1 || fail "tirun bench, $4 (see $out/bench-$4.txt)"
}
if compile new "$bin"; then
  for spec in ${TI_VARIANTS:-}; do
    name=${spec%%=*} dir=${spec#*=}
    case "$name" in
      "" | *-* | "$spec") fail "TI_VARIANTS: '$spec' is not NAME=DIR with a NAME without dashes" ;;
      *) if compile "$name" "$dir"; then variants+=("$spec"); else
           fail "variant $name's tools could not compile and pack the 1B"; fi ;;
    esac
  done
  if [ -n "$base" ] && ! compile base "$base"; then
    fail "the baseline's tools could not compile and pack the 1B"
    base=""
  fi
  # Target files: this build's tools, each file's plan, under the file's name
  # (without dashes: the tag's first dash ends it), in the same rounds.
  targets=()
  for file in ${TI_TARGET_FILES:-}; do
    name=$(basename "$file" .json | tr -- '-.' '__')
    if compile "$name" "$bin" --target-file "$file"; then targets+=("$name"); else
      fail "compiling or packing the 1B for target file $file"; fi
  done
  if [ -n "${TI_LOGIT_CHECK:-}" ]; then
    echo "== logits at context 1 against the CPU executor"
    if "$bin/tirun" "$work/new.fb" "$work/new.bin" --backend cpu --threads 16 --prompt-tokens 128000 \
         -n 4 --dump-logits "$work/cpu.f32" > "$out/logits-cpu.txt" 2>&1; then
      for spec in "new=$bin" ${base:+"base=$base"} "${variants[@]}"; do
        name=${spec%%=*} dir=${spec#*=}
        if "$dir/tirun" "$work/$name.fb" "$work/$name.bin" --backend cuda --prompt-tokens 128000 \
             -n 4 --dump-logits "$work/$name.f32" > "$out/logits-$name.txt" 2>&1 &&
           python3 bench/compare_logits.py "$work/$name.f32" "$work/cpu.f32" 128256 --max-error 3e-3 \
             > "$out/logits-$name-compare.txt" 2>&1; then
          echo "$name: $(tail -1 "$out/logits-$name-compare.txt")"
        else
          fail "build $name's logits at context 1 (see $out/logits-$name*.txt)"
        fi
      done
    else
      fail "the CPU executor's logits (see $out/logits-cpu.txt)"
    fi
  fi
  if [ -n "$base" ] || [ ${#variants[@]} -gt 0 ] || [ ${#targets[@]} -gt 0 ]; then
    for round in $(seq "$rounds"); do
      # NAME=TOOLS of each run, in the order of the table.
      for spec in ${base:+"base=$base"} "new=$bin" "${variants[@]}" "${targets[@]/%/=$bin}"; do
        name=${spec%%=*}
        bench "$name" "${spec#*=}" full "$name-full-$round"
        [ ! -f "$out/bench-$name-full-$round.json" ] ||
          alternated+=("$name=$out/bench-$name-full-$round.json")
      done
    done
  else
    bench new "$bin" full new-full-1
  fi
  for name in "${targets[@]}"; do
    rm -f "$work/$name.bin"
  done
  # The variants' weights stay for their traces (TI_TRACE_FULL).
  [ -n "${TI_TRACE_FULL:-}" ] || for name in "${variants[@]%%=*}"; do rm -f "$work/$name.bin"; done
  if [ -z "${TI_SKIP_MODES:-}" ]; then
    bench new "$bin" no-dependencies new-no-dependencies
    bench new "$bin" stream-only new-stream-only
    bench new "$bin" compute-only new-compute-only
  fi
  steps8() { # MODE TAG: context 1 in launches of 8 steps.
    bounded "$bench_timeout" "$bin/tirun" bench "$work/new.fb" "$work/new.bin" --contexts 1 \
      --sessions 3 --generate 0 --worker-mode "$1" --steps-per-launch 8 \
      --json "$out/bench-$2.json" > "$out/bench-$2.txt" 2>&1 ||
      fail "tirun bench --steps-per-launch 8, $2 (see $out/bench-$2.txt)"
  }
  if [ -z "${TI_SKIP_EXTRAS:-}" ]; then
    steps8 full new-full-8-steps-a-launch
    steps8 stream-only new-stream-only-8-steps-a-launch
  fi
  # traced MODE NAME [BUILD TOOLS [CONTEXTS...]]: one traced step of a build
  # (default this one: new, $bin) at context 1, its accounting in NAME.txt,
  # and one at each further context in the same run, in NAME-CONTEXT.txt (the
  # run's floors at 1 and CONTEXT give the K/V bytes a position).
  traced() {
    local mode=$1 name=$2 build=${3:-new} tools=${4:-$bin}
    shift $(($# < 4 ? $# : 4))
    local list=1 c
    for c in "$@"; do list+=",$c"; done
    mkdir -p "$work/$name"
    if bounded "$bench_timeout" "$tools/tirun" bench "$work/$build.fb" "$work/$build.bin" \
         --contexts "$list" --sessions 1 --generate 0 --worker-mode "$mode" \
         --trace-dir "$work/$name" --json "$work/$name.json" > "$out/$name-bench.txt" 2>&1; then
      trace_accounting "$work/$name.json" "$work/$name" 1 "$out/$name.txt" ||
        fail "trace_timeline.py on the $mode trace (see $out/$name.txt)"
      for c in "$@"; do
        trace_accounting "$work/$name.json" "$work/$name" "$c" "$out/$name-$c.txt" ||
          fail "trace_timeline.py on the $mode trace at $c (see $out/$name-$c.txt)"
      done
    else
      fail "tirun bench, the traced $mode step (see $out/$name-bench.txt)"
    fi
  }
  # The consumers alone at context 1 and at the longest context measured,
  # whose attention streams its cached rows: its tasks by opcode said the
  # streamed attention took 7.3 us with no copy at all (docs/PERFORMANCE.md,
  # step 29), which no context-1 trace shows.
  if [ -z "${TI_SKIP_MODES:-}" ]; then
    if [ "$longest" -gt 1 ]; then
      traced compute-only consumers new "$bin" "$longest"
    else
      traced compute-only consumers
    fi
  fi
  if [ -n "${TI_TRACE_FULL:-}" ]; then
    contexts_traced=()
    for c in ${TI_TRACE_CONTEXTS:-}; do
      if [ "$c" -gt 1 ] 2>/dev/null; then
        contexts_traced+=("$c")
      else
        fail "TI_TRACE_CONTEXTS: '$c' is not a context above 1"
      fi
    done
    traced full trace-full new "$bin" "${contexts_traced[@]}"
    for spec in "${variants[@]}"; do
      traced full "trace-full-${spec%%=*}" "${spec%%=*}" "${spec#*=}" "${contexts_traced[@]}"
      rm -f "$work/${spec%%=*}.bin"
    done
  fi
  if [ -n "${TI_NCU:-}" ]; then
    echo "== ncu: warp-stall samples, context 1"
    for mode in full compute-only; do
      bounded "$bench_timeout" ncu --clock-control none -k regex:workerKernel --launch-skip 4 \
        --launch-count 1 --section SourceCounters -f -o "$work/ncu-$mode" "$bin/tirun" bench \
        "$work/new.fb" "$work/new.bin" --contexts 1 --sessions 1 --reps 3 --warmup 3 --generate 0 \
        --bandwidth-bytes 256MiB --worker-mode "$mode" > "$out/ncu-run-$mode.txt" 2>&1 &&
        ncu -i "$work/ncu-$mode.ncu-rep" --page source --csv --print-source sass \
          > "$out/ncu-sass-$mode.csv" 2> "$out/ncu-export-$mode.txt" ||
        fail "ncu, $mode mode (see $out/ncu-run-$mode.txt)"
    done
  fi
  rm -f "$work/new.bin" "$work/base.bin"
  if [ -z "${TI_SKIP_EXTRAS:-}" ]; then
    if compile partials "$bin" --target h200 --ffn-form partials; then
      bench partials "$bin" full partials-full
    else
      fail "compiling or packing the 1B in the partials form"
    fi
  fi
else
  fail "compiling or packing Llama 3.2 1B"
fi

echo "== the table"
python3 - "$out" <<'PY' | tee "$out/table.txt" || fail "the table (a bench JSON is missing or malformed)"
import glob, json, os, sys
rows = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "bench-*.json"))):
    tag = os.path.basename(path)[len("bench-"):-len(".json")]
    build, rest = tag.split("-", 1)
    mode = rest.rsplit("-", 1)[0] if rest[-1].isdigit() else rest
    for runtime in json.load(open(path))["runtimes"]:
        for c in runtime["contexts"]:
            rows.append((build, mode, tag, c["context"], c["median_ms"], c["share_of_floor"]))
if not rows:
    sys.exit("no bench results")
print(f"{'build':8} {'mode':28} {'run':34} {'context':>7} {'ms/token':>9} {'floor':>6}")
for build, mode, tag, ctx, ms, share in sorted(rows, key=lambda r: (r[1], r[3], r[2])):
    print(f"{build:8} {mode:28} {tag:34} {ctx:7d} {ms:9.4f} {100 * share:5.1f}%")
PY
if [ ${#alternated[@]} -gt 0 ]; then
  python3 bench/variants_table.py "${alternated[@]}" | tee -a "$out/table.txt" ||
    fail "variants_table.py on the alternated runs"
fi
if [ -z "${TI_SKIP_MODES:-}" ]; then
  echo "the consumers, compute-only, context 1:" | tee -a "$out/table.txt"
  sed -n '/^streaming tasks by wave/,$p' "$out/consumers.txt" 2>/dev/null | tee -a "$out/table.txt"
fi
if [ -z "${TI_SKIP_MODES:-}" ] && [ "$longest" -gt 1 ]; then
  echo "the consumers, compute-only, context $longest:" | tee -a "$out/table.txt"
  sed -n '/^tasks by opcode/,/^streaming tasks by wave/{/^streaming tasks by wave/!p}' \
    "$out/consumers-$longest.txt" 2>/dev/null | tee -a "$out/table.txt"
fi
if [ -n "${TI_TRACE_FULL:-}" ]; then
  for build in new "${variants[@]%%=*}"; do
    file=trace-full
    [ "$build" = new ] || file+=-$build
    for c in 1 ${TI_TRACE_CONTEXTS:-}; do
      suffix=
      [ "$c" = 1 ] || suffix=-$c
      echo "the full step of $build, traced, context $c:" | tee -a "$out/table.txt"
      sed -n '1,12p;/^waves on the critical path/,$p' "$out/$file$suffix.txt" 2>/dev/null |
        tee -a "$out/table.txt"
    done
  done
fi

finish
