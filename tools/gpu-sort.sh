#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle: the radix sort against CUB's
# DeviceRadixSort::SortKeys in one run (random keys, and skewed keys whose upper passes find one
# digit in every key), the histogram (the same digit ranking), and the sanitizers on the sort and
# partition kernels. Every other build in .gpu-bundle/bin/host-* (copied there by hand) sorts the
# plain 2^28 cases in the same run, for an A/B. Log in $RESULTS_DIR (default .gpu-bundle/results).
#   bash tools/gpu-sort.sh [quick|cub]
# quick: only 2^28 u32 and u64 against CUB, the skewed keys, Nsight Compute's stall reasons on one
# pass (NCU=0 leaves them out), and the sanitizers on the sort.
# cub: only 2^28 u32, f32 and u64 against CUB, the sanitizers on the sort (with values, 20-bit
# u64 keys, 3-bit keys) and its awkward-size checks (sort_checks).
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
quick=${1:-}
{
  echo "== CUB sort (same run)"
  if [ "$quick" = quick ]; then
    cub "$out/cub-sort.csv" --ops sort --log2 28 --types u32,u64 || status=1
    cases=("2^28" "2^28 --type u64" "2^28 --key-bits 8" "2^28 --type u64 --key-bits 32")
  elif [ "$quick" = cub ]; then
    cub "$out/cub-sort.csv" --ops sort --log2 28 --types u32,f32,u64 --iters 10 || status=1
    cases=("2^28 --iters 10" "2^28 --type f32 --iters 10" "2^28 --type u64 --iters 10")
  else
    cub "$out/cub-sort.csv" --ops sort --log2 24,28 --types u32,u64,f64 || status=1
    cases=("2^24" "2^28" "2^24 --type u64" "2^28 --type u64" "2^28 --type f64" "2^28 --values"
      "2^28 --key-bits 8" "2^28 --type u64 --key-bits 32" "2^28 --key-bits 16")
  fi
  for c in "${cases[@]}"; do
    # shellcheck disable=SC2086
    "$host" sort $c --baseline "$out/cub-sort.csv" || status=1
  done
  for other in .gpu-bundle/bin/host-*; do
    [ -x "$other" ] || continue
    for c in "2^28" "2^28 --type u64"; do
      # shellcheck disable=SC2086
      "$other" sort $c --baseline "$out/cub-sort.csv" 2>&1 | sed "s|^|$(basename "$other"): |" |
        grep -E ': (sort|time|check)' || true
    done
  done
  if [ "$quick" = quick ] && [ "${NCU:-1}" != 0 ]; then
    echo "== Nsight Compute on one u32 pass at 2^24: stall reasons per issued instruction"
    ncu -k regex:sort_pass_u32 --launch-skip 5 --launch-count 1 --section SpeedOfLight --section Occupancy \
      --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum' \
      "$host" sort 2^24 --iters 1 2>&1 | grep -vE '^\s*$|OPT|WRN|----' | grep -E 'stalled|inst_executed|Throughput|Occupancy|Duration|Registers' || status=1
  elif [ -z "$quick" ]; then
    "$host" histogram 2^28 --bins 256 || status=1
  fi
  echo "== compute-sanitizer on the sort and the partition"
  if [ "$quick" = quick ]; then
    sanitize "memcheck racecheck synccheck" "$host" "sort 70001 --values" "sort 70001 --type u64 --key-bits 20"
  elif [ "$quick" = cub ]; then
    sanitize "memcheck racecheck synccheck" "$host" "sort 70001 --values" "sort 70001 --type u64 --key-bits 20" \
      "sort 1000003 --key-bits 3"
    sort_checks "$host" 0 1 33 6911 6912 6913 70001 16777259
  else
    sanitize "memcheck racecheck synccheck" "$host" "sort 70001 --values" "sort 70001 --type f64" \
      "sort 70001 --type i32" "sort 70001 --key-bits 12 --values" "sort 70001 --type u64 --key-bits 20" \
      "histogram 70001 --bins 1000"
  fi
} 2>&1 | tee "$out/sort.log"
exit $status
