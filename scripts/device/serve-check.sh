#!/usr/bin/env bash
# tirun serve on the lent GPU (issue #15), in one call: built tools in, one
# table out; nothing is built on the device. Run from the repository root with
# the tools of a CUDA build in $TI_BIN and the tokenizer folders in
# $TI_TOKENIZERS (as text-check.sh):
#   TI_BIN=... TI_TOKENIZERS=... bash scripts/device/serve-check.sh [OUTDIR]
# 1. test/tirun/serve_check.py with TI_SERVE_BACKEND=cuda on Llama 3.2 1B
#    (random weights, the Llama 3 tokenizer, context 1,024): the texts of
#    tirun --prompt on the GPU, by raw HTTP and, where node and the openai
#    package ($TI_NPM_MODULES, default third_party/npm/node_modules) are
#    there, by the official client; prefix reuse; every error status; a
#    client that leaves; the load test. node is $TI_NODE where set (a node
#    binary, or one compressed with xz: the lent machine has none, and the
#    carry holds 64 MiB while node is 95 MB), else the PATH's.
# 2. bench/serve_latency.py: a streamed chat of 3 turns of up to 128 tokens,
#    time to first text and time per token (client and server side), the
#    cached tokens of each turn; then bench/serve_latency.cjs, the same chat
#    through the official openai client (where node and the package are), each
#    against a server of its own so that neither finds the other's turns in
#    the cache.
# The last line is PASS or FAIL.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" "${1:-}" /tmp/serve-check
tok=${TI_TOKENIZERS:-$root/.device/tokenizers}
modules=${TI_NPM_MODULES:-$root/third_party/npm/node_modules}
table=$out/table.txt
: > "$table"
nvidia-smi -L | tee "$out/gpu.txt" || fail "nvidia-smi sees no GPU"
"$bin/tic" models/llama32-1b.graph --target h200 --max-context 1024 -o "$work/1b.fb" &&
  "$bin/tipack" "$work/1b.fb" --random --seed 1 -q --tokenizer "$tok/tokenizer-llama3" -o "$work/1b.bin" ||
  fail "1B: compile or pack"
mkdir -p "$work/logs"
node=$(command -v node || echo none)
case ${TI_NODE:-} in
"") ;;
*.xz) # Python's lzma: xz itself may be missing there.
  python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
    "$TI_NODE" "$work/node" && chmod +x "$work/node" && node=$work/node || fail "unpacking $TI_NODE" ;;
*) node=$TI_NODE ;;
esac
echo "node: $node ($("$node" --version 2>/dev/null || echo "none"))" | tee -a "$table"
TI_SERVE_BACKEND=cuda bounded 400 python3 test/tirun/serve_check.py "$bin/tirun" "$work/1b.fb" "$work/1b.bin" \
  "$work/logs" "$node" "$modules" > "$out/serve-check.txt" 2>&1 ||
  fail "serve_check.py on the GPU (see serve-check.txt)"
grep -E "^(openai|prefix|load|serve_check)" "$out/serve-check.txt" | tee -a "$table"
# serve_timed NAME COMMAND...: a fresh tirun serve on a free port, then
# COMMAND with its argument PORT replaced by the port, its lines to the table.
serve_timed() {
  local name=$1 log="$out/serve-$1.log" port server arg command=()
  shift
  bounded 90 "$bin/tirun" serve "$work/1b.fb" "$work/1b.bin" --backend cuda --port 0 > /dev/null 2> "$log" &
  server=$!
  for _ in $(seq 1 300); do grep -q "listening on" "$log" && break; sleep 0.1; done
  port=$(grep -o "127.0.0.1:[0-9]*" "$log" | cut -d: -f2)
  if [ -n "$port" ]; then
    for arg in "$@"; do [ "$arg" = PORT ] && command+=("$port") || command+=("$arg"); done
    "${command[@]}" | tee -a "$table" || fail "$name"
  else
    fail "tirun serve did not start for $name (see serve-$name.log)"
  fi
  kill "$server" 2>/dev/null
  wait "$server" 2>/dev/null
  cat "$log" >> "$table"
}
serve_timed serve_latency.py bounded 120 python3 bench/serve_latency.py PORT --turns 3 --max-tokens 128
if [ "$node" != none ] && [ -d "$modules/openai" ]; then
  serve_timed serve_latency.cjs bounded 120 "$node" bench/serve_latency.cjs "$modules" PORT \
    --turns 3 --max-tokens 128
else
  echo "serve_latency.cjs: NOT RUN (no node or no openai package)" | tee -a "$table"
fi
finish
