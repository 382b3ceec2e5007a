#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after ../shared/tools/gpu-bundle: one
# binary, kernels picked by environment switches, interleaved ROUNDS times (default 2), every
# run checked against the CPU.
# 1. Down the columns: vector column tiles (GPU_SCAN_COLUMN_VEC=1) against the scalar ones (0),
#    and the narrow-column pipelined kernel (GPU_SCAN_PIPELINED=1) against both; strip widths of
#    the vector tiles for 256 columns (GPU_SCAN_COLUMN_STRIP).
#    Then (part "window") the column tiles' look-back reading 4 earlier tiles at once
#    (GPU_SCAN_COLUMN_WINDOW=4) against 1, scalar and vector.
# 2. The radix sort's pass kernels (GPU_SCAN_SORT_PASS unset, early, early20, ballot) at 2^28,
#    then each variant checked at awkward sizes, with values and 64-bit keys.
# 3. memcheck, racecheck and synccheck on the vector column tiles and the sort variants at small
#    sizes.
# PARTS (default "columns window sort checks sanitize") picks the parts; SORT_ROUNDS (default 1)
# the sort's rounds, SORT_PASSES (default "late early early20 ballot") its variants, SORT_CASES
# (';'-separated) its sizes and types.
# Logs: $RESULTS_DIR/columns-sort.log.
#   bash tools/gpu-columns-sort.sh
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
parts=" ${PARTS:-columns window sort checks sanitize} "
passes=${SORT_PASSES:-late early early20 ballot}
IFS=';' read -r -a sort_cases <<< "${SORT_CASES:-2^28;2^28 --type u64;2^28 --type f32}"
{
  for round in $(seq "${ROUNDS:-2}"); do
    [[ $parts == *" columns "* ]] || break
    echo "== columns, round $round"
    for c in "1048576 256" "1048576 256 --type u32 --op max" "524288 256 --type f64" "262144 1024" \
      "65536 4096" "16384 16384" "16777216 16" "4194304 64 --type f64"; do
      # shellcheck disable=SC2086
      for v in 0 1; do run "vec=$v" GPU_SCAN_COLUMN_VEC=$v -- batched $c --axis 0; done
    done
    for c in "67108864 4 --type f64" "33554432 8" "33554432 8 --type u32 --op max"; do
      # shellcheck disable=SC2086
      run pipelined GPU_SCAN_PIPELINED=1 -- batched $c --axis 0
      # shellcheck disable=SC2086
      for v in 0 1; do run "vec=$v" GPU_SCAN_PIPELINED=0 GPU_SCAN_COLUMN_VEC=$v -- batched $c --axis 0; done
    done
    for s in 16 32 64 128; do run "strip=$s" GPU_SCAN_COLUMN_STRIP=$s -- batched 1048576 256 --axis 0; done
  done
  for round in $(seq "${ROUNDS:-2}"); do
    [[ $parts == *" window "* ]] || break
    echo "== look-back window, round $round"
    for c in "1048576 256" "1048576 256 --type u32" "524288 256 --type f64" "262144 1024" "4194304 64 --type f64"; do
      for v in 0 1; do
        # shellcheck disable=SC2086
        for w in 1 4; do run "vec=$v w=$w" GPU_SCAN_COLUMN_VEC=$v GPU_SCAN_COLUMN_WINDOW=$w -- batched $c --axis 0; done
      done
    done
  done
  for round in $(seq "${SORT_ROUNDS:-1}"); do
    [[ $parts == *" sort "* ]] || break
    echo "== sort, round $round"
    for c in "${sort_cases[@]}"; do
      for p in $passes; do
        # shellcheck disable=SC2086
        run "pass=$p" GPU_SCAN_SORT_PASS=$p -- sort $c --iters 10
      done
    done
  done
  [[ $parts == *" checks "* ]] && echo "== sort variants at awkward sizes"
  for p in $passes; do
    [[ $parts == *" checks "* ]] || break
    [[ $p == late ]] && continue
    for n in 1 33 6911 7681 70001 1000003; do
      for c in "" "--type u64 --values" "--type f64" "--type i32 --values" "--key-bits 3"; do
        # shellcheck disable=SC2086
        GPU_SCAN_SORT_PASS=$p "$host" sort $n $c --iters 1 2>&1 | grep -E '^(check|error)' | sed "s|^|$p sort $n $c: |" || status=1
      done
    done
  done
  [[ $parts == *" sanitize "* ]] || exit $status
  echo "== sanitizers"
  sanitize "memcheck racecheck synccheck" "$host" "batched 5003 256 --axis 0" "batched 3001 100 --axis 0 --type f64 --exclusive" \
    "batched 20001 4 --axis 0 --type u32 --op max"
  echo "-- GPU_SCAN_COLUMN_WINDOW=4"
  GPU_SCAN_COLUMN_WINDOW=4 sanitize "memcheck racecheck synccheck" "$host" "batched 5003 256 --axis 0" \
    "batched 3001 100 --axis 0 --type f64"
  for p in $passes; do
    [[ $p == late ]] && continue
    echo "-- GPU_SCAN_SORT_PASS=$p"
    export GPU_SCAN_SORT_PASS=$p
    sanitize "memcheck racecheck synccheck" "$host" "sort 70001" "sort 70001 --type u64 --values --key-bits 20"
  done
  exit $status
} 2>&1 | tee "$out/columns-sort.log"
