#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with .gpu-bundle/bin/host: the kernels with
# blocked shares (the f64 recurrence and the narrow-column scan, `tuning::pipeline_recurrence`
# and `pipeline_columns`) at their default shapes, twice, beside unchanged pipelined scans as a
# control; then memcheck and synccheck on both, forced onto them at small sizes, inclusive and
# exclusive. Log: $RESULTS_DIR/blocked.log.
#   bash tools/gpu-blocked.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
{
  echo "== timings, twice"
  for round in 1 2; do
    for c in "recurrence 2^27 --type f64" "recurrence 2^28" "scan 2^28 --type f32" "scan 2^28" \
      "batched 33554432 8 --axis 0" "batched 33554432 8 --axis 0 --type u32 --op max" \
      "batched 33554432 8 --axis 0 --type u32" "batched 16777216 4 --axis 0 --type f64" \
      "batched 33554432 4 --axis 0 --type f64"; do
      # shellcheck disable=SC2086
      "$host" $c 2>&1 | grep -E '^(time|check|error)' | cut -c1-170 | sed "s|^|[$c] |"
    done
  done
  echo "== sanitizers, forced onto the blocked kernels"
  export GPU_SCAN_PIPELINED=1
  sanitize "memcheck synccheck" "$host" "recurrence 100003 --type f64" "recurrence 4097 --type f64 --x0 2" \
    "batched 70001 8 --axis 0" "batched 70001 8 --axis 0 --type u32 --op max --exclusive" \
    "batched 30001 4 --axis 0 --type f64 --exclusive"
} 2>&1 | tee "$out/blocked.log"
