#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle: the batched scans along either axis
# and the segmented scan at 2^28 elements, every row and column shape the issue names, with
# torch.cumsum timed in the same run; the segmented scan with and without its launch bounds and
# column strips of 16, 32 and 64 (GPU_SCAN_COLUMN_STRIP) side by side; the single-pass scan
# against CUB; the GPU tests of all of them; the sanitizers on the batched and segmented kernels. Log in $RESULTS_DIR (default .gpu-bundle/results).
#   bash tools/gpu-batched.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
{
  echo "== single-pass scan against CUB (same run)"
  cub "$out/cub-batched.csv" --ops scan --log2 28 --types u32,f32,u64,f64 || status=1
  "$host" bench --types u32,f32,u64,f64 --algos single-pass --sizes 2^28 --baseline "$out/cub-batched.csv" \
    --out /tmp/bench-batched | grep -v '^wrote' || status=1
  echo "== torch.cumsum along either axis (same run)"
  python3 tools/peers_batched.py | tee "$out/peers-batched.csv"
  echo "== ours, f32 add unless named"
  for shape in "33554432 8" "1048576 256" "262144 1024" "65536 4096" "1024 262144" "256 1048576" \
    "8 33554432" "16384 16384" "1048576 8"; do
    for axis in 1 0; do
      # shellcheck disable=SC2086
      "$host" batched $shape --axis $axis || status=1
    done
  done
  "$host" batched 33554432 8 --axis 1 --type u32 --op max || status=1
  "$host" batched 16777216 8 --axis 1 --type f64 || status=1
  "$host" batched 131072 1000 --axis 1 --type f64 --op min --exclusive || status=1
  "$host" batched 200000 1341 --axis 1 || status=1
  "$host" batched 8 16777216 --axis 0 --type f64 || status=1
  "$host" batched 256 524288 --axis 1 --type f64 || status=1
  echo "== column strips side by side"
  for strip in 16 32 64; do
    for shape in "1048576 256" "262144 1024" "65536 4096"; do
      # shellcheck disable=SC2086
      GPU_SCAN_COLUMN_STRIP=$strip "$host" batched $shape --axis 0 | sed "s/^time/strip $strip: time/" | grep -E 'strip|FAIL' || status=1
    done
  done
  for len in 3 1000 1000000; do
    "$host" segmented 2^28 --mean-length $len || status=1
    GPU_SCAN_LAUNCH_BOUNDS=0 "$host" segmented 2^28 --mean-length $len | sed 's/^time/unbounded: time/' | grep -E 'unbounded|FAIL' || status=1
  done
  "$host" segmented 2^27 --type f64 --mean-length 3 || status=1
  echo "== compute-sanitizer on the batched and segmented kernels"
  sanitize "memcheck racecheck synccheck" "$host" "batched 3000 8 --axis 1" \
    "batched 301 1365 --axis 1 --type f64 --exclusive" "batched 700 200 --axis 1 --op max --type u32" \
    "batched 5 8193 --axis 1" "batched 3 100003 --axis 1 --type f64 --exclusive" "batched 8 5000 --axis 0" \
    "segmented 70001 --mean-length 3" "segmented 70000 --rows-of 5000 --type f64 --exclusive"
  echo "== GPU tests: applications and conformance"
  for t in .gpu-bundle/tests/apps-* .gpu-bundle/tests/gpu_conformance-*; do
    "$t" --test-threads=2 > /tmp/gpu-tests.log 2>&1 || status=1
    grep -E '^test |test result|panicked' /tmp/gpu-tests.log
  done
} 2>&1 | tee "$out/batched.log"
exit $status
