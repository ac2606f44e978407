#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs every
# test, twice:
# 1. A clang 14 build with AddressSanitizer and UndefinedBehaviorSanitizer
#    (build-sanitize/, no CUDA) runs the whole suite under ctest; its plans
#    must equal, byte for byte, the GCC build's; then every fuzz target of
#    fuzz/ runs for TI_FUZZ_SECONDS (default 60) over its seed corpus
#    (scripts/fuzz.sh).
# 2. The main build (build/) runs the whole suite under ctest: GoogleTest
#    units and the lit suite. GPU tests are skipped without a GPU.
# Set TI_SKIP_SANITIZERS=1 to skip the first part.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/bootstrap.sh"
build=${TI_BUILD_DIR:-$root/build}
# bootstrap.sh installed python3-matplotlib: the bench/ script tests must run.
export TI_REQUIRE_MATPLOTLIB=1

if [ "${TI_SKIP_SANITIZERS:-0}" != 1 ]; then
  san=${TI_SANITIZE_BUILD_DIR:-$root/build-sanitize}
  if [ ! -f "$san/build.ninja" ]; then
    # -O1 with assertions (no NDEBUG); -fsanitize comes from TI_BUILD_FUZZERS.
    cmake -S "$root" -B "$san" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
      -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DTI_ENABLE_CUDA=OFF -DTI_BUILD_FUZZERS=ON \
      >/dev/null
  fi
  cmake --build "$san"
  echo "== the whole suite under AddressSanitizer and UndefinedBehaviorSanitizer (clang 14)"
  (cd "$san" && ctest --output-on-failure -j "$(nproc)")
  echo "== a plan's bytes do not depend on the compiler that built tic"
  plans=$(mktemp -d)
  for target in h200 rtx3050; do
    "$build/bin/tic" "$root/models/tiny.graph" --target $target -o "$plans/gcc.fb"
    "$san/bin/tic" "$root/models/tiny.graph" --target $target -o "$plans/clang.fb"
    cmp "$plans/gcc.fb" "$plans/clang.fb"
  done
  rm -rf "$plans"
  TI_FUZZ_BUILD_DIR=$san bash "$root/scripts/fuzz.sh" "${TI_FUZZ_SECONDS:-60}"
fi

echo "== all tests"
cd "$build"
ctest --output-on-failure "$@"
