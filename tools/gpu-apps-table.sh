#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after ../shared/tools/gpu-bundle: the
# applications' benchmark table in one run, so that every ratio compares timings of the same run.
# CUB's DeviceSelect::If and DeviceRadixSort (on cub_baseline.cu's keys and, by tools/cub_sort.cu, on
# the sort's random keys), then each application at 2^28 elements (the f64 recurrence at
# 2^27), every one checked against the CPU, with the batched scans and torch.cumsum beside them
# by tools/gpu-batched-table.sh, and the lecture demos. No sanitizers (gpu-apps.sh runs those).
# Log: $RESULTS_DIR/apps-table.log.
#   bash tools/gpu-apps-table.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
set -o pipefail
{
  echo "== CUB select and sort (same run)"
  nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_sort tools/cub_sort.cu & built=$!
  cub "$out/cub-apps-table.csv" --ops select,sort --log2 28 --types u32,f32,u64,f64 || status=1
  wait $built && /tmp/cub_sort --log2 28 --types u32,f32,u64,f64 | tee "$out/cub-sort-table.csv" || status=1
  for t in u32 f32 u64; do
    "$host" compact 2^28 --type $t --baseline "$out/cub-apps-table.csv" || status=1
  done
  "$host" compact 2^28 --keep nonzero || status=1
  "$host" compact 2^28 --keep flags || status=1
  for t in u32 f32 u64 f64; do
    "$host" sort 2^28 --type $t --baseline "$out/cub-sort-table.csv" || status=1
  done
  "$host" sort 2^28 --keys cub --baseline "$out/cub-apps-table.csv" || status=1
  "$host" sort 2^28 --values --baseline "$out/cub-sort-table.csv" || status=1
  "$host" histogram 2^28 --bins 256 || status=1
  "$host" csr 2^28 || status=1
  for len in 3 1000 1000000; do
    "$host" segmented 2^28 --type f32 --mean-length $len || status=1
  done
  bash "$(dirname "$0")/gpu-batched-table.sh" || status=1
  "$host" recurrence 2^28 || status=1
  "$host" recurrence 2^27 --type f64 || status=1
  for e in sandwich brackets flag_to_address; do
    echo "== example $e"
    ".gpu-bundle/bin/$e" || status=1
  done
  exit $status
} 2>&1 | tee "$out/apps-table.log" || status=1
exit $status
