#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle: the packed single-pass scan of 1- and
# 2-byte elements, timed against a same-run copy (with u32 beside it), and its kernels under
# compute-sanitizer. Logs in $RESULTS_DIR (default .gpu-bundle/results).
#   bash tools/gpu-narrow.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
{
  "$host" bench --types u8,u16 --ops add,max,xor --algos single-pass --sizes 2^20,2^24,2^28,2^30 \
    --out "$out/narrow" | grep -v '^wrote' || status=1
  "$host" bench --types u32 --ops add --algos single-pass --sizes 2^28,2^30 --out /tmp/u32 | grep -v '^wrote' || status=1
  echo "== compute-sanitizer on the packed kernels"
  sanitize "memcheck racecheck synccheck" "$host" "scan 70001 --type u8" "scan 70001 --type u16 --op min --exclusive" \
    "scan 100003 --type u8 --op xor --init 7"
} 2>&1 | tee "$out/narrow.log"
exit $status
