#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after ../shared/tools/gpu-bundle: the scans
# down the columns, one binary, kernels and settings picked by environment switches, each run
# checked against the CPU. Parts (PARTS, default "vec backoff sanitize"):
#   vec      the vector column tiles (GPU_SCAN_COLUMN_VEC=1, 8-byte types) against the scalar
#            ones (0), interleaved ROUNDS times (default 2);
#   backoff  the column look-back sleeping BACKOFFS nanoseconds (GPU_SCAN_COLUMN_BACKOFF, default
#            "0 200 1000") between polls, interleaved ROUNDS times;
#   sanitize memcheck, racecheck and synccheck on the column tiles at small sizes.
# (Session 20's first runs, with the 4-byte vector tiles, the look-back window of 4 and the sort
# pass experiments, came from this script at commit 237aba7, then tools/gpu-columns-sort.sh.)
# Logs: $RESULTS_DIR/columns.log.
#   bash tools/gpu-columns.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
set -o pipefail
run() { # LABEL ENV... -- ARGS...: one run of $host with the settings, its time and check lines
  local label=$1 envs=()
  shift
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" "$host" "$@" 2>&1 | grep -E '^(time|check|error)' | cut -c1-175 | sed "s|^|[$label] [$*] |" || status=1
}
parts=" ${PARTS:-vec backoff sanitize} "
{
  for round in $(seq "${ROUNDS:-2}"); do
    [[ $parts == *" vec "* ]] || break
    echo "== vector column tiles, round $round"
    for c in "524288 256 --type f64" "4194304 64 --type f64" "131072 1024 --type u64 --op max" "8388608 16 --type f64"; do
      # shellcheck disable=SC2086
      for v in 0 1; do run "vec=$v" GPU_SCAN_COLUMN_VEC=$v -- batched $c --axis 0; done
    done
  done
  for round in $(seq "${ROUNDS:-2}"); do
    [[ $parts == *" backoff "* ]] || break
    echo "== look-back backoff, round $round"
    for c in "1048576 256" "524288 256 --type f64" "262144 1024"; do
      for b in ${BACKOFFS:-0 200 1000}; do
        # shellcheck disable=SC2086
        run "backoff=$b" GPU_SCAN_COLUMN_BACKOFF=$b -- batched $c --axis 0
      done
    done
  done
  [[ $parts == *" sanitize "* ]] || exit $status
  echo "== sanitizers"
  sanitize "memcheck racecheck synccheck" "$host" "batched 5003 256 --axis 0" \
    "batched 3001 100 --axis 0 --type f64 --exclusive" "batched 20001 4 --axis 0 --type u64 --op max"
  echo "-- GPU_SCAN_COLUMN_BACKOFF=200"
  GPU_SCAN_COLUMN_BACKOFF=200 sanitize "memcheck synccheck" "$host" "batched 5003 256 --axis 0" \
    "batched 3001 100 --axis 0 --type f64"
  exit $status
} 2>&1 | tee "$out/columns.log"
