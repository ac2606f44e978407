#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs every
# test. First the tests that feed damaged and hostile input to the loaders
# (plan files, weights files, safetensors) run once more in an
# AddressSanitizer + UndefinedBehaviorSanitizer build; then the whole suite
# (GoogleTest units and the lit suite) runs under ctest. GPU tests are skipped
# without a GPU. Set TI_SKIP_ASAN=1 to skip the sanitizer pass.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/bootstrap.sh"
build=${TI_BUILD_DIR:-$root/build}
# bootstrap.sh installed python3-matplotlib: the bench/ script tests must run.
export TI_REQUIRE_MATPLOTLIB=1

if [ "${TI_SKIP_ASAN:-0}" != 1 ]; then
  asan=${TI_ASAN_BUILD_DIR:-$root/build-asan}
  flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  if [ ! -f "$asan/build.ninja" ]; then
    cmake -S "$root" -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTI_ENABLE_CUDA=OFF \
      -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
  fi
  cmake --build "$asan" --target tic tipack tirun TiPlanTests TiWeightsTests
  echo "== sanitizer pass: loaders and fault tests"
  "$asan/bin/TiPlanTests" --gtest_brief=1 --gtest_filter='PlanFile*:PlanVerifier*'
  "$asan/bin/TiWeightsTests" --gtest_brief=1 --gtest_filter='SafeTensors*:WeightsFile*:Packer*'
  python3 /usr/lib/llvm-14/build/utils/lit/lit.py -sv "$asan/test" --filter 'tirun/|tic/plan/round-trip'
fi

echo "== all tests"
cd "$build"
ctest --output-on-failure "$@"
