#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle: where a single-pass tile's time goes.
# The u32 add scan with per-tile timestamps (host timeline: claim, loads and reduce, publish,
# look-back, finish and stores), beside the default kernel's own time in the same run, so that the
# probe's cost shows; CSV and PNG of the tiles in $RESULTS_DIR (default .gpu-bundle/results).
#   bash tools/gpu-timeline.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
{
  for n in 2^24 2^28; do
    echo "== default kernel, $n"
    "$host" scan $n --type u32 || status=1
    echo "== with timestamps, $n"
    "$host" timeline $n --csv "$out/timeline-${n/^/e}.csv" --png "$out/timeline-${n/^/e}.png" || status=1
  done
} 2>&1 | tee "$out/timeline.log"
exit $status
