# Sourced by the device scripts (gpu-check.sh, probe-check.sh,
# context-check.sh, stream-check.sh): where the tools and the logs are, a scratch folder removed
# on exit, and how a check fails. Expects $1 to be the script's OUTDIR
# argument (or OUT, or the default it passes as $2).
#   root   the repository (the current folder)
#   bin    $TI_BIN, default .device/bin: the tools of a CUDA build
#   out    the logs
#   work   a scratch folder
#   fail   records a failure (FAILED: ... on the log and in out/failures.txt)
#   bounded runs a command with a time limit (a hang fails, and the call goes on)
#   trace_accounting where a traced step's time went (bench/trace_timeline.py)
#   finish prints PASS or FAIL and exits 0 or 1; on the lent machine ($OUT
#          set) it first packs the logs into out/logs.tgz, keeping only
#          table.txt and failures.txt beside it: of $OUT at most 8 files come
#          back (../.library/device/README.md)
root=$(pwd)
bin=${TI_BIN:-$root/.device/bin}
# The lent machine lacks libutf8proc and libpcre2-8 (the tokenizer's) and,
# since tirun serve, cpp-httplib's library and brotli's: carry them in
# $bin/lib (cp -L of what `ldd $bin/tirun` names; docs/GPU-TESTING.md).
if [ -d "$bin/lib" ]; then
  export LD_LIBRARY_PATH="$(realpath -m "$bin/lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
out=${1:-${OUT:-${2:-/tmp/device-check}}}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The GPU tests compile their plans with these tools and graphs rather than
# the paths they were built at (test/support/ModelPlan.h).
TI_TOOLS_DIR=$(realpath -m "$bin") TI_SOURCE_DIR=$root
export TI_TOOLS_DIR TI_SOURCE_DIR
failed=0
fail() { echo "FAILED: $*" | tee -a "$out/failures.txt"; failed=1; }
# bounded SECONDS COMMAND...: the command, stopped after SECONDS (status 124):
# a launch that hangs must not take the call's whole device time with it
# (docs/PERFORMANCE.md, step 9: one hung call cost 11.5 minutes).
bounded() {
  local seconds=$1
  shift
  timeout --kill-after=10 "$seconds" "$@"
}
# trace_accounting BENCH_JSON TRACE_DIR CONTEXT OUT: where the traced step
# at CONTEXT went (bench/trace_timeline.py into OUT), against the bandwidth
# of the tirun bench result that traced it; the K/V bytes the step read come
# from that result's floors, which must include context 1 (the floor at
# context c is the weights and c positions' K/V).
trace_accounting() {
  local gbs kv
  read -r gbs kv < <(python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
f = {c['context']: c['floor_bytes'] for c in r['runtimes'][0]['contexts']}
c = int(sys.argv[2])
print(r['bandwidth']['gbs'], (f[c] - f[1]) * c // (c - 1) if c > 1 else 0)" "$1" "$3") || return 1
  python3 bench/trace_timeline.py "$2/trace-$3.json" --bandwidth-gbs "$gbs" --kv-bytes "$kv" \
    > "$4" 2>&1
}
finish() {
  if [ -n "${OUT:-}" ]; then
    (cd "$out" && find . -type f ! -name table.txt ! -name failures.txt ! -name logs.tgz \
      -print0 | tar czf logs.tgz --null -T - --remove-files) ||
      fail "packing the logs into $out/logs.tgz"
  fi
  if [ "$failed" -eq 0 ]; then echo "PASS"; else echo "FAIL"; fi
  exit "$failed"
}
