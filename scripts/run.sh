#!/usr/bin/env bash
# The README's main command: installs what is missing, builds, and compiles the
# Llama 3.2 1B graph, printing what the compiler knows about it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/bootstrap.sh"
build=${TI_BUILD_DIR:-$root/build}
"$build/bin/tic" "$root/models/llama32-1b.graph" --stats
