#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after ../shared/tools/gpu-bundle: the scans
# down the columns, one binary, kernels and settings picked by environment switches, each run
# checked against the CPU. Parts (PARTS, default "vec sanitize"):
#   vec      the vector column tiles (GPU_SCAN_COLUMN_VEC=1) against the scalar ones (0), 8- and
#            4-byte types, interleaved ROUNDS times (default 2);
#   sanitize memcheck, racecheck and synccheck on the column tiles at small sizes;
#   pipe     the pipelined scans down 32-byte rows (4 8-byte or 8 4-byte columns) by every build in
#            .gpu-bundle/bin/host* (other builds copied there by hand), interleaved ROUNDS times,
#            then this build's at awkward sizes (GPU_SCAN_PIPELINED=1 forces the kernel on small
#            matrices) and under memcheck and racecheck;
#   builds   the vector column tiles' shapes at 2^27 by every build in .gpu-bundle/bin/host*,
#            interleaved ROUNDS times (another build's tile shape against this one's);
#   window   the vector column tiles looking back 1 or 4 tiles a round per column
#            (GPU_SCAN_COLUMN_WINDOW; session 28 also measured 8, in trial kernels since removed,
#            commit eed6a88) on narrow and wide matrices, interleaved ROUNDS times, then the
#            windows at awkward sizes, and memcheck, racecheck and synccheck on cases the default
#            gives a window of 4;
#   bulk     the column tiles in shared memory by bulk copies (GPU_SCAN_COLUMN_BULK=1, rows of at
#            most 32 16-byte vectors) against the vector column tiles (0) on narrow matrices at
#            2^28, and against the pipelined scan of 32-byte rows (GPU_SCAN_PIPELINED=1),
#            interleaved ROUNDS times, then at awkward sizes (a tile is 3840 / vectors a row rows)
#            inclusive and exclusive, and under memcheck, racecheck and synccheck (session 31
#            also timed copying a block's own index's tile before the tile counter answered, in
#            commit d30f155's build: GPU_SCAN_COLUMN_BULK_GUESS);
#   pipe16   the pipelined scan of 16-byte rows (4 4-byte or 2 8-byte columns;
#            GPU_SCAN_PIPELINED=1, the default from 4 MiB) against the column tiles in shared
#            memory (0) at 2^28 and 2^23, interleaved ROUNDS times, then at awkward sizes
#            (forced), inclusive and exclusive, and under memcheck, racecheck and synccheck;
#   items    the column tiles in shared memory at several heights (GPU_SCAN_COLUMN_BULK_ITEMS
#            rows a thread group: 7, 11, 15, 23) and tiles brought into L2 ahead
#            (GPU_SCAN_COLUMN_BULK_AHEAD), and each other
#            build in .gpu-bundle/bin/host-* at its default, on narrow matrices at 2^28,
#            interleaved ROUNDS times, then heights 7 and 11 (and 3 tiles ahead) at awkward
#            sizes, inclusive and exclusive, and under memcheck, racecheck and synccheck;
#   tall     taller column tiles in shared memory (GPU_SCAN_COLUMN_BULK_ITEMS 13 to 27, window
#            4) with and without tiles brought into L2 ahead (GPU_SCAN_COLUMN_BULK_AHEAD 66 to
#            264) on the narrow matrices they take at 2^28 and 2^26, interleaved ROUNDS times
#            (times only: the items part checks heights at awkward sizes);
#   wide     rows of 32 16-byte vectors (128 columns of 4 bytes, 64 of 8): the vector tiles (their
#            default until session 34) against the column tiles in shared memory
#            (GPU_SCAN_COLUMN_BULK=1) at heights 23 to 47 rows a thread group and 0 to 66 tiles
#            ahead, at 2^28 and 2^27, interleaved ROUNDS times, then the tallest at awkward sizes;
#   small    the pipelined scans of 16- and 32-byte rows (GPU_SCAN_PIPELINED=1) against the
#            column tiles (0) from 4 to 64 MiB, interleaved ROUNDS times;
#   narrow   issue 5's narrow matrices down the columns at 2^28 (and 64 columns of f64, 16 of
#            u32 max) by every build in .gpu-bundle/bin/host*, interleaved ROUNDS times, then
#            this build's at awkward sizes, inclusive and exclusive.
# (Session 31's window of one tile for the column tiles in shared memory, part bulkw, and session
# 33's first items part, which also timed it, ran at commit b8de75b. Session 20's experiments ran
# from this script's earlier forms: the 4-byte vector tiles, the
# look-back window of 4 and the sort pass variants at commit 237aba7, then named
# tools/gpu-columns-sort.sh; the look-back backoff at commit 9809dff.)
# Logs: $RESULTS_DIR/columns.log.
#   bash tools/gpu-columns.sh
# shellcheck source=tools/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
set -o pipefail
run() { # LABEL ENV... -- ARGS...: one run of $host with the settings, its time and check lines
  local label=$1 envs=()
  shift
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" "$host" "$@" 2>&1 | grep -E '^(time|check|error)' | cut -c1-175 | sed "s|^|[$label] [$*] |" || status=1
}
ab() { # VAR "VALUES" CASE...: `batched CASE --axis 0` with VAR at each value in turn, case by case
  local var=$1 values=$2 c v
  shift 2
  for c in "$@"; do
    for v in $values; do
      # shellcheck disable=SC2086
      run "$var=$v" "$var=$v" -- batched $c --axis 0
    done
  done
}
heights() { # CASE "ITEMS AHEAD"...: `batched CASE --axis 0` on the column tiles in shared memory, each
  # setting in turn: ITEMS rows a thread group, the tile AHEAD after its own brought into L2
  local c=$1 s k a
  shift
  for s in "$@"; do
    read -r k a <<<"$s"
    # shellcheck disable=SC2086
    run "items=$k ahead=$a" GPU_SCAN_PIPELINED=0 GPU_SCAN_COLUMN_BULK=1 GPU_SCAN_COLUMN_BULK_ITEMS=$k \
      GPU_SCAN_COLUMN_BULK_AHEAD=$a -- batched $c --axis 0
  done
}
by_build() { # ARGS: `batched ARGS --axis 0` by this build and every other in .gpu-bundle/bin/host-*
  local b
  for b in "$host" .gpu-bundle/bin/host-*; do
    # shellcheck disable=SC2086
    "$b" batched $1 --axis 0 2>&1 | grep -E '^(time|check|error)' | cut -c1-150 | sed "s|^|$(basename "$b") [$1] |" || status=1
  done
}
check_both() { # LABEL ARGS...: `batched ARGS --axis 0`, inclusive then exclusive, each check line labelled
  local label=$1 x r
  shift
  for x in "" "--exclusive"; do
    # shellcheck disable=SC2086
    r=$("$host" batched "$@" --axis 0 $x --iters 1 2>&1 | grep -E '^check')
    echo "$label $x: $r"
    [[ $r == *PASS* ]] || status=1
  done
}
parts=" ${PARTS:-vec sanitize} "
{
  for round in $(seq "${ROUNDS:-2}"); do
    [[ $parts == *" vec "* ]] || break
    echo "== vector column tiles, round $round"
    for c in "524288 256 --type f64" "4194304 64 --type f64" "131072 1024 --type u64 --op max" "8388608 16 --type f64" \
      "1048576 256" "1048576 256 --type u32 --op max" "1048576 256 --type i32" "262144 1024" "65536 4096" \
      "16384 16384" "4194304 64" "16777216 16" "256 1048576" "65536 256"; do
      # shellcheck disable=SC2086
      for v in 0 1; do run "vec=$v" GPU_SCAN_COLUMN_VEC=$v -- batched $c --axis 0; done
    done
  done
  for round in $(seq "${ROUNDS:-2}"); do
    [[ $parts == *" pipe "* ]] || break
    echo "== pipelined columns of 32-byte rows, round $round"
    for c in "67108864 4 --type f64" "33554432 4 --type f64 --op max" "33554432 4 --type u64 --op max" "33554432 8"; do
      by_build "$c"
    done
  done
  for round in $(seq "${ROUNDS:-2}"); do
    [[ $parts == *" window "* ]] || break
    echo "== look-back window of the vector column tiles, round $round"
    for c in "16777216 16" "33554432 8 --type f64" "8388608 16 --type f64" "4194304 64" "16777216 16 --type u32 --op max" \
      "4194304 64 --type f64" "1048576 256"; do
      # shellcheck disable=SC2086
      run "window=1" GPU_SCAN_PIPELINED=0 GPU_SCAN_COLUMN_WINDOW=1 -- batched $c --axis 0
      # shellcheck disable=SC2086
      run "window=4" GPU_SCAN_PIPELINED=0 GPU_SCAN_COLUMN_WINDOW=4 -- batched $c --axis 0
    done
  done
  if [[ $parts == *" window "* ]]; then
    echo "== look-back windows at awkward sizes"
    for w in 1 4; do
      for c in "16" "8 --type f64" "64 --type u32 --op max" "16 --type u64 --op max" "16 --type i32 --op mul" \
        "32 --type i64 --op min" "256 --type f32 --op max"; do
        for rows in 1 1025 100003 1000003; do
          # shellcheck disable=SC2086
          GPU_SCAN_PIPELINED=0 GPU_SCAN_COLUMN_WINDOW=$w check_both "window $w: $rows x $c" $rows $c
        done
      done
    done
    sanitize "memcheck racecheck synccheck" "$host" "batched 20003 16 --axis 0" \
      "batched 30001 8 --axis 0 --type f64 --exclusive" "batched 10007 64 --axis 0 --type u32 --op max"
  fi
  for round in $(seq "${ROUNDS:-2}"); do
    [[ $parts == *" bulk "* ]] || break
    echo "== column tiles in shared memory by bulk copies, round $round"
    for c in "16777216 16" "33554432 8 --type f64" "8388608 16 --type f64" "4194304 64" "16777216 16 --type u32 --op max" \
      "2097152 128" "4194304 64 --type f64" "67108864 4"; do
      # shellcheck disable=SC2086
      for b in 0 1; do run "bulk=$b" GPU_SCAN_PIPELINED=0 GPU_SCAN_COLUMN_BULK=$b -- batched $c --axis 0; done
    done
    for c in "33554432 8" "67108864 4 --type f64" "33554432 4 --type u64 --op max" "1048576 8" "2097152 4 --type f64"; do
      # shellcheck disable=SC2086
      for p in 1 0; do run "pipelined=$p" GPU_SCAN_PIPELINED=$p GPU_SCAN_COLUMN_BULK=1 -- batched $c --axis 0; done
    done
  done
  if [[ $parts == *" bulk "* ]]; then
    echo "== column tiles in shared memory at awkward sizes"
    for c in "16" "8 --type f64" "64 --type u32 --op max" "16 --type u64 --op max" "16 --type i32 --op mul" \
      "32 --type i64 --op min" "128 --type f32 --op max" "4" "2 --type f64" "8"; do
      for rows in 961 1921 3841 100003 1000003; do
        # shellcheck disable=SC2086
        GPU_SCAN_PIPELINED=0 GPU_SCAN_COLUMN_BULK=1 check_both "bulk: $rows x $c" $rows $c
      done
    done
    GPU_SCAN_PIPELINED=0 GPU_SCAN_COLUMN_BULK=1 sanitize "memcheck racecheck synccheck" "$host" \
      "batched 20003 16 --axis 0" "batched 30001 8 --axis 0 --type f64 --exclusive" \
      "batched 10007 64 --axis 0 --type u32 --op max" "batched 9001 4 --axis 0"
  fi
  for round in $(seq "${ROUNDS:-2}"); do
    [[ $parts == *" items "* ]] || break
    echo "== heights and windows of the column tiles in shared memory, round $round"
    for c in "4194304 64" "8388608 16 --type f64" "67108864 4" "16777216 16"; do
      for b in .gpu-bundle/bin/host-*; do
        # shellcheck disable=SC2086
        "$b" batched $c --axis 0 2>&1 | grep -E '^(time|check|error)' | cut -c1-175 |
          sed "s|^|[$(basename "$b")] [$c] |" || status=1
      done
      heights "$c" "15 0" "11 0" "7 0" "23 0" "15 132" "11 132" "7 264"
    done
  done
  if [[ $parts == *" items "* ]]; then
    echo "== column tiles in shared memory, 7 and 11 rows a thread group, at awkward sizes"
    for k in 7 11; do
      export GPU_SCAN_COLUMN_BULK_AHEAD=$((k == 11 ? 3 : 0))
      for c in "16" "8 --type f64" "64 --type u32 --op max" "16 --type u64 --op max" "4 --type i32 --op mul" \
        "32 --type i64 --op min" "128 --type f32 --op max"; do
        for rows in 449 1793 100003; do
          # shellcheck disable=SC2086
          GPU_SCAN_PIPELINED=0 GPU_SCAN_COLUMN_BULK=1 GPU_SCAN_COLUMN_BULK_ITEMS=$k check_both "bulk $k: $rows x $c" \
            $rows $c
        done
      done
    done
    unset GPU_SCAN_COLUMN_BULK_AHEAD
    GPU_SCAN_COLUMN_BULK_AHEAD=3 GPU_SCAN_PIPELINED=0 GPU_SCAN_COLUMN_BULK=1 GPU_SCAN_COLUMN_BULK_ITEMS=7 \
      sanitize "memcheck racecheck synccheck" \
      "$host" "batched 20003 16 --axis 0" "batched 30001 8 --axis 0 --type f64 --exclusive" \
      "batched 10007 64 --axis 0 --type u32 --op max"
  fi
  for round in $(seq "${ROUNDS:-2}"); do
    [[ $parts == *" tall "* ]] || break
    echo "== taller column tiles in shared memory and tiles brought into L2 ahead, round $round"
    for c in "4194304 64" "8388608 16 --type f64" "16777216 16" "16777216 16 --type u32 --op max" "1048576 64" \
      "4194304 16"; do
      heights "$c" "15 0" "15 132" "13 0" "13 132" "19 0" "19 132" "23 0" "23 66" "23 132" "23 264" "27 0" "27 132"
    done
  done
  for round in $(seq "${ROUNDS:-2}"); do
    [[ $parts == *" wide "* ]] || break
    echo "== rows of 32 vectors: vector tiles against taller column tiles in shared memory, round $round"
    for c in "2097152 128" "4194304 64 --type f64" "1048576 128" "2097152 128 --type u32 --op max"; do
      # shellcheck disable=SC2086
      run "vector tiles" GPU_SCAN_COLUMN_BULK=0 -- batched $c --axis 0
      heights "$c" "23 66" "23 0" "27 66" "31 66" "31 0" "39 66" "39 33" "47 66" "47 0"
    done
  done
  if [[ $parts == *" wide "* ]]; then
    echo "== column tiles in shared memory, 47 rows a thread group, rows of 32 vectors at awkward sizes"
    for c in "128" "64 --type f64" "128 --type u32 --op max" "64 --type i64 --op min"; do
      for rows in 377 1505 100003; do
        # shellcheck disable=SC2086
        GPU_SCAN_COLUMN_BULK=1 GPU_SCAN_COLUMN_BULK_ITEMS=47 check_both "bulk 47: $rows x $c" $rows $c
      done
    done
  fi
  for round in $(seq "${ROUNDS:-2}"); do
    [[ $parts == *" small "* ]] || break
    echo "== pipelined scans of 16- and 32-byte rows against the column tiles, 4 to 64 MiB, round $round"
    ab GPU_SCAN_PIPELINED "1 0" "262144 4" "1048576 4" "4194304 4" "131072 8" "524288 8" "1048576 8" "2097152 8" \
      "1048576 2 --type f64" "2097152 4 --type f64"
  done
  for round in $(seq "${ROUNDS:-2}"); do
    [[ $parts == *" pipe16 "* ]] || break
    echo "== pipelined columns of 16-byte rows, round $round"
    ab GPU_SCAN_PIPELINED "1 0" "67108864 4" "67108864 4 --type u32 --op max" "134217728 2 --type f64" "2097152 4" \
      ${PIPE16_MORE:-}
  done
  if [[ $parts == *" pipe16 "* ]]; then
    echo "== pipelined columns of 16-byte rows at awkward sizes"
    for ty in "f32 add" "u32 max" "i32 mul" "f64 add" "u64 max" "i64 min" "f64 mul"; do
      cols=$((128 / ${ty:1:2}))
      for rows in 1 33 4097 100003 1000003; do
        GPU_SCAN_PIPELINED=1 check_both "$ty $rows x $cols" "$rows" "$cols" --type "${ty% *}" --op "${ty#* }"
      done
    done
    GPU_SCAN_PIPELINED=1 sanitize "memcheck racecheck synccheck" "$host" "batched 100003 4 --axis 0" \
      "batched 4097 2 --axis 0 --type u64 --op max --exclusive" "batched 30001 4 --axis 0 --type i32 --op mul"
  fi
  for round in $(seq "${ROUNDS:-2}"); do
    [[ $parts == *" builds "* ]] || break
    echo "== vector column tiles by build, round $round"
    for c in "8388608 16" "16777216 8 --type f64" "8388608 16 --type f64" "2097152 64" "524288 256" \
      "32768 4096" "524288 256 --type f64" "4194304 32 --type f64" "8388608 16 --type u32 --op max"; do
      by_build "$c"
    done
  done
  for round in $(seq "${ROUNDS:-2}"); do
    [[ $parts == *" narrow "* ]] || break
    echo "== narrow matrices down the columns by build, round $round"
    for c in "33554432 8 --type f64" "16777216 16" "8388608 16 --type f64" "4194304 64" "4194304 64 --type f64" \
      "16777216 16 --type u32 --op max"; do
      by_build "$c"
    done
  done
  if [[ $parts == *" narrow "* ]]; then
    echo "== narrow matrices at awkward sizes"
    for c in "8 --type f64" "16" "16 --type f64" "64" "48 --type u32 --op max"; do
      for rows in 1 1023 1025 4097 100003 1000003; do
        # shellcheck disable=SC2086
        check_both "$rows x $c" $rows $c
      done
    done
  fi
  if [[ $parts == *" pipe "* ]]; then
    echo "== pipelined columns of 32-byte rows at awkward sizes"
    for ty in "f64 add" "f64 max" "f64 mul" "u64 add" "i64 min"; do
      for rows in 1 33 4097 100003 1000003; do
        GPU_SCAN_PIPELINED=1 check_both "$ty $rows x 4" "$rows" 4 --type "${ty% *}" --op "${ty#* }"
      done
    done
    GPU_SCAN_PIPELINED=1 sanitize "memcheck racecheck" "$host" "batched 100003 4 --axis 0 --type f64" \
      "batched 4097 4 --axis 0 --type u64 --op max --exclusive"
  fi
  [[ $parts == *" sanitize "* ]] || exit $status
  echo "== sanitizers"
  sanitize "memcheck racecheck synccheck" "$host" "batched 5003 256 --axis 0" \
    "batched 3001 100 --axis 0 --type f64 --exclusive" "batched 20001 4 --axis 0 --type u64 --op max" \
    "batched 20003 16 --axis 0" "batched 20003 64 --axis 0 --type f64"
  exit $status
} 2>&1 | tee "$out/columns.log"
