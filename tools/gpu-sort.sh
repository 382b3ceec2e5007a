#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle: the radix sort against CUB's
# DeviceRadixSort::SortKeys in one run (random keys, and skewed keys whose upper passes find one
# digit in every key), the histogram (the same digit ranking), and the sanitizers on the sort and
# partition kernels. Every other build in .gpu-bundle/bin/host-* (copied there by hand) sorts the
# plain 2^28 cases in the same run, for an A/B. Log in $RESULTS_DIR (default .gpu-bundle/results).
#   bash tools/gpu-sort.sh [quick|cub|same]
# quick: only 2^28 u32 and u64 against CUB, the skewed keys, Nsight Compute's stall reasons on one
# pass (NCU=0 leaves them out), and the sanitizers on the sort.
# cub: only 2^28 u32, f32 and u64 against CUB, the sanitizers on the sort (with values, 20-bit
# u64 keys, 3-bit keys) and its awkward-size checks (sort_checks).
# same: CUB and ours on the same keys (tools/cub_sort.cu), 2^28: random u32, f32, u64 and f64
# keys (u32 also with values) and cub_baseline.cu's keys (`--keys cub`) for u32, f32 and u64;
# cub_baseline.cu's own u32 time beside them checks that tools/cub_sort.cu times what it does.
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
set -o pipefail
quick=${1:-}
{
  echo "== CUB sort (same run)"
  if [ "$quick" = same ]; then
    nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_sort tools/cub_sort.cu & built=$!
    cub "$out/cub-sort.csv" --ops sort --log2 28 --types u32 || status=1
    wait $built && /tmp/cub_sort --log2 28 --types u32,f32,u64,f64 | tee "$out/cub-sort-same.csv" || status=1
    for c in "" "--type f32" "--type u64" "--type f64" "--values" "--keys cub" "--type f32 --keys cub" \
      "--type u64 --keys cub"; do
      # shellcheck disable=SC2086
      "$host" sort 2^28 $c --baseline "$out/cub-sort-same.csv" || status=1
    done
    "$host" sort 1000003 --keys cub --type f64 --values --iters 1 || status=1
    "$host" sort 2^28 --keys cub --key-bits 3 && status=1
    exit $status
  elif [ "$quick" = quick ]; then
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
  exit $status
} 2>&1 | tee "$out/sort.log" || status=1
exit $status
