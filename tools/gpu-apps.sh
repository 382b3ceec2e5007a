#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after ../shared/tools/gpu-bundle: CUB's
# select and sort, then our applications at 2^28 (ratios from the same run), the lecture demos,
# and the deterministic-scan cost. Logs go to $RESULTS_DIR (default .gpu-bundle/results).
#   bash tools/gpu-apps.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
{
  echo "== CUB select and sort (same run)"
  cub "$out/cub-apps.csv" --ops select,sort --log2 20,24,28 --types u32,u64,f64 || status=1
  for t in u32 u64; do
    for n in 2^20 2^24 2^28; do
      "$host" compact $n --type $t --baseline "$out/cub-apps.csv" || status=1
    done
  done
  "$host" compact 2^28 --keep nonzero || status=1
  "$host" compact 2^28 --keep flags || status=1
  for t in u32 f64; do
    "$host" sort 2^28 --type $t --baseline "$out/cub-apps.csv" || status=1
  done
  "$host" sort 2^24 --type i32 --values || status=1
  "$host" histogram 2^28 --bins 256 || status=1
  "$host" histogram 1e8 --type i32 --bins 1000 --lo -100 --hi 900 || status=1
  "$host" segmented 2^28 --type f32 --mean-length 1000 || status=1
  "$host" segmented 2^28 --type f32 --mean-length 3 || status=1
  "$host" segmented 2^23 --type f32 --rows-of 8 || status=1
  "$host" segmented 2^28 --type u32 --op max --rows-of 4096 --exclusive || status=1
  echo "== torch.cumsum along either axis (same run)"
  python3 tools/peers_batched.py | tee "$out/peers-batched.csv"
  for shape in "1048576 8" "16384 16384"; do
    for axis in 0 1; do
      # shellcheck disable=SC2086
      "$host" batched $shape --axis $axis || status=1
    done
  done
  "$host" recurrence 2^28 --x0 1.5 || status=1
  "$host" recurrence 1e6 --factors=-1:1 || status=1
  "$host" recurrence 2^27 --type f64 --x0=-2 || status=1
  "$host" csr 2^28 || status=1
  "$host" csr 0 --rows 3 || status=1
  for e in sandwich brackets flag_to_address; do
    echo "== example $e"
    ".gpu-bundle/bin/$e" || status=1
  done
  echo "== compute-sanitizer on the application kernels"
  sanitize "memcheck racecheck synccheck initcheck" "$host" "compact 70001 --type u8" "compact 70001 --keep flags" \
    "sort 70001 --type f64 --values" "histogram 70001 --bins 1000" "csr 70001" "segmented 70001 --mean-length 7" \
    "segmented 70002 --type f64 --rows-of 3 --exclusive" "recurrence 70001" "recurrence 70001 --type f64" \
    "batched 1001 70 --axis 0 --type u64 --op max"
  echo "== deterministic vs default single-pass (same run)"
  for mode in "" --deterministic; do
    # shellcheck disable=SC2086
    "$host" bench --types f32,f64 --algos single-pass --sizes 2^20..2^30 --step 2 --out /tmp/bench$mode $mode | grep -v '^wrote' || status=1
  done
} 2>&1 | tee "$out/apps.log"
exit $status
