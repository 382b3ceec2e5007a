#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with .gpu-bundle/bin/host: session 28's
# check of the vector column tiles' look-back window on the final build, in one call. Narrow
# matrices down the columns at 2^28 with a window of 1 (GPU_SCAN_COLUMN_WINDOW=1) against the
# default (4 where tuning::column_lookback_window says so), the default at awkward sizes for
# several types and operators, inclusive and exclusive, and memcheck, racecheck and synccheck on
# window-4 kernels. Log: $RESULTS_DIR/window-check.log.
#   bash tools/gpu-window-check.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
set -o pipefail
run() { # LABEL ENV... COMMAND...: the time and check lines of one run, labelled
  local label=$1
  shift
  env "$@" 2>&1 | grep -E '^(time|check|error)' | cut -c1-150 | sed "s|^|[$label] |" || status=1
}
{
  echo "== window 1 against the default"
  for c in "16777216 16" "4194304 64" "33554432 8 --type f64" "16777216 16 --type u32 --op max" "4194304 64 --type f64"; do
    # shellcheck disable=SC2086
    run "window=1 $c" GPU_SCAN_COLUMN_WINDOW=1 "$host" batched $c --axis 0
    # shellcheck disable=SC2086
    run "default $c" "$host" batched $c --axis 0
  done
  echo "== default at awkward sizes"
  for c in "16" "16 --type i32 --op mul" "8 --type f64" "64 --type u32 --op max" "16 --type u64 --op max" \
    "32 --type i64 --op min"; do
    for rows in 1 1025 100003; do
      for x in "" "--exclusive"; do
        # shellcheck disable=SC2086
        r=$("$host" batched $rows $c --axis 0 $x --iters 1 2>&1 | grep -E '^check')
        echo "$rows x $c $x: $r"
        [[ $r == *PASS* ]] || status=1
      done
    done
  done
  echo "== sanitizers"
  sanitize "memcheck racecheck synccheck" "$host" "batched 20003 16 --axis 0" \
    "batched 30001 8 --axis 0 --type f64 --exclusive" "batched 10007 64 --axis 0 --type u32 --op max"
  exit $status
} 2>&1 | tee "$out/window-check.log"
