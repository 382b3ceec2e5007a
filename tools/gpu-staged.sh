#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle: the single-pass scan with its tile
# staged in shared memory (GPU_SCAN_STAGED=1) against the register-tile kernels and CUB, in one
# run; the conformance tests on the staged kernels; the sanitizers on them; and the radix sort
# against CUB. Log in $RESULTS_DIR (default .gpu-bundle/results).
#   bash tools/gpu-staged.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
{
  echo "== CUB scan and sort (same run)"
  cub "$out/cub-staged.csv" --ops scan,sort --log2 20,24,26,28,30 --types u32,f32,u64,f64 || status=1
  for staged in 0 1; do
    echo "== GPU_SCAN_STAGED=$staged"
    GPU_SCAN_STAGED=$staged "$host" bench --types u32,f32,u64,f64 --algos single-pass --sizes 2^20..2^30 --step 2 \
      --baseline "$out/cub-staged.csv" --out "$out/bench-staged-$staged" | grep -v '^wrote' || status=1
    GPU_SCAN_STAGED=$staged "$host" bench --types u32 --ops min,max --algos single-pass --sizes 2^28 \
      --baseline "$out/cub-staged.csv" --out /tmp/ops-$staged | grep -v '^wrote' || status=1
  done
  for t in u32 u64 f64; do
    for n in 2^24 2^28; do
      "$host" sort $n --type $t --baseline "$out/cub-staged.csv" || status=1
    done
  done
  echo "== conformance with the staged kernels"
  GPU_SCAN_STAGED=1 GPU_SCAN_REQUIRE_DEVICE=1 .gpu-bundle/tests/gpu_conformance-* --test-threads=2 2>&1 | tail -4 || status=1
  echo "== compute-sanitizer on the staged kernels and the sort"
  export GPU_SCAN_STAGED=1
  sanitize "memcheck racecheck synccheck" "$host" "scan 70001" "scan 70001 --type f64 --exclusive" \
    "scan 100 --type u64 --op max" "sort 70001 --values" "sort 70001 --type f64"
} 2>&1 | tee "$out/staged.log"
exit $status
