#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle: the packed single-pass scan of 1- and
# 2-byte elements. Logs, the bench table (CSV, JSON, PNG) and CUB's CSV in $RESULTS_DIR (default
# .gpu-bundle/results).
#   bash tools/gpu-narrow.sh [bench] [ab] [check]     (default: bench check)
# bench: `host bench` of u8 and u16 (add, xor, max) from 2^20 to 2^30 against a same-run copy and
#   CUB's inclusive sum and max of the same types (tools/cub_narrow.cu), u32 beside them.
# ab: this build against every other one in .gpu-bundle/bin/host-* (copied there by hand) at 2^28
#   and 2^30, interleaved twice, this build also without launch bounds (`GPU_SCAN_LAUNCH_BOUNDS=0`).
# check: every 1-byte operator against the CPU at odd sizes, inclusive, exclusive and with an
#   initial value, and the packed kernels under compute-sanitizer.
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
set -o pipefail
steps="${*:-bench check}"
{
  [[ " $steps " == *" bench "* ]] || exit 0
  nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_narrow tools/cub_narrow.cu &&
    /tmp/cub_narrow --log2 20,22,24,26,28,30 | tee "$out/cub-narrow.csv" || status=1
  "$host" bench --types u8,u16 --ops add,xor,max --algos single-pass --sizes 2^20..2^30 --step 2 \
    --baseline "$out/cub-narrow.csv" --out "$out/narrow" || status=1
  "$host" bench --types u32 --ops add --algos single-pass --sizes 2^28,2^30 --out /tmp/u32 | grep -E '^single' || status=1
  exit $status
} 2>&1 | tee "$out/narrow-bench.log" || status=1
{
  [[ " $steps " == *" ab "* ]] || exit 0
  for round in 1 2; do
    echo "== round $round"
    for variant in "$host 1" "$host 0" .gpu-bundle/bin/host-*; do
      read -r build bounds <<< "$variant"
      [ -x "$build" ] || continue
      echo "-- $(basename "$build"), launch bounds ${bounds:-1}"
      GPU_SCAN_LAUNCH_BOUNDS=${bounds:-1} "$build" bench --types u8,u16 --ops add,xor,max --algos single-pass \
        --sizes 2^28,2^30 --out "/tmp/narrow-$round" | grep -E '^(single|algo)' || status=1
    done
  done
  exit $status
} 2>&1 | tee "$out/narrow-ab.log" || status=1
{
  [[ " $steps " == *" check "* ]] || exit 0
  echo "== every 1-byte operator against the CPU"
  for op in add xor or and max min mul; do
    for c in "1" "33 --exclusive" "70001 --init 7" "2000003 --exclusive --init 200" "100000007"; do
      # shellcheck disable=SC2086
      "$host" scan $c --type u8 --op $op 2>&1 | sed "s|^|[u8 $op $c] |" | grep -E 'check|error' || status=1
    done
  done
  echo "== compute-sanitizer on the packed kernels"
  sanitize "memcheck racecheck synccheck" "$host" "scan 70001 --type u8" "scan 70001 --type u16 --op min --exclusive" \
    "scan 100003 --type u8 --op xor --init 7" "scan 100003 --type u8 --op and --exclusive" "scan 65536 --type u8 --op max"
  exit $status
} 2>&1 | tee "$out/narrow-check.log" || status=1
exit $status
