#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle: every operation CUB has, ours against
# CUB 3.0.1 timed in the same run at 2^28 (and the scans at 2^30): the single-pass scan for
# u32, i32, f32, u64, f64, stream compaction (DeviceSelect::If) and the radix sort
# (DeviceRadixSort::SortKeys). Then the sanitizers on the kernels the L2 prefetch reached last
# (staged 8-byte scans, compaction, recurrences). Log in $RESULTS_DIR (default .gpu-bundle/results).
#   bash tools/gpu-yardsticks.sh [bench] [sanitize]     (default: both)
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
# The status of each braced group (a subshell in its pipeline) comes out through pipefail.
set -o pipefail
steps="${*:-bench sanitize}"
{
  [[ " $steps " == *" bench "* ]] || exit 0
  echo "== CUB (same run)"
  cub "$out/cub-yardsticks.csv" --ops scan,select,sort --log2 28,30 --types u32,i32,f32,u64,f64 || status=1
  "$host" bench --types u32,i32,f32,u64,f64 --algos single-pass --sizes 2^28..2^30 --step 2 \
    --baseline "$out/cub-yardsticks.csv" --out "$out/yardsticks" | grep -v '^wrote' || status=1
  for t in u32 f32 u64; do
    "$host" compact 2^28 --type $t --baseline "$out/cub-yardsticks.csv" || status=1
  done
  for t in u32 u64; do
    "$host" sort 2^28 --type $t --baseline "$out/cub-yardsticks.csv" || status=1
  done
  "$host" recurrence 2^28 || status=1
  "$host" recurrence 2^27 --type f64 || status=1
  exit $status
} 2>&1 | tee "$out/yardsticks.log" || status=1
{
  [[ " $steps " == *" sanitize "* ]] || exit 0
  echo "== compute-sanitizer on the prefetching 8-byte scans, compaction and recurrences"
  sanitize "memcheck racecheck synccheck" "$host" "scan 2000003 --type u64" "scan 2000003 --type f64 --exclusive" \
    "scan 2000003 --type i64 --op max" "compact 2000003" "compact 2000003 --type u64 --keep flags" \
    "compact 2000003 --type f32 --keep nonzero" "recurrence 2000003" "recurrence 2000003 --type f64"
  exit $status
} 2>&1 | tee "$out/yardsticks-sanitize.log" || status=1
exit $status
