#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle: the radix sort against CUB's
# DeviceRadixSort::SortKeys in one run (random keys, and skewed keys whose upper passes find one
# digit in every key), the histogram (the same digit ranking), and the sanitizers on the sort and
# partition kernels. When .gpu-bundle/bin/host-before exists (an earlier build), it sorts the same
# cases alternating with it, for an A/B in one run. Log in $RESULTS_DIR (default
# .gpu-bundle/results).
#   bash tools/gpu-sort.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
before=.gpu-bundle/bin/host-before
{
  echo "== CUB sort (same run)"
  cub "$out/cub-sort.csv" --ops sort --log2 24,28 --types u32,u64,f64 || status=1
  cases=("2^24" "2^28" "2^24 --type u64" "2^28 --type u64" "2^28 --type f64" "2^28 --values"
    "2^28 --key-bits 8" "2^28 --type u64 --key-bits 32" "2^28 --key-bits 16")
  for c in "${cases[@]}"; do
    # shellcheck disable=SC2086
    "$host" sort $c --baseline "$out/cub-sort.csv" || status=1
    # Against the earlier build at 2^28 (it has no --key-bits).
    if [ -x "$before" ] && [[ $c == 2^28* && $c != *--key-bits* ]]; then
      # shellcheck disable=SC2086
      "$before" sort $c --baseline "$out/cub-sort.csv" 2>&1 | sed 's/^/before: /' |
        grep -E '^before: (time|check)' || true
    fi
  done
  "$host" histogram 2^28 --bins 256 || status=1
  echo "== compute-sanitizer on the sort and the partition"
  sanitize "memcheck racecheck synccheck" "$host" "sort 70001 --values" "sort 70001 --type f64" \
    "sort 70001 --type i32" "sort 70001 --key-bits 12 --values" "sort 70001 --type u64 --key-bits 20" \
    "histogram 70001 --bins 1000"
} 2>&1 | tee "$out/sort.log"
exit $status
