#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle (or with only the host builds and the
# CUB program), with other builds of the host copied to .gpu-bundle/bin/host-*: the pipelined
# single-pass scans and recurrences of every build side by side, interleaved twice, with CUB's
# scan in the same run; then every other build's pipelined scans checked against the CPU at
# awkward sizes (every type and operator, inclusive, exclusive, with an initial value), its
# one-tile-per-block u8 and u16 scans the same way, its recurrences at odd sizes, and memcheck
# and synccheck on a few of its pipelined scans and recurrences.
#   bash tools/gpu-pipe-ab.sh [time] [check]   (default: both)
# BENCH (bench arguments, cases separated by ';'), RECURRENCES (recurrence arguments, the same),
# CUB_LOG2 and ROUNDS replace the time step's defaults; CHECK_TYPES, CHECK_FULL_OPS (as pipe_check's
# arguments) and ONE_TILE_TYPES the check step's.
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
set -o pipefail
steps="${*:-time check}"
builds=(.gpu-bundle/bin/host .gpu-bundle/bin/host-*)
{
  [[ " $steps " == *" time "* ]] || exit 0
  IFS=';' read -ra bench_cases <<< "${BENCH:-"--types u32,f32,u64,f64 --ops add --sizes 2^28..2^30;--types f64 --ops min,max --sizes 2^28..2^28;--types u8 --ops add,max --sizes 2^30..2^30;--types u16 --ops add --sizes 2^30..2^30"}"
  IFS=';' read -ra recurrence_cases <<< "${RECURRENCES:-"2^28 --type f32;2^27 --type f64"}"
  cub "$out/cub-pipe-ab.csv" --ops scan --log2 "${CUB_LOG2:-28,30}" --types u32,i32,f32,u64,f64 > /dev/null || status=1
  for round in $(seq "${ROUNDS:-2}"); do
    for b in "${builds[@]}"; do
      name=$(basename "$b")
      for c in "${bench_cases[@]}"; do
        # shellcheck disable=SC2086
        "$b" bench $c --step 2 --algos single-pass --baseline "$out/cub-pipe-ab.csv" --out "/tmp/ab-$RANDOM" 2>&1 |
          grep --line-buffered -E '^single' | sed -u "s|^|$name r$round: |" || status=1
      done
      for c in "${recurrence_cases[@]}"; do
        # shellcheck disable=SC2086
        "$b" recurrence $c 2>&1 | grep --line-buffered -E '^(time|check|error)' | sed -u "s|^|$name r$round recurrence [$c]: |"
      done
    done
  done
  exit $status
} 2>&1 | tee "$out/pipe-ab-time.log" || status=1
{
  [[ " $steps " == *" check "* ]] || exit 0
  for b in "${builds[@]:1}"; do
    name=$(basename "$b")
    pipe_check "$b" "${CHECK_TYPES:-u8 u16 u32 i32 f32 u64 i64 f64}" "${CHECK_FULL_OPS:-add max}" | sed "s|^|$name |" |
      grep -v ' ok '
    echo "$name check done"
    PIPELINED=0 pipe_check "$b" "${ONE_TILE_TYPES:-u8 u16}" "${CHECK_FULL_OPS:-add max}" | sed "s|^|$name one-tile |" |
      grep -v ' ok '
    echo "$name one-tile check done"
    sanitize "memcheck synccheck" "$b" "scan 1000003 --pipelined on" "scan 4000037 --type f64 --op max --pipelined on" \
      "scan 16777259 --type u8 --pipelined on" "scan 1000003 --type u16 --op max --exclusive --pipelined on"
    recurrence_check "$b" "$name recurrence"
    GPU_SCAN_PIPELINED=1 sanitize "memcheck synccheck" "$b" "recurrence 100003 --type f64" "recurrence 100003 --type f32" \
      "scan 1000003 --type u64 --op affine --pipelined on"
  done
  exit $status
} 2>&1 | tee "$out/pipe-ab-check.log" || status=1
find "$out" -maxdepth 1 -type f -empty -delete
exit $status
