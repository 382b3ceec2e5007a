# Sourced by the GPU scripts (tools/gpu-*.sh), run from the repository root after
# ../shared/tools/gpu-bundle: where logs go ($out: $RESULTS_DIR, default .gpu-bundle/results),
# the host binary ($host), the exit status to return ($status), `cub` and `sanitize`.
set -u
out="${RESULTS_DIR:-.gpu-bundle/results}"
mkdir -p "$out"
host=.gpu-bundle/bin/host
status=0

# sanitize TOOLS HOST CASE... runs each case (a host subcommand with its arguments, one string)
# under each compute-sanitizer tool (space-separated in TOOLS) and prints one line per run: tool,
# case, exit status, summary and check lines.
sanitize() {
  local tools=$1 host=$2 tool c r
  shift 2
  for tool in $tools; do
    for c in "$@"; do
      # shellcheck disable=SC2086
      r=$(compute-sanitizer --tool "$tool" --error-exitcode 9 "$host" $c --iters 1 2>&1)
      echo "$tool [$c] exit=$? $(echo "$r" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL' | tr '\n' ' ')"
    done
  done
}

# sort_checks HOST N... prints the check line of HOST's sort of N keys, for each N, as u32 keys,
# u64 keys, f64 and i32 keys with values, and 3-bit keys, each prefixed with "sort N ARGS: ".
sort_checks() {
  local host=$1 n c
  shift
  for n in "$@"; do
    for c in "" "--type u64" "--type f64 --values" "--type i32 --values" "--key-bits 3"; do
      # shellcheck disable=SC2086
      "$host" sort "$n" $c --iters 1 2>&1 | grep -E '^check' | sed "s|^|sort $n $c: |" || status=1
    done
  done
}

# cub CSV ARGS... builds ../shared/bench/cub_baseline.cu (from the bundle) and runs it with ARGS
# (--ops, --log2, --types), writing its CSV to CSV and printing it.
cub() {
  local csv=$1
  shift
  nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_baseline .gpu-bundle/bench/cub_baseline.cu &&
    /tmp/cub_baseline "$@" > "$csv" && cat "$csv"
}

# pipe_check HOST TYPES FULL_OPS prints one line per pipelined scan (GPU_SCAN_PIPELINED=1, or
# the one-tile-per-block kernel where the caller sets PIPELINED=0) of
# every operator of each type in TYPES (space-separated) at awkward sizes, inclusive, exclusive
# and with an initial value, checked against the CPU: "ok TYPE OP N MODE" or "FAIL ...: output".
# Operators in FULL_OPS (space-separated) run at every size around the tiles, the others at three.
pipe_check() {
  local host=$1 types=$2 full=$3 ty ops op sizes n mode r
  for ty in $types; do
    ops="add mul min max"
    [[ $ty == f* ]] || ops="$ops and or xor"
    [[ $ty == u64 ]] && ops="$ops affine"
    for op in $ops; do
      sizes="33 4097 1000003"
      [[ " $full " == *" $op "* ]] && sizes="1 33 2047 2048 2049 4095 4096 4097 1000003 16777259"
      for n in $sizes; do
        for mode in "" "--exclusive" "--init 3"; do
          # shellcheck disable=SC2086
          r=$(GPU_SCAN_PIPELINED=${PIPELINED:-1} "$host" scan "$n" --type "$ty" --op "$op" $mode --iters 1 2>&1)
          echo "$r" | grep -q 'PASS' && echo "ok $ty $op $n $mode" || echo "FAIL $ty $op $n $mode: $r"
        done
      done
    done
  done
}

# recurrence_check HOST LABEL prints the check line of each pipelined linear recurrence
# (GPU_SCAN_PIPELINED=1, other GPU_SCAN_* settings from the caller's environment) of f32 and f64
# at odd sizes, each prefixed with "LABEL TYPE N: ".
recurrence_check() {
  local host=$1 label=$2 ty n
  for ty in f32 f64; do
    for n in 1 33 1023 1025 4097 1000003; do
      GPU_SCAN_PIPELINED=1 "$host" recurrence "$n" --type "$ty" --x0 1.5 --iters 1 2>&1 | grep -E '^(check|error)' |
        sed "s|^|$label $ty $n: |"
    done
  done
}

# ncu_metrics METRICS HOST CASE... prints Nsight Compute's METRICS (comma-separated) for one launch
# of each case ("kernel|host subcommand and arguments"), with the case's CPU check line.
ncu_metrics() {
  local metrics=$1 host=$2 c k run
  shift 2
  for c in "$@"; do
    k=${c%%|*} run=${c#*|}
    echo "== $k ($run)"
    # shellcheck disable=SC2086
    ncu -k "regex:^$k\$" --launch-skip 2 --launch-count 1 --metrics "$metrics" "$host" $run --iters 3 2>&1 |
      grep -E 'PASS|FAIL|error|^\s+[a-z_0-9]+__' || status=1
  done
}

# ncu_cases HOST CASE... runs Nsight Compute on one launch of each case ("kernel|host subcommand
# and arguments"): throughput, occupancy, stall reasons and scheduler statistics printed, and the
# warp-stall samples per SASS instruction written to $out/ncu-src-<kernel>.csv.
ncu_cases() {
  local host=$1 c k run
  shift
  for c in "$@"; do
    k=${c%%|*} run=${c#*|}
    echo "== Nsight Compute: $k ($run)"
    # shellcheck disable=SC2086
    ncu -k "regex:^$k\$" --launch-skip 2 --launch-count 1 --section SpeedOfLight --section Occupancy \
      --section WarpStateStats --section SchedulerStats --section SourceCounters --section MemoryWorkloadAnalysis \
      --section LaunchStats -o "/tmp/$k" -f "$host" $run --iters 3 2>&1 | grep -E 'PASS|FAIL|error' || status=1
    ncu -i "/tmp/$k.ncu-rep" --print-summary none 2>&1 | grep -vE '^\s*$|----' | grep -vE '^\s+(OPT|WRN)' || status=1
    ncu -i "/tmp/$k.ncu-rep" --page source --csv --print-source sass > "$out/ncu-src-$k.csv" 2>&1 || status=1
  done
}
