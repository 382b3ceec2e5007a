#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with .gpu-bundle/bin/host: the pipelined
# kernels' trial shapes (GPU_SCAN_PIPE_TRIAL=k, `tuning::pipeline_trial` and
# `pipeline_columns_trial`: blocked shares) against the defaults (k=0): the timings interleaved
# twice, then each trial kernel forced onto awkward sizes and checked against the CPU, then
# memcheck and synccheck on the trials at small sizes. Log: $RESULTS_DIR/trial.log.
#   bash tools/gpu-trial.sh [quick]     (quick: the timings only)
# TRIAL_CHECKS and TRIAL_SANITIZE (space-separated) choose the trials checked (default 1 2 3 4)
# and sanitized (1 3).
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
line() { grep -E '^(time|check|error)' | cut -c1-150; }
{
  echo "== timings, trials interleaved, twice"
  for round in 1 2; do
    for c in "recurrence 2^27 --type f64" "recurrence 2^28" "scan 2^28 --type f32"; do
      for k in 0 1 2 3 4; do
        # shellcheck disable=SC2086
        GPU_SCAN_PIPE_TRIAL=$k "$host" $c 2>&1 | grep -E '^(time|error)' | cut -c1-150 | sed "s|^|[$k] [$c] |"
      done
    done
    for c in "33554432 8 --axis 0" "33554432 8 --axis 0 --type u32 --op max" "16777216 4 --axis 0 --type f64" \
      "33554432 4 --axis 0 --type f64"; do
      for k in 0 1 2 3; do
        # shellcheck disable=SC2086
        GPU_SCAN_PIPE_TRIAL=$k "$host" batched $c 2>&1 | line | sed "s|^|[$k] [batched $c] |"
      done
    done
  done
  if [[ ${1:-} != quick ]]; then
    echo "== checks, each trial forced onto the pipelined kernels"
    for k in ${TRIAL_CHECKS:-1 2 3 4}; do
      export GPU_SCAN_PIPE_TRIAL=$k
      recurrence_check "$host" "trial $k"
      for n in 1 33 4097 100003 1000003 16777259; do
        for mode in "" "--exclusive" "--init 3"; do
          # shellcheck disable=SC2086
          r=$(GPU_SCAN_PIPELINED=1 "$host" scan "$n" --type f32 $mode --iters 1 2>&1)
          echo "$r" | grep -q PASS && echo "trial $k ok f32 add $n $mode" || echo "trial $k FAIL f32 add $n $mode: $r"
        done
      done
      for c in "70001 8 --axis 0" "70001 8 --axis 0 --exclusive" "30001 4 --axis 0 --type f64" \
        "30001 4 --axis 0 --type f64 --exclusive" "5003 8 --axis 0 --type u32 --op max" \
        "5003 8 --axis 0 --type u32 --op max --exclusive" "1 8 --axis 0" "2047 8 --axis 0" "4099 4 --axis 0 --type f64"; do
        # shellcheck disable=SC2086
        GPU_SCAN_PIPELINED=1 "$host" batched $c --iters 1 2>&1 | grep -E '^(check|error)' | sed "s|^|trial $k [$c] |"
      done
    done
    unset GPU_SCAN_PIPE_TRIAL
  fi
  if [[ ${1:-} != quick ]]; then
    echo "== sanitizers on the trials"
    export GPU_SCAN_PIPELINED=1
    for k in ${TRIAL_SANITIZE:-1 3}; do
      export GPU_SCAN_PIPE_TRIAL=$k
      sanitize "memcheck synccheck" "$host" "recurrence 100003 --type f64" "scan 100003 --type f32 --exclusive" \
        "batched 70001 8 --axis 0" "batched 30001 4 --axis 0 --type f64 --exclusive" | sed "s|^|trial $k |"
    done
  fi
} 2>&1 | tee "$out/trial.log"
