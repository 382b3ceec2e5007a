#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after ../shared/tools/gpu-bundle: CUB,
# torch/CuPy and our benchmarks in one run (so every ratio compares timings of the same run),
# then the test suite. Files go to $RESULTS_DIR (default .gpu-bundle/results).
#   bash tools/gpu-bench.sh
set -u
out="${RESULTS_DIR:-.gpu-bundle/results}"
mkdir -p "$out/bench" "$out/blocks"
host=.gpu-bundle/bin/host
log2=10,12,14,16,18,20,22,24,26,28,30
echo "== look-back backoff (single-pass, 2^28)"
for t in u32 u64; do
  for b in 0 100 400 1000; do
    echo "$t backoff=$b $($host scan 2^28 --type $t --backoff-ns $b --iters 30 | grep -E '^time' | cut -c1-100)"
  done
done
echo "== CUB"
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_baseline .gpu-bundle/bench/cub_baseline.cu &&
  /tmp/cub_baseline --log2 $log2 --types u32,i32,f32,u64,f64 > "$out/cub_baseline.csv"
echo "== torch, CuPy"
PYTHONUNBUFFERED=1 python3 .gpu-bundle/bench/peers.py --log2 $log2 > "$out/peers.csv" 2> /tmp/peers.err || tail -3 /tmp/peers.err
echo "== bench"
$host bench --types u8,u16,u32,i32,f32,u64,i64,f64 --sizes 2^10..2^30 --step 2 \
  --baseline "$out/cub_baseline.csv" --peers "$out/peers.csv" --out "$out/bench"
echo "== block algorithms and operators at 2^28"
$host bench --types u32,f32 --ops add,min,max --sizes 2^28 \
  --algos single-pass,kogge-stone,kogge-stone-in-place,blelloch,blelloch-nopad,brent-kung,warp-shuffle \
  --baseline "$out/cub_baseline.csv" --out "$out/blocks"
echo "== tests"
bash .gpu-bundle/run.sh | grep -E '^(PASS|FAIL)'
