#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with .gpu-bundle/bin/host: where the batched
# shapes that stay under issue 5's 80% of copy spend their time.
#   bash tools/gpu-batched-profile.sh [ncu] [stages] [l2]   (default: ncu stages)
# ncu: Nsight Compute on one launch of each shape's kernel (throughput, occupancy, stall reasons,
#   and warp-stall samples per SASS instruction as CSV): 33554432 x 8 f32 and 33554432 x 4 f64
#   down the columns (the pipelined narrow-column kernel), 1048576 x 256 f32 down the columns
#   (column tiles) and 8 x 33554432 f32 along the rows (one pipelined scan per row).
# stages: the pipelined shapes with other stage counts and blocks per SM that fit
#   (GPU_SCAN_PIPE_STAGES, GPU_SCAN_PIPE_BLOCKS), interleaved twice, each checked against the CPU.
# l2: L2 and L1 request and sector counts (Nsight Compute metrics, one launch each) of the vector
#   column tiles on narrow and wide matrices at 2^27 and of the 32-byte pipelined kernel (session
#   24, docs/results/columns-l2-requests-s24-h200.log).
# Logs: $RESULTS_DIR/batched-profile.log, batched-stages.log, batched-l2.log, ncu-src-<kernel>.csv.
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
set -o pipefail
steps="${*:-ncu stages}"
if [[ " $steps " == *" ncu "* ]]; then
  cases="batched_columns_pipe_f32_add|batched 33554432 8 --axis 0"
  cases="$cases;batched_columns_pipe_f64_add|batched 33554432 4 --axis 0 --type f64"
  cases="$cases;batched_columns_f32_add|batched 1048576 256 --axis 0"
  cases="$cases;single_pass_pipe_f32_add|batched 8 33554432 --axis 1"
  IFS=';' read -r -a list <<< "${NCU_CASES:-$cases}"
  ncu_cases "$host" "${list[@]}" 2>&1 | tee "$out/batched-profile.log"
fi
if [[ " $steps " == *" stages "* ]]; then
  for round in 1 2; do
    for c in "batched 33554432 8 --axis 0|5:2 4:2 3:2 6:1 8:1 10:1" \
      "batched 33554432 8 --axis 0 --type u32 --op max|5:2 4:2 10:1" \
      "batched 33554432 4 --axis 0 --type f64|6:2 5:2 4:2 7:1 12:1" "batched 8 33554432 --axis 1|6:2 5:2 7:1 12:1"; do
      run=${c%%|*}
      for sb in ${c#*|}; do
        st=${sb%:*} bl=${sb#*:}
        # shellcheck disable=SC2086
        GPU_SCAN_PIPE_STAGES=$st GPU_SCAN_PIPE_BLOCKS=$bl "$host" $run 2>&1 | grep -E '^(time|check|error)' |
          cut -c1-160 | sed "s|^|r$round [$run] stages $st blocks $bl: |" || status=1
      done
    done
  done 2>&1 | tee "$out/batched-stages.log"
fi
if [[ " $steps " == *" l2 "* ]]; then
  m=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
  m=$m,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum
  m=$m,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_requests_srcunit_tex_op_write.sum
  m=$m,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed
  m=$m,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
  m=$m,lts__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active
  ncu_metrics "$m" "$host" "batched_columns_vec_f32_add|batched 8388608 16 --axis 0" \
    "batched_columns_vec_f32_add|batched 32768 4096 --axis 0" "batched_columns_vec_f32_add|batched 2097152 64 --axis 0" \
    "batched_columns_vec_f64_add|batched 16777216 8 --axis 0 --type f64" \
    "batched_columns_pipe_f32_add|batched 16777216 8 --axis 0" 2>&1 | tee "$out/batched-l2.log"
fi
exit $status
