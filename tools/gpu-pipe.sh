#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle (or with only .gpu-bundle/bin/host and
# the CUB program): the pipelined single-pass scan (GPU_SCAN_PIPELINED=1) against the
# one-tile-per-block kernels (=0) of the same binary.
#   bash tools/gpu-pipe.sh [check] [ab] [shape] [sanitize] [bench] [recurrence]     (default: check ab sanitize)
# check: every 4- and 8-byte type and operator against the CPU at awkward sizes (around the
# 4096- and 2048-element tiles, primes, partial last tiles), inclusive, exclusive, with an
# initial value. ab: `bench` at 2^24 to 2^30 with each kind in turn, twice, with CUB's scan in the same run.
# shape: stages, blocks per SM and 32 KB tiles (GPU_SCAN_PIPE_STAGES, _BLOCKS, _WIDE) at 2^28,
# interleaved twice with the default shape and the one-tile-per-block kernel.
# bench: the README's table: `bench` from 2^10 to 2^30 with CUB's scan in the same run, the
# default (pipelined) and GPU_SCAN_PIPELINED=0 in turn; racecheck's whole output for both kinds.
# recurrence: the recurrences' pipelined kernels checked at odd sizes (forced), then timed against
# the staged kernels (GPU_SCAN_PIPELINED=0), interleaved twice; memcheck on both.
# sanitize: memcheck, racecheck, synccheck on small pipelined scans.
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
set -o pipefail
steps="${*:-check ab sanitize}"
{
  [[ " $steps " == *" check "* ]] || exit 0
  for ty in u32 i32 f32 u64 i64 f64; do
    ops="add mul min max"
    [[ $ty == f* ]] || ops="$ops and or xor"
    [[ $ty == u64 ]] && ops="$ops affine"
    for op in $ops; do
      sizes="33 4097 1000003"
      [[ $op == add ]] && sizes="1 33 2047 2048 2049 4095 4096 4097 1000003 16777259"
      for n in $sizes; do
        for mode in "" "--exclusive" "--init 3"; do
          # shellcheck disable=SC2086
          r=$(GPU_SCAN_PIPELINED=1 "$host" scan "$n" --type "$ty" --op "$op" $mode --iters 1 2>&1)
          echo "$r" | grep -q 'PASS' && echo "ok $ty $op $n $mode" || { echo "FAIL $ty $op $n $mode: $r"; status=1; }
        done
      done
    done
  done | grep -v '^ok' ; echo "check done"
  for n in 268435456 1073741831; do
    for ty in u32 f64; do
      GPU_SCAN_PIPELINED=1 "$host" scan "$n" --type "$ty" --iters 1 2>&1 | grep -E 'check|error' | sed "s|^|$ty $n: |"
    done
  done
  exit $status
} 2>&1 | tee "$out/pipe-check.log" || status=1
{
  [[ " $steps " == *" ab "* ]] || exit 0
  cub "$out/cub-pipe.csv" --ops scan --log2 24,26,28,30 --types u32,i32,f32,u64,f64 || status=1
  for round in 1 2; do
    for p in 0 1; do
      echo "== round $round, GPU_SCAN_PIPELINED=$p"
      GPU_SCAN_PIPELINED=$p "$host" bench --types u32,i32,f32,u64,f64 --algos single-pass --sizes 2^24..2^30 --step 2 \
        --baseline "$out/cub-pipe.csv" --out "$out/pipe-bench-p$p-r$round" 2>&1 | grep -v '^\s*$' || status=1
    done
  done
  exit $status
} 2>&1 | tee "$out/pipe-ab.log" || status=1
{
  [[ " $steps " == *" shape "* ]] || exit 0
  # (A first sweep, pipe-shape-s10-h200.log: 2, 3, 4 and 8 stages, 32 KB tiles, 2 blocks per SM.)
  shapes=("GPU_SCAN_PIPELINED=0" "GPU_SCAN_PIPE_STAGES=4" "GPU_SCAN_PIPE_STAGES=5" "GPU_SCAN_PIPE_STAGES=6"
    "GPU_SCAN_PIPE_STAGES=7" "GPU_SCAN_PIPE_STAGES=6 GPU_SCAN_PIPE_BLOCKS=1" "GPU_SCAN_PIPE_STAGES=5 GPU_SCAN_PIPE_BLOCKS=2"
    "GPU_SCAN_PIPE_WIDE=1 GPU_SCAN_PIPE_STAGES=4")
  for round in 1 2; do
    for ty in u32 f32 u64 f64; do
      for shape in "${shapes[@]}"; do
        # shellcheck disable=SC2086
        env GPU_SCAN_PIPELINED=1 $shape "$host" scan 2^28 --type "$ty" 2>&1 | grep -E '^(time|check|error)' |
          sed "s|^|[$shape] $ty: |"
      done
    done
  done
} 2>&1 | tee "$out/pipe-shape.log" || status=1
{
  [[ " $steps " == *" sanitize "* ]] || exit 0
  export GPU_SCAN_PIPELINED=1
  sanitize "memcheck racecheck synccheck" "$host" "scan 100003 --type u32" "scan 70001 --type f64 --exclusive" \
    "scan 4097 --type u64 --op affine --init 5"
  echo "== racecheck, whole output"
  compute-sanitizer --tool racecheck "$host" scan 4097 --type u32 --iters 1; echo "exit=$?"
} 2>&1 | tee "$out/pipe-sanitize.log" || status=1
{
  [[ " $steps " == *" bench "* ]] || exit 0
  cub "$out/cub-bench.csv" --ops scan --log2 10,12,14,16,18,20,22,24,26,28,30 --types u32,i32,f32,u64,f64 > /dev/null || status=1
  for p in 1 0; do
    echo "== GPU_SCAN_PIPELINED=$p"
    GPU_SCAN_PIPELINED=$p "$host" bench --types u32,i32,f32,u64,f64 --algos single-pass --sizes 2^10..2^30 --step 2 \
      --baseline "$out/cub-bench.csv" --out "$out/bench-p$p" 2>&1 | grep -v '^\s*$' || status=1
  done
  # The device tool brings back only a few files: keep the CSVs and the default kernel's plot.
  rm -f "$out"/bench-p*/bench.json "$out"/bench-p0/bench.png "$out"/pipe-bench-p*/bench.json
  for p in 1 0; do
    echo "== racecheck, GPU_SCAN_PIPELINED=$p, whole output"
    GPU_SCAN_PIPELINED=$p compute-sanitizer --tool racecheck "$host" scan 4097 --type u32 --iters 1; echo "exit=$?"
  done
  # Session 10: under racecheck the pipelined kernel's process did not terminate successfully
  # (exit 11, 0 hazards); whether the tool's tracking of asynchronous copies is what fails.
  echo "== racecheck without tracking asynchronous copies, GPU_SCAN_PIPELINED=1"
  GPU_SCAN_PIPELINED=1 compute-sanitizer --tool racecheck --racecheck-memcpy-async no "$host" scan 4097 --type u32 --iters 1
  echo "exit=$?"
} 2>&1 | tee "$out/pipe-bench.log" || status=1
{
  [[ " $steps " == *" recurrence "* ]] || exit 0
  for ty in f32 f64; do
    for n in 1 33 1023 1025 4097 1000003; do
      GPU_SCAN_PIPELINED=1 "$host" recurrence "$n" --type "$ty" --x0 1.5 --iters 1 2>&1 | grep -E '^(check|error)' |
        sed "s|^|pipelined $ty $n: |"
    done
  done
  for round in 1 2; do
    for c in "2^28 --type f32" "2^27 --type f64"; do
      for p in 0 1; do
        # shellcheck disable=SC2086
        GPU_SCAN_PIPELINED=$p "$host" recurrence $c 2>&1 | grep -E '^(time|check|error)' | sed "s|^|pipelined=$p [$c]: |"
      done
    done
  done
  export GPU_SCAN_PIPELINED=1
  sanitize memcheck "$host" "recurrence 70001 --type f32" "recurrence 70001 --type f64"
} 2>&1 | tee "$out/pipe-recurrence.log" || status=1
exit $status
