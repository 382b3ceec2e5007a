#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle, with other builds of the host copied
# to .gpu-bundle/bin/host-*: compaction at 2^24 and 2^28 against CUB's DeviceSelect::If in one
# run (every build, twice, interleaved), and each other build's compaction checked against the
# CPU at awkward sizes.
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
{
  cub "$out/cub-select.csv" --ops select --log2 24,28 --types u32,f32 || status=1
  for round in 1 2; do
    for b in .gpu-bundle/bin/host .gpu-bundle/bin/host-*; do
      for c in "2^28" "2^28 --type f32" "2^24"; do
        # shellcheck disable=SC2086
        "$b" compact $c --baseline "$out/cub-select.csv" 2>&1 | grep -E '^(compact|time|check)' |
          sed "s|^|$(basename "$b") r$round: |" || status=1
      done
    done
  done
  for b in .gpu-bundle/bin/host-*; do
    for n in 0 1 31 33 4095 4096 4097 8191 8193 65537 1000003; do
      for k in "gt:3" nonzero flags; do
        "$b" compact $n --keep $k --iters 1 2>&1 | grep -E '^check' | sed "s|^|$(basename "$b") $n $k: |" || status=1
      done
    done
  done
} 2>&1 | tee "$out/compact-ab.log"
exit $status
