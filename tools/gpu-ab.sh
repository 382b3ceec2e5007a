#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle: an A/B of this build against every
# other build in .gpu-bundle/bin/host-* (copied there by hand) on the cases session 8 changed,
# interleaved twice, each case against its same-run copy; torch.cumsum along either axis in the
# same run; then the sanitizers on the changed kernels. A case may start with environment
# settings (`GPU_SCAN_LAUNCH_BOUNDS=0` drops the launch bounds, `GPU_SCAN_ROW_KERNEL_MIN_ROWS`
# moves the row kernel's threshold). Log in $RESULTS_DIR (default .gpu-bundle/results).
#   bash tools/gpu-ab.sh [ab] [sanitize] [bounds] [staged]     (default: ab sanitize)
# bounds: the same A/B with CUB's DeviceSelect::If for the compaction, on the kernels whose launch
# bounds session 8 raised (compaction, the long-row chains, the f64 recurrence), their CPU checks at
# odd sizes and their sanitizers.
# staged: the staged 8-byte and the 1-byte single-pass scans (session 9 measured 64 KB staged tiles
# and word-at-a-time bytes with it), interleaved, checked at odd sizes and around the tile, and
# under the sanitizers.
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
# The status of each braced group (a subshell in its pipeline) comes out through pipefail.
set -o pipefail
cases=("batched 8 33554432 --axis 0" "batched 8 33554432 --axis 0 --type u32" "batched 8 16777216 --axis 0 --type f64"
  "batched 33554432 8 --axis 0" "batched 1048576 8 --axis 0" "batched 16777216 8 --axis 0 --type f64"
  "batched 8 33554432 --axis 1" "batched 256 1048576 --axis 1" "batched 256 1048576 --axis 0"
  "scan 2^28 --type f32" "scan 2^28 --type f32 --deterministic")
# run LABEL BUILD CASE: one line per time and check, prefixed with the build and the case.
run() {
  local -a words settings=()
  read -ra words <<< "$3"
  while [[ ${words[0]} =~ ^[A-Z_0-9]+= ]]; do
    settings+=("${words[0]}")
    words=("${words[@]:1}")
  done
  env "${settings[@]}" "$2" "${words[@]}" 2>&1 | sed "s|^|$1 [$3]: |" | grep -E ': (time|check|error)' || status=1
}
# interleaved CASE...: every case with this build and each other one, twice over.
interleaved() {
  local round c build
  for round in 1 2; do
    echo "== round $round"
    for c in "$@"; do
      for build in "$host" .gpu-bundle/bin/host-*; do
        [ -x "$build" ] && run "$(basename "$build")" "$build" "$c"
      done
    done
  done
}
steps="${*:-ab sanitize}"
{
  [[ " $steps " == *" ab "* ]] || exit 0
  echo "== torch.cumsum along either axis (same run)"
  python3 tools/peers_batched.py | tee "$out/peers-ab.csv"
  interleaved "${cases[@]}"
  exit $status
} 2>&1 | tee "$out/ab.log" || status=1
{
  [[ " $steps " == *" bounds "* ]] || exit 0
  cub "$out/cub-select.csv" --ops select --log2 28 --types u32,f32,u64 || status=1
  interleaved "compact 2^28 --type u32 --baseline $out/cub-select.csv" \
    "compact 2^28 --type f32 --baseline $out/cub-select.csv" "compact 2^28 --type u64 --baseline $out/cub-select.csv" \
    "batched 8 33554432 --axis 1" "batched 16 16777216 --axis 1 --type u32" "recurrence 2^27 --type f64"
  for build in .gpu-bundle/bin/host-*; do
    for c in "compact 1" "compact 33 --type f32" "compact 70001 --type u64 --keep flags" "compact 2000003 --type i32 --keep nonzero" \
      "compact 2000003 --type f64" "batched 3 1000003 --axis 1" "batched 5 999999 --axis 1 --type u32 --op max --exclusive" \
      "recurrence 2000003 --type f64" "recurrence 33 --type f64"; do
      run "$(basename "$build")" "$build" "$c"
    done
    sanitize "memcheck racecheck" "$build" "compact 2000003" "compact 2000003 --type u64 --keep flags" \
      "batched 8 1000003 --axis 1" "recurrence 2000003 --type f64"
  done
  exit $status
} 2>&1 | tee "$out/bounds.log" || status=1
{
  [[ " $steps " == *" staged "* ]] || exit 0
  for c in "scan 1 --type u64" "scan 33 --type f64 --exclusive" "scan 8191 --type i64" "scan 8193 --type u64 --op max --init 5" \
    "scan 2000003 --type f64 --op min" "scan 2000003 --type u8 --exclusive --init 200" "scan 100000007 --type u8 --op xor"; do
    run "$(basename "$host")" "$host" "$c"
  done
  interleaved "scan 2^28 --type u64" "scan 2^28 --type f64" "GPU_SCAN_LAUNCH_BOUNDS=0 scan 2^28 --type f64" \
    "scan 2^30 --type u64" "scan 2^30 --type f64" "scan 2^28 --type u8" "scan 2^30 --type u8" "scan 2^30 --type u8 --op xor" \
    "scan 2^28 --type u16"
  sanitize "memcheck racecheck synccheck" "$host" "scan 2000003 --type u64" "scan 300007 --type f64 --exclusive" \
    "scan 70001 --type u8" "scan 100003 --type u8 --op and --exclusive --init 3"
  exit $status
} 2>&1 | tee "$out/staged.log" || status=1
{
  [[ " $steps " == *" sanitize "* ]] || exit 0
  echo "== compute-sanitizer on the changed kernels"
  sanitize "memcheck racecheck synccheck" "$host" "batched 8 300007 --axis 0" \
    "batched 7 300000 --axis 0 --type f64 --exclusive --op max" "batched 8 524291 --axis 0 --type i32 --op min" \
    "batched 300000 8 --axis 0" "batched 200003 5 --axis 0 --type f64 --exclusive" \
    "batched 8 1000003 --axis 1" "batched 4 1000000 --axis 1 --type f64 --op min" \
    "scan 2000003 --type f32" "scan 2000003 --type f32 --deterministic" "scan 2000003 --type f32 --op min --exclusive"
  exit $status
} 2>&1 | tee "$out/ab-sanitize.log" || status=1
exit $status
