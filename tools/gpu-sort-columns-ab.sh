#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle, with other builds of the host copied
# to .gpu-bundle/bin/host-*: every build's 2^28 sorts (u32, f32, u64) and scans down the columns
# at 2^28 elements (f64 2^27), interleaved ROUNDS times (default 1); .gpu-bundle/bin/host's sort
# checked at awkward sizes, types and with values, and its sort and column tiles under
# compute-sanitizer; then CUB's sort in the same run. Every run is checked against the CPU.
# (Session 21's first run also took strips of 8 columns, GPU_SCAN_COLUMN_STRIP=8: slower.)
# Logs: $RESULTS_DIR/sort-columns-ab.log, cub-sort.csv.
#   bash tools/gpu-sort-columns-ab.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
set -o pipefail
run() { # BINARY ARGS...: one run, its time and check lines
  local b=$1
  shift
  "$b" "$@" 2>&1 | grep -E '^(time|check|error)' | cut -c1-150 | sed "s|^|$(basename "$b") [$*] |" || status=1
}
{
  for round in $(seq "${ROUNDS:-1}"); do
    echo "== round $round"
    for b in "$host" .gpu-bundle/bin/host-*; do
      for c in "2^28" "2^28 --type f32" "2^28 --type u64"; do
        # shellcheck disable=SC2086
        run "$b" sort $c --iters 10
      done
    done
    for c in "1048576 256" "524288 256 --type f64" "4194304 64 --type f64" "262144 1024" "65536 4096" \
      "16384 16384" "256 1048576" "8388608 16 --type f64" "16777216 16" "1048576 256 --type u32 --op max"; do
      for b in "$host" .gpu-bundle/bin/host-*; do
        # shellcheck disable=SC2086
        run "$b" batched $c --axis 0
      done
    done
  done
  echo "== checks"
  sort_checks "$host" 0 1 33 6911 6912 6913 70001 1000003
  sanitize "memcheck racecheck synccheck" "$host" "sort 70001" "batched 5003 256 --axis 0" \
    "batched 3001 100 --axis 0 --type f64 --exclusive"
  echo "== CUB"
  cub "$out/cub-sort.csv" --ops sort --log2 28 --types u32,f32,u64 --iters 10 || status=1
} 2>&1 | tee "$out/sort-columns-ab.log"
exit $status
