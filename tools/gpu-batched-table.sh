#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after ../shared/tools/gpu-bundle (or
# tools/slim-bundle.sh): the batched scans' rows of the README's applications table in one run,
# so that every ratio compares timings of the same run. torch.cumsum along either axis
# (tools/peers_batched.py), then each table shape along both axes, then the narrow matrices down
# the columns (issue 5's 80% target at 2^28; 16 `f64` columns at 2^27), every one checked against
# the CPU. tools/gpu-apps-table.sh runs it for its batched rows. Log: $RESULTS_DIR/batched-table.log.
#   bash tools/gpu-batched-table.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
set -o pipefail
{
  echo "== torch.cumsum along either axis (same run)"
  python3 tools/peers_batched.py | tee "$out/peers-batched-table.csv" || status=1
  for shape in "33554432 8" "1048576 256" "16384 16384" "256 1048576" "8 33554432" "1048576 8"; do
    for axis in 1 0; do
      # shellcheck disable=SC2086
      "$host" batched $shape --axis $axis || status=1
    done
  done
  echo "== narrow matrices down the columns"
  for shape in "16777216 16" "4194304 64" "2097152 128" "2097152 128 --type u32 --op max" "67108864 4" \
    "134217728 2 --type f64" "33554432 8 --type f64" "4194304 64 --type f64" "8388608 16 --type f64"; do
    # shellcheck disable=SC2086
    "$host" batched $shape --axis 0 || status=1
  done
  exit $status
} 2>&1 | tee "$out/batched-table.log" || status=1
exit $status
