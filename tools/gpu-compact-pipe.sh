#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with .gpu-bundle/bin/host: the compaction at
# 2^28 by default (the pipelined kernel for comparisons, `tuning::compact_pipelined`) and forced
# onto the one-tile-per-block kernel (GPU_SCAN_PIPELINED=0), beside CUB's DeviceSelect::If in the
# same run, interleaved twice; the narrow-column scans and the f64 recurrence, whose stages are
# freed as soon as their bulk copies have read them (`pipeline` in gpu/src/kernels/pipelined.rs; session 18 timed
# that against the earlier release with trial kernels, since removed, whose PTX the defaults now
# match); then memcheck, racecheck and synccheck on the pipelined compaction and memcheck and
# synccheck on the other two, forced onto them at small sizes.
# Logs: $RESULTS_DIR/compact-pipe.log, cub-select.csv.
#   bash tools/gpu-compact-pipe.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
set -o pipefail
{
  cub "$out/cub-select.csv" --ops select --log2 28 --types u32,f32,u64 || status=1
  for round in 1 2; do
    echo "== round $round"
    for c in "compact 2^28 --type u32" "compact 2^28 --type f32" "compact 2^28 --type u64" "compact 2^28 --type f64" \
      "compact 2^28 --type u32 --keep nonzero" "compact 2^28 --type u32 --keep flags"; do
      for s in "GPU_SCAN_PIPELINED=0" "GPU_SCAN_PIPELINED=default"; do
        # shellcheck disable=SC2086
        env $s "$host" $c --baseline "$out/cub-select.csv" 2>&1 | grep -E '^(time|check|error)' | cut -c1-200 |
          sed "s|^|[$s $c] |" || status=1
      done
    done
    for c in "batched 33554432 8 --axis 0" "batched 33554432 8 --axis 0 --type u32 --op max" "recurrence 2^27 --type f64"; do
      # shellcheck disable=SC2086
      "$host" $c 2>&1 | grep -E '^(time|check|error)' | cut -c1-200 | sed "s|^|[$c] |" || status=1
    done
  done
  echo "== sanitizers, forced onto the pipelined compaction"
  export GPU_SCAN_PIPELINED=1
  sanitize "memcheck racecheck synccheck" "$host" "compact 100003" "compact 70001 --type u64 --keep flags" \
    "compact 30011 --type f32 --keep nonzero"
  sanitize "memcheck synccheck" "$host" "batched 70001 8 --axis 0" \
    "batched 70001 8 --axis 0 --type u32 --op max --exclusive" "recurrence 100003 --type f64"
  exit $status
} 2>&1 | tee "$out/compact-pipe.log"
