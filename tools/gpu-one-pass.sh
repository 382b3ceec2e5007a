#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle: the applications that run in one
# pass over the data per step (compaction, radix sort, batched scans) against CUB's
# DeviceSelect::If and DeviceRadixSort and torch.cumsum, timed in the same run, then the
# sanitizers on their kernels. Log in $RESULTS_DIR (default .gpu-bundle/results).
#   bash tools/gpu-one-pass.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
{
  echo "== CUB select and sort (same run)"
  cub "$out/cub-select.csv" --ops select,sort --log2 20,24,28 --types u32,u64,f64 || status=1
  for t in u32 u64; do
    for n in 2^20 2^24 2^28; do
      "$host" compact $n --type $t --baseline "$out/cub-select.csv" || status=1
    done
  done
  "$host" compact 2^28 --keep nonzero || status=1
  "$host" compact 2^28 --keep flags || status=1
  "$host" compact 2^28 --type u8 || status=1
  for t in u32 f64 u64; do
    for n in 2^20 2^24 2^28; do
      "$host" sort $n --type $t --baseline "$out/cub-select.csv" || status=1
    done
  done
  "$host" sort 2^28 --values || status=1
  "$host" histogram 2^28 --bins 256 || status=1
  echo "== torch.cumsum along either axis (same run)"
  python3 tools/peers_batched.py | tee "$out/peers-batched.csv"
  for shape in "1048576 8" "16384 16384" "33554432 8" "1048576 256" "256 1048576" "4096 65536"; do
    for axis in 0 1; do
      # shellcheck disable=SC2086
      "$host" batched $shape --axis $axis || status=1
    done
  done
  "$host" batched 16384 8192 --axis 0 --type f64 || status=1
  "$host" batched 16384 8192 --axis 1 --type f64 --op max --exclusive || status=1
  echo "== compute-sanitizer on the compaction and batched kernels"
  sanitize "memcheck racecheck synccheck" "$host" "compact 70001" "compact 70001 --type u8" \
    "compact 70001 --type u64 --keep flags" "sort 70001 --values" "sort 70001 --type f64" "batched 1001 70 --axis 0 --type u64 --op max" \
    "batched 3000 8 --axis 0 --exclusive" "batched 1024 4099 --axis 1" \
    "batched 1100 2048 --axis 1 --type f64 --exclusive" "batched 700 200 --axis 0 --type f64 --op min"
} 2>&1 | tee "$out/one-pass.log"
exit $status
