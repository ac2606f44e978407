#!/usr/bin/env bash
# Installs what the build needs (Debian packages only) and builds the project into
# build/. Both README commands start here, so a fresh Debian 12 machine needs nothing
# else. Safe to run again: it installs only what is missing and rebuilds incrementally.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TI_BUILD_DIR:-$root/build}

packages=(cmake ninja-build g++ python3 python3-matplotlib python3-numpy
          llvm-14-dev llvm-14-tools
          libflatbuffers-dev flatbuffers-compiler
          libcli11-dev nlohmann-json3-dev libgtest-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}"
  sudo=; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# nvcc is not a Debian package here; it is found at the usual place when present.
cuda=OFF
for nvcc in "$(command -v nvcc || true)" /usr/local/cuda/bin/nvcc; do
  if [ -n "$nvcc" ] && [ -x "$nvcc" ]; then cuda=ON; export CUDACXX=$nvcc; break; fi
done

if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTI_ENABLE_CUDA=$cuda
fi
# Two cores and nvcc's memory appetite: the default parallelism is fine here.
cmake --build "$build"
