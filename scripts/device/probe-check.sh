#!/usr/bin/env bash
# `tirun probe` on the lent H200 (or any NVIDIA GPU) and what its target file
# does, in one call. Run from the repository root with the tools of a CUDA
# build in $TI_BIN (default .device/bin); logs go to OUTDIR:
#   TI_BIN=build-gpu/bin bash scripts/device/probe-check.sh [OUTDIR]
# 1. tirun probe -o probe.json, printed;
# 2. Llama 3.2 1B compiled for the built-in h200 target and for probe.json:
#    the plan texts must be equal but for the target line's name,
#    bandwidth_gbs and fingerprint, which legitimately differ (arch, workers,
#    threads, registers and the rest of the line must not): MATCH or the diff;
# 3. tirun must refuse, with one line naming both fingerprints, a plan whose
#    target file has an altered worker_fingerprint, and run the probe's own;
# 4. TiGpuTests' probe tests, when $TI_BIN has TiGpuTests.
# Ends with PASS or FAIL (exit status 0 or 1).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" "${1:-}" /tmp/probe-check

echo "== tirun probe"
nvidia-smi -L | tee "$out/gpu.txt"
if ! "$bin/tirun" probe -o "$out/probe.json" 2>&1 | tee "$out/probe.txt"; then
  echo "FAIL: tirun probe failed"
  exit 1
fi
cat "$out/probe.json"

echo "== Llama 3.2 1B: the built-in h200 target against the probe's"
"$bin/tic" models/llama32-1b.graph --target h200 --emit=plan-text > "$work/builtin.txt" || exit 1
"$bin/tic" models/llama32-1b.graph --target-file "$out/probe.json" --emit=plan-text \
  > "$work/probed.txt" || exit 1
grep -h '^target ' "$work/builtin.txt" "$work/probed.txt" | tee "$out/target-lines.txt"
# Only the target line's name, bandwidth and fingerprint may differ.
mask() {
  sed -E '/^target /{s/^target [^ ]+ /target NAME /; s/bandwidth_gbs=[^ ]+/bandwidth_gbs=B/;
          s/fingerprint=[^ ]+/fingerprint=F/}' "$1"
}
if diff <(mask "$work/builtin.txt") <(mask "$work/probed.txt") > "$out/plan.diff"; then
  echo "MATCH: the plans differ only in the target's name, bandwidth and fingerprint"
else
  fail "the built-in h200 plan and the probe's plan differ (first 40 lines of $out/plan.diff):"
  head -40 "$out/plan.diff"
fi

echo "== a plan for another worker binary, and the probe's own plan"
fingerprints=$(python3 - "$out/probe.json" "$work/altered.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
mine = t["worker_fingerprint"]
t["worker_fingerprint"] = ("1" if mine[0] == "0" else "0") + mine[1:]
json.dump(t, open(sys.argv[2], "w"), indent=2)
print(mine, t["worker_fingerprint"])
EOF
) || exit 1
read -r mine other <<< "$fingerprints"
"$bin/tic" models/llama32-1b.graph --target-file "$out/probe.json" -o "$work/probed.fb" || exit 1
"$bin/tic" models/llama32-1b.graph --target-file "$work/altered.json" -o "$work/altered.fb" || exit 1
# The fingerprint is not part of the weights layout: one weights file serves both.
"$bin/tipack" "$work/probed.fb" --random --seed 1 -o "$work/w.bin" -q || exit 1
if "$bin/tirun" "$work/altered.fb" "$work/w.bin" --backend cuda -n 2 > /dev/null \
     2> "$out/refused.txt"; then
  fail "tirun ran a plan made for worker $other"
else
  cat "$out/refused.txt"
  lines=$(wc -l < "$out/refused.txt")
  if [ "$lines" -ne 1 ] || ! grep -q "$mine" "$out/refused.txt" || ! grep -q "$other" "$out/refused.txt"; then
    fail "the refusal is not one line naming $other and $mine"
  else
    echo "REFUSED in one line, naming $other (the plan's) and $mine (this worker's)"
  fi
fi
if "$bin/tirun" "$work/probed.fb" "$work/w.bin" --backend cuda -n 2 2>&1 | tee "$out/accepted.txt"; then
  echo "ACCEPTED: the probe's own plan runs"
else
  fail "tirun refused the probe's own plan"
fi

if [ -x "$bin/TiGpuTests" ]; then
  echo "== TiGpuTests: probe tests"
  "$bin/TiGpuTests" --gtest_filter='ProbeTest.*' 2>&1 | tee "$out/probe-tests.log" |
    grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) *\]|streaming read"
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "TiGpuTests ProbeTest.*"
fi

finish
