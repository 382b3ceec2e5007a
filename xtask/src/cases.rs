//! What the bundle's runner runs: the sanitizer cases (one small run of every kernel family and
//! kernel path, a partial last tile everywhere) and the benchmark commands, written once here.

/// Each case a `host` command line, small enough for the sanitizers. The positions (`--indices`)
/// are computed only when asked for, so those cases write them to /tmp, over their last run's.
pub const SANITIZE: &[(&str, &str)] = &[
    ("scan-tiles-u32", "scan 70001 --kernel tiles"),
    ("scan-tiles-u8-xor", "scan 70001 --type u8 --op xor --kernel tiles"),
    ("scan-tiles-u16-max", "scan 70001 --type u16 --op max --exclusive --init 5"),
    ("scan-staged-f64", "scan 70001 --type f64 --kernel staged --exclusive"),
    ("scan-staged-u32", "scan 70001 --kernel staged --op max"),
    ("scan-pipelined-u32", "scan 70001 --kernel pipelined"),
    ("scan-pipelined-u8-add", "scan 300001 --type u8 --kernel pipelined"),
    ("scan-pipelined-u8-max", "scan 300001 --type u8 --op max --kernel pipelined"),
    ("scan-pipelined-f64-exclusive", "scan 70001 --type f64 --kernel pipelined --exclusive --init 1.5"),
    ("scan-deterministic-f32", "scan 70001 --type f32 --deterministic"),
    ("scan-deterministic-pipelined-f32", "scan 70001 --type f32 --deterministic --kernel pipelined --exclusive"),
    (
        "scan-deterministic-pipelined-f64-mul",
        "scan 70001 --type f64 --op mul --deterministic --kernel pipelined --init 1.5",
    ),
    ("scan-acq-rel", "scan 70001 --status-ordering acq-rel"),
    ("scan-in-place-affine", "scan 70001 --type u64 --op affine --in-place"),
    ("widen-u8-u32", "scan 70001 --output-type u32"),
    ("widen-i16-i64-exclusive", "scan 70001 --type i16 --output-type i64 --exclusive --init -3"),
    ("widen-u32-u64", "scan 70001 --type u32 --output-type u64"),
    ("widen-f16-f32-deterministic", "scan 70001 --type f16 --output-type f32 --deterministic --exclusive"),
    ("widen-bf16-f32", "scan 70001 --type bf16 --output-type f32"),
    ("widen-pipelined-u8-u32", "scan 300001 --output-type u32 --kernel pipelined"),
    ("widen-pipelined-i16-i64", "scan 300001 --type i16 --output-type i64 --kernel pipelined --exclusive"),
    ("widen-pipelined-f16-f32", "scan 300001 --type f16 --output-type f32 --kernel pipelined --init 1.5"),
    ("hierarchical-blelloch", "scan 70001 --algo blelloch --propagation scan-then-add"),
    ("hierarchical-warp", "scan 70001 --algo hierarchical --type i64 --exclusive"),
    ("hierarchical-kogge-stone", "scan 70001 --algo kogge-stone --type f32 --op min"),
    ("naive", "scan 1000 --algo naive"),
    ("trace-brent-kung", "scan 100 --algo brent-kung --trace"),
    ("compact-tiles", "compact 70001 --kernel tiles"),
    ("compact-pipelined-f64", "compact 70001 --type f64 --kernel pipelined"),
    ("compact-flags-u8", "compact 70001 --type u8 --keep flags"),
    (
        "compact-indices-u64",
        "compact 70001 --keep flags --indices /tmp/gpu-scan-sanitize-i.npy --index-type u64 --force",
    ),
    (
        "compact-indices-pipelined",
        "compact 70001 --keep flags --kernel pipelined --indices /tmp/gpu-scan-sanitize-i.npy --force",
    ),
    ("compact-indices-gt", "compact 70001 --type i64 --keep gt:3 --indices /tmp/gpu-scan-sanitize-i.npy --force"),
    ("sort-u32-pairs", "sort 70001 --values"),
    ("sort-f64", "sort 70001 --type f64"),
    ("sort-f32-descending", "sort 70001 --type f32 --descending"),
    (
        "sort-argsort-i64-descending",
        "sort 70001 --type i64 --descending --indices /tmp/gpu-scan-sanitize-p.npy --force",
    ),
    ("sort-pairs-and-argsort-f64", "sort 70001 --type f64 --values --indices /tmp/gpu-scan-sanitize-p.npy --force"),
    ("histogram-grouped", "histogram 70001 --bins 1000 --group"),
    ("histogram-counts", "histogram 70001 --bins 1000"),
    ("histogram-counts-i64", "histogram 70001 --type i64 --bins 7 --lo -3 --hi 100"),
    ("csr", "csr 70001"),
    ("segmented-f64", "segmented 70001 --type f64 --exclusive --mean-length 7"),
    ("segmented-offsets", "segmented 70001 --offsets --mean-length 7"),
    ("segmented-keys-u8", "segmented 70001 --keys --key-type u8 --mean-length 3"),
    (
        "segmented-keys-i64-f64-max",
        "segmented 70001 --type f64 --op max --exclusive --keys --key-type i64 --mean-length 50",
    ),
    ("segmented-pipelined-flags", "segmented 70001 --kernel pipelined --mean-length 7"),
    ("segmented-pipelined-keys-u32", "segmented 70001 --kernel pipelined --keys --mean-length 3"),
    ("segmented-pipelined-keys-u16", "segmented 70001 --kernel pipelined --keys --key-type u16 --mean-length 5"),
    (
        "segmented-pipelined-keys-i64-f64-max",
        "segmented 70001 --type f64 --op max --exclusive --keys --key-type i64 --mean-length 50 --kernel pipelined",
    ),
    ("segmented-keys-u64-xor", "segmented 70001 --type u64 --op xor --keys --key-type u64 --mean-length 9"),
    (
        "segmented-pipelined-keys-i32-xor",
        "segmented 70001 --type i32 --op xor --exclusive --keys --key-type i32 --mean-length 9 --kernel pipelined",
    ),
    ("batched-column-tiles", "batched 2001 33 --kernel column-tiles"),
    ("batched-vector-tiles", "batched 3841 64 --type f64 --kernel vector-tiles --exclusive"),
    ("batched-vector-tiles-window4", "batched 20003 4 --kernel vector-tiles --op max"),
    ("batched-bulk-tiles", "batched 20003 16 --kernel bulk-tiles --op max"),
    ("batched-bulk-tiles-wide", "batched 1921 128 --type f32 --kernel bulk-tiles"),
    ("batched-column-vectors", "batched 8 5000 --kernel column-vectors"),
    ("batched-columns-pipelined", "batched 20003 8 --kernel pipelined"),
    ("batched-columns-pipelined16", "batched 20003 2 --type f64 --kernel pipelined --exclusive"),
    ("batched-short-rows", "batched 2000 31 --axis rows"),
    ("batched-row-blocks", "batched 300 5000 --axis rows --kernel row-blocks"),
    ("batched-row-chains", "batched 3 70001 --axis rows --kernel row-chains"),
    ("batched-rows-pipelined", "batched 3 70000 --axis rows --kernel pipelined"),
    ("recurrence-f32-pipelined", "recurrence 70001 --kernel pipelined"),
    ("recurrence-f32-tiles", "recurrence 70001 --kernel tiles"),
    ("recurrence-f64-staged", "recurrence 70001 --type f64 --kernel staged"),
    ("timeline", "timeline 70001"),
    ("multi-simulated-u32", "scan 70001 --ranks 3"),
    ("multi-simulated-f64-pipelined", "scan 300001 --type f64 --ranks 4 --kernel pipelined --exclusive --init 1.5"),
    ("multi-nccl", "scan 70001 --gpus all --op max"),
];

/// The cases that run pipelined kernels (`*_pipe*_`), whose warps hand shared-memory stages on
/// through mbarriers, lane 0 arriving after `__syncwarp`: racecheck credits an arrival with the
/// arriving thread's own accesses only and reports the other lanes' (tests/sanitizer shows it in a
/// kernel of its own). Their racecheck hazards count as known while that witness shows the same and
/// every hazard lies in a pipelined kernel; any other outcome fails.
pub const RACECHECK_MBARRIER: &[&str] = &[
    "scan-pipelined-u32",
    "scan-pipelined-u8-add",
    "scan-pipelined-u8-max",
    "scan-pipelined-f64-exclusive",
    "scan-deterministic-pipelined-f32",
    "scan-deterministic-pipelined-f64-mul",
    "widen-pipelined-u8-u32",
    "widen-pipelined-i16-i64",
    "widen-pipelined-f16-f32",
    "compact-pipelined-f64",
    "compact-indices-pipelined",
    "segmented-pipelined-flags",
    "segmented-pipelined-keys-u32",
    "segmented-pipelined-keys-u16",
    "segmented-pipelined-keys-i64-f64-max",
    "segmented-pipelined-keys-i32-xor",
    "batched-columns-pipelined",
    "batched-columns-pipelined16",
    "batched-rows-pipelined",
    "recurrence-f32-pipelined",
    "multi-simulated-f64-pipelined",
];

/// The scan sweep of the benchmarks (and of a comparison of two builds).
pub const SWEEP: &str =
    "bench --types u8,u16,u32,f32,u64,f64 --algos single-pass --sizes 2^20,2^24,2^28,2^30 --iters 30";

/// The other strategies and the deterministic order, for the report.
pub const SWEEP_MORE: &[&str] = &[
    "bench --types u32,f64 --algos hierarchical,blelloch,brent-kung,kogge-stone --sizes 2^28",
    "bench --types f32,f64 --algos single-pass --deterministic --sizes 2^24,2^28,2^30",
];

/// The applications at 2^28 elements, in a syntax every build since the CLI's first release
/// takes (so a comparison of builds runs them alike).
pub const APPS: &[&str] = &[
    "compact 2^28",
    "compact 2^28 --type u64",
    "compact 2^28 --type f32 --keep nonzero",
    "sort 2^28",
    "sort 2^28 --keys cub",
    "sort 2^28 --values",
    "sort 2^28 --type u64",
    "histogram 2^28 --type f32 --bins 1000",
    "csr 2^28",
    "segmented 2^28 --type f32",
    "recurrence 2^28",
    "recurrence 2^27 --type f64",
];

/// The primitives against CUB's (same-run `cub` CSVs): the widening sum of bytes at 2^30 (and the
/// plain byte scan beside it), the stable sort of pairs and the argsort, the scan by key over runs
/// of 16 and 1024. `{r}` is the results folder.
pub const PRIMITIVES: &[&str] = &[
    "scan 2^30 --output-type u32 --iters 30",
    "scan 2^30 --type u8 --iters 30",
    "sort 2^28 --values",
    "sort 2^28 --indices {r}/argsort.npy --force",
    "segmented 2^28 --keys --mean-length 16",
    "segmented 2^28 --keys --mean-length 1024",
    "segmented 2^28 --keys --mean-length 16 --kernel tiles",
    "segmented 2^28 --mean-length 16",
    "segmented 2^28 --mean-length 16 --kernel tiles",
    "segmented 2^28 --keys --key-type u64 --type u64 --mean-length 16",
];

/// Every command on 2^28-element `.npy` files (made by `run.sh files` in `{d}`), its time split
/// into reading, the GPU and writing.
pub const FILES: &[&str] = &[
    "scan --input {d}/u32.npy --output {d}/scan.npy",
    "scan --input {d}/u8.npy --output-type u32 --output {d}/widen.npy",
    "compact --input {d}/u32.npy --keep gt:500 --output {d}/compact.npy",
    "sort --input {d}/u32.npy --output {d}/sorted.npy --indices {d}/argsort.npy",
    "histogram --input {d}/f32.npy --bins 1000 --lo 0 --hi 1 --output {d}/counts.npy",
    "csr --input {d}/rows.npy --rows 1048576 --output {d}/offsets.npy",
    "segmented --input {d}/u32.npy --keys {d}/keys.npy --output {d}/by-key.npy",
    "batched --input {d}/m.npy --axis 1 --output {d}/rows.npy",
    "recurrence --a {d}/a.npy --b {d}/b.npy --output {d}/y.npy",
];

/// The batched table: `rows cols axis type op`.
pub const BATCHED: &[&str] = &[
    "33554432 8 1 f32 add",
    "33554432 8 0 f32 add",
    "1048576 256 1 f32 add",
    "1048576 256 0 f32 add",
    "16384 16384 1 f32 add",
    "16384 16384 0 f32 add",
    "256 1048576 1 f32 add",
    "256 1048576 0 f32 add",
    "8 33554432 1 f32 add",
    "8 33554432 0 f32 add",
    "16777216 16 0 f32 add",
    "4194304 64 0 f32 add",
    "2097152 128 0 f32 add",
    "67108864 4 0 f32 add",
    "134217728 2 0 f64 add",
    "33554432 8 0 f64 add",
    "4194304 64 0 f64 add",
    "8388608 16 0 f64 add",
    "2097152 128 0 u32 max",
    "1048576 8 1 f32 add",
    "1048576 8 0 f32 add",
];

/// A `BATCHED` entry as `host batched` arguments.
pub fn batched_args(entry: &str) -> String {
    let f: Vec<&str> = entry.split_whitespace().collect();
    format!("batched {} {} --axis {} --type {} --op {}", f[0], f[1], f[2], f[3], f[4])
}

/// The shapes of `BATCHED` as `peers.py batched` takes them (f32 ones: torch's peers).
pub fn torch_shapes() -> Vec<String> {
    let mut shapes: Vec<String> = BATCHED
        .iter()
        .filter(|e| e.split_whitespace().nth(3) == Some("f32"))
        .map(|e| {
            let f: Vec<&str> = e.split_whitespace().collect();
            format!("{}x{}", f[0], f[1])
        })
        .collect();
    shapes.dedup();
    shapes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_name_is_unique_and_a_file_name() {
        let names: std::collections::HashSet<&str> = SANITIZE.iter().map(|c| c.0).collect();
        assert_eq!(names.len(), SANITIZE.len());
        assert!(SANITIZE.iter().all(|c| c.0.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-')));
    }

    #[test]
    fn the_racecheck_mbarrier_cases_are_the_pipelined_ones() {
        let pipelined: Vec<&str> =
            SANITIZE.iter().filter(|c| c.1.contains("--kernel pipelined")).map(|c| c.0).collect();
        assert_eq!(pipelined, RACECHECK_MBARRIER);
    }

    #[test]
    fn batched_entries_become_commands_and_torch_shapes() {
        assert_eq!(batched_args("8 33554432 1 f32 add"), "batched 8 33554432 --axis 1 --type f32 --op add");
        let shapes = torch_shapes();
        assert!(shapes.contains(&"16384x16384".to_string()) && !shapes.contains(&"134217728x2".to_string()));
        assert_eq!(shapes.iter().filter(|s| *s == "33554432x8").count(), 1);
    }
}
