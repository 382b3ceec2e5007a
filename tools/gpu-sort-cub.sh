#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle: CUB's DeviceRadixSort::SortKeys at
# 2^28 u32, f32 and u64 keys, then ours on the same keys against it (the ratio on each time
# line), the sanitizers on the sort (with values, 20-bit u64 keys, 3-bit keys) and the sort's
# awkward-size checks (sort_checks). Every sort is checked against the CPU.
# Log: $RESULTS_DIR/sort-final.log, cub-sort.csv.
#   bash tools/gpu-sort-cub.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
{
  cub "$out/cub-sort.csv" --ops sort --log2 28 --types u32,f32,u64 --iters 10 || status=1
  for c in "2^28" "2^28 --type f32" "2^28 --type u64"; do
    # shellcheck disable=SC2086
    "$host" sort $c --iters 10 --baseline "$out/cub-sort.csv" 2>&1 | cut -c1-220 || status=1
  done
  sanitize "memcheck racecheck synccheck" "$host" "sort 70001 --values" "sort 70001 --type u64 --key-bits 20" \
    "sort 1000003 --key-bits 3"
  sort_checks "$host" 0 1 33 6911 6912 6913 70001 16777259
} 2>&1 | tee "$out/sort-final.log"
exit $status
