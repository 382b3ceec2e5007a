#!/usr/bin/env bash
# Builds the host CLI of the working tree and of each REV[=NAME] given (a commit; NAME defaults
# to its short hash), stripped, and packs them with the CUB baseline into gb.txz: a bundle of a
# few MB per build for A/B runs on the GPU machine, where ../shared/tools/gpu-bundle packs every
# test executable (hundreds of MB). The builds land in .gpu-bundle/bin/host (the working tree)
# and .gpu-bundle/bin/host-NAME, as the A/B scripts (tools/gpu-*-ab.sh) expect; revisions build
# in a git worktree under target/, in a target directory of their own.
#   bash tools/slim-bundle.sh 53f2213=base 4942ded=full
# then the device tool's run with carry ["gb.txz"] and a command such as
#   tar xJf gb.txz && rm gb.txz && RESULTS_DIR=$OUT bash tools/gpu-sort-ab.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
shared=${SHARED:-$root/../shared}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/.gpu-bundle/bin" "$stage/.gpu-bundle/bench"
cp "$shared/bench/cub_baseline.cu" "$stage/.gpu-bundle/bench/"

# build DIR NAME TARGET: the host CLI of the workspace at DIR, built in target/TARGET and copied
# stripped to bin/NAME. Revisions build in their own target directory: cargo hashes path crates
# relative to the workspace, so a worktree's freshly built crates would pass for the working
# tree's older sources (and the reverse) in a shared one.
build() {
  echo "building $2 ($(git -C "$1" log --oneline -1 | cut -c1-72))" >&2
  (cd "$1" && CARGO_TARGET_DIR="$root/target/$3" cargo build --release -p host --quiet)
  cp "$root/target/$3/release/host" "$stage/.gpu-bundle/bin/$2"
  strip "$stage/.gpu-bundle/bin/$2"
}

build "$root" host slim
for spec in "$@"; do
  rev=${spec%%=*}
  name=${spec#*=}
  [[ $spec == *=* ]] || name=$(git rev-parse --short "$rev")
  tree="$root/target/slim-worktree"
  git worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
  git worktree add --detach --quiet "$tree" "$rev"
  build "$tree" "host-$name" slim-rev
  git worktree remove --force "$tree"
done
(cd "$stage" && tar cf - .gpu-bundle | xz -T0 -6) > gb.txz
grep -qx '/gb.txz' .git/info/exclude 2>/dev/null || echo '/gb.txz' >> .git/info/exclude
ls -l gb.txz >&2
