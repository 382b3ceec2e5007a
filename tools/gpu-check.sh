#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after ../shared/tools/gpu-bundle has built
# .gpu-bundle/: the whole test suite with GPU_SCAN_REQUIRE_DEVICE=1, then `scan` for every type,
# then compute-sanitizer over every strategy. Logs go to $RESULTS_DIR (default .gpu-bundle/results).
#   bash tools/gpu-check.sh [tests] [scans] [sanitize]     (default: all three)
set -u
out="${RESULTS_DIR:-.gpu-bundle/results}"
mkdir -p "$out"
host=.gpu-bundle/bin/host
steps="${*:-tests scans sanitize}"
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
      {
        for tool in memcheck racecheck synccheck initcheck; do
          for a in single-pass kogge-stone kogge-stone-in-place "blelloch --propagation scan-then-add" blelloch-nopad brent-kung warp-shuffle naive; do
            for n in 1000 70001; do
              # shellcheck disable=SC2086
              r=$($cs --tool $tool --error-exitcode 9 "$host" scan $n --algo $a --iters 1 --type u32 2>&1)
              echo "$tool [$a] n=$n exit=$? $(echo "$r" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL' | tr '\n' ' ')"
            done
          done
        done
        r=$($cs --tool racecheck --error-exitcode 9 "$host" scan 4096 --algo kogge-stone-racy --iters 1 2>&1)
        echo "racecheck kogge-stone-racy n=4096 exit=$? $(echo "$r" | grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|PASS|FAIL' | tr '\n' ' ')"
      } 2>&1 | tee "$out/sanitize.log" ;;
  esac
done
exit $status
