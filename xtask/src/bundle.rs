//! The GPU bundle: release test executables and the CLI, the baselines, the newest CUB's headers,
//! the racecheck witness (tests/sanitizer) and a runner script, in one folder packed as
//! `<folder>.txz`. Nothing in it needs Rust or the source tree, and it runs from any folder.

use crate::{cases, root, run, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The newest CUB: the CCCL headers of this PyPI wheel.
const CCCL_WHEEL: &str = "nvidia-cuda-cccl==13.3.5.0.6";

#[derive(clap::Args, Default)]
pub struct Options {
    /// The bundle's folder (packed beside it as <folder>.txz).
    #[arg(long, default_value = ".gpu-bundle")]
    out: PathBuf,
    /// Also build the CLI of this git revision, for `run.sh compare` (a refactor's before and after).
    #[arg(long)]
    compare: Option<String>,
    /// Leave out the test executables (a benchmark-only bundle, smaller).
    #[arg(long)]
    no_tests: bool,
}

/// Builds the bundle; returns its folder.
pub fn build(opts: &Options) -> Result<PathBuf> {
    let root = root();
    let out = if opts.out.as_os_str().is_empty() { root.join(".gpu-bundle") } else { root.join(&opts.out) };
    if out.exists() {
        std::fs::remove_dir_all(&out)?;
    }
    for dir in ["tests", "bin", "examples", "baselines", "sanitizer"] {
        std::fs::create_dir_all(out.join(dir))?;
    }
    let mut artifacts = Vec::new();
    if !opts.no_tests {
        artifacts.extend(cargo_artifacts(&root, &["test", "--workspace", "--release", "--no-run"])?);
    }
    artifacts.extend(cargo_artifacts(&root, &["build", "--release", "-p", "host"])?);
    let examples = cargo_artifacts(&root, &["build", "--release", "-p", "gpu-scan", "--examples"])?;
    let places = artifacts
        .into_iter()
        .map(|(test, exe)| (if test { "tests" } else { "bin" }, exe))
        .chain(examples.into_iter().map(|(_, exe)| ("examples", exe)));
    for (dir, exe) in places {
        let dest = out.join(dir).join(exe.file_name().ok_or("an executable without a name")?);
        std::fs::copy(&exe, &dest)?;
        let _ = Command::new("strip").arg(&dest).status();
    }
    // Test executables are named after their targets, without cargo's hash; those without a GPU
    // test stay out (CI runs them), which keeps the bundle within what a device call carries.
    for entry in std::fs::read_dir(out.join("tests"))? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        if let Some((stem, _hash)) = name.rsplit_once('-') {
            if CPU_ONLY_TESTS.contains(&stem) {
                std::fs::remove_file(&path)?;
            } else {
                std::fs::rename(&path, out.join("tests").join(stem))?;
            }
        }
    }
    for file in ["cub.cu", "peers.py", "compare.py", "streamed.py"] {
        std::fs::copy(root.join("bench").join("baselines").join(file), out.join("baselines").join(file))?;
    }
    // The racecheck witness of `run.sh sanitize`.
    let witness = "mbarrier_stages.cu";
    std::fs::copy(root.join("tests").join("sanitizer").join(witness), out.join("sanitizer").join(witness))?;
    copy_tree(&cccl_headers(&root)?, &out.join("cccl"))?;
    python_package(&root, &out.join("python"))?;
    if let Some(rev) = &opts.compare {
        let exe = build_revision(&root, rev)?;
        std::fs::create_dir_all(out.join("compare"))?;
        std::fs::copy(&exe, out.join("compare").join("host"))?;
        let _ = Command::new("strip").arg(out.join("compare").join("host")).status();
    }
    std::fs::write(out.join("run.sh"), runner())?;
    let packed = out.with_extension("txz");
    let parent = out.parent().ok_or("the bundle has no parent folder")?;
    let name = out.file_name().ok_or("the bundle has no name")?;
    // Every executable carries the same deflated PTX module, which xz finds again only within its
    // dictionary: one as large as the bundle packs each copy after the first into almost nothing
    // (13 MiB where an 8 MiB dictionary gave 105 MiB).
    let xz = "-T0 --lzma2=preset=6,dict=256MiB";
    run(Command::new("tar").env("XZ_OPT", xz).arg("-cJf").arg(&packed).arg("-C").arg(parent).arg(name))?;
    let mib = std::fs::metadata(&packed)?.len() as f64 / (1 << 20) as f64;
    println!("bundle: {} ({mib:.1} MiB packed as {})", out.display(), packed.display());
    if mib > 60.0 {
        eprintln!("warning: over 60 MiB; a device call carries at most 64 MiB");
    }
    println!(
        "on the GPU machine: mkdir -p /tmp/b && tar xJf {} -C /tmp/b && RESULTS_DIR=$OUT bash /tmp/b/{}/run.sh tests sanitize bench",
        packed.file_name().unwrap_or_default().to_string_lossy(),
        name.to_string_lossy()
    );
    Ok(out)
}

/// Test executables with no GPU test: the abi's, the builders', the CLI's unit tests, the
/// workspace harness's, the planner invariants and the PTX checks (which need ptxas, not a GPU).
const CPU_ONLY_TESTS: &[&str] = &["scan_abi", "ptx_builder", "xtask", "host", "workspace_tests", "invariants", "ptx"];

/// The executables a cargo command builds: (is a test, path).
fn cargo_artifacts(root: &Path, args: &[&str]) -> Result<Vec<(bool, PathBuf)>> {
    let out = Command::new(env!("CARGO"))
        .current_dir(root)
        .args(args)
        .arg("--message-format=json-render-diagnostics")
        .stderr(Stdio::inherit())
        .output()?;
    if !out.status.success() {
        return Err(format!("cargo {} failed", args.join(" ")).into());
    }
    let mut found = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        // `cargo test` builds the examples too; they are bundled once, from their own build.
        let example = msg["target"]["kind"].as_array().is_some_and(|k| k.iter().any(|k| k == "example"));
        if let (Some(exe), false) = (msg["executable"].as_str(), example && !args.contains(&"--examples")) {
            found.push((msg["profile"]["test"] == true, PathBuf::from(exe)));
        }
    }
    Ok(found)
}

/// The Python package for `run.sh python`: its wheel (built with maturin, `$MATURIN` or on
/// `PATH`), its tests and benchmark, and pytest's wheels (the GPU machine reaches no index).
/// Without maturin the bundle goes without it, saying so.
fn python_package(root: &Path, out: &Path) -> Result<()> {
    let maturin = std::env::var_os("MATURIN").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("maturin"));
    if Command::new(&maturin).arg("--version").output().is_err() {
        eprintln!("warning: no maturin (set MATURIN or put it on PATH): the bundle has no Python package");
        return Ok(());
    }
    std::fs::create_dir_all(out.join("wheels"))?;
    let target = std::env::var_os("CARGO_TARGET_DIR").map(|t| root.join(t)).unwrap_or_else(|| root.join("target"));
    run(Command::new(&maturin)
        .current_dir(root.join("python"))
        .env("CARGO_TARGET_DIR", &target)
        .args(["build", "--release", "--locked", "--quiet", "-o"])
        .arg(out))?;
    copy_tree(&root.join("python").join("tests"), &out.join("tests"))?;
    std::fs::copy(root.join("python").join("bench.py"), out.join("bench.py"))?;
    run(Command::new("python3")
        .args(["-m", "pip", "download", "--quiet", "--disable-pip-version-check", "pytest", "--dest"])
        .arg(out.join("wheels")))
}

/// The CCCL headers (`include/cccl`) of [`CCCL_WHEEL`], downloaded once into target/.
fn cccl_headers(root: &Path) -> Result<PathBuf> {
    let dir = root.join("target").join("cccl");
    let include = dir.join("nvidia").join("cu13").join("include").join("cccl");
    if include.join("cub").is_dir() {
        return Ok(include);
    }
    std::fs::create_dir_all(&dir)?;
    run(Command::new("python3")
        .args(["-m", "pip", "download", "--quiet", "--no-deps", "-d"])
        .arg(&dir)
        .arg(CCCL_WHEEL))?;
    let wheel = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or("pip downloaded no wheel")?;
    run(Command::new("python3").args(["-m", "zipfile", "-e"]).arg(&wheel).arg(&dir))?;
    Ok(include)
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let dest = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &dest)?;
        } else {
            std::fs::copy(entry.path(), dest)?;
        }
    }
    Ok(())
}

/// The CLI of revision `rev`, built in a worktree of its own with a target folder of its own.
fn build_revision(root: &Path, rev: &str) -> Result<PathBuf> {
    let tree = root.join("target").join("compare-tree");
    let _ = Command::new("git").current_dir(root).args(["worktree", "remove", "--force"]).arg(&tree).status();
    run(Command::new("git").current_dir(root).args(["worktree", "add", "--detach"]).arg(&tree).arg(rev))?;
    let target = root.join("target").join("compare");
    run(Command::new(env!("CARGO")).current_dir(&tree).env("CARGO_TARGET_DIR", &target).args([
        "build",
        "--release",
        "-p",
        "host",
        "--bin",
        "host",
    ]))?;
    let _ = Command::new("git").current_dir(root).args(["worktree", "remove", "--force"]).arg(&tree).status();
    Ok(target.join("release").join("host"))
}

/// The runner script, with the case lists of `cases` written in.
fn runner() -> String {
    let mut s = String::from(RUNNER_HEAD);
    let list = |name: &str, items: &mut dyn Iterator<Item = String>| {
        let quoted: Vec<String> = items.map(|i| format!("  '{i}'")).collect();
        format!("{name}=(\n{}\n)\n", quoted.join("\n"))
    };
    s += &list("SANITIZE", &mut cases::SANITIZE.iter().map(|(n, a)| format!("{n}|{a}")));
    s += &list("RACECHECK_MBARRIER", &mut cases::RACECHECK_MBARRIER.iter().map(|a| a.to_string()));
    s += &list("APPS", &mut cases::APPS.iter().map(|a| a.to_string()));
    s += &list("BATCHED", &mut cases::BATCHED.iter().map(|e| cases::batched_args(e)));
    s += &list("SWEEP_MORE", &mut cases::SWEEP_MORE.iter().map(|a| a.to_string()));
    s += &list("PRIMITIVES", &mut cases::PRIMITIVES.iter().map(|a| a.to_string()));
    s += &list("FILES", &mut cases::FILES.iter().map(|a| a.to_string()));
    let _ = writeln!(s, "SWEEP='{}'", cases::SWEEP);
    let _ = writeln!(s, "TORCH_SHAPES='{}'", cases::torch_shapes().join(" "));
    s += RUNNER_BODY;
    s
}

const RUNNER_HEAD: &str = r#"#!/usr/bin/env bash
# Generated by `cargo xtask gpu-bundle`. Runs on a GPU machine, from any folder; no Rust needed.
#   bash run.sh tests      every test executable with GPU tests; a GPU test without a GPU fails (GPU_SCAN_REQUIRE_DEVICE=1)
#   bash run.sh examples   every example of host/examples, each checking itself against the CPU
#   bash run.sh sanitize   compute-sanitizer memcheck, racecheck and synccheck, every kernel family
#   bash run.sh yardsticks CUB (the toolkit's and the newest), torch and CuPy
#   bash run.sh compare    the comparison build's CLI against this one, command by command
#   bash run.sh bench      the yardsticks if not yet run, and our benchmarks (what compare left out):
#                          bench-scans (the scan sweeps) then bench-apps (applications, batched),
#                          each a mode of its own for calls of at most 10 minutes
#   bash run.sh primitives CUB's widening sum, sorts and sums by key at 2^28-2^30, torch's, and ours
#   bash run.sh files      every command on 2^28-element .npy files: read, GPU and write times
#   bash run.sh streamed   the streamed scan: host memory and file to file against the bus, torch and numpy
#   bash run.sh python     the Python package: installed in a venv over the system's torch and CuPy, its pytest suite, its benchmark
# Modes run in the order given; results and logs go to $RESULTS_DIR (default: results/ here), and
# all of them into its 00-results.tgz at the end.
set -uo pipefail
B="$(cd "$(dirname "$0")" && pwd)"
R="${RESULTS_DIR:-$B/results}"
mkdir -p "$R"
HOST="$B/bin/host"
export GPU_SCAN_REQUIRE_DEVICE=1
# cudarc loads NCCL as libnccl.so; PyPI's nvidia-nccl wheels ship libnccl.so.2 only.
if ! ldconfig -p 2>/dev/null | grep -q 'libnccl\.so '; then
  nccl=$(python3 -c 'import glob, site; print(next((f for p in site.getsitepackages() for f in sorted(glob.glob(p + "/nvidia/nccl/lib/libnccl.so*"))), ""))' 2>/dev/null)
  if [ -n "$nccl" ]; then
    mkdir -p "$B/lib" && ln -sf "$nccl" "$B/lib/libnccl.so"
    export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
fi
"#;

const RUNNER_BODY: &str = r#"
fail=0

tests() {
  local names=()
  one_test() { ( cd "$B" && "$1" --test-threads 4 > "$R/test-$2.log" 2>&1; echo $? > "$R/test-$2.rc" ); }
  # Together, except `repetition`, which reads the device's free memory and so runs alone after.
  for t in "$B"/tests/*; do
    local n; n=$(basename "$t")
    names+=("$n")
    [ "$n" = repetition ] || one_test "$t" "$n" &
  done
  wait
  [ -x "$B/tests/repetition" ] && one_test "$B/tests/repetition" repetition
  for n in "${names[@]}"; do
    local summary; summary=$(grep -E '^test result' "$R/test-$n.log" | tail -1)
    if [ "$(cat "$R/test-$n.rc")" = 0 ]; then echo "PASS $n: $summary"; else echo "FAIL $n: $summary"; grep -E 'FAILED|panicked' "$R/test-$n.log" | head -20; fail=1; fi
  done
}

examples() {
  for e in "$B"/examples/*; do
    local n; n=$(basename "$e")
    if "$e" > "$R/example-$n.log" 2>&1; then echo "PASS example $n: $(tail -1 "$R/example-$n.log")"
    else echo "FAIL example $n:"; tail -5 "$R/example-$n.log"; fail=1; fi
  done
}

# racecheck runs in its hazard mode (every hazard, tallied below by kind and by the accesses' kernel
# and offset). Its default analysis mode, given the pipelined kernels' hazards (below), dies of
# SIGSEGV in its own library (libsanitizer-collection.so) after the program has passed, before or
# while it prints them: compute-sanitizer then exits 11, the signal's number, or 97 where it had
# printed some, and its report is cut short.
RACECHECK="--racecheck-report hazard --show-backtrace no --print-limit 0"

# Racecheck log $1 without its hazards, then their tally by kind and accesses, most first.
racecheck_reduce() {
  grep -vE '^=+ +(Write|Read) Thread|^=+ +Current Value|^=+ Error: Potential [A-Z]+ hazard|^=+ ?$' "$1"
  grep -q 'Error: Potential [A-Z]* hazard' "$1" || return 0
  echo "hazards by kind and accesses:"
  awk '/Error: Potential [A-Z]+ hazard/ { k = $0; sub(/.*Potential /, "", k); sub(/ hazard.*/, "", k) }
       /^=+ +Write Thread/ { w = $0; sub(/.* at /, "", w) }
       /^=+ +Read Thread/ { r = $0; sub(/.* at /, "", r) }
       /^=+ +Current Value/ { print k " write " w " read " r }' "$1" | sort | uniq -c | sort -rn
}

# The kernels of the accesses that racecheck log $1 reports (hazards and races alike).
hazard_kernels() {
  grep -oE ' at [A-Za-z_][A-Za-z0-9_]*\+0x' "$1" | sed 's/^ at //; s/+0x$//' | sort -u
}

# Errors and warnings of the summary line $1.
summary_count() {
  local e w
  e=$(grep -oE '[0-9]+ errors?' <<< "$1" | head -1 | grep -oE '^[0-9]+')
  w=$(grep -oE '[0-9]+ warnings?' <<< "$1" | head -1 | grep -oE '^[0-9]+')
  echo $(( ${e:-1} + ${w:-0} ))
}

# The pipelined kernels' warps hand a stage on through an mbarrier that lane 0 arrives on after
# __syncwarp; racecheck credits an arrival with the arriving thread's own accesses only, and so
# reports the other lanes'. tests/sanitizer/mbarrier_stages.cu does the same in miniature: WITNESS is
# set where racecheck reports it with lane 0's arrivals and not with every lane's, and only then do
# the cases of RACECHECK_MBARRIER count as known, and only while every hazard lies in a pipelined
# kernel (*_pipe*_).
WITNESS=""
racecheck_witness() {
  local exe="$R/mbarrier_stages" a n summary passed counts=()
  if ! nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -o "$exe" "$B/sanitizer/mbarrier_stages.cu" > "$R/nvcc-mbarrier_stages.log" 2>&1; then
    echo "racecheck witness: nvcc failed (nvcc-mbarrier_stages.log): no pipelined case can count as known"
    return
  fi
  passed=1
  for a in lane0 all; do
    compute-sanitizer --tool racecheck $RACECHECK --error-exitcode 97 "$exe" --arrive "$a" > "$R/witness-$a.raw" 2>&1
    racecheck_reduce "$R/witness-$a.raw" > "$R/sanitize-racecheck-witness-$a.log"
    rm -f "$R/witness-$a.raw"
    grep -q '^PASS' "$R/sanitize-racecheck-witness-$a.log" || passed=0
    summary=$(grep 'RACECHECK SUMMARY' "$R/sanitize-racecheck-witness-$a.log" | tail -1)
    counts+=("$(summary_count "$summary")")
  done
  if [ $passed = 1 ] && [ "${counts[0]}" -gt 0 ] && [ "${counts[1]}" = 0 ]; then
    WITNESS="tests/sanitizer/mbarrier_stages: ${counts[0]} with lane 0's arrivals, 0 with every lane's"
  fi
  echo "racecheck witness (tests/sanitizer/mbarrier_stages): ${counts[0]} hazards with lane 0's arrivals, ${counts[1]} with every lane's$([ -n "$WITNESS" ] || echo "; the limitation is not shown, so no pipelined case counts as known")"
}

sanitize_one() {
  local tool=$1 name=$2 args=$3
  local log="$R/sanitize-$tool-$name.log" opts="" kernels=""
  [ "$tool" = racecheck ] && opts=$RACECHECK
  compute-sanitizer --tool "$tool" $opts --error-exitcode 97 "$HOST" $args --iters 1 > "$log.raw" 2>&1
  local rc=$? summary passed=0 died=0 count
  if [ "$tool" = racecheck ]; then
    kernels=$(hazard_kernels "$log.raw")
    racecheck_reduce "$log.raw" > "$log"
    rm -f "$log.raw"
  else
    mv "$log.raw" "$log"
  fi
  summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^========= //')
  count=$(summary_count "$summary")
  grep -q ': PASS' "$log" && passed=1
  # compute-sanitizer's words for a program that ended by a signal or a non-zero exit.
  grep -q "process didn't terminate successfully" "$log" && died=1
  if [ $rc = 0 ] && [ $passed = 1 ] && [ $died = 0 ] && [ "$count" = 0 ]; then
    echo "ok   $tool $name: $summary"
    return
  fi
  # NCCL probes kernels built for other architectures with cudaFuncGetAttributes; memcheck reports
  # each probe's cudaErrorNoKernelImageForDevice. Known only when every error is such a probe.
  local probes; probes=$(grep -c 'cudaErrorNoKernelImageForDevice.*cudaFuncGetAttributes' "$log")
  if [ "$tool" = memcheck ] && [ $passed = 1 ] && [ $died = 0 ] && [[ "$name" == multi-nccl* ]] &&
    [ "$probes" -gt 0 ] && [ "$probes" = "$count" ] && [ "$(grep -c 'Program hit' "$log")" = "$count" ]; then
    echo "known $tool $name: $summary, all NCCL's cudaFuncGetAttributes probes of kernels for other architectures"
    return
  fi
  if [ "$tool" = racecheck ] && [ $passed = 1 ] && [ $died = 0 ] && [ -n "$WITNESS" ] && [ -n "$kernels" ] &&
    [[ " ${RACECHECK_MBARRIER[*]} " == *" $name "* ]] && ! grep -qvE '_pipe[0-9]*_' <<< "$kernels"; then
    echo "known $tool $name: $summary, all in $(tr '\n' ' ' <<< "$kernels")(lane 0's mbarrier arrivals after __syncwarp; $WITNESS)"
    return
  fi
  echo "FAIL $tool $name (exit $rc): $summary$([ $died = 1 ] && echo "; the program did not terminate successfully$([ $passed = 1 ] && echo ' after it passed')")"
  tail -5 "$log" | sed 's/^/    /'
}

sanitize() {
  local jobs=0
  racecheck_witness > "$R/sanitize-witness.txt"
  cat "$R/sanitize-witness.txt"
  for tool in memcheck racecheck synccheck; do
    for c in "${SANITIZE[@]}"; do
      sanitize_one "$tool" "${c%%|*}" "${c#*|}" > "$R/sanitize-$tool-${c%%|*}.line" &
      jobs=$((jobs + 1))
      if [ $jobs -ge 6 ]; then wait -n; jobs=$((jobs - 1)); fi
    done
  done
  wait
  # Each case's line, in order, with a failure's log tail below it.
  for f in "$R"/sanitize-*.line; do printf '%s\t%s\n' "$(head -1 "$f")" "$f"; done | sort | cut -f2 |
    while read -r f; do cat "$f"; done | tee "$R/sanitize.txt"
  if grep -q '^FAIL' "$R/sanitize.txt"; then fail=1; fi
  echo "sanitize: $(grep -c '^ok' "$R/sanitize.txt") clean, $(grep -c '^known' "$R/sanitize.txt") known, $(grep -c '^FAIL' "$R/sanitize.txt") failed"
}

build_cub() {
  [ -x "$B/cub" ] || nvcc -O3 -std=c++17 -arch=sm_90 -o "$B/cub" "$B/baselines/cub.cu" > "$R/nvcc-cub.log" 2>&1 &
  [ -x "$B/cub35" ] || nvcc -O3 -std=c++17 -arch=sm_90 -I "$B/cccl" -o "$B/cub35" "$B/baselines/cub.cu" > "$R/nvcc-cub35.log" 2>&1 &
}

yardsticks() {
  build_cub
  python3 "$B/baselines/peers.py" scans > "$R/peers.csv" 2> "$R/peers.log"
  python3 "$B/baselines/peers.py" batched $TORCH_SHAPES > "$R/peers-batched.csv" 2>> "$R/peers.log"
  wait
  "$B/cub" > "$R/cub.csv" || fail=1
  "$B/cub35" > "$R/cub35.csv" || fail=1
  grep -h -E '^(inclusive_sum|select|radix_sort_keys_random),(u32|f64),268435456' "$R/cub.csv" "$R/cub35.csv"
}

# The benchmarks in two halves, each within one 10-minute call of the device tool; a half whose
# results are in $R already is skipped, so the second can follow in a later call given the same
# results folder. The sweep is kept where `compare` wrote it.
bench_scans() {
  [ -f "$R/cub35.csv" ] || yardsticks
  [ -f "$R/scan/more.done" ] && return
  mkdir -p "$R/scan"
  [ -f "$R/scan/bench.csv" ] || "$HOST" $SWEEP --baseline "$R/cub35.csv" --out "$R/scan" --force > "$R/sweep.log" 2>&1 || fail=1
  local k=0
  for c in "${SWEEP_MORE[@]}"; do k=$((k + 1)); "$HOST" $c --baseline "$R/cub35.csv" --out "$R/more$k" --force > "$R/sweep-more$k.log" 2>&1 || fail=1; done
  tail -q -n +2 "$R"/more*/bench.csv >> "$R/scan/bench.csv" 2>/dev/null && touch "$R/scan/more.done"
  cat "$R"/sweep-more*.log | grep -E 'single-pass|hierarch|blelloch|kogge|brent' | head -20
}

bench_apps() {
  [ -f "$R/cub35.csv" ] || yardsticks
  if [ ! -f "$R/apps.csv" ]; then
    for c in "${APPS[@]}"; do
      case "$c" in compact*|sort*) extra="--baseline $R/cub35.csv" ;; *) extra="" ;; esac
      "$HOST" --record "$R/apps.csv" $c $extra >> "$R/apps.log" 2>&1 || fail=1
    done
  fi
  if [ ! -f "$R/batched.csv" ]; then
    for c in "${BATCHED[@]}"; do "$HOST" --record "$R/batched.csv" $c >> "$R/batched.log" 2>&1 || fail=1; done
  fi
}

bench() {
  bench_scans
  bench_apps
}

primitives() {
  build_cub
  wait
  "$B/cub" --log2 30 --apps-log2 28 > "$R/cub-primitives.csv" || fail=1
  "$B/cub35" --log2 30 --apps-log2 28 > "$R/cub35-primitives.csv" || fail=1
  python3 "$B/baselines/peers.py" scans --log2 30 > "$R/peers-primitives.csv" 2> "$R/peers.log"
  for c in "${PRIMITIVES[@]}"; do
    case "$c" in sort*) extra="--baseline $R/cub35-primitives.csv" ;; *) extra="" ;; esac
    "$HOST" --record "$R/primitives.csv" ${c//\{r\}/$R} $extra >> "$R/primitives.log" 2>&1 || fail=1
  done
  grep -h -E '^(widening_sum_u32|inclusive_sum,u8|radix_sort_pairs_random,u32|inclusive_sum_by_key)' "$R"/cub*-primitives.csv
  grep -E '^(scan|sort|segmented)|^time|PASS|FAIL' "$R/primitives.log"
}

files() {
  local d="$R/files"
  mkdir -p "$d"
  python3 - "$d" <<'PY'
import sys
import numpy as np
d, n = sys.argv[1], 1 << 28
rng = np.random.default_rng(42)
np.save(f"{d}/u32.npy", rng.integers(0, 1000, n, dtype=np.uint32))
np.save(f"{d}/u8.npy", rng.integers(0, 256, n, dtype=np.uint8))
np.save(f"{d}/f32.npy", rng.random(n, dtype=np.float32))
np.save(f"{d}/rows.npy", np.sort(rng.integers(0, 1 << 20, n, dtype=np.uint32)))
np.save(f"{d}/keys.npy", np.cumsum(rng.random(n) < 1 / 16, dtype=np.uint32))
np.save(f"{d}/m.npy", rng.random((1 << 20, 256), dtype=np.float32))
np.save(f"{d}/a.npy", rng.uniform(0.5, 1.0, n).astype(np.float32))
np.save(f"{d}/b.npy", rng.random(n, dtype=np.float32))
PY
  for c in "${FILES[@]}"; do
    local args=${c//\{d\}/$d}
    echo "== $args" >> "$R/files.log"
    "$HOST" --record "$R/files.csv" $args --force --iters 5 >> "$R/files.log" 2>&1 || fail=1
  done
  grep -E '^==|^time|^files|^wrote|PASS|FAIL|error' "$R/files.log"
  rm -rf "$d"
}

streamed() {
  # STREAM_LOG2: elements of the host-memory runs (2^33 u32 is 32 GiB); FILE_LOG2: of the files.
  local big=${STREAM_LOG2:-33} files=${FILE_LOG2:-30} d="${STREAM_DIR:-$R/stream}"
  mkdir -p "$d"
  local py; py=$(for p in $(which -a python3); do "$p" -c 'import torch' 2>/dev/null && { echo "$p"; break; }; done)
  "${py:-python3}" "$B/baselines/streamed.py" "$big" 3 | tee "$R/streamed-yardsticks.md" || fail=1
  "$HOST" scan "2^$big" --stream --iters 3 --no-check | tee -a "$R/streamed.log" || fail=1
  "$HOST" scan "2^$big" --stream --pageable --iters 3 --no-check | tee -a "$R/streamed.log" || fail=1
  "$HOST" scan "2^30" --stream --device-memory 64MiB --iters 3 | tee -a "$R/streamed.log" || fail=1
  python3 -c "import numpy as np, sys; np.save(sys.argv[1], np.random.default_rng(1).integers(0, 1000, 1 << $files, dtype=np.uint32))" "$d/in.npy"
  "$HOST" scan --input "$d/in.npy" --output "$d/out.npy" --force | tee -a "$R/streamed.log" || fail=1
  python3 -c "import numpy as np, sys; a = np.load(sys.argv[1], mmap_mode='r'); b = np.load(sys.argv[2], mmap_mode='r'); ok = np.array_equal(np.cumsum(a, dtype=np.uint32), b); print('numpy agrees with the output file:', ok); sys.exit(0 if ok else 1)" "$d/in.npy" "$d/out.npy" | tee -a "$R/streamed.log" || fail=1
  rm -f "$d/out.npy"
  # A file cut short under its header (refused before the GPU opens: exit 2), and an output disk
  # too small (a failure mid-stream: any non-zero exit): an error, and no output or temporary file.
  local rc left
  head -c $(( (1 << $files) * 2 )) "$d/in.npy" > "$d/cut.npy"
  "$HOST" scan --input "$d/cut.npy" --output "$d/cut-out.npy" --device-memory 256MiB; rc=$?
  left=$(ls -A "$d"/cut-out.npy "$d"/.gpu-scan-* 2>/dev/null | wc -l)
  echo "truncated input: exit $rc (2 expected), output left: $left" | tee -a "$R/streamed.log"
  { [ "$rc" = 2 ] && [ "$left" = 0 ]; } || { echo "FAIL truncated input"; fail=1; }
  # The small disk lies outside the results, so that a run cut short leaves no mount among them.
  local small; small=$(mktemp -d)
  if mount -t tmpfs -o size=64m tmpfs "$small" 2>/dev/null; then
    "$HOST" scan --input "$d/in.npy" --output "$small/out.npy" --device-memory 256MiB; rc=$?
    left=$(ls -A "$small" | wc -l)
    echo "full disk: exit $rc (non-zero expected), output left: $left" | tee -a "$R/streamed.log"
    { [ "$rc" != 0 ] && [ "$left" = 0 ]; } || { echo "FAIL full disk"; fail=1; }
    umount "$small"
  else echo "full disk: no tmpfs could be mounted here (not root?)" | tee -a "$R/streamed.log"; fi
  rmdir "$small"
  rm -rf "$d"
}

pypkg() {
  local wheel; wheel=$(ls "$B"/python/gpu_scan-*.whl 2>/dev/null | head -1)
  if [ -z "$wheel" ]; then echo "no wheel in the bundle (it was built without maturin)"; fail=1; return; fi
  # The package goes into a folder of its own on PYTHONPATH of the python that has torch (which
  # may itself be a venv, whose packages a venv made from it would not see).
  local py; py=$(for p in $(which -a python3); do "$p" -c 'import torch' 2>/dev/null && { echo "$p"; break; }; done)
  [ -n "$py" ] || { echo "no python3 here has torch"; fail=1; return; }
  local site="$R/site"
  "$py" -m pip install -q --no-deps --target "$site" "$wheel" || { fail=1; return; }
  "$py" -c 'import pytest' 2>/dev/null ||
    "$py" -m pip install -q --no-index --find-links "$B/python/wheels" --target "$site" pytest || { fail=1; return; }
  export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
  (cd "$R" && "$py" -c "import gpu_scan, torch; print(gpu_scan.cumsum(torch.arange(10, device='cuda')))") || fail=1
  (cd "$R" && "$py" -m pytest -q -rs -p no:cacheprovider "$B/python/tests" > "$R/pytest.log" 2>&1) || fail=1
  tail -25 "$R/pytest.log"
  "$py" "$B/python/bench.py" ${PY_BENCH_ARGS:-} | tee "$R/python-bench.md" || fail=1
}

compare() {
  if [ ! -x "$B/compare/host" ]; then echo "no comparison build: bundle with --compare REV"; fail=1; return; fi
  mkdir -p "$R/scan"
  python3 "$B/baselines/compare.py" "$B/compare/host" "$HOST" "$R" "$SWEEP" "${APPS[@]}" "${BATCHED[@]}" | tee "$R/compare.md"
}

[ $# -gt 0 ] || { sed -n '/^set -uo/q; 2,$p' "$0"; exit 2; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "no nvidia-smi"
for mode in "$@"; do
  case "$mode" in
    tests|examples|sanitize|yardsticks|compare|bench|primitives|files|streamed) echo "== $mode"; "$mode" ;;
    bench-scans|bench-apps) echo "== $mode"; "${mode/-/_}" ;;
    python) echo "== python"; pypkg ;;
    *) echo "unknown mode $mode"; exit 2 ;;
  esac
done
# Every result in one archive, named to sort first: a caller that brings back only some of the
# files still gets them all.
(cd "$R" && tar czf 00-results.tgz --exclude=00-results.tgz --exclude=site . 2>/dev/null) && echo "results: $R/00-results.tgz"
exit $fail
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runner_is_bash_that_parses() {
        let dir = std::env::temp_dir().join(format!("run-sh-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("run.sh");
        std::fs::write(&script, runner()).unwrap();
        let status = Command::new("bash").arg("-n").arg(&script).status().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(status.success());
    }
}
