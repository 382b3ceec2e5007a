#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle: what the launch bounds of
# scan_abi::tuning::launch_bounds bring, in one run. CUB's DeviceSelect::If, then compaction with
# the bounds and without them (GPU_SCAN_LAUNCH_BOUNDS=0), then the sanitizers on the bounded
# kernels. Log in $RESULTS_DIR (default .gpu-bundle/results).
#   bash tools/gpu-bounds.sh
set -u
out="${RESULTS_DIR:-.gpu-bundle/results}"
mkdir -p "$out"
host=.gpu-bundle/bin/host
status=0
{
  nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_baseline .gpu-bundle/bench/cub_baseline.cu &&
    /tmp/cub_baseline --ops select --log2 20,24,28 --types u32 > "$out/cub-select.csv"
  cat "$out/cub-select.csv"
  for bounds in 1 0; do
    echo "== GPU_SCAN_LAUNCH_BOUNDS=$bounds"
    for n in 2^20 2^24 2^28; do
      GPU_SCAN_LAUNCH_BOUNDS=$bounds "$host" compact $n --baseline "$out/cub-select.csv" || status=1
    done
    for t in i32 f32 u16; do
      GPU_SCAN_LAUNCH_BOUNDS=$bounds "$host" compact 2^28 --type $t || status=1
    done
    GPU_SCAN_LAUNCH_BOUNDS=$bounds "$host" compact 2^28 --keep flags || status=1
  done
  echo "== compute-sanitizer on the bounded kernels"
  for tool in memcheck racecheck synccheck; do
    for c in "compact 70001" "compact 70001 --type u16 --keep nonzero" "compact 1 --type f32"; do
      # shellcheck disable=SC2086
      r=$(compute-sanitizer --tool $tool --error-exitcode 9 "$host" $c --iters 1 2>&1)
      echo "$tool [$c] exit=$? $(echo "$r" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL' | tr '\n' ' ')"
    done
  done
} 2>&1 | tee "$out/bounds.log"
exit $status
