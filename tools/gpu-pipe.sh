#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle (or with only .gpu-bundle/bin/host and
# the CUB program): the pipelined single-pass scan (GPU_SCAN_PIPELINED=1) against the
# one-tile-per-block kernels (=0) of the same binary.
#   bash tools/gpu-pipe.sh [check] [ab] [shape] [sanitize] [bench] [narrowbench] [recurrence] [conform]
#     [narrow] [split]
#   (default: check ab sanitize)
# check: every 4- and 8-byte type and operator against the CPU at awkward sizes (around the
# 4096- and 2048-element tiles, primes, partial last tiles), inclusive, exclusive, with an
# initial value. ab: `bench` at 2^24 to 2^30 with each kind in turn, twice, with CUB's scan in the same run.
# shape: stages and blocks per SM (GPU_SCAN_PIPE_STAGES, _BLOCKS) at 2^28, interleaved twice with
# the default shape and the one-tile-per-block kernel. (Session 10 also ran 32 KB tiles, a kernel
# since removed.)
# bench: the README's tables: `bench` of the default kernels from 2^10 to 2^30 with CUB's scan in
# the same run, min and max beside add at 2^28 and 2^30; racecheck's whole output for both kinds
# of kernel. narrowbench: u8 and u16 with CUB's (tools/cub_narrow.cu), 2^20 to 2^30. (In session
# 11 the two in one step, after the GPU tests, ran past the device tool's 10 minutes.) (Session 10's also timed
# GPU_SCAN_PIPELINED=0 at every size: pipe-bench-s10-h200.log.)
# recurrence: the recurrences' pipelined kernels checked at odd sizes (forced), then timed against
# the staged kernels (GPU_SCAN_PIPELINED=0), interleaved twice; memcheck on both.
# sanitize: memcheck, racecheck, synccheck on small pipelined scans.
# conform: the conformance matrix of the pipelined kernel (every type, operator, mode and awkward
# size), then again with GPU_SCAN_PIPE_SPLIT=4 (four scanning warps per reducing warp, where such
# kernels exist), the pipelined recurrences at odd sizes, memcheck and synccheck.
# narrow: u8 and u16 (add, xor, max) from 2^24 to 2^30: one-tile-per-block, pipelined and
# pipelined split kernels in turn, with CUB's (tools/cub_narrow.cu) in the same run.
# split: four scanning warps per reducing warp (GPU_SCAN_PIPE_SPLIT=4) against the default shape
# (u16 add, f64 min and max at 2^28 and 2^30; the f64 recurrence at 2^27 and 2^22, with the
# staged kernel), interleaved twice. (Session 11 also ran u8 add, since four by default.)
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
set -o pipefail
steps="${*:-check ab sanitize}"
{
  [[ " $steps " == *" check "* ]] || exit 0
  pipe_check "$host" "u32 i32 f32 u64 i64 f64" add | grep -v '^ok' ; echo "check done"
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
    "GPU_SCAN_PIPE_STAGES=7" "GPU_SCAN_PIPE_STAGES=6 GPU_SCAN_PIPE_BLOCKS=1" "GPU_SCAN_PIPE_STAGES=5 GPU_SCAN_PIPE_BLOCKS=2")
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
  echo "== default kernels, add"
  "$host" bench --types u32,i32,f32,u64,f64 --algos single-pass --sizes 2^10..2^30 --step 2 \
    --baseline "$out/cub-bench.csv" --out "$out/bench" 2>&1 | grep -v '^\s*$' || status=1
  echo "== default kernels, min and max beside add"
  "$host" bench --types u32,f32,u64,f64 --ops add,min,max --algos single-pass --sizes 2^28..2^30 --step 2 \
    --out "/tmp/minmax" 2>&1 | grep -E '^(algo|single)' || status=1
  # The device tool brings back only a few files: keep the CSVs and the plots.
  rm -f "$out"/bench/bench.json
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
  [[ " $steps " == *" narrowbench "* ]] || exit 0
  nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_narrow tools/cub_narrow.cu &&
    /tmp/cub_narrow --log2 20,22,24,26,28,30 > "$out/cub-narrow.csv" || status=1
  "$host" bench --types u8,u16 --ops add,xor,max --algos single-pass --sizes 2^20..2^30 --step 2 \
    --baseline "$out/cub-narrow.csv" --out "$out/narrow" 2>&1 | grep -E '^(algo|single)' || status=1
  rm -f "$out"/narrow/bench.json
  exit $status
} 2>&1 | tee "$out/pipe-narrowbench.log" || status=1
{
  [[ " $steps " == *" recurrence "* ]] || exit 0
  recurrence_check "$host" pipelined
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
{
  [[ " $steps " == *" conform "* ]] || exit 0
  conformance=$(ls .gpu-bundle/tests/gpu_conformance-* | head -1)
  for split in 0 4; do
    echo "== GPU_SCAN_PIPE_SPLIT=$split"
    GPU_SCAN_PIPE_SPLIT=$split GPU_SCAN_REQUIRE_DEVICE=1 timeout 200 "$conformance" single_pass_pipelined 2>&1 |
      grep -E '^test |FAIL|panicked' || status=1
  done
  for split in 0 4; do
    GPU_SCAN_PIPE_SPLIT=$split recurrence_check "$host" "split=$split"
  done
  export GPU_SCAN_PIPELINED=1
  sanitize "memcheck synccheck" "$host" "scan 100003 --type u8" "scan 70001 --type u16 --op max --exclusive" \
    "scan 4097 --type u8 --op max --init 5" "scan 70001 --type f64 --op max" "recurrence 70001 --type f64"
  GPU_SCAN_PIPE_SPLIT=4 sanitize "memcheck synccheck" "$host" "scan 70001 --type f64 --op min" \
    "scan 70001 --type u16 --op add --exclusive" "recurrence 70001 --type f64"
  exit $status
} 2>&1 | tee "$out/pipe-conform.log" || status=1
{
  [[ " $steps " == *" narrow "* ]] || exit 0
  nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_narrow tools/cub_narrow.cu &&
    /tmp/cub_narrow --log2 24,26,28,30 > "$out/cub-narrow.csv" || status=1
  for kind in "GPU_SCAN_PIPELINED=0" "GPU_SCAN_PIPELINED=1" "GPU_SCAN_PIPELINED=1 GPU_SCAN_PIPE_SPLIT=1"; do
    echo "== $kind"
    # shellcheck disable=SC2086
    env $kind "$host" bench --types u8,u16 --ops add,xor,max --algos single-pass --sizes 2^24..2^30 --step 2 \
      --baseline "$out/cub-narrow.csv" --out "/tmp/narrow-$RANDOM" 2>&1 | grep -E '^(single|algo)' || status=1
  done
  exit $status
} 2>&1 | tee "$out/pipe-narrow.log" || status=1
{
  [[ " $steps " == *" split "* ]] || exit 0
  for round in 1 2; do
    for split in 0 4; do
      echo "== round $round, GPU_SCAN_PIPE_SPLIT=$split"
      for c in "--types u16 --ops add" "--types f64 --ops min,max"; do
        # shellcheck disable=SC2086
        GPU_SCAN_PIPE_SPLIT=$split "$host" bench $c --algos single-pass --sizes 2^28..2^30 --step 2 \
          --out "/tmp/split-$RANDOM" 2>&1 | grep -E '^single' || status=1
      done
    done
    for c in "2^27 --type f64" "2^22 --type f64"; do
      for kind in "GPU_SCAN_PIPELINED=0" "GPU_SCAN_PIPELINED=1" "GPU_SCAN_PIPELINED=1 GPU_SCAN_PIPE_SPLIT=4"; do
        # shellcheck disable=SC2086
        env $kind "$host" recurrence $c 2>&1 | grep -E '^(time|error)' | sed "s|^|$kind [$c]: |"
      done
    done
  done
  exit $status
} 2>&1 | tee "$out/pipe-split.log" || status=1
# The device tool brings back a few files: leave no empty logs of steps that did not run.
find "$out" -maxdepth 1 -type f -empty -delete
exit $status
