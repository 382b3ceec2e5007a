#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after ../shared/tools/gpu-bundle has built
# .gpu-bundle/: the whole test suite with GPU_SCAN_REQUIRE_DEVICE=1, then `scan` for every type,
# then compute-sanitizer over every strategy, then the float error study. Logs go to $RESULTS_DIR (default .gpu-bundle/results).
#   bash tools/gpu-check.sh [tests] [scans] [sanitize] [accuracy] [det]     (default: all)
set -u
out="${RESULTS_DIR:-.gpu-bundle/results}"
mkdir -p "$out"
host=.gpu-bundle/bin/host
steps="${*:-tests scans sanitize accuracy det}"
status=0
for step in $steps; do
  case "$step" in
    tests)
      bash .gpu-bundle/run.sh > "$out/tests.log" 2>&1 || status=1
      cat "$out/tests.log"
      tail -n 60 .gpu-bundle/*.log > "$out/test-executables.log" 2>&1 ;;
    scans)
      for t in u8 u16 u32 i32 u64 i64 f32 f64; do
        "$host" scan 100000000 --type "$t" || status=1
      done 2>&1 | tee "$out/scans.log" ;;
    sanitize)
      cs=compute-sanitizer
      # Every strategy and block algorithm on u32, and the single-pass kernel at every element
      # width and in its deterministic order; n=70001 ends in a partial tile everywhere.
      cases=()
      for a in single-pass kogge-stone kogge-stone-in-place "blelloch --propagation scan-then-add" blelloch-nopad brent-kung warp-shuffle naive; do
        cases+=("--type u32 --algo $a")
      done
      cases+=("--type u8 --op max" "--type u16 --op xor" "--type f64 --exclusive" "--type f32 --deterministic"
              "--type u64 --op affine --in-place")
      {
        for tool in memcheck racecheck synccheck initcheck; do
          for c in "${cases[@]}"; do
            for n in 1000 70001; do
              # shellcheck disable=SC2086
              r=$($cs --tool $tool --error-exitcode 9 "$host" scan $n --iters 1 $c 2>&1)
              echo "$tool [$c] n=$n exit=$? $(echo "$r" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL' | tr '\n' ' ')"
            done
          done
        done
        # The racy teaching variant must be reported; the traced one-block kernel is where the
        # race is on shared memory that racecheck watches, next to the two correct forms.
        for a in kogge-stone-racy kogge-stone kogge-stone-in-place; do
          r=$($cs --tool racecheck --error-exitcode 9 "$host" scan 1024 --algo $a --trace 2>&1)
          echo "racecheck traced [$a] n=1024 exit=$? $(echo "$r" | grep -E 'Race reported|RACECHECK SUMMARY|ERROR SUMMARY' | sort -u | tr '\n' ' ')"
        done
      } 2>&1 | tee "$out/sanitize.log" ;;
    accuracy)
      { "$host" accuracy --types f32 --sizes 2^10..2^30 --out "$out" &&
        "$host" accuracy --types f32 --sizes 2^20..2^30 --step 10 --deterministic --out /tmp/det; } 2>&1 | tee "$out/accuracy.log" || status=1 ;;
    det)
      # The deterministic order's cost: both modes in one run, each against its same-run copy.
      for mode in "" --deterministic; do
        # shellcheck disable=SC2086
        "$host" bench --types f32,f64,u32 --algos single-pass --sizes 2^20..2^30 --step 2 --out /tmp/bench$mode $mode || status=1
      done 2>&1 | grep -v '^wrote' | tee "$out/deterministic-bench.log" ;;
  esac
done
exit $status
