#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with .gpu-bundle/bin/host and, to compare
# with, .gpu-bundle/bin/host-base (the same binary built from an earlier commit): the batched
# scans along few long rows (one launch of the pipelined kernel, each row a chain of its own
# tiles) and down narrow columns, then the recurrence and the compaction that share the
# pipelined kernel, interleaved ROUNDS times (default 2), each run checked against the CPU. Then
# (unless SANITIZE=0) memcheck and synccheck forced onto the pipelined kernels at small sizes
# (SANITIZE_CASES, ';'-separated, replaces the cases).
# Logs: $RESULTS_DIR/rows-columns.log.
#   bash tools/gpu-rows-columns.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
set -o pipefail
base=.gpu-bundle/bin/host-base
{
  for round in $(seq "${ROUNDS:-2}"); do
    echo "== round $round"
    for c in "batched 8 33554432 --axis 1" "batched 16 16777216 --axis 1 --type u32" "batched 33554432 8 --axis 0" \
      "batched 33554432 8 --axis 0 --type u32 --op max" "batched 67108864 4 --axis 0 --type f64" \
      "recurrence 2^27 --type f64" "compact 2^28 --type u64"; do
      for h in base new; do
        bin=$host
        [[ $h == base ]] && bin=$base
        [[ -x $bin ]] || continue
        # shellcheck disable=SC2086
        "$bin" $c 2>&1 | grep -E '^(time|check|error)' | cut -c1-170 | sed "s|^|[$h] [$c] |" || status=1
      done
    done
  done
  [[ ${SANITIZE:-1} == 1 ]] || exit $status
  echo "== sanitizers, forced onto the pipelined kernels"
  export GPU_SCAN_PIPELINED=1
  cases="batched 3 100004 --axis 1;batched 5 70000 --axis 1 --type f64 --exclusive"
  cases="$cases;batched 70001 8 --axis 0 --type u32 --op max --exclusive;batched 70001 4 --axis 0 --type f64"
  cases="$cases;recurrence 100003 --type f64;compact 70001 --type u64"
  IFS=';' read -r -a list <<< "${SANITIZE_CASES:-$cases}"
  sanitize "memcheck synccheck" "$host" "${list[@]}"
  exit $status
} 2>&1 | tee "$out/rows-columns.log"
