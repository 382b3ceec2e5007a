#!/usr/bin/env bash
# Runs on the GPU machine after ../shared/tools/gpu-bundle, with other builds of the host copied
# to .gpu-bundle/bin/host-*: 2^28 u32, f32 and u64 sorts, u32 keys with values and u32 keys of 8
# random bits, each by every build in turn (builds interleaved per case), ROUNDS times (default
# 1), and the 2^28 histogram by every build unless HIST=0; then every build's sort but
# host-base's checked against the CPU at awkward sizes, types and with values, and
# .gpu-bundle/bin/host's sort (and histogram) checked and run under compute-sanitizer; then CUB's
# sort in the same run. CASES (sort arguments, ';'-separated) replaces the timed cases; CHECKS=0
# leaves out the checks and the sanitizers, for timings alone within one device call. Logs:
# $RESULTS_DIR/sort-ab.log, cub-sort.csv.
#   bash tools/gpu-sort-ab.sh
#   CASES="2^28;2^28 --type f32" CHECKS=0 HIST=0 bash tools/gpu-sort-ab.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
hist=${HIST:-1}
checks=${CHECKS:-1}
IFS=';' read -r -a cases <<< "${CASES:-2^28;2^28 --type f32;2^28 --type u64;2^28 --values;2^28 --key-bits 8}"
{
  for round in $(seq "${ROUNDS:-1}"); do
    for c in "${cases[@]}"; do
      for b in .gpu-bundle/bin/host .gpu-bundle/bin/host-*; do
        # shellcheck disable=SC2086
        "$b" sort $c --iters 10 2>&1 | grep -E '^(time|check)' | sed "s|^|$(basename "$b") r$round [$c]: |" || status=1
      done
    done
    [[ $hist == 1 ]] || continue
    for b in .gpu-bundle/bin/host .gpu-bundle/bin/host-*; do
      "$b" histogram 2^28 --bins 256 2>&1 | grep -E '^(time|check)' | sed "s|^|$(basename "$b") r$round histogram: |" || status=1
    done
  done
  for b in .gpu-bundle/bin/host .gpu-bundle/bin/host-*; do
    [[ $b == *host-base || $checks == 0 ]] && continue
    echo "== checks: $(basename "$b")"
    sort_checks "$b" 0 1 33 6911 6912 6913 70001 1000003 16777259
  done
  b=.gpu-bundle/bin/host
  checked=("sort 70001 --values" "sort 70001 --type u64 --values --key-bits 20" "sort 1000003 --key-bits 3")
  if [[ $hist == 1 && $checks != 0 ]]; then
    for n in 0 1 33 70001 1000003; do
      for c in "--bins 256" "--bins 1000 --hi 5000 --type u32"; do
        # shellcheck disable=SC2086
        "$b" histogram $n $c --iters 1 2>&1 | grep -E '^check' | sed "s|^|histogram $n $c: |" || status=1
      done
    done
    checked+=("histogram 70001 --bins 1000")
  fi
  [[ $checks == 0 ]] || sanitize "memcheck racecheck synccheck" "$b" "${checked[@]}"
  echo "== CUB"
  cub "$out/cub-sort.csv" --ops sort --log2 28 --types u32,f32,u64 --iters 10 || status=1
} 2>&1 | tee "$out/sort-ab.log"
exit $status
