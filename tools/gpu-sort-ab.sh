#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle, with other builds of the host copied
# to .gpu-bundle/bin/host-*: 2^28 u32 and u64 sorts by every build, once each (no CUB:
# builds against each other), then each other build's sort checked against the CPU at awkward
# sizes, types and with values.
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
{
  for round in 1; do
    for b in .gpu-bundle/bin/host .gpu-bundle/bin/host-*; do
      for c in "2^28" "2^28 --type u64"; do
        # shellcheck disable=SC2086
        "$b" sort $c --iters 10 2>&1 | grep -E '^time' | sed "s|^|$(basename "$b") r$round [$c]: |" || status=1
      done
    done
  done
  for b in .gpu-bundle/bin/host-*; do
    for n in 0 1 33 6913 70001 1000003; do
      for c in "" "--type u64" "--type f64 --values" "--type i32 --values"; do
        # shellcheck disable=SC2086
        "$b" sort $n $c --iters 1 2>&1 | grep -E '^check' | sed "s|^|$(basename "$b") $n $c: |" || status=1
      done
    done
  done
} 2>&1 | tee "$out/sort-ab.log"
exit $status
