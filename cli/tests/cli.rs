//! The command line: help, clear one-line errors for user mistakes (before any GPU work), the
//! plot redrawn without a GPU, and, on a GPU, a scan and a .npy round trip. Fixtures are compiled
//! in, and the binary is found beside the test executable, so a copied bundle runs these too.

use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Output};
use workspace_tests::{gpu_test, needs, test, Trial};

fn main() -> ExitCode {
    workspace_tests::main(vec![
        test("scan_help_lists_every_algorithm_with_a_line_each", scan_help_lists_every_algorithm),
        test("mistakes_are_one_line_errors", mistakes_are_one_line_errors),
        test("unknown_names_are_rejected_with_the_choices", unknown_names_are_rejected_with_the_choices),
        needs(
            "without_a_gpu_a_scan_says_so_in_one_line",
            gpu_scan::driver_present().then(|| "a CUDA driver is present".to_string()),
            without_a_gpu_a_scan_says_so_in_one_line,
        ),
        test("plot_redraws_a_bench_csv_without_a_gpu", plot_redraws_a_bench_csv_without_a_gpu),
        test("file_mistakes_are_one_line_errors_before_any_gpu_work", file_mistakes_are_one_line_errors),
        test("tuning_mistakes_are_one_line_errors", tuning_mistakes_are_one_line_errors),
        gpu_test("scan_passes_on_a_gpu", |_| scan_passes_on_a_gpu()),
        gpu_test("npy_in_npy_out_on_a_gpu", |_| npy_in_npy_out_on_a_gpu()),
        Trial::test("random_arguments_never_panic", || random_arguments_never_panic().map_err(Into::into)),
    ])
}

/// The binary cargo built, or, in a copied bundle, the one beside the test executables' folder.
fn host_binary() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_host"));
    if built.exists() {
        return built;
    }
    let exe = std::env::current_exe().expect("the test executable's path");
    let bundled = exe.parent().and_then(Path::parent).map(|d| d.join("bin").join("host")).unwrap_or_default();
    assert!(bundled.exists(), "neither {} nor {} exists", built.display(), bundled.display());
    bundled
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

fn scan_help_lists_every_algorithm() {
    let o = host(&["scan", "--help"]);
    assert!(o.status.success());
    let help = stdout(&o);
    let names = ["single-pass", "hierarchical", "naive"].into_iter().chain(gpu_scan::BlockAlgo::ALL.map(|b| b.name()));
    for name in names {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(&format!("- {name}:"))),
            "--help lacks `{name}`:\n{help}"
        );
    }
    let racy = gpu_scan::BlockAlgo::KoggeStoneRacy;
    assert!(help.contains(racy.describe()), "{help}");
}

fn mistakes_are_one_line_errors() {
    assert_one_line_error(&["scan", "10", "--type", "f32", "--op", "xor"], "operator `xor` is not defined for f32");
    assert_one_line_error(&["scan", "8", "--input", "1,2"], "N is 8 but --input has 2 values");
    assert_one_line_error(&["scan", "2", "--input", "1,x"], "`x` is not a valid u32 value");
    assert_one_line_error(&["scan", "4", "--init", "-3"], "--init `-3` is not a valid u32 value");
    assert_one_line_error(&["scan", "4", "--trace"], "--trace needs a block algorithm");
    assert_one_line_error(&["bench", "--sizes", "5..9"], "a range is written 2^a..2^b");
    assert_one_line_error(&["plot", "/nonexistent/bench.csv"], "/nonexistent/bench.csv");
    assert_one_line_error(&["sort", "10", "--key-bits", "40"], "--key-bits 40: u32 keys have 32 bits");
    assert_one_line_error(&["sort", "10", "--keys", "cub", "--key-bits", "3"], "--keys cub has no random bits");
    assert_one_line_error(&["sort", "10", "--type", "u8"], "u8 keys are not supported");
    assert_one_line_error(&["histogram", "10", "--bins", "0"], "0 bins");
    assert_one_line_error(&["histogram", "10", "--lo", "2", "--hi", "1"], "is empty");
    assert_one_line_error(&["batched", "4", "4", "--op", "xor"], "not xor on u32");
    assert_one_line_error(&["segmented", "10", "--rows-of", "3"], "10 elements are not whole rows of 3");
    assert_one_line_error(&["compact", "10", "--keep", "lt:3"], "expected gt:<threshold>, nonzero or flags");
    assert_one_line_error(&["csr", "10", "--rows", "0"], "--rows must be at least 1");
}

fn tuning_mistakes_are_one_line_errors() {
    assert_one_line_error(&["scan", "10", "--tune", "pipe_stages=0"], "from 1 to 16");
    assert_one_line_error(&["scan", "10", "--tune", "warp_size=64"], "no such key");
    assert_one_line_error(&["compact", "10", "--tune", "pipe_stages"], "key=value");
    let o = host(&["scan", "10", "--tune", "help"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("pipe_stages") && stderr(&o).contains("bulk_rows"), "{}", stderr(&o));
}

fn unknown_names_are_rejected_with_the_choices() {
    let cases: [&[&str]; 6] = [
        &["scan", "10", "--type", "u33"],
        &["scan", "10", "--algo", "quick"],
        &["scan", "10", "--op", "pow"],
        &["scan", "10", "--kernel", "fast"],
        &["sort", "10", "--keys", "sorted"],
        &["batched", "10", "10", "--axis", "2"],
    ];
    for args in cases {
        let o = host(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains("possible values"), "{}", stderr(&o));
    }
    let o = host(&["scan", "ten"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is not a count"));
}

fn without_a_gpu_a_scan_says_so_in_one_line() {
    assert_one_line_error(&["scan", "1000", "--iters", "2"], "no CUDA driver found");
}

fn scan_passes_on_a_gpu() {
    let o = host(&["scan", "1000", "--iters", "2"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.lines().last().unwrap_or_default().ends_with(": PASS"), "{out}");
    assert!(out.contains("of a same-run device copy"), "{out}");
}

/// A fresh folder for one test.
fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}

fn plot_redraws_a_bench_csv_without_a_gpu() {
    let d = temp_dir();
    let csv = d.path().join("bench.csv");
    std::fs::write(&csv, include_str!("fixtures/bench.csv")).unwrap();
    let png = d.path().join("bench.png");
    let o = host(&["plot", csv.to_str().unwrap(), "--out", png.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("kogge-stone"));
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
}

/// Writes `data` as a one-dimensional .npy file.
fn write_npy<T: npyz::AutoSerialize + npyz::Serialize + Copy>(path: &Path, data: &[T]) {
    use npyz::WriterBuilder;
    let mut out = Vec::new();
    let mut w =
        npyz::WriteOptions::new().default_dtype().shape(&[data.len() as u64]).writer(&mut out).begin_nd().unwrap();
    w.extend(data.iter().copied()).unwrap();
    w.finish().unwrap();
    std::fs::write(path, out).unwrap();
}

fn file_mistakes_are_one_line_errors() {
    let d = temp_dir();
    let path = |name: &str| d.path().join(name).to_str().unwrap().to_string();
    std::fs::write(d.path().join("bad.npy"), b"definitely not numpy").unwrap();
    std::fs::write(d.path().join("five.bin"), [0u8; 5]).unwrap();
    write_npy::<f32>(&d.path().join("f32.npy"), &[1.0, 2.0]);
    write_npy::<u32>(&d.path().join("u32.npy"), &[1, 2]);
    std::fs::write(d.path().join("taken.npy"), b"keep me").unwrap();
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
    assert_eq!(std::fs::read(d.path().join("taken.npy")).unwrap(), b"keep me");
}

fn npy_in_npy_out_on_a_gpu() {
    let d = temp_dir();
    let data: Vec<i64> = (0..100_003).map(|i| (i * 7919 % 1000) - 500).collect();
    let input = d.path().join("in.npy");
    write_npy(&input, &data);
    let out = d.path().join("out.npy");
    let args =
        ["scan", "--input", input.to_str().unwrap(), "--exclusive", "--output", out.to_str().unwrap(), "--iters", "2"];
    let o = host(&args);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let got: Vec<i64> = npyz::NpyFile::new(&std::fs::read(&out).unwrap()[..]).unwrap().into_vec().unwrap();
    let want = gpu_scan::reference::scan(gpu_scan::Op::Add, &data, true, None).unwrap();
    assert_eq!(got, want);
    let again = host(&["scan", "--input", input.to_str().unwrap(), "--output", out.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(1), "an existing output must not be replaced without --force");
}

/// Argument fuzzing: any mix of subcommands, flags and (sometimes nonsensical) values ends in a
/// result, a one-line error or a usage error, never a panic. (`bench` is left out: on a GPU
/// machine a valid random `bench` would start a full sweep.)
fn random_arguments_never_panic() -> Result<(), String> {
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
        "rows",
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
        "--kernel",
        "pipelined",
        "--tune",
        "pipe_stages=3",
        "--",
        "--help",
    ];
    let mut runner = TestRunner::new(workspace_tests::proptest_config(64));
    runner
        .run(&prop::collection::vec(0..TOKENS.len(), 0..8), |picks| {
            let args: Vec<&str> = picks.iter().map(|&i| TOKENS[i]).collect();
            let o = host(&args);
            let err = stderr(&o);
            prop_assert!(!err.contains("panicked"), "{args:?}: {err}");
            prop_assert!(matches!(o.status.code(), Some(0..=2)), "{args:?}: {:?} {err}", o.status);
            Ok(())
        })
        .map_err(|e| e.to_string())
}
