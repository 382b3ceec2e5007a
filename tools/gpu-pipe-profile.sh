#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle (or with only .gpu-bundle/bin/host and
# the CUB programs): where the pipelined single-pass scan's time goes.
#   bash tools/gpu-pipe-profile.sh [ncu] [shape]   (default: both)
# ncu: Nsight Compute on one launch each of pipelined kernels: throughput, occupancy, stall
#   reasons per issued instruction, and warp-stall samples per SASS instruction (the source page
#   as CSV, to attribute them to the warp roles). NCU_CASES (';'-separated "kernel|host
#   subcommand and arguments") names them; by default the u32 add (2^28), f64 max (2^27) and u8
#   add (2^30) scans, the narrow-column scan (33554432 x 8 f32 down the columns) and the f64
#   recurrence (2^27), the last two the batched and recurrence kernels issue 5 still finds short.
# shape: u8 and u16 add at 2^30 with every stage count and blocks per SM that fit
#   (GPU_SCAN_PIPE_STAGES, GPU_SCAN_PIPE_BLOCKS), beside CUB's narrow scans in the same run.
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
steps="${*:-ncu shape}"
if [[ " $steps " == *" ncu "* ]]; then
  default="single_pass_pipe_u32_add|scan 2^28 --type u32;single_pass_pipe_f64_max|scan 2^27 --type f64 --op max"
  default="$default;single_pass_pipe_u8_add|scan 2^30 --type u8;batched_columns_pipe_f32_add|batched 33554432 8 --axis 0"
  default="$default;recurrence_pipe_f64|recurrence 2^27 --type f64"
  IFS=';' read -r -a cases <<< "${NCU_CASES:-$default}"
  ncu_cases "$host" "${cases[@]}" 2>&1 | tee "$out/pipe-profile.log"
fi
if [[ " $steps " == *" shape "* ]]; then
  {
    nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_narrow tools/cub_narrow.cu &&
      /tmp/cub_narrow --log2 30 > "$out/cub-narrow-shape.csv" && cat "$out/cub-narrow-shape.csv" || status=1
    for round in 1 2; do
      for sb in "6 2" "4 2" "5 2" "7 2" "4 3" "8 1" "12 1"; do
        read -r st bl <<< "$sb"
        GPU_SCAN_PIPE_STAGES=$st GPU_SCAN_PIPE_BLOCKS=$bl "$host" bench --types u8,u16 --ops add --sizes 2^30..2^30 \
          --algos single-pass --baseline "$out/cub-narrow-shape.csv" --out "/tmp/shape-$RANDOM" 2>&1 |
          grep -E '^single' | sed "s|^|r$round stages $st blocks $bl: |" || status=1
      done
    done
  } 2>&1 | tee "$out/pipe-shape-narrow.log"
fi
exit $status
