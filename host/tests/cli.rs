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
}

#[test]
fn unknown_names_are_rejected_with_the_choices() {
    for args in [["scan", "10", "--type", "u33"], ["scan", "10", "--algo", "quick"], ["scan", "10", "--op", "pow"]] {
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
