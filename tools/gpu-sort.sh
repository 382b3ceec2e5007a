#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle: the radix sort against CUB's
# DeviceRadixSort::SortKeys in one run, the histogram (the same digit ranking), and the
# sanitizers on the sort, the partition and the staged single-pass kernels. Log in $RESULTS_DIR
# (default .gpu-bundle/results).
#   bash tools/gpu-sort.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
{
  echo "== CUB sort (same run)"
  cub "$out/cub-sort.csv" --ops sort --log2 24,28 --types u32,u64,f64 || status=1
  for t in u32 u64 f64; do
    for n in 2^24 2^28; do
      "$host" sort $n --type $t --baseline "$out/cub-sort.csv" || status=1
    done
  done
  "$host" sort 2^28 --values || status=1
  "$host" histogram 2^28 --bins 256 || status=1
  echo "== compute-sanitizer on the sort, the partition and the staged single-pass kernels"
  sanitize "memcheck racecheck synccheck" "$host" "sort 70001 --values" "sort 70001 --type f64" \
    "sort 70001 --type i32" "histogram 70001 --bins 1000" "scan 70001 --type f64" \
    "scan 70001 --type u64 --op max --exclusive"
} 2>&1 | tee "$out/sort.log"
exit $status
