#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with .gpu-bundle/bin/host and the apps test
# executable in .gpu-bundle/tests: the batched scans that moved onto the pipelined kernel (the
# columns of matrices with 32-byte rows as one pipelined scan of the rows, few long rows as one
# single-pass scan each) against the kernels before them (GPU_SCAN_PIPELINED=0), interleaved
# twice; their GPU tests; memcheck and synccheck on both, forced at small sizes. Log:
# $RESULTS_DIR/batched-pipe.log.
#   bash tools/gpu-batched-pipe.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
{
  echo "== GPU tests"
  GPU_SCAN_REQUIRE_DEVICE=1 .gpu-bundle/tests/apps* --test-threads=2 batched narrow_columns few_long_rows 2>&1 |
    grep -E '^test |test result|panicked|FAIL'
  echo "== GPU_SCAN_PIPELINED=0 (before) and 1, interleaved, twice"
  for round in 1 2; do
    for c in "33554432 8 --axis 0" "33554432 8 --axis 0 --type u32 --op max" "16777216 4 --axis 0 --type f64" \
      "8 33554432 --axis 1" "16 16777216 --axis 1 --type u32" "1048576 8 --axis 0"; do
      for p in 0 1; do
        # shellcheck disable=SC2086
        GPU_SCAN_PIPELINED=$p "$host" batched $c 2>&1 | grep -E '^(time|check|error)' | cut -c1-150 | sed "s|^|[$p] [$c] |"
      done
    done
  done
  echo "== sanitizers, forced onto the new paths"
  export GPU_SCAN_PIPELINED=1
  sanitize "memcheck synccheck" "$host" "batched 70001 8 --axis 0" "batched 30001 4 --axis 0 --type f64 --exclusive" \
    "batched 5003 8 --axis 0 --type u32 --op max --exclusive" "batched 3 100004 --axis 1" \
    "batched 3 100004 --axis 1 --type f64 --exclusive"
} 2>&1 | tee "$out/batched-pipe.log"
