#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle: what the launch bounds of
# scan_abi::tuning::launch_bounds bring, in one run. CUB's DeviceSelect::If, then compaction with
# the bounds and without them (GPU_SCAN_LAUNCH_BOUNDS=0), then the sanitizers on the bounded
# kernels. Log in $RESULTS_DIR (default .gpu-bundle/results).
#   bash tools/gpu-bounds.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
{
  cub "$out/cub-select.csv" --ops select --log2 20,24,28 --types u32 || status=1
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
  sanitize "memcheck racecheck synccheck" "$host" "compact 70001" "compact 70001 --type u16 --keep nonzero" "compact 1 --type f32"
} 2>&1 | tee "$out/bounds.log"
exit $status
