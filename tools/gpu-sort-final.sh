#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle and run.sh's tests: the sort against
# CUB (tools/gpu-sort.sh quick, without Nsight Compute), each sort kernel's duration at 2^26
# u32 keys (Nsight Compute, clocks as they are), and the histogram at 2^28.
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
NCU=0 bash tools/gpu-sort.sh quick || status=1
{
  echo "== Nsight Compute: each sort kernel's duration, 2^26 u32 keys"
  ncu --clock-control none -k regex:sort_ --launch-count 5 --metrics gpu__time_duration.sum "$host" sort 2^26 --iters 1 2>&1 |
    grep -E '^  sort_(counts|pass)_|gpu__time_duration' || status=1
  echo "== histogram"
  "$host" histogram 2^28 --bins 256 || status=1
} 2>&1 | tee "$out/sort-extra.log"
exit $status
