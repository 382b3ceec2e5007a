#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle: Nsight Compute on one radix sort pass
# and the digit counting (u32 keys, 2^26), and on CUB's onesweep pass and histogram of the same
# keys: throughput, occupancy, instructions and stall reasons per issued instruction, for seeing
# where a pass's time goes and what CUB's does differently.
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
metrics='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed_op_shared_atom.sum'
{
  # CUB's sort of the same keys first, with the same metrics per kernel: where its passes save
  # instructions, shared-memory wavefronts or bank conflicts against ours.
  nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_baseline .gpu-bundle/bench/cub_baseline.cu || status=1
  for k in Onesweep Histogram; do
    echo "== Nsight Compute: CUB's $k kernel, 2^26 u32 keys"
    ncu -k "regex:$k" --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats \
      --metrics "$metrics" /tmp/cub_baseline --ops sort --log2 26 --types u32 --iters 1 2>&1 |
      grep -vE '^\s*$|OPT|WRN|----|^==PROF' || status=1
  done
  for k in sort_pass_u32 sort_counts_u32; do
    echo "== Nsight Compute: $k, 2^26 u32 keys"
    ncu -k "regex:$k" --launch-count 1 --section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis \
      --metrics "$metrics" \
      "$host" sort 2^26 --iters 1 2>&1 | grep -vE '^\s*$|OPT|WRN|----|^==PROF' || status=1
  done
} 2>&1 | tee "$out/sort-profile.log"
exit $status
