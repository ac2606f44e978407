#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (clang 14, AddressSanitizer and
# UndefinedBehaviorSanitizer) and runs each for a while over its seed corpus:
#   bash scripts/fuzz.sh [SECONDS_EACH] [TARGET...]
# SECONDS_EACH defaults to 60; TI_FUZZ_JOBS targets run at once (default: the
# number of processors). The seeds in fuzz/corpus/<target>/ are only read: what
# a run finds goes to a scratch corpus. A crash, leak, sanitizer report,
# timeout (10 s one input) or out-of-memory (2 GiB) fails the run; its input
# is kept in $TI_FUZZ_ARTIFACTS (default build-fuzz/artifacts) with the line
# that reproduces it. Every such input becomes a regression test in the
# unit tests of the component it broke.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
shift || true
build=${TI_FUZZ_BUILD_DIR:-$root/build-fuzz}
artifacts=${TI_FUZZ_ARTIFACTS:-$build/artifacts}
jobs=${TI_FUZZ_JOBS:-$(nproc)}
all=(GraphFuzzer PlanFuzzer WeightsFileFuzzer SafeTensorsFuzzer TokenizerFileFuzzer TokenizerEncodeFuzzer
     ChatTemplateFuzzer PromptTokensFuzzer ApiRequestFuzzer)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

if [ ! -f "$build/build.ninja" ]; then
  # -O1 with assertions (no NDEBUG): fast enough to fuzz, and an assert is a finding.
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DTI_ENABLE_CUDA=OFF -DTI_BUILD_TESTS=OFF \
    -DTI_BUILD_FUZZERS=ON >/dev/null
fi
cmake --build "$build" --target "${targets[@]}"

mkdir -p "$artifacts"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ti-fuzz-run-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# The targets' own scratch folders (fuzz/FuzzSupport.cpp) go in here too, so a
# target that crashes or is stopped leaves none behind.
export TMPDIR=$scratch
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_one() {
  local t=$1 corpus=$scratch/$1
  mkdir -p "$corpus"
  cp "$root/fuzz/corpus/$t/"* "$corpus/"
  if "$build/bin/$t" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$artifacts/$t-" > "$scratch/$t.log" 2>&1; then
    local runs inputs
    runs=$(grep -m1 -oE 'stat::number_of_executed_units: *[0-9]+' "$scratch/$t.log" | grep -oE '[0-9]+$')
    inputs=$(ls "$corpus" | wc -l)
    echo "$t: $runs runs, $inputs inputs in the corpus, no finding"
  else
    echo "FAILED $t: $(grep -m1 -E 'ERROR|runtime error|deadly signal|Timeout|out-of-memory' "$scratch/$t.log" || echo 'see the log')"
    tail -40 "$scratch/$t.log" | sed "s/^/  $t| /"
    for f in "$artifacts/$t-"*; do [ -e "$f" ] && echo "  reproduce: $build/bin/$t $f"; done
    return 1
  fi
}
export -f run_one
export root build artifacts scratch seconds
echo "== fuzzing: ${#targets[@]} targets, ${seconds} s each, $jobs at once"
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}'
