#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs every test
# (GoogleTest units and the lit suite) under ctest. GPU tests are skipped without a GPU.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/bootstrap.sh"
cd "${TI_BUILD_DIR:-$root/build}"
ctest --output-on-failure "$@"
