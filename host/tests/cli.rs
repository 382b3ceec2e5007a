//! The command line: help, clear one-line errors for user mistakes (before any GPU work), and a
//! scan that either passes (GPU present) or says in one line that there is no GPU.

use std::path::PathBuf;
use std::process::{Command, Output};

/// The binary cargo built, or, where only the GPU bundle was copied (no target/ folder), the
/// bundle's copy of it.
fn host_binary() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_host"));
    if built.exists() {
        return built;
    }
    let bundled = PathBuf::from(".gpu-bundle/bin/host");
    assert!(bundled.exists(), "neither {} nor {} exists", built.display(), bundled.display());
    bundled
}

/// A file of the repository, found from the crate's source folder or the current folder.
fn repo_file(path: &str) -> PathBuf {
    let from_manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    if from_manifest.exists() {
        from_manifest
    } else {
        PathBuf::from(path)
    }
}

fn host(args: &[&str]) -> Output {
    Command::new(host_binary()).args(args).output().expect("running the host binary")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A user mistake: exit code 1, exactly one line on stderr containing `needle`, no panic.
fn assert_one_line_error(args: &[&str], needle: &str) {
    let o = host(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("error: ") && err.contains(needle), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn scan_help_lists_every_algorithm_with_a_line_each() {
    let o = host(&["scan", "--help"]);
    assert!(o.status.success());
    let help = stdout(&o);
    for (name, what) in gpu_scan::Algorithm::choices() {
        let line = help.lines().find(|l| l.trim_start().starts_with(&format!("- {name}:"))).unwrap_or_default();
        assert!(line.contains(what), "--help lacks `{name}: {what}`:\n{help}");
    }
}

#[test]
fn mistakes_are_one_line_errors() {
    assert_one_line_error(&["scan", "10", "--type", "f32", "--op", "xor"], "operator `xor` is not defined for f32");
    assert_one_line_error(&["scan", "8", "--input", "1,2"], "N is 8 but --input has 2 values");
    assert_one_line_error(&["scan", "2", "--input", "1,x"], "`x` is not a valid u32 value");
    assert_one_line_error(&["scan", "4", "--init", "-3"], "--init `-3` is not a valid u32 value");
    assert_one_line_error(&["bench", "--sizes", "5..9"], "a range is written 2^a..2^b");
    assert_one_line_error(&["plot", "/nonexistent/bench.csv"], "/nonexistent/bench.csv");
    assert_one_line_error(&["sort", "10", "--key-bits", "40"], "--key-bits 40: u32 keys have 32 bits");
    assert_one_line_error(&["sort", "10", "--keys", "cub", "--key-bits", "3"], "--keys cub has no random bits");
}

#[test]
fn unknown_names_are_rejected_with_the_choices() {
    for args in [
        ["scan", "10", "--type", "u33"],
        ["scan", "10", "--algo", "quick"],
        ["scan", "10", "--op", "pow"],
        ["scan", "10", "--pipelined", "maybe"],
        ["sort", "10", "--keys", "sorted"],
    ] {
        let o = host(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains("possible values"), "{}", stderr(&o));
    }
    let o = host(&["scan", "ten"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is not a count"));
}

#[test]
fn scan_passes_on_a_gpu_and_says_so_in_one_line_without_one() {
    let o = host(&["scan", "1000", "--iters", "2"]);
    if gpu_scan::driver_present() {
        assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
        assert!(stdout(&o).lines().last().unwrap_or_default().ends_with(": PASS"), "{}", stdout(&o));
    } else {
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: no CUDA driver found"), "{err}");
    }
}

#[test]
fn plot_redraws_a_bench_csv_without_a_gpu() {
    let csv = repo_file("docs/results/blocks-h200.csv");
    let png = std::env::temp_dir().join(format!("gpu-scan-cli-plot-{}.png", std::process::id()));
    let o = host(&["plot", csv.to_str().unwrap(), "--out", png.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("kogge-stone"));
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    std::fs::remove_file(&png).unwrap();
}

/// A fresh folder for one test (tests run in parallel, so each names its own).
fn temp_dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpu-scan-cli-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn file_mistakes_are_one_line_errors_before_any_gpu_work() {
    let d = temp_dir("file-mistakes");
    let path = |name: &str| d.join(name).to_str().unwrap().to_string();
    std::fs::write(d.join("bad.npy"), b"definitely not numpy").unwrap();
    std::fs::write(d.join("five.bin"), [0u8; 5]).unwrap();
    gpu_scan::io::write::<f32>(&d.join("f32.npy"), &[1.0, 2.0], false).unwrap();
    gpu_scan::io::write::<u32>(&d.join("u32.npy"), &[1, 2], false).unwrap();
    std::fs::write(d.join("taken.npy"), b"keep me").unwrap();
    assert_one_line_error(&["scan", "--input", &path("bad.npy")], "not a valid .npy file");
    assert_one_line_error(&["scan", "--input", &path("five.bin")], "raw binary input needs --type");
    assert_one_line_error(&["scan", "--input", &path("five.bin"), "--type", "u32"], "5 bytes is not a whole number");
    assert_one_line_error(
        &["scan", "--input", &path("f32.npy"), "--op", "xor"],
        "operator `xor` is not defined for f32",
    );
    assert_one_line_error(
        &["scan", "--input", &path("u32.npy"), "--type", "f64"],
        "holds u32, but --type f64 was given",
    );
    assert_one_line_error(&["scan", "3", "--input", &path("u32.npy")], "N is 3 but --input has 2 values");
    assert_one_line_error(&["scan", "10", "--output", &path("taken.npy")], "exists; pass --force");
    assert_one_line_error(&["scan", "10", "--output", &path("no/such/dir/out.npy")], "does not exist");
    assert_one_line_error(&["scan"], "give N, the number of elements, or --input");
    assert_eq!(std::fs::read(d.join("taken.npy")).unwrap(), b"keep me");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn npy_in_npy_out_on_a_gpu() {
    if !gpu_scan::driver_present() {
        assert_ne!(
            std::env::var("GPU_SCAN_REQUIRE_DEVICE").as_deref(),
            Ok("1"),
            "GPU_SCAN_REQUIRE_DEVICE=1 but no CUDA driver"
        );
        eprintln!("SKIPPED GPU test `npy_in_npy_out_on_a_gpu`: no CUDA driver");
        return;
    }
    let d = temp_dir("npy");
    let data: Vec<i64> = (0..100_003).map(|i| (i * 7919 % 1000) - 500).collect();
    gpu_scan::io::write(&d.join("in.npy"), &data, false).unwrap();
    let out = d.join("out.npy");
    let o = host(&[
        "scan",
        "--input",
        d.join("in.npy").to_str().unwrap(),
        "--exclusive",
        "--output",
        out.to_str().unwrap(),
        "--iters",
        "2",
    ]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let got: Vec<i64> = gpu_scan::io::read(&out).unwrap();
    assert_eq!(got, gpu_scan::cpu::scan(gpu_scan::Op::Add, &data, true, None).unwrap());
    let again = host(&["scan", "--input", d.join("in.npy").to_str().unwrap(), "--output", out.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(1), "an existing output must not be replaced without --force");
    std::fs::remove_dir_all(&d).unwrap();
}

/// Argument fuzzing: any mix of subcommands, flags and (sometimes nonsensical) values ends in a
/// result, a one-line error or a usage error, never a panic.
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    // `bench` is left out: on a GPU machine a valid random `bench` would start a full sweep.
    const TOKENS: &[&str] = &[
        "scan",
        "plot",
        "compact",
        "sort",
        "histogram",
        "csr",
        "segmented",
        "batched",
        "recurrence",
        "--keep",
        "gt:3",
        "--bins",
        "--rows-of",
        "--axis",
        "--values",
        "--lo",
        "--hi",
        "7",
        "0",
        "1e3",
        "2^4",
        "-1",
        "x",
        "1,2,3",
        "--type",
        "u8",
        "f64",
        "i32",
        "--op",
        "xor",
        "affine",
        "max",
        "--algo",
        "naive",
        "blelloch",
        "kogge-stone-racy",
        "--exclusive",
        "--init",
        "--trace",
        "--input",
        "--output",
        "/nonexistent/x.npy",
        "--iters",
        "--force",
        "--",
        "--help",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        #[test]
        fn random_arguments_never_panic(picks in prop::collection::vec(0..TOKENS.len(), 0..8)) {
            let args: Vec<&str> = picks.iter().map(|&i| TOKENS[i]).collect();
            let o = host(&args);
            let err = stderr(&o);
            prop_assert!(!err.contains("panicked"), "{args:?}: {err}");
            prop_assert!(matches!(o.status.code(), Some(0..=2)), "{args:?}: {:?} {err}", o.status);
        }
    }
}
