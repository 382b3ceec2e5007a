//! The command line: help, one-line errors with the documented exit status for every mistake
//! (found before any GPU work: nothing is printed and nothing allocated first), requests too
//! large for memory refused, outputs never overwritten nor left half-written, the plot and the
//! report without a GPU, a closed pipe; and, on a GPU, a scan, a .npy round trip and a scan
//! across ranks. Fixtures are compiled in, and the binary is found beside the test executable,
//! so a copied bundle runs these too.

use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Output};
use workspace_tests::{gpu_test, needs, test, Trial};

fn main() -> ExitCode {
    let driver = gpu_scan::driver_present().then(|| "a CUDA driver is present".to_string());
    workspace_tests::main(vec![
        test("scan_help_lists_every_algorithm_with_a_line_each", scan_help_lists_every_algorithm),
        test("help_lists_every_type_and_operator_each_command_takes", help_lists_types_and_operators),
        test("help_documents_the_exit_statuses", help_documents_the_exit_statuses),
        test("mistakes_are_one_line_errors", mistakes_are_one_line_errors),
        test("unknown_names_are_rejected_with_the_choices", unknown_names_are_rejected_with_the_choices),
        test("counts_are_read_as_people_write_them", counts_are_read_as_people_write_them),
        test("planner_limits_are_refused_before_the_gpu_opens", planner_limits_are_refused_before_the_gpu_opens),
        test("output_paths_are_checked_before_the_gpu_opens", output_paths_are_checked_before_the_gpu_opens),
        test("requests_too_large_for_memory_are_refused_before_anything_is_allocated", too_large_is_refused),
        needs("without_a_gpu_a_scan_says_so_in_one_line", driver.clone(), without_a_gpu_a_scan_says_so_in_one_line),
        needs("without_a_gpu_a_large_scan_says_so_at_once", driver.clone(), without_a_gpu_a_large_scan_says_so_at_once),
        needs("without_a_gpu_every_command_exits_3", driver.clone(), without_a_gpu_every_command_exits_3),
        test("plot_redraws_a_bench_csv_without_a_gpu", plot_redraws_a_bench_csv_without_a_gpu),
        test("plot_makes_its_folder_and_never_overwrites", plot_makes_its_folder_and_never_overwrites),
        test("plot_and_report_refuse_csvs_without_rows", plot_and_report_refuse_csvs_without_rows),
        test("a_closed_pipe_ends_the_output_quietly", a_closed_pipe_ends_the_output_quietly),
        test("an_interrupt_removes_the_temporary_output_file", an_interrupt_removes_the_temporary_output),
        test("report_never_overwrites_without_force", report_never_overwrites_without_force),
        test("bench_refuses_rows_that_cannot_run", bench_refuses_rows_that_cannot_run),
        test("file_mistakes_are_one_line_errors_before_any_gpu_work", file_mistakes_are_one_line_errors),
        test("tuning_mistakes_are_one_line_errors", tuning_mistakes_are_one_line_errors),
        test("compact_file_mistakes_are_one_line_errors", compact_file_mistakes),
        test("histogram_file_mistakes_are_one_line_errors", histogram_file_mistakes),
        test("recurrence_file_mistakes_are_one_line_errors", recurrence_file_mistakes),
        test("csr_file_mistakes_are_one_line_errors", csr_file_mistakes),
        test("sort_file_mistakes_are_one_line_errors", sort_file_mistakes),
        test("compact_indices_mistakes_are_one_line_errors", compact_indices_mistakes),
        test("segmented_file_mistakes_are_one_line_errors", segmented_file_mistakes),
        test("batched_file_mistakes_are_one_line_errors", batched_file_mistakes),
        test("inputs_too_large_for_memory_are_refused_before_they_are_read", too_large_files_are_refused),
        needs("without_a_gpu_empty_files_are_valid_input", driver.clone(), empty_files_are_valid_input),
        test("an_empty_file_scans_to_an_empty_file_without_a_gpu", empty_scans),
        test("a_truncated_file_is_refused_before_the_streamed_scan_opens_the_gpu", truncated_stream_is_refused),
        test("big_endian_files_read_as_bytes_are_refused", big_endian_files_are_refused),
        test("tune_help_lists_the_keys", tune_help_lists_the_keys),
        test("widening_mistakes_are_one_line_errors", widening_mistakes),
        gpu_test("widening_files_on_a_gpu", |_| widening_files_on_a_gpu()),
        gpu_test("scan_passes_on_a_gpu", |_| scan_passes_on_a_gpu()),
        gpu_test("npy_in_npy_out_on_a_gpu", |_| npy_in_npy_out_on_a_gpu()),
        gpu_test("sort_files_on_a_gpu", |_| sort_files_on_a_gpu()),
        gpu_test("compact_indices_on_a_gpu", |_| compact_indices_on_a_gpu()),
        gpu_test("segmented_files_on_a_gpu", |_| segmented_files_on_a_gpu()),
        gpu_test("batched_files_on_a_gpu", |_| batched_files_on_a_gpu()),
        gpu_test("raw_side_files_on_a_gpu", |_| raw_side_files_on_a_gpu()),
        gpu_test("bool_masks_on_a_gpu", |_| bool_masks_on_a_gpu()),
        gpu_test("compact_comparisons_with_files_on_a_gpu", |_| compact_comparisons_on_a_gpu()),
        gpu_test("histogram_files_on_a_gpu", |_| histogram_files_on_a_gpu()),
        gpu_test("csr_files_both_ways_on_a_gpu", |_| csr_files_on_a_gpu()),
        gpu_test("recurrence_files_on_a_gpu", |_| recurrence_files_on_a_gpu()),
        gpu_test("scan_across_ranks_goes_through_the_shared_experiment", |_| scan_across_ranks_on_a_gpu()),
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

/// `host args` run in the folder `dir`.
fn host_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(host_binary()).current_dir(dir).args(args).output().expect("running the host binary")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// An error: exit status `status`, exactly one line on stderr containing `needle`, nothing on
/// stdout (no GPU was opened: opening one prints the device), no panic.
fn assert_output_is_error(args: &[&str], o: &Output, status: i32, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(status), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("error: ") && err.contains(needle), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(stdout(o), "", "{args:?}: printed before failing");
}

/// A usage error or bad input (status 2), found before any GPU work.
fn assert_usage_error(args: &[&str], needle: &str) {
    assert_output_is_error(args, &host(args), 2, needle);
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

fn help_lists_types_and_operators() {
    let possible = |args: &[&str], option: &str| -> Vec<String> {
        let help = stdout(&host(args));
        let start = help.find(&format!("--{option} <")).unwrap_or_else(|| panic!("{args:?} has no --{option}"));
        let block = &help[start..];
        let block = &block[..block.find("\n\n      --").unwrap_or(block.len())];
        block.lines().filter_map(|l| l.trim().strip_prefix("- ")).map(|l| l.split(':').next().unwrap().into()).collect()
    };
    let all: Vec<String> = gpu_scan::ElemType::ALL.iter().map(|t| t.name().into()).collect();
    let narrow = ["i8", "i16", "f16", "bf16", "bool"].map(String::from);
    assert_eq!(possible(&["scan", "--help"], "type"), [&all[..], &narrow[..]].concat());
    assert_eq!(possible(&["scan", "--help"], "output-type"), ["u32", "u64", "i64", "f32"]);
    assert_eq!(possible(&["compact", "--help"], "type"), all);
    let wide = ["u32", "i32", "u64", "i64", "f32", "f64"];
    for cmd in ["sort", "histogram", "segmented", "batched"] {
        assert_eq!(possible(&[cmd, "--help"], "type"), wide, "{cmd}");
    }
    assert_eq!(possible(&["recurrence", "--help"], "type"), ["f32", "f64"]);
    let ops: Vec<String> = gpu_scan::Op::ALL.iter().map(|o| o.name().into()).collect();
    assert_eq!(possible(&["scan", "--help"], "op"), ops);
    assert_eq!(possible(&["segmented", "--help"], "op"), ["add", "mul", "min", "max", "and", "or", "xor"]);
    assert_eq!(possible(&["batched", "--help"], "op"), ["add", "mul", "min", "max"]);
    for cmd in ["histogram", "segmented", "recurrence"] {
        let help = stdout(&host(&[cmd, "--help"]));
        let n = help.lines().skip_while(|l| !l.starts_with("Arguments:")).nth(2).unwrap_or_default();
        assert!(!n.trim().is_empty(), "{cmd}: N has no description:\n{help}");
    }
}

fn help_documents_the_exit_statuses() {
    let o = host(&["--help"]);
    assert!(o.status.success());
    let help = stdout(&o);
    for status in ["0    PASS", "1    FAIL", "2    usage or bad input", "3    no CUDA driver"] {
        assert!(help.contains(status), "{help}");
    }
}

fn mistakes_are_one_line_errors() {
    assert_usage_error(&["scan", "10", "--type", "f32", "--op", "xor"], "operator `xor` is not defined for f32");
    assert_usage_error(&["scan", "8", "--input", "1,2"], "N is 8 but --input has 2 values");
    assert_usage_error(&["scan", "2", "--input", "1,x"], "`x` is not a valid u32 value");
    assert_usage_error(&["scan", "4", "--init", "-3"], "--init `-3` is not a valid u32 value");
    assert_usage_error(&["scan", "4", "--trace"], "--trace needs a block algorithm");
    assert_usage_error(&["scan", "10", "--in-place", "--algo", "naive"], "cannot run in place");
    assert_usage_error(&["scan", "10", "--ranks", "2", "--algo", "blelloch"], "--gpus and --ranks run the single-pass");
    assert_usage_error(&["scan", "10", "--ranks", "0"], "must be at least 1");
    assert_usage_error(&["bench", "--sizes", "5..9"], "a range is written 2^a..2^b");
    assert_usage_error(&["bench", "--sizes", "1e3,0"], "`0` must be at least 1");
    assert_usage_error(&["plot", "/nonexistent/bench.csv"], "/nonexistent/bench.csv");
    assert_usage_error(&["sort", "10", "--key-bits", "40"], "--key-bits 40: u32 keys have 32 bits");
    assert_usage_error(&["sort", "10", "--keys", "cub", "--key-bits", "3"], "--keys cub has no random bits");
    assert_usage_error(&["sort", "10", "--type", "u8"], "invalid value 'u8' for '--type <TYPE>'");
    assert_usage_error(&["histogram", "10", "--bins", "0"], "0 bins");
    assert_usage_error(&["histogram", "10", "--lo", "2", "--hi", "1"], "is empty");
    assert_usage_error(&["batched", "4", "4", "--op", "xor"], "invalid value 'xor' for '--op <OP>'");
    assert_usage_error(&["batched", "0", "0"], "invalid value '0' for '[ROWS]': must be at least 1");
    assert_usage_error(&["segmented", "10", "--rows-of", "3"], "10 elements are not whole rows of 3");
    assert_usage_error(&["segmented", "10", "--mean-length", "0"], "--mean-length <MEAN_LENGTH>': must be at least 1");
    assert_usage_error(&["compact", "10", "--keep", "lt:3"], "expected gt:<threshold>, nonzero or flags");
    assert_usage_error(&["csr", "10", "--rows", "0"], "must be at least 1");
    assert_usage_error(&["accuracy", "--types", "u32"], "invalid value 'u32'");
    assert_usage_error(&["scan", "10", "--iters", "0"], "must be at least 1");
    assert_usage_error(&["scan", "10", "--bogus"], "unexpected argument '--bogus'");
}

fn counts_are_read_as_people_write_them() {
    assert_usage_error(&["scan", "1.25e1"], "`1.25e1` is not a whole number");
    assert_usage_error(&["scan", "ten"], "`ten` is not a count (examples: 100000000, 1e8, 1.5e3, 2^28)");
    assert_usage_error(&["scan", "2^64"], "is more than 2^64 - 1");
    // Every way of writing 1500 reaches the planner as 1500 (too long for a traced scan).
    for count in ["1500", "1.5e3", "15e2", "1_500", "1500.0"] {
        assert_usage_error(&["scan", count, "--algo", "blelloch", "--trace"], "(got 1500)");
    }
    assert_usage_error(&["scan", "2^10", "--algo", "blelloch", "--trace", "--input", "1,2"], "N is 1024");
    assert_usage_error(&["scan", "2^10+1"], "is not a count");
}

fn planner_limits_are_refused_before_the_gpu_opens() {
    assert_usage_error(&["scan", "2000000", "--algo", "naive"], "the naive O(n^2) scan is limited to n <= 262144");
    assert_usage_error(&["scan", "2000", "--algo", "kogge-stone", "--trace"], "give 1 to 1024 elements (got 2000)");
    assert_usage_error(&["scan", "8", "--algo", "warp-shuffle", "--trace"], "keeps its state in registers");
    assert_usage_error(&["compact", "10", "--type", "u8", "--kernel", "pipelined"], "built for 4- and 8-byte elements");
    assert_usage_error(&["batched", "4", "4", "--axis", "rows", "--kernel", "column-tiles"], "scans columns, not rows");
    assert_usage_error(&["sort", "2^32"], "fewer than 2^32");
    assert_usage_error(&["histogram", "2^32"], "fewer than 2^32");
    assert_usage_error(&["csr", "2^32"], "32-bit offsets hold fewer than 2^32");
}

fn output_paths_are_checked_before_the_gpu_opens() {
    let d = temp_dir();
    let taken = d.path().join("taken.csv");
    std::fs::write(&taken, b"keep me").unwrap();
    let taken = taken.to_str().unwrap();
    assert_usage_error(
        &["scan", "10", "--record", "/nonexistent/x.csv"],
        "--record /nonexistent/x.csv: folder /nonexistent does not exist",
    );
    assert_usage_error(&["scan", "10", "--record", d.path().to_str().unwrap()], "is a folder");
    assert_usage_error(&["timeline", "10", "--png", "/nonexistent/x.png"], "folder /nonexistent does not exist");
    assert_usage_error(&["timeline", "10", "--csv", "/nonexistent/x.csv"], "folder /nonexistent does not exist");
    assert_usage_error(&["timeline", "10", "--csv", taken], "exists; pass --force");
    assert_usage_error(&["scan", "10", "--output", "/nonexistent/x.npy"], "folder /nonexistent does not exist");
    let out = d.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("bench.json"), b"keep me").unwrap();
    std::fs::write(out.join("accuracy.csv"), b"keep me").unwrap();
    let out = out.to_str().unwrap();
    assert_usage_error(&["bench", "--sizes", "2^10", "--out", out], "bench.json: exists; pass --force");
    assert_usage_error(&["accuracy", "--sizes", "2^10", "--out", out], "accuracy.csv: exists; pass --force");
    assert_usage_error(&["bench", "--sizes", "2^10", "--out", &format!("{taken}/sub")], "is not a folder");
    assert_eq!(std::fs::read(taken).unwrap(), b"keep me");
    assert_eq!(std::fs::read(d.path().join("out/bench.json")).unwrap(), b"keep me");
}

fn too_large_is_refused() {
    let d = temp_dir();
    let out = d.path().join("never.npy");
    // 2^40 elements: terabytes on any machine.
    let cases: [&[&str]; 8] = [
        &["scan", "2^40", "--output", out.to_str().unwrap()],
        &["scan", "2^40", "--ranks", "4"],
        &["compact", "2^40"],
        &["segmented", "2^40"],
        &["batched", "2^10", "2^30", "--axis", "rows"],
        &["recurrence", "2^40"],
        &["timeline", "2^40"],
        &["bench", "--sizes", "2^40"],
    ];
    for args in cases {
        assert_usage_error(args, "of host memory, but");
    }
    assert!(!out.exists(), "a refused run left {}", out.display());
    assert_usage_error(&["sort", "2^40"], "fewer than 2^32");
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
        assert_usage_error(args, "possible values");
    }
    assert_usage_error(&["scan", "ten"], "is not a count");
}

fn without_a_gpu_a_scan_says_so_in_one_line() {
    let args = ["scan", "1000", "--iters", "2"];
    assert_output_is_error(&args, &host(&args), 3, "no CUDA driver found");
}

/// A billion elements are not generated (seconds and gigabytes) before the driver is looked for.
fn without_a_gpu_a_large_scan_says_so_at_once() {
    let args = ["scan", "1e9"];
    let start = std::time::Instant::now();
    let o = host(&args);
    let took = start.elapsed();
    match o.status.code() {
        Some(3) => assert_output_is_error(&args, &o, 3, "no CUDA driver found"),
        _ => assert_output_is_error(&args, &o, 2, "of host memory, but"),
    }
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}: the input was made before the checks");
}

fn without_a_gpu_every_command_exits_3() {
    let d = temp_dir();
    let results = d.path().join("new/results");
    let file = |name: &str| d.path().join(name).to_str().unwrap().to_string();
    let (i, s, y) = (file("i.npy"), file("s.npy"), file("y.npy"));
    let cases: [&[&str]; 16] = [
        &["scan", "1.5e3"],
        &["scan", "1000", "--ranks", "2"],
        &["compact", "1000"],
        &["compact", "1000", "--keep", "flags", "--indices", &i],
        &["sort", "1000", "--values"],
        &["sort", "1000", "--descending", "--indices", &s],
        &["segmented", "1000", "--offsets"],
        &["segmented", "1000", "--keys", "--key-type", "u8", "--mean-length", "16"],
        &["segmented", "1000", "--rows-of", "10", "--output", &y],
        &["histogram", "1000"],
        &["csr", "1000"],
        &["segmented", "1000"],
        &["batched", "10", "10"],
        &["recurrence", "1000"],
        &["timeline", "1000"],
        &["bench", "--sizes", "2^10", "--out", results.to_str().unwrap()],
    ];
    for args in cases {
        assert_output_is_error(args, &host(args), 3, "no CUDA driver found");
    }
    assert!(!d.path().join("new").exists(), "bench made its folder before running");
    assert_eq!(names(d.path()), [] as [&str; 0], "a command wrote a file without a GPU");
}

fn tuning_mistakes_are_one_line_errors() {
    assert_usage_error(&["scan", "10", "--tune", "pipe_stages=0"], "from 1 to 16");
    assert_usage_error(&["scan", "10", "--tune", "warp_size=64"], "no such key");
    assert_usage_error(&["compact", "10", "--tune", "pipe_stages"], "key=value");
}

fn tune_help_lists_the_keys() {
    let o = host(&["scan", "10", "--tune", "help"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    let out = stdout(&o);
    assert!(out.contains("pipe_stages") && out.contains("bulk_rows") && !out.contains("error"), "{out}");
    assert!(host(&["--tune", "help"]).status.success());
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

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

fn plot_makes_its_folder_and_never_overwrites() {
    let d = temp_dir();
    std::fs::write(d.path().join("bench.csv"), include_str!("fixtures/bench.csv")).unwrap();
    // From a fresh clone: the default output's folder does not exist yet.
    let o = host_in(d.path(), &["plot", "bench.csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let png = d.path().join("results/bench.png");
    let first = std::fs::read(&png).unwrap();
    assert!(first.starts_with(b"\x89PNG"));
    let again = ["plot", "bench.csv", "--title", "another"];
    assert_output_is_error(&again, &host_in(d.path(), &again), 2, "results/bench.png: exists; pass --force");
    assert_eq!(std::fs::read(&png).unwrap(), first);
    let o = host_in(d.path(), &["plot", "bench.csv", "--title", "another", "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(std::fs::read(&png).unwrap(), first);
    let nested = d.path().join("a/b/c.png");
    assert!(host_in(d.path(), &["plot", "bench.csv", "--out", nested.to_str().unwrap()]).status.success());
    assert!(nested.exists());
    assert_eq!(names(&d.path().join("results")), ["bench.png"], "temporary files left behind");
}

fn plot_and_report_refuse_csvs_without_rows() {
    let d = temp_dir();
    let header = include_str!("fixtures/bench.csv").lines().next().unwrap().to_string() + "\n";
    let cases = [
        ("header.csv", header.as_str(), "holds no rows"),
        ("bogus.csv", "hello,world\n1,2\n", "not a bench.csv: no column `algorithm`"),
        ("empty.csv", "", "not a bench.csv"),
    ];
    for (name, text, needle) in cases {
        let csv = d.path().join(name);
        std::fs::write(&csv, text).unwrap();
        let png = d.path().join(format!("{name}.png"));
        let args = ["plot", csv.to_str().unwrap(), "--out", png.to_str().unwrap()];
        assert_output_is_error(&args, &host(&args), 2, needle);
        assert!(!png.exists(), "{name}: a plot was drawn");
        let results = d.path().join(format!("{name}-results"));
        std::fs::create_dir_all(results.join("scan")).unwrap();
        std::fs::write(results.join("scan/bench.csv"), text).unwrap();
        let out = d.path().join(format!("{name}-docs"));
        let args = ["report", results.to_str().unwrap(), "--out", out.to_str().unwrap()];
        assert_output_is_error(&args, &host(&args), 2, needle);
        assert!(!out.exists(), "{name}: report wrote {}", out.display());
    }
    let args = ["report", "/nonexistent/results"];
    assert_output_is_error(&args, &host(&args), 2, "not a results folder");
}

/// SIGINT, SIGTERM or SIGHUP while `plot` draws, its temporary file beside the output: status
/// 130, one line naming the file removed, and nothing left in the folder. A signal that comes
/// only once the plot is in place leaves it there, complete; then a larger CSV, which takes
/// longer to draw, is tried.
fn an_interrupt_removes_the_temporary_output() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    use std::process::Stdio;
    let d = temp_dir();
    let (csv, out) = (d.path().join("bench.csv"), d.path().join("out"));
    std::fs::create_dir(&out).unwrap();
    let png = out.join("plot.png");
    let mut rows = 20_000u64;
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        loop {
            let header = include_str!("fixtures/bench.csv").lines().next().unwrap();
            let body: String = (0..rows)
                .map(|i| format!("single-pass,u32,add,{},PASS,1.0,1.0,{i},1.0,{i},1.0,1.0,1.0,\n", 1000 + i))
                .collect();
            std::fs::write(&csv, format!("{header}\n{body}")).unwrap();
            let mut child = Command::new(host_binary())
                .args(["plot", csv.to_str().unwrap(), "--out", png.to_str().unwrap()])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("running the host binary");
            let tmp = loop {
                if let Some(tmp) = names(&out).into_iter().find(|n| n.starts_with(".gpu-scan-")) {
                    break Some(tmp);
                }
                if child.try_wait().unwrap().is_some() {
                    break None;
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            };
            if tmp.is_some() {
                kill(Pid::from_raw(child.id() as i32), signal).unwrap();
            }
            let o = child.wait_with_output().unwrap();
            let err = stderr(&o);
            if let (Some(tmp), Some(130)) = (&tmp, o.status.code()) {
                if err != "interrupted\n" {
                    assert_eq!(err, format!("interrupted: removed {}\n", out.join(tmp).display()), "{signal}");
                    assert_eq!(names(&out), Vec::<String>::new(), "{signal}: files left behind");
                    break;
                }
            }
            assert!(matches!(o.status.code(), Some(0 | 130)), "{signal}: {:?} {err}", o.status);
            assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"), "{signal}: {err}");
            assert_eq!(names(&out), ["plot.png"], "{signal}");
            std::fs::remove_file(&png).unwrap();
            rows *= 4;
            assert!(rows <= 5_000_000, "{signal}: the plot was always drawn before the signal came");
        }
    }
}

/// `host plot bench.csv | head -1`, the reader gone before the table is printed: the plot is
/// drawn, and the program ends with the status of a closed pipe, silently.
fn a_closed_pipe_ends_the_output_quietly() {
    use std::process::Stdio;
    let d = temp_dir();
    std::fs::write(d.path().join("bench.csv"), include_str!("fixtures/bench.csv")).unwrap();
    // The pipe's reading end is closed before the program starts, so no write can get through.
    let closed = |args: &[&str]| {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        Command::new(host_binary())
            .current_dir(d.path())
            .args(args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .expect("running the host binary")
    };
    for args in [&["plot", "bench.csv"][..], &["scan", "--help"], &["scan", "10", "--tune", "help"]] {
        let o = closed(args);
        assert_eq!(stderr(&o), "", "{args:?}");
        assert_eq!(o.status.code(), Some(141), "{args:?}");
    }
    assert!(d.path().join("results/bench.png").exists());
}

/// A results folder as `run.sh bench` writes it, with the fixture as the scan sweep.
fn results_folder(d: &Path) -> PathBuf {
    let results = d.join("results");
    std::fs::create_dir_all(results.join("scan")).unwrap();
    std::fs::write(results.join("scan/bench.csv"), include_str!("fixtures/bench.csv")).unwrap();
    results
}

fn report_never_overwrites_without_force() {
    let d = temp_dir();
    let results = results_folder(d.path());
    let docs = d.path().join("new/docs");
    let args = ["report", results.to_str().unwrap(), "--out", docs.to_str().unwrap()];
    let o = host(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(names(&docs), ["bench.csv", "bench.png", "performance.md"]);
    for name in ["performance.md", "bench.csv", "bench.png"] {
        for old in names(&docs) {
            std::fs::remove_file(docs.join(old)).unwrap();
        }
        std::fs::write(docs.join(name), b"tracked").unwrap();
        assert_output_is_error(&args, &host(&args), 2, &format!("{name}: exists; pass --force"));
        assert_eq!(names(&docs), [name], "a refused report wrote files");
        assert_eq!(std::fs::read(docs.join(name)).unwrap(), b"tracked");
    }
    std::fs::write(docs.join("performance.md"), b"tracked").unwrap();
    assert!(host(&[&args[..], &["--force"]].concat()).status.success());
    assert!(std::fs::read_to_string(docs.join("performance.md")).unwrap().starts_with("# Performance"));
    assert_eq!(names(&docs), ["bench.csv", "bench.png", "performance.md"], "temporary files left behind");
}

fn bench_refuses_rows_that_cannot_run() {
    assert_usage_error(&["bench", "--algos", "naive", "--sizes", "2^20"], "the naive u32 add scan of n = 1048576");
    assert_usage_error(&["bench", "--types", "f32", "--ops", "xor"], "operator `xor` is not defined for f32");
    assert_usage_error(&["bench", "--ops", "affine", "--types", "u64,u32"], "`affine` is not defined for u32");
    assert_usage_error(&["bench", "--algos", "single-pass", "--kernel", "staged", "--types", "u8"], "staged");
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
    assert_usage_error(&["scan", "--input", &path("bad.npy")], "not a valid .npy file");
    assert_usage_error(&["scan", "--input", &path("five.bin")], "raw binary input needs --type");
    assert_usage_error(&["scan", "--input", &path("five.bin"), "--type", "u32"], "5 bytes is not a whole number");
    assert_usage_error(&["scan", "--input", &path("f32.npy"), "--op", "xor"], "operator `xor` is not defined for f32");
    assert_usage_error(&["scan", "--input", &path("u32.npy"), "--type", "f64"], "holds u32, but --type f64 was given");
    assert_usage_error(&["scan", "3", "--input", &path("u32.npy")], "N is 3 but --input has 2 values");
    assert_usage_error(&["scan", "10", "--output", &path("taken.npy")], "exists; pass --force");
    assert_usage_error(&["scan", "10", "--output", &path("no/such/dir/out.npy")], "does not exist");
    assert_usage_error(&["scan"], "give N, the number of elements, or --input");
    assert_usage_error(&["scan", "--input", d.path().to_str().unwrap()], "is a folder; give a .npy or raw file");
    assert_usage_error(&["scan", "--input", &path("missing/in.npy")], "cannot open");
    assert_eq!(std::fs::read(d.path().join("taken.npy")).unwrap(), b"keep me");
}

/// Writes `flags` (each 0 or 1, or any byte to make a damaged file) as a NumPy bool array, as
/// `np.save(path, x > 3)` does.
fn write_bools(path: &Path, flags: &[u8]) {
    std::fs::write(path, npy_bytes("|b1", &format!("({},)", flags.len()), flags)).unwrap();
}

/// Writes `data` as a .npy file of `shape`.
fn write_npy_shaped<T: npyz::AutoSerialize + npyz::Serialize + Copy>(path: &Path, data: &[T], shape: &[u64]) {
    use npyz::WriterBuilder;
    let mut out = Vec::new();
    let mut w = npyz::WriteOptions::new().default_dtype().shape(shape).writer(&mut out).begin_nd().unwrap();
    w.extend(data.iter().copied()).unwrap();
    w.finish().unwrap();
    std::fs::write(path, out).unwrap();
}

/// A .npy header of `dtype` and `shape` (NumPy's version 1.0), followed by `data`.
fn npy_bytes(dtype: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut header = format!("{{'descr': '{dtype}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut v = b"\x93NUMPY\x01\x00".to_vec();
    v.extend((header.len() as u16).to_le_bytes());
    v.extend(header.as_bytes());
    v.extend(data);
    v
}

/// A folder of inputs for the file tests: `x.npy` (u32 0..10), `f.npy` (ten u8 ones), `f9.npy`
/// (nine), `m.npy` (a 2 x 5 u32 matrix), `c.npy` (a 2 x 2 x 2 u32 array), `d.npy` (ten f64),
/// `d9.npy` (nine), `s.npy` (ten f32), `h.npy` (ten float16), `e.npy` (no u32), `ed.npy` (no
/// f64), and its path for each name.
fn inputs() -> (tempfile::TempDir, impl Fn(&str) -> String) {
    let d = temp_dir();
    let dir = d.path().to_path_buf();
    write_npy::<u32>(&dir.join("x.npy"), &(0..10).collect::<Vec<_>>());
    write_npy::<u8>(&dir.join("f.npy"), &[1; 10]);
    write_npy::<u8>(&dir.join("f9.npy"), &[1; 9]);
    write_npy_shaped::<u32>(&dir.join("m.npy"), &[0; 10], &[2, 5]);
    write_npy_shaped::<u32>(&dir.join("c.npy"), &[0; 8], &[2, 2, 2]);
    write_npy::<f64>(&dir.join("d.npy"), &[0.5; 10]);
    std::fs::write(dir.join("h.npy"), npy_bytes("<f2", "(10,)", &[0; 20])).unwrap();
    write_npy::<u32>(&dir.join("e.npy"), &[]);
    write_npy::<f64>(&dir.join("d9.npy"), &[0.5; 9]);
    write_npy::<f32>(&dir.join("s.npy"), &[0.5; 10]);
    write_npy::<f64>(&dir.join("ed.npy"), &[]);
    (d, move |name: &str| dir.join(name).to_str().unwrap().to_string())
}

/// Each case is a one-line usage error containing its needle, and leaves no `out.npy`.
fn assert_bad_inputs(p: &impl Fn(&str) -> String, cases: &[(&[&str], &str)]) {
    for (args, needle) in cases {
        let out = p("out.npy");
        let args: Vec<&str> = args.iter().copied().chain(["--output", &out]).collect();
        assert_usage_error(&args, needle);
        assert!(!Path::new(&out).exists(), "{args:?} wrote {out}");
    }
}

fn compact_file_mistakes() {
    let (_d, p) = inputs();
    write_bools(Path::new(&p("b2.npy")), &[1, 0, 0, 1, 0, 0, 0, 2, 0, 1]);
    write_bools(Path::new(&p("b9.npy")), &[1; 9]);
    std::fs::write(p("b23.npy"), npy_bytes("|b1", "(2, 3)", &[1; 6])).unwrap();
    std::fs::write(p("bshort.npy"), npy_bytes("|b1", "(10,)", &[1; 6])).unwrap();
    let (x, f, f9, m, h) = (p("x.npy"), p("f.npy"), p("f9.npy"), p("m.npy"), p("h.npy"));
    assert_bad_inputs(
        &p,
        &[
            (&["compact", "--input", &m], "m.npy: shape [2, 5] is not one-dimensional"),
            (&["compact", "--input", &h], "h.npy: dtype <f2 is not supported"),
            (&["compact", "--input", &x, "--type", "i32"], "x.npy: holds u32, but --type i32 was given"),
            (&["compact", "3", "--input", &x], "N is 3 but --input has 10 values"),
            (
                &["compact", "--input", &x, "--keep", "flags", "--flags", &f9],
                "f9.npy: --flags holds 9 values, but the input has 10",
            ),
            (&["compact", "--input", &x, "--keep", "flags", "--flags", &x], "x.npy: holds u32, but --flags takes u8"),
            (
                &["compact", "--input", &x, "--keep", "flags", "--flags", &m],
                "m.npy: shape [2, 5] is not one-dimensional",
            ),
            (&["compact", "--input", &x, "--keep", "flags"], "--keep flags with --input needs --flags FILE"),
            (&["compact", "--input", &x, "--flags", &f], "--flags goes with --keep flags"),
            (&["compact", "--input", &x, "--keep", "gt:-1"], "`-1` is not a valid u32 value"),
            (
                &["compact", "--input", &x, "--keep", "flags", "--flags", &p("b2.npy")],
                "b2.npy: element 7 is 2, not a bool (0 or 1)",
            ),
            (
                &["compact", "--input", &x, "--keep", "flags", "--flags", &p("b9.npy")],
                "b9.npy: --flags holds 9 values, but the input has 10",
            ),
            (
                &["compact", "--input", &x, "--keep", "flags", "--flags", &p("b23.npy")],
                "b23.npy: shape [2, 3] is not one-dimensional",
            ),
            (
                &["compact", "--input", &x, "--keep", "flags", "--flags", &p("bshort.npy")],
                "bshort.npy: truncated: the header promises 10 elements",
            ),
            (&["compact", "--input", &p("none.npy")], "none.npy: cannot open"),
        ],
    );
    assert_usage_error(&["compact", "--flags", &f], "--input");
    std::fs::write(p("taken.npy"), b"keep me").unwrap();
    assert_usage_error(&["compact", "--input", &x, "--output", &p("taken.npy")], "taken.npy: exists; pass --force");
    assert_eq!(std::fs::read(p("taken.npy")).unwrap(), b"keep me");
}

fn histogram_file_mistakes() {
    let (_d, p) = inputs();
    let (d, m, h) = (p("d.npy"), p("m.npy"), p("h.npy"));
    let out = p("out.npy");
    assert_bad_inputs(
        &p,
        &[
            (&["histogram", "--input", &m], "m.npy: shape [2, 5] is not one-dimensional"),
            (&["histogram", "--input", &h], "h.npy: dtype <f2 is not supported"),
            (&["histogram", "--input", &d, "--bins", "0"], "0 bins: between 1 and"),
            (&["histogram", "--input", &d, "--bins", "1e6"], "1000000 bins: between 1 and"),
            (&["histogram", "--input", &d, "--lo", "1", "--hi", "1"], "the range [1, 1) is empty"),
            (&["histogram", "--input", &d, "--lo", "2", "--hi", "-2"], "the range [2, -2) is empty"),
            (&["histogram", "--input", &d, "--starts", &out], "--starts and --output name the same file"),
            (&["histogram", "--input", &d, "--permutation", &p("no/p.npy")], "does not exist"),
            (&["histogram", "--input", &p("f9.npy"), "--type", "f32"], "holds u8, but --type f32 was given"),
            (&["histogram", "--input", &p("f9.npy")], "f9.npy: holds u8, but histogram takes u32 i32 u64 i64 f32 f64"),
        ],
    );
}

fn recurrence_file_mistakes() {
    let (_d, p) = inputs();
    let (d, d9, s, x, m) = (p("d.npy"), p("d9.npy"), p("s.npy"), p("x.npy"), p("m.npy"));
    assert_bad_inputs(
        &p,
        &[
            (&["recurrence", "--a", &d, "--b", &d9], "d9.npy: --b holds 9 values, but the input has 10"),
            (&["recurrence", "--a", &x, "--b", &x], "x.npy: holds u32, but the recurrence takes f32 f64"),
            (&["recurrence", "--a", &d, "--b", &s], "s.npy: holds f32, but --b takes f64"),
            (&["recurrence", "--a", &d, "--b", &m], "m.npy: shape [2, 5] is not one-dimensional"),
            (&["recurrence", "--a", &m, "--b", &d], "m.npy: shape [2, 5] is not one-dimensional"),
            (&["recurrence", "--a", &d, "--b", &d, "--type", "f32"], "d.npy: holds f64, but --type f32 was given"),
            (&["recurrence", "4", "--a", &d, "--b", &d], "N is 4 but --a has 10 values"),
            (&["recurrence", "--a", &p("raw.bin"), "--b", &d], "raw.bin: cannot open"),
            (&["recurrence"], "give N, the number of steps, or --a and --b"),
        ],
    );
    assert_usage_error(&["recurrence", "--a", &d], "--b");
    std::fs::write(p("raw.bin"), [0u8; 80]).unwrap();
    assert_usage_error(&["recurrence", "--a", &p("raw.bin"), "--b", &d], "raw.bin: raw binary input needs --type");
}

fn csr_file_mistakes() {
    let (_d, p) = inputs();
    write_npy::<u32>(Path::new(&p("rows.npy")), &[0, 1, 1, 4]);
    write_npy::<u32>(Path::new(&p("unsorted.npy")), &[0, 2, 1]);
    write_npy::<u32>(Path::new(&p("from1.npy")), &[1, 2]);
    write_npy::<u32>(Path::new(&p("down.npy")), &[0, 3, 2]);
    let (rows, x, d, m) = (p("rows.npy"), p("x.npy"), p("d.npy"), p("m.npy"));
    assert_bad_inputs(
        &p,
        &[
            (&["csr", "--input", &rows, "--rows", "4"], "rows.npy: row index 4 at position 3 is not below --rows 4"),
            (
                &["csr", "--input", &p("unsorted.npy"), "--rows", "3"],
                "unsorted.npy: row indices are not sorted: 1 at position 2 follows 2",
            ),
            (&["csr", "--input", &rows], "--input needs --rows R"),
            (&["csr", "--input", &d, "--rows", "4"], "d.npy: holds f64, but csr takes u32"),
            (&["csr", "--input", &m, "--rows", "4"], "m.npy: shape [2, 5] is not one-dimensional"),
            (&["csr", "3", "--input", &x, "--rows", "10"], "N is 3 but --input has 10 values"),
            (&["csr", "--to-coo", "--input", &p("from1.npy")], "from1.npy: row offsets start at 1, not 0"),
            (
                &["csr", "--to-coo", "--input", &p("down.npy")],
                "down.npy: row offsets decrease: 2 at position 2 follows 3",
            ),
            (&["csr", "--to-coo", "--input", &p("e.npy")], "e.npy: holds no offsets"),
            (&["csr", "--to-coo", "--input", &d], "d.npy: holds f64, but csr takes u32"),
            (&["csr", "5", "--to-coo", "--input", &x], "NNZ is 5 but the offsets of"),
        ],
    );
    assert_usage_error(&["csr", "--to-coo", "10"], "--input");
    assert_usage_error(&["csr", "--to-coo", "--input", &x, "--rows", "3"], "cannot be used with");
}

fn sort_file_mistakes() {
    let (_d, p) = inputs();
    write_npy::<u32>(Path::new(&p("v9.npy")), &[0; 9]);
    std::fs::write(p("taken.npy"), b"keep me").unwrap();
    let (x, d, m, h, f9, out) = (p("x.npy"), p("d.npy"), p("m.npy"), p("h.npy"), p("f9.npy"), p("out.npy"));
    let (w, i) = (p("w.npy"), p("i.npy"));
    assert_bad_inputs(
        &p,
        &[
            (&["sort", "--input", &m], "m.npy: shape [2, 5] is not one-dimensional"),
            (&["sort", "--input", &h], "h.npy: dtype <f2 is not supported"),
            (&["sort", "--input", &f9], "f9.npy: holds u8, but sort takes u32 i32 u64 i64 f32 f64"),
            (&["sort", "--input", &x, "--type", "f64"], "x.npy: holds u32, but --type f64 was given"),
            (&["sort", "3", "--input", &x], "N is 3 but --input has 10 values"),
            (&["sort", "--input", &x, "--values", &d], "d.npy: holds f64, but --values takes u32"),
            (
                &["sort", "--input", &x, "--values", &p("v9.npy")],
                "v9.npy: --values holds 9 values, but the input has 10",
            ),
            (&["sort", "--input", &x, "--values", &m], "m.npy: shape [2, 5] is not one-dimensional"),
            (&["sort", "--input", &x, "--values", &p("none.npy")], "none.npy: cannot open"),
            (&["sort", "10", "--values", &x, "--indices", &i], "--values FILE goes with --input"),
            (&["sort", "--input", &x, "--indices", &out], "--indices and --output name the same file"),
            (
                &["sort", "--input", &x, "--values", "--values-output", &out],
                "--values-output and --output name the same",
            ),
            (&["sort", "--input", &x, "--indices", &p("taken.npy")], "taken.npy: exists; pass --force"),
            (&["sort", "--input", &x, "--indices", &p("no/i.npy")], "does not exist"),
            (&["sort", "--input", &x, "--values-output", &w], "--values"),
            (&["sort", "--input", &x, "--index-type", "u64"], "--indices"),
            (&["sort", "--input", &x, "--key-bits", "3"], "cannot be used with"),
            (&["sort", "--input", &x, "--keys", "cub"], "cannot be used with"),
        ],
    );
    assert!(!Path::new(&w).exists() && !Path::new(&i).exists(), "a refused sort wrote a file");
    assert_eq!(std::fs::read(p("taken.npy")).unwrap(), b"keep me");
}

fn compact_indices_mistakes() {
    let (_d, p) = inputs();
    std::fs::write(p("taken.npy"), b"keep me").unwrap();
    let (x, f, out, i) = (p("x.npy"), p("f.npy"), p("out.npy"), p("i.npy"));
    let flagged = ["compact", "--input", &x, "--keep", "flags", "--flags", &f, "--indices"];
    let taken = p("taken.npy");
    let (to_out, to_taken) = ([&flagged[..], &[out.as_str()]].concat(), [&flagged[..], &[taken.as_str()]].concat());
    assert_bad_inputs(
        &p,
        &[
            (&to_out, "--indices and --output name the same file"),
            (&to_taken, "taken.npy: exists; pass --force"),
            (&["compact", "--input", &x, "--index-type", "u64"], "--indices"),
        ],
    );
    assert!(!Path::new(&i).exists(), "a refused compaction wrote its positions");
    assert_eq!(std::fs::read(p("taken.npy")).unwrap(), b"keep me");
    // 2^40 elements (a sparse file): their positions do not fit u32, before any memory is asked.
    let big = p("big.bin");
    std::fs::File::create(&big).unwrap().set_len(1 << 40).unwrap();
    let args = ["compact", "--input", &big, "--type", "u8", "--keep", "flags", "--flags", &big, "--indices", &i];
    assert_usage_error(&[&args[..], &["--index-type", "u32"]].concat(), "--index-type u32 holds positions below 2^32");
    assert_usage_error(&args, "of host memory, but");
}

fn segmented_file_mistakes() {
    let (_d, p) = inputs();
    write_npy::<i64>(Path::new(&p("unsorted.npy")), &[0, 2, 1]);
    write_npy::<u32>(Path::new(&p("beyond.npy")), &[0, 11]);
    write_npy::<i32>(Path::new(&p("negative.npy")), &[0, -4, 5]);
    std::fs::write(p("k.bin"), [0u8; 20]).unwrap();
    write_bools(Path::new(&p("b2.npy")), &[1, 0, 0, 1, 0, 0, 0, 2, 0, 1]);
    write_bools(Path::new(&p("b9.npy")), &[1; 9]);
    let (x, f, f9, d, m, h) = (p("x.npy"), p("f.npy"), p("f9.npy"), p("d.npy"), p("m.npy"), p("h.npy"));
    assert_bad_inputs(
        &p,
        &[
            (&["segmented", "--input", &m, "--heads", &f], "m.npy: shape [2, 5] is not one-dimensional"),
            (&["segmented", "--input", &h, "--rows-of", "2"], "h.npy: dtype <f2 is not supported"),
            (&["segmented", "--input", &f9, "--heads", &f9], "f9.npy: holds u8, but segmented takes u32 i32"),
            (&["segmented", "3", "--input", &x, "--heads", &f], "N is 3 but --input has 10 values"),
            (&["segmented", "--input", &x], "--input needs its segments: --heads FILE, --offsets FILE"),
            (&["segmented", "--input", &x, "--heads", &f9], "f9.npy: --heads holds 9 values, but the input has 10"),
            (&["segmented", "--input", &x, "--heads", &x], "x.npy: holds u32, but --heads takes u8"),
            (&["segmented", "--input", &x, "--heads", &m], "m.npy: shape [2, 5] is not one-dimensional"),
            (
                &["segmented", "--input", &x, "--offsets", &p("unsorted.npy")],
                "unsorted.npy: offsets are not sorted: 1 at position 2 follows 2",
            ),
            (
                &["segmented", "--input", &x, "--offsets", &p("beyond.npy")],
                "beyond.npy: offset 11 at position 1 is beyond the input's 10 elements",
            ),
            (
                &["segmented", "--input", &x, "--offsets", &p("negative.npy")],
                "negative.npy: offset -4 at position 1 is negative",
            ),
            (&["segmented", "--input", &x, "--offsets", &d], "d.npy: holds f64, but --offsets takes u64 i64 u32 i32"),
            (&["segmented", "--input", &x, "--offsets", &m], "m.npy: shape [2, 5] is not one-dimensional"),
            (&["segmented", "--input", &x, "--offsets"], "--offsets with --input needs a FILE"),
            (&["segmented", "--input", &x, "--keys", &d], "d.npy: holds f64, but --keys takes u8 u16 u32 i32 u64 i64"),
            (&["segmented", "--input", &x, "--keys", &f9], "f9.npy: --keys holds 9 values, but the input has 10"),
            (&["segmented", "--input", &x, "--keys", &h], "h.npy: dtype <f2 is not supported"),
            (&["segmented", "--input", &x, "--keys"], "--keys with --input needs a FILE"),
            (&["segmented", "10", "--keys", &x], "--keys FILE goes with --input"),
            (&["segmented", "10", "--offsets", &x], "--offsets FILE goes with --input"),
            (&["segmented", "--input", &x, "--rows-of", "3"], "10 elements are not whole rows of 3"),
            (&["segmented", "--input", &x, "--heads", &f, "--keys", &x], "cannot be used with"),
            (&["segmented", "--input", &x, "--offsets", &x, "--rows-of", "2"], "cannot be used with"),
            (
                &["segmented", "--input", &x, "--rows-of", "2", "--key-type", "u8"],
                "--key-type is the type of the --keys",
            ),
            (
                &["segmented", "--input", &x, "--keys", &f, "--key-type", "u32"],
                "f.npy: holds u8, but --key-type u32 was",
            ),
            (&["segmented", "--input", &x, "--keys", &p("k.bin")], "k.bin: a raw --keys file needs --key-type"),
            (&["segmented", "--input", &x, "--keys", &p("k.bin"), "--key-type", "u32"], "k.bin: --keys holds 5 values"),
            (&["segmented", "--input", &x, "--keys", &p("k.bin"), "--key-type", "f32"], "invalid value 'f32'"),
            (
                &["segmented", "--input", &x, "--offsets", &p("k.bin")],
                "k.bin: a raw --offsets file needs --offset-type",
            ),
            (
                &["segmented", "--input", &x, "--offsets", &p("beyond.npy"), "--offset-type", "i64"],
                "beyond.npy: holds u32, but --offset-type i64 was given",
            ),
            (&["segmented", "10", "--offsets", "--offset-type", "u32"], "generated offsets have none"),
            (&["segmented", "--input", &x, "--rows-of", "2", "--offset-type", "u32"], "generated offsets have none"),
            (&["segmented", "--input", &x, "--heads", &p("b2.npy")], "b2.npy: element 7 is 2, not a bool (0 or 1)"),
            (&["segmented", "--input", &x, "--heads", &p("b9.npy")], "b9.npy: --heads holds 9 values, but the input"),
            (&["segmented", "--input", &x, "--rows-of", "2", "--op", "affine"], "invalid value 'affine'"),
            (&["segmented", "--heads", &f], "--input"),
        ],
    );
}

fn batched_file_mistakes() {
    let (_d, p) = inputs();
    write_npy_shaped::<u8>(Path::new(&p("m8.npy")), &[0; 10], &[2, 5]);
    std::fs::write(p("m16.npy"), npy_bytes("<f2", "(2, 5)", &[0; 20])).unwrap();
    std::fs::write(p("raw.bin"), [0u8; 40]).unwrap();
    let (x, m, c) = (p("x.npy"), p("m.npy"), p("c.npy"));
    assert_bad_inputs(
        &p,
        &[
            (&["batched", "--input", &x], "x.npy: shape [10] is not two-dimensional"),
            (&["batched", "--input", &c], "c.npy: shape [2, 2, 2] is not two-dimensional"),
            (&["batched", "--input", &p("m8.npy")], "m8.npy: holds u8, but batched takes u32 i32 u64 i64 f32 f64"),
            (&["batched", "--input", &p("m16.npy")], "m16.npy: dtype <f2 is not supported"),
            (&["batched", "--input", &m, "--type", "f64"], "m.npy: holds u32, but --type f64 was given"),
            (&["batched", "2", "4", "--input", &m], "ROWS x COLS is 2 x 4 but --input is 2 x 5"),
            (&["batched", "--input", &p("raw.bin"), "--type", "u32"], "raw.bin: a raw file has no shape"),
            (&["batched", "2", "5", "--input", &p("raw.bin")], "raw.bin: raw binary input needs --type"),
            (
                &["batched", "3", "4", "--input", &p("raw.bin"), "--type", "u32"],
                "raw.bin: holds 10 u32 elements, not ROWS x COLS = 3 x 4",
            ),
            (&["batched", "2", "5", "--input", &p("raw.bin"), "--type", "u8"], "invalid value 'u8'"),
            (&["batched", "--input", &p("none.npy")], "none.npy: cannot open"),
            (&["batched", "--input", &m, "--op", "xor"], "invalid value 'xor'"),
            (&["batched", "--input", &m, "--axis", "rows", "--kernel", "column-tiles"], "scans columns, not rows"),
            (&["batched", "4"], "give ROWS and COLS, or --input"),
        ],
    );
}

/// A sparse raw file of 2^40 bytes (no disk used): the memory check refuses it unread.
fn too_large_files_are_refused() {
    let d = temp_dir();
    let big = d.path().join("big.bin");
    std::fs::File::create(&big).unwrap().set_len(1 << 40).unwrap();
    let big = big.to_str().unwrap();
    // As many u8 keys as `big` holds u64 values.
    let keys = d.path().join("keys.bin");
    std::fs::File::create(&keys).unwrap().set_len(1 << 37).unwrap();
    let keys = keys.to_str().unwrap();
    let out = d.path().join("out.npy");
    // A .npy matrix whose header promises 2^38 u32 (its data a hole).
    let matrix = d.path().join("big.npy");
    let header = npy_bytes("<u4", "(262144, 1048576)", &[]);
    std::fs::write(&matrix, &header).unwrap();
    std::fs::OpenOptions::new().write(true).open(&matrix).unwrap().set_len(header.len() as u64 + (1 << 40)).unwrap();
    let matrix = matrix.to_str().unwrap();
    let cases: [(&[&str], &str); 11] = [
        (&["csr", "--input", big, "--rows", "4"], "32-bit offsets hold fewer than 2^32"),
        (&["csr", "--to-coo", "--input", big], "of host memory, but"),
        (&["recurrence", "--a", big, "--b", big, "--type", "f32"], "of host memory, but"),
        (&["compact", "--input", big, "--type", "u32"], "of host memory, but"),
        (&["histogram", "--input", big, "--type", "u32"], "fewer than 2^32 - 1"),
        (&["sort", "--input", big, "--type", "u32"], "fewer than 2^32 - 1"),
        (&["segmented", "--input", big, "--type", "u32", "--rows-of", "4"], "of host memory, but"),
        (&["segmented", "--input", big, "--type", "u32", "--heads", big], "--heads holds 1099511627776 values"),
        (
            &["segmented", "--input", big, "--type", "u64", "--offsets", big, "--offset-type", "u64"],
            "of host memory, but",
        ),
        (&["segmented", "--input", big, "--type", "u64", "--keys", keys, "--key-type", "u8"], "of host memory, but"),
        (&["batched", "--input", matrix, "--axis", "rows"], "of host memory, but"),
    ];
    for (args, needle) in cases {
        let args: Vec<&str> = args.iter().copied().chain(["--output", out.to_str().unwrap()]).collect();
        assert_usage_error(&args, needle);
    }
    assert!(!out.exists());
}

/// Empty arrays from files are valid: without a GPU they get as far as opening it.
fn empty_files_are_valid_input() {
    let (_d, p) = inputs();
    let e = p("e.npy");
    let ed = p("ed.npy");
    write_npy::<u32>(Path::new(&p("zero.npy")), &[0]);
    let zero = p("zero.npy");
    write_npy::<u8>(Path::new(&p("e8.npy")), &[]);
    let e8 = p("e8.npy");
    for (name, shape) in [("e0x8.npy", [0, 8]), ("e8x0.npy", [8, 0]), ("e0x0.npy", [0, 0])] {
        write_npy_shaped::<f32>(Path::new(&p(name)), &[], &shape);
    }
    let i = p("i.npy");
    let mut cases: Vec<Vec<&str>> = vec![
        vec!["compact", "--input", &e],
        vec!["compact", "--input", &e, "--keep", "flags", "--flags", &e8, "--indices", &i],
        vec!["histogram", "--input", &e],
        vec!["recurrence", "--a", &ed, "--b", &ed],
        vec!["csr", "--input", &e, "--rows", "3"],
        vec!["csr", "--to-coo", "--input", &zero],
        vec!["sort", "--input", &e, "--indices", &i, "--descending"],
        vec!["segmented", "--input", &e, "--heads", &e8],
        vec!["segmented", "--input", &e, "--offsets", &zero],
        vec!["segmented", "--input", &e, "--keys", &e8],
        vec!["segmented", "--input", &e, "--rows-of", "4"],
    ];
    let (e0x8, e8x0, e0x0) = (p("e0x8.npy"), p("e8x0.npy"), p("e0x0.npy"));
    for m in [&e, &e0x8, &e8x0, &e0x0] {
        for axis in ["0", "1"] {
            cases.push(vec!["batched", "--input", m, "--axis", axis]);
        }
    }
    for args in cases {
        let out = p("out.npy");
        let args: Vec<&str> = args.iter().copied().chain(["--output", &out]).collect();
        assert_output_is_error(&args, &host(&args), 3, "no CUDA driver found");
        assert!(!Path::new(&out).exists() && !Path::new(&i).exists());
    }
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
    let again = ["scan", "--input", input.to_str().unwrap(), "--output", out.to_str().unwrap()];
    assert_output_is_error(&again, &host(&again), 2, "exists; pass --force");
}

/// The shape and elements of the .npy file at `path`.
fn read_npy<T: npyz::Deserialize>(path: &str) -> (Vec<u64>, Vec<T>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    (npy.shape().to_vec(), npy.into_vec().unwrap())
}

/// Runs `args` with two timed runs and asserts that its check passed.
fn assert_passes(args: &[&str]) {
    let args = [args, &["--iters", "2"]].concat();
    let o = host(&args);
    let out = stdout(&o);
    assert!(o.status.success() && out.contains("against the CPU reference: PASS"), "{args:?}: {out}{}", stderr(&o));
}

/// The stable argsort of `keys` by `cmp`, reversed when `descending`, NaNs last either way.
fn stable_order<T: Copy>(
    keys: &[T],
    descending: bool,
    nan: fn(T) -> bool,
    cmp: fn(&T, &T) -> std::cmp::Ordering,
) -> Vec<u32> {
    let mut order: Vec<u32> = (0..keys.len() as u32).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (keys[a as usize], keys[b as usize]);
        match (nan(x), nan(y)) {
            (true, true) => std::cmp::Ordering::Equal,
            (true, false) => std::cmp::Ordering::Greater,
            (false, true) => std::cmp::Ordering::Less,
            _ if descending => cmp(&y, &x),
            _ => cmp(&x, &y),
        }
    });
    order
}

/// f32 keys with both zeros, both infinities and NaNs of both signs among repeated values, with
/// values, ascending and descending; then the u64 argsort of few distinct i64 keys, where
/// stability decides every position.
fn sort_files_on_a_gpu() {
    let d = temp_dir();
    let p = |name: &str| d.path().join(name).to_str().unwrap().to_string();
    let special = [f32::NAN, -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY, -f32::NAN, 1.5, -1.5, 0.0, -0.0, 2.0];
    let keys: Vec<f32> = (0..10_007).map(|i| special[(i * 7 + i / 3) % special.len()]).collect();
    let values: Vec<u32> = (0..keys.len() as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let (k, v) = (p("k.npy"), p("v.npy"));
    write_npy(Path::new(&k), &keys);
    write_npy(Path::new(&v), &values);
    for descending in [false, true] {
        let tag = if descending { "down" } else { "up" };
        let (s, w, i) = (p(&format!("s-{tag}.npy")), p(&format!("w-{tag}.npy")), p(&format!("i-{tag}.npy")));
        let mut args = vec!["sort", "--input", &k, "--output", &s, "--values", &v, "--values-output", &w];
        args.extend(["--indices", &i]);
        if descending {
            args.push("--descending");
        }
        assert_passes(&args);
        let order = stable_order(&keys, descending, f32::is_nan, f32::total_cmp);
        let bits: Vec<u32> = order.iter().map(|&j| keys[j as usize].to_bits()).collect();
        let got: Vec<u32> = read_npy::<f32>(&s).1.iter().map(|x| x.to_bits()).collect();
        assert_eq!(got, bits, "{tag}: keys");
        assert_eq!(read_npy::<u32>(&w).1, order.iter().map(|&j| values[j as usize]).collect::<Vec<_>>(), "{tag}");
        assert_eq!(read_npy::<u32>(&i), (vec![keys.len() as u64], order), "{tag}: positions");
    }
    let keys: Vec<i64> = (0..100_003i64).map(|i| (i * 7919 % 5) - 2).collect();
    let (k, i) = (p("k64.npy"), p("i64.npy"));
    write_npy(Path::new(&k), &keys);
    assert_passes(&["sort", "--input", &k, "--descending", "--indices", &i, "--index-type", "u64"]);
    let order = stable_order(&keys, true, |_| false, i64::cmp);
    assert_eq!(read_npy::<u64>(&i).1, order.iter().map(|&j| j as u64).collect::<Vec<_>>());
    let again = ["sort", "--input", &k, "--indices", &i];
    assert_output_is_error(&again, &host(&again), 2, "exists; pass --force");
}

/// The kept elements and their positions, as u32 and as u64.
fn compact_indices_on_a_gpu() {
    let d = temp_dir();
    let p = |name: &str| d.path().join(name).to_str().unwrap().to_string();
    let data: Vec<u16> = (0..200_003u64).map(|i| (i * 40_503 % 65_521) as u16).collect();
    let flags: Vec<u8> = (0..data.len()).map(|i| (i % 7 == 3 || i % 11 == 0) as u8 * (i % 5 + 1) as u8).collect();
    let (x, f) = (p("x.npy"), p("f.npy"));
    write_npy(Path::new(&x), &data);
    write_npy(Path::new(&f), &flags);
    let positions: Vec<usize> = (0..data.len()).filter(|&i| flags[i] != 0).collect();
    for ty in ["u32", "u64"] {
        let (y, i) = (p(&format!("y-{ty}.npy")), p(&format!("i-{ty}.npy")));
        let args = ["compact", "--input", &x, "--keep", "flags", "--flags", &f, "--output", &y, "--indices", &i];
        assert_passes(&[&args[..], &["--index-type", ty]].concat());
        assert_eq!(read_npy::<u16>(&y).1, positions.iter().map(|&j| data[j]).collect::<Vec<_>>(), "{ty}");
        match ty {
            "u32" => assert_eq!(read_npy::<u32>(&i).1, positions.iter().map(|&j| j as u32).collect::<Vec<_>>()),
            _ => assert_eq!(read_npy::<u64>(&i).1, positions.iter().map(|&j| j as u64).collect::<Vec<_>>()),
        }
    }
}

/// Every segment of `x` (starting where `head`) scanned on its own with `op` from `identity`.
fn segments_cpu<T: Copy>(
    x: &[T],
    head: impl Fn(usize) -> bool,
    exclusive: bool,
    identity: T,
    op: fn(T, T) -> T,
) -> Vec<T> {
    let mut acc = identity;
    (0..x.len())
        .map(|i| {
            if head(i) {
                acc = identity;
            }
            let before = acc;
            acc = op(acc, x[i]);
            if exclusive {
                before
            } else {
                acc
            }
        })
        .collect()
}

/// Segments from head flags, from CSR-style i64 offsets (empty segments and the end included),
/// from u8 keys (their runs wrap around 256) and i64 keys, and from fixed rows.
fn segmented_files_on_a_gpu() {
    let d = temp_dir();
    let p = |name: &str| d.path().join(name).to_str().unwrap().to_string();
    let n = 50_003usize;
    let data: Vec<i64> = (0..n as i64).map(|i| (i * 7919 % 1000) - 500).collect();
    let floats: Vec<f64> = data.iter().map(|&v| v as f64 * 0.25).collect();
    let (x, xf) = (p("x.npy"), p("xf.npy"));
    write_npy(Path::new(&x), &data);
    write_npy(Path::new(&xf), &floats);
    let starts: Vec<usize> = (0..n).filter(|i| i % 37 == 5 || i % 101 == 0).collect();
    let heads: Vec<u8> = (0..n).map(|i| starts.contains(&i) as u8 * 3).collect();
    let mut offsets: Vec<i64> = starts.iter().map(|&s| s as i64).collect();
    offsets.extend([offsets[3], n as i64, n as i64]);
    offsets.sort();
    let run = |i: usize| starts.iter().take_while(|&&s| s <= i).count();
    let small: Vec<u8> = (0..n).map(|i| run(i) as u8).collect();
    let large: Vec<i64> = (0..n).map(|i| run(i) as i64 * 1_000_003 - (1 << 40)).collect();
    let (h, o, ks, kl) = (p("h.npy"), p("o.npy"), p("ks.npy"), p("kl.npy"));
    write_npy(Path::new(&h), &heads);
    write_npy(Path::new(&o), &offsets);
    write_npy(Path::new(&ks), &small);
    write_npy(Path::new(&kl), &large);
    let head = |i: usize| heads[i] != 0;
    let sum = |a: i64, b: i64| a.wrapping_add(b);
    let cases: [(&str, &[&str], bool); 4] = [
        ("heads", &["--heads", &h], false),
        ("offsets", &["--offsets", &o], true),
        ("keys-u8", &["--keys", &ks], false),
        ("keys-i64", &["--keys", &kl], true),
    ];
    for (name, segments, exclusive) in cases {
        let y = p(&format!("y-{name}.npy"));
        let mut args = [&["segmented", "--input", &x, "--output", &y][..], segments].concat();
        if exclusive {
            args.push("--exclusive");
        }
        assert_passes(&args);
        assert_eq!(read_npy::<i64>(&y).1, segments_cpu(&data, head, exclusive, 0, sum), "{name}");
    }
    let y = p("y-max.npy");
    assert_passes(&["segmented", "--input", &xf, "--keys", &kl, "--op", "max", "--exclusive", "--output", &y]);
    assert_eq!(read_npy::<f64>(&y).1, segments_cpu(&floats, head, true, f64::NEG_INFINITY, f64::max));
    let y = p("y-rows.npy");
    assert_passes(&["segmented", "--input", &x, "--rows-of", "31", "--output", &y]);
    assert_eq!(read_npy::<i64>(&y).1, segments_cpu(&data, |i| i % 31 == 0, false, 0, sum));
}

/// Both axes of an i64 matrix (sums) and an f64 one (maxima, exclusive), and empty matrices of
/// every shape on both axes, each written back with the input's shape.
fn batched_files_on_a_gpu() {
    let d = temp_dir();
    let p = |name: &str| d.path().join(name).to_str().unwrap().to_string();
    let (rows, cols) = (1009usize, 13usize);
    let data: Vec<i64> = (0..(rows * cols) as i64).map(|i| (i * 7919 % 1000) - 500).collect();
    let floats: Vec<f64> = data.iter().map(|&v| v as f64 * 0.5).collect();
    let (m, mf) = (p("m.npy"), p("mf.npy"));
    write_npy_shaped(Path::new(&m), &data, &[rows as u64, cols as u64]);
    write_npy_shaped(Path::new(&mf), &floats, &[rows as u64, cols as u64]);
    // The scans of every row (axis 1) or column (axis 0) on the CPU, in C order.
    fn scans<T: Copy>(
        x: &[T],
        (rows, cols): (usize, usize),
        axis: usize,
        exclusive: bool,
        identity: T,
        op: fn(T, T) -> T,
    ) -> Vec<T> {
        let mut out = x.to_vec();
        let (outer, inner) = if axis == 1 { (rows, cols) } else { (cols, rows) };
        // Element `b` of row or column `a`.
        let at = |a: usize, b: usize| if axis == 1 { a * cols + b } else { b * cols + a };
        for a in 0..outer {
            let mut acc = identity;
            for b in 0..inner {
                let i = at(a, b);
                let before = acc;
                acc = op(acc, x[i]);
                out[i] = if exclusive { before } else { acc };
            }
        }
        out
    }
    for axis in [0, 1] {
        let y = p(&format!("y{axis}.npy"));
        assert_passes(&["batched", "--input", &m, "--axis", &axis.to_string(), "--output", &y]);
        let want = scans(&data, (rows, cols), axis, false, 0, i64::wrapping_add);
        assert_eq!(read_npy::<i64>(&y), (vec![rows as u64, cols as u64], want), "axis {axis}");
        let y = p(&format!("yf{axis}.npy"));
        assert_passes(&[
            "batched",
            "--input",
            &mf,
            "--axis",
            &axis.to_string(),
            "--op",
            "max",
            "--exclusive",
            "--output",
            &y,
        ]);
        let want = scans(&floats, (rows, cols), axis, true, f64::NEG_INFINITY, f64::max);
        assert_eq!(read_npy::<f64>(&y).1, want, "max, axis {axis}");
    }
    for shape in [&[0u64][..], &[0, 8], &[8, 0], &[0, 0]] {
        let e = p("e.npy");
        write_npy_shaped::<f32>(Path::new(&e), &[], shape);
        for axis in ["0", "1"] {
            let y = p(&format!("e{}-{axis}.npy", shape.iter().map(u64::to_string).collect::<Vec<_>>().join("x")));
            assert_passes(&["batched", "--input", &e, "--axis", axis, "--output", &y]);
            assert_eq!(read_npy::<f32>(&y), (shape.to_vec(), vec![]), "{shape:?} axis {axis}");
        }
    }
}

fn scan_across_ranks_on_a_gpu() {
    let d = temp_dir();
    let record = d.path().join("record.csv");
    let o = host(&["scan", "100003", "--ranks", "3", "--iters", "2", "--record", record.to_str().unwrap()]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("scan across 3 ranks") && out.contains("of a same-run device copy"), "{out}");
    assert!(std::fs::read_to_string(&record).unwrap().contains("scan across 3 ranks"));
}

/// Argument fuzzing: any mix of subcommands, flags and (sometimes nonsensical) values ends in a
/// result, a one-line error or a usage error, never a panic. (`bench` is left out: on a GPU
/// machine a valid random `bench` would start a full sweep.) They run in a folder of their own,
/// where a run that passes on a GPU writes the files its tokens name.
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
        "--values-output",
        "--indices",
        "--index-type",
        "u64",
        "--descending",
        "--heads",
        "--offsets",
        "--keys",
        "--key-type",
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
    let d = temp_dir();
    let mut runner = TestRunner::new(workspace_tests::proptest_config(64));
    runner
        .run(&prop::collection::vec(0..TOKENS.len(), 0..8), |picks| {
            let args: Vec<&str> = picks.iter().map(|&i| TOKENS[i]).collect();
            let o = host_in(d.path(), &args);
            let err = stderr(&o);
            prop_assert!(!err.contains("panicked"), "{args:?}: {err}");
            prop_assert!(matches!(o.status.code(), Some(0..=3)), "{args:?}: {:?} {err}", o.status);
            prop_assert!(err.lines().count() <= 1, "{args:?}: {err}");
            Ok(())
        })
        .map_err(|e| e.to_string())
}

/// `scan --output-type`: narrow types only with it, only the pairs that widen, none of the
/// flags a sum into a wider buffer cannot take, and the narrow files' own mistakes.
fn widening_mistakes() {
    let (_d, p) = inputs();
    let (x, m, h) = (p("x.npy"), p("m.npy"), p("h.npy"));
    std::fs::write(p("h23.npy"), npy_bytes("<f2", "(2, 3)", &[0; 12])).unwrap();
    std::fs::write(p("c8.npy"), npy_bytes("<c8", "(2,)", &[0; 16])).unwrap();
    std::fs::write(p("short.npy"), npy_bytes("<i2", "(8,)", &[0; 10])).unwrap();
    std::fs::write(p("five.bin"), [0u8; 5]).unwrap();
    write_bools(Path::new(&p("b2.npy")), &[1, 0, 0, 1, 0, 0, 0, 2, 0, 1]);
    assert_bad_inputs(
        &p,
        &[
            (&["scan", "--input", &p("b2.npy"), "--output-type", "u32"], "b2.npy: element 7 is 2, not a bool (0 or 1)"),
            (&["scan", "10", "--type", "i8"], "--type i8 is read only by a widening scan: add --output-type"),
            (&["scan", "10", "--type", "f32", "--output-type", "u64"], "--type f32 is not one"),
            (&["scan", "10", "--output-type", "f32"], "--output-type f32: u8 widens into u32, u64, i64"),
            (&["scan", "10", "--type", "i32", "--output-type", "u32"], "i32 widens into u64, i64"),
            (&["scan", "10", "--type", "bf16", "--output-type", "u64"], "bf16 widens into f32"),
            (&["scan", "10", "--output-type", "f64"], "invalid value 'f64' for '--output-type <TYPE>'"),
            (&["scan", "10", "--output-type", "u32", "--op", "max"], "it takes no --op"),
            (&["scan", "10", "--output-type", "u32", "--in-place"], "it takes no --in-place"),
            (&["scan", "10", "--output-type", "u32", "--algo", "naive"], "it takes no --algo"),
            (&["scan", "10", "--output-type", "u32", "--init", "-1"], "--init `-1` is not a valid u32 value"),
            (&["scan", "--input", &x, "--output-type", "u32"], "--output-type u32: u32 widens into u64, i64"),
            (&["scan", "--input", &h, "--output-type", "u32"], "--output-type u32: f16 widens into f32"),
            (&["scan", "--input", &h, "--type", "i16", "--output-type", "i64"], "holds f16, but --type i16 was given"),
            (&["scan", "--input", &p("h23.npy"), "--output-type", "f32"], "shape [2, 3] is not one-dimensional"),
            (&["scan", "--input", &m, "--output-type", "u64"], "m.npy: shape [2, 5] is not one-dimensional"),
            (&["scan", "--input", &p("c8.npy"), "--output-type", "f32"], "cannot be widened"),
            (&["scan", "--input", &p("short.npy"), "--output-type", "i64"], "short.npy: truncated"),
            (&["scan", "--input", &p("five.bin"), "--output-type", "u32"], "raw binary input needs --type"),
            (&["scan", "--input", &p("five.bin"), "--type", "i16", "--output-type", "u32"], "5 bytes is not a whole"),
            (&["scan", "3", "--input", &h, "--output-type", "f32"], "N is 3 but --input has 10 values"),
            (&["scan", "--input", "1,2,x", "--type", "i8", "--output-type", "i64"], "`x` is not a valid i8 value"),
            (&["scan", "--input", "1,2", "--type", "bool", "--output-type", "u32"], "`2` is not a valid bool value"),
        ],
    );
}

/// Each narrow file type into a wide type and back from the result file, against the CPU:
/// int8 and int16 into i64, float16 (integer-valued: exact) and raw bfloat16 into f32, the
/// deterministic f16 sum, and bool into u32.
fn widening_files_on_a_gpu() {
    let d = temp_dir();
    let p = |name: &str| d.path().join(name).to_str().unwrap().to_string();
    let n = 70_001usize;
    let ints: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 256 - 128).collect();
    let run = |args: &[&str]| {
        let o = host(args);
        assert!(o.status.success(), "{args:?}: {}{}", stdout(&o), stderr(&o));
        assert!(stdout(&o).contains("PASS"), "{}", stdout(&o));
    };
    let read_back = |name: &str| -> Vec<f64> {
        let bytes = std::fs::read(p(name)).unwrap();
        let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
        match npy.header().dtype().descr().trim_matches('\'') {
            "<i8" => npy.into_vec::<i64>().unwrap().into_iter().map(|x| x as f64).collect(),
            "<u4" => npy.into_vec::<u32>().unwrap().into_iter().map(|x| x as f64).collect(),
            "<f4" => npy.into_vec::<f32>().unwrap().into_iter().map(|x| x as f64).collect(),
            other => panic!("{name}: unexpected dtype {other}"),
        }
    };
    let sums = |v: &[i64], exclusive: bool| -> Vec<f64> {
        let mut acc = 0i64;
        v.iter()
            .map(|&x| {
                let before = acc;
                acc += x;
                (if exclusive { before } else { acc }) as f64
            })
            .collect()
    };
    write_npy::<i8>(&d.path().join("i8.npy"), &ints.iter().map(|&x| x as i8).collect::<Vec<_>>());
    run(&["scan", "--input", &p("i8.npy"), "--output-type", "i64", "--output", &p("i8-out.npy"), "--iters", "2"]);
    assert_eq!(read_back("i8-out.npy"), sums(&ints, false));
    write_npy::<i16>(&d.path().join("i16.npy"), &ints.iter().map(|&x| (x * 200) as i16).collect::<Vec<_>>());
    let args = ["scan", "--input", &p("i16.npy"), "--output-type", "i64", "--exclusive", "--output", &p("i16-out.npy")];
    run(&args);
    assert_eq!(read_back("i16-out.npy"), sums(&ints.iter().map(|&x| x * 200).collect::<Vec<_>>(), true));
    let small: Vec<i64> = ints.iter().map(|&x| x % 9).collect();
    let halves: Vec<u8> = small.iter().flat_map(|&x| half::f16::from_f32(x as f32).to_bits().to_le_bytes()).collect();
    std::fs::write(p("f16.npy"), npy_bytes("<f2", &format!("({n},)"), &halves)).unwrap();
    run(&["scan", "--input", &p("f16.npy"), "--output-type", "f32", "--output", &p("f16-out.npy")]);
    assert_eq!(read_back("f16-out.npy"), sums(&small, false));
    run(&["scan", "--input", &p("f16.npy"), "--output-type", "f32", "--deterministic", "--output", &p("det.npy")]);
    assert_eq!(read_back("det.npy"), sums(&small, false));
    let brains: Vec<u8> = small.iter().flat_map(|&x| half::bf16::from_f32(x as f32).to_bits().to_le_bytes()).collect();
    std::fs::write(p("bf16.bin"), brains).unwrap();
    let args = ["scan", "--input", &p("bf16.bin"), "--type", "bf16", "--output-type", "f32", "--output", &p("bf.npy")];
    run(&args);
    assert_eq!(read_back("bf.npy"), sums(&small, false));
    let flags: Vec<u8> = ints.iter().map(|&x| (x > 0) as u8).collect();
    std::fs::write(p("b.npy"), npy_bytes("|b1", &format!("({n},)"), &flags)).unwrap();
    run(&["scan", "--input", &p("b.npy"), "--output-type", "u32", "--output", &p("b-out.npy")]);
    assert_eq!(read_back("b-out.npy"), sums(&flags.iter().map(|&x| x as i64).collect::<Vec<_>>(), false));
    let mut bad = flags.clone();
    bad[n - 1] = 2;
    std::fs::write(p("b2.npy"), npy_bytes("|b1", &format!("({n},)"), &bad)).unwrap();
    let o = host(&["scan", "--input", &p("b2.npy"), "--output-type", "u32", "--output", &p("b2-out.npy")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("element {} is 2, not a bool", n - 1)), "{}", stderr(&o));
    assert!(!Path::new(&p("b2-out.npy")).exists());
}

/// An empty array from a file scans to an empty file of the result's type, with no GPU: plain,
/// widening and streamed alike, .npy and raw; written only where --force allows.
fn empty_scans() {
    let (_d, p) = inputs();
    write_npy::<u8>(Path::new(&p("e8.npy")), &[]);
    std::fs::write(p("e.bin"), b"").unwrap();
    let pass = |args: &[&str]| {
        let o = host(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}{}", stdout(&o), stderr(&o));
        assert!(stdout(&o).contains("0 elements against the CPU reference: PASS"), "{args:?}: {}", stdout(&o));
    };
    // The streamed path (a file into a file), another algorithm's, and the widening sum's.
    let (y, yh, yw, yr) = (p("y.npy"), p("yh.npy"), p("yw.npy"), p("y.bin"));
    pass(&["scan", "--input", &p("e.npy"), "--output", &y]);
    assert_eq!(read_npy::<u32>(&y), (vec![0], vec![]));
    pass(&["scan", "--input", &p("ed.npy"), "--algo", "blelloch", "--exclusive", "--output", &yh]);
    assert_eq!(read_npy::<f64>(&yh), (vec![0], vec![]));
    pass(&["scan", "--input", &p("e8.npy"), "--output-type", "u64", "--output", &yw]);
    assert_eq!(read_npy::<u64>(&yw), (vec![0], vec![]));
    pass(&["scan", "--input", &p("e.bin"), "--type", "i16", "--output-type", "i64", "--output", &yr]);
    assert_eq!(std::fs::read(&yr).unwrap(), b"");
    pass(&["scan", "--input", &p("e.npy")]);
    assert_usage_error(&["scan", "--input", &p("e.npy"), "--output", &y], "y.npy: exists; pass --force");
    pass(&["scan", "--input", &p("e.npy"), "--output", &y, "--force"]);
    // Its options are still checked: a traced scan takes 1 to 1024 elements.
    assert_usage_error(&["scan", "--input", &p("e.npy"), "--algo", "blelloch", "--trace"], "(got 0)");
    assert_usage_error(&["scan", "--input", &p("ed.npy"), "--op", "xor"], "operator `xor` is not defined for f64");
    let files = names(Path::new(&y).parent().unwrap());
    assert!(!files.iter().any(|f| f.starts_with(".gpu-scan-")), "temporary files left: {files:?}");
}

/// A .npy file whose header promises more than it holds, given to the streamed scan (a file
/// into a file): refused before the GPU opens, naming the file, no output and no temporary file.
fn truncated_stream_is_refused() {
    let d = temp_dir();
    let cut = d.path().join("cut.npy");
    std::fs::write(&cut, npy_bytes("<u4", "(1000,)", &[7; 2000])).unwrap();
    let out = d.path().join("out.npy");
    let args = ["scan", "--input", cut.to_str().unwrap(), "--output", out.to_str().unwrap()];
    assert_usage_error(&args, "cut.npy: truncated: the header promises 1000 elements, the file holds 2000 bytes");
    assert_usage_error(&[&args[..], &["--device-memory", "1MiB"]].concat(), "cut.npy: truncated");
    assert_eq!(names(d.path()), ["cut.npy"], "an output or a temporary file was left");
}

/// Big-endian .npy files are refused, naming the file, where a scan reads the bytes as they lie
/// (the streamed scan and the widening sum), before the GPU opens.
fn big_endian_files_are_refused() {
    let d = temp_dir();
    let p = |name: &str| d.path().join(name).to_str().unwrap().to_string();
    std::fs::write(p("be.npy"), npy_bytes(">u4", "(4,)", &[0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4])).unwrap();
    std::fs::write(p("be16.npy"), npy_bytes(">i2", "(2,)", &[0, 1, 0, 2])).unwrap();
    let out = p("out.npy");
    for args in [
        &["scan", "--input", &p("be.npy"), "--output", &out][..],
        &["scan", "--input", &p("be.npy"), "--output-type", "u64", "--output", &out],
        &["scan", "--input", &p("be16.npy"), "--output-type", "i64"],
    ] {
        assert_usage_error(args, ".npy: big-endian data is not supported; save it little-endian");
    }
    assert_eq!(names(d.path()), ["be.npy", "be16.npy"]);
}

/// Raw keys of --key-type, raw offsets of --offset-type and a raw matrix of ROWS x COLS, each
/// result against the CPU.
fn raw_side_files_on_a_gpu() {
    let d = temp_dir();
    let p = |name: &str| d.path().join(name).to_str().unwrap().to_string();
    let n = 30_011usize;
    let data: Vec<i32> = (0..n as i32).map(|i| (i * 7919 % 2001) - 1000).collect();
    write_npy(Path::new(&p("x.npy")), &data);
    let starts: Vec<usize> = (0..n).filter(|i| i % 53 == 17 || i % 97 == 0).collect();
    let run = |i: usize| starts.iter().take_while(|&&s| s <= i).count();
    // u16 keys, their runs wrapping past 65535 nowhere but changing at every start.
    let keys: Vec<u8> = (0..n).flat_map(|i| ((run(i) * 37) as u16).to_le_bytes()).collect();
    std::fs::write(p("k.bin"), keys).unwrap();
    let offsets: Vec<u8> = starts.iter().chain([&n]).flat_map(|&s| (s as i32).to_le_bytes()).collect();
    std::fs::write(p("o.bin"), offsets).unwrap();
    let head = |i: usize| i == 0 || starts.contains(&i);
    let want = segments_cpu(&data, head, false, 0, i32::wrapping_add);
    let (yk, yo) = (p("yk.npy"), p("yo.npy"));
    assert_passes(&["segmented", "--input", &p("x.npy"), "--keys", &p("k.bin"), "--key-type", "u16", "--output", &yk]);
    assert_eq!(read_npy::<i32>(&yk).1, want, "raw u16 keys");
    let args = ["segmented", "--input", &p("x.npy"), "--offsets", &p("o.bin"), "--offset-type", "i32", "--output", &yo];
    assert_passes(&args);
    assert_eq!(read_npy::<i32>(&yo).1, want, "raw i32 offsets");
    let (rows, cols) = (101usize, 7usize);
    let m: Vec<f32> = (0..rows * cols).map(|i| (i % 13) as f32 - 6.0).collect();
    std::fs::write(p("m.bin"), m.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let y = p("ym.npy");
    assert_passes(&["batched", "101", "7", "--input", &p("m.bin"), "--type", "f32", "--axis", "1", "--output", &y]);
    let want = segments_cpu(&m, |i| i % cols == 0, false, 0.0, |a, b| a + b);
    assert_eq!(read_npy::<f32>(&y), (vec![rows as u64, cols as u64], want), "raw matrix, along the rows");
}

/// NumPy bool arrays as compaction flags (with the positions) and as segment heads.
fn bool_masks_on_a_gpu() {
    let d = temp_dir();
    let p = |name: &str| d.path().join(name).to_str().unwrap().to_string();
    let n = 40_009usize;
    let data: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) % 1000).collect();
    let mask: Vec<u8> = data.iter().map(|&x| (x > 700) as u8).collect();
    write_npy(Path::new(&p("x.npy")), &data);
    write_bools(Path::new(&p("m.npy")), &mask);
    let (y, i) = (p("y.npy"), p("i.npy"));
    assert_passes(&[
        "compact",
        "--input",
        &p("x.npy"),
        "--keep",
        "flags",
        "--flags",
        &p("m.npy"),
        "--output",
        &y,
        "--indices",
        &i,
    ]);
    let kept: Vec<usize> = (0..n).filter(|&j| mask[j] == 1).collect();
    assert_eq!(read_npy::<u32>(&y).1, kept.iter().map(|&j| data[j]).collect::<Vec<_>>());
    assert_eq!(read_npy::<u32>(&i).1, kept.iter().map(|&j| j as u32).collect::<Vec<_>>());
    let h = p("h.npy");
    assert_passes(&["segmented", "--input", &p("x.npy"), "--heads", &p("m.npy"), "--op", "max", "--output", &h]);
    assert_eq!(read_npy::<u32>(&h).1, segments_cpu(&data, |j| mask[j] == 1, false, 0, u32::max));
}

/// `--keep gt:T` on negative and positive i32 and `--keep nonzero` on f32 with both zeros and
/// NaNs, each with the kept elements' positions.
fn compact_comparisons_on_a_gpu() {
    let d = temp_dir();
    let p = |name: &str| d.path().join(name).to_str().unwrap().to_string();
    let n = 100_003usize;
    let ints: Vec<i32> = (0..n as i64).map(|i| ((i * 7919) % 201 - 100) as i32).collect();
    let special = [0.0f32, -0.0, 1.5, f32::NAN, -2.0, 0.0, f32::INFINITY, -0.0];
    let floats: Vec<f32> = (0..n).map(|i| special[(i * 5 + i / 7) % special.len()]).collect();
    write_npy(Path::new(&p("x.npy")), &ints);
    write_npy(Path::new(&p("f.npy")), &floats);
    for ty in ["u32", "u64"] {
        let (y, i) = (p(&format!("y-{ty}.npy")), p(&format!("i-{ty}.npy")));
        let args = ["compact", "--input", &p("x.npy"), "--keep", "gt:-7", "--output", &y, "--indices", &i];
        assert_passes(&[&args[..], &["--index-type", ty]].concat());
        let kept: Vec<usize> = (0..n).filter(|&j| ints[j] > -7).collect();
        assert_eq!(read_npy::<i32>(&y).1, kept.iter().map(|&j| ints[j]).collect::<Vec<_>>(), "{ty}");
        match ty {
            "u32" => assert_eq!(read_npy::<u32>(&i).1, kept.iter().map(|&j| j as u32).collect::<Vec<_>>()),
            _ => assert_eq!(read_npy::<u64>(&i).1, kept.iter().map(|&j| j as u64).collect::<Vec<_>>()),
        }
    }
    let (y, i) = (p("yf.npy"), p("if.npy"));
    assert_passes(&["compact", "--input", &p("f.npy"), "--keep", "nonzero", "--output", &y, "--indices", &i]);
    let kept: Vec<usize> = (0..n).filter(|&j| floats[j] != 0.0).collect();
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&read_npy::<f32>(&y).1), kept.iter().map(|&j| floats[j].to_bits()).collect::<Vec<_>>());
    assert_eq!(read_npy::<u32>(&i).1, kept.iter().map(|&j| j as u32).collect::<Vec<_>>());
    let y = p("y-tiles.npy");
    assert_passes(&["compact", "--input", &p("x.npy"), "--keep", "gt:50", "--kernel", "tiles", "--output", &y]);
    assert_eq!(read_npy::<i32>(&y).1, ints.iter().copied().filter(|&x| x > 50).collect::<Vec<_>>());
}

/// The counts, bin starts and permutation of f32 values (quarters: exact bins) in 16 bins over
/// [0, 64), some outside, against a stable grouping by bin on the CPU.
fn histogram_files_on_a_gpu() {
    let d = temp_dir();
    let p = |name: &str| d.path().join(name).to_str().unwrap().to_string();
    let n = 50_021usize;
    let values: Vec<f32> = (0..n as i64).map(|i| ((i * 7919) % 400 - 40) as f32 * 0.25 - 2.0).collect();
    write_npy(Path::new(&p("v.npy")), &values);
    let (c, s, q) = (p("c.npy"), p("s.npy"), p("q.npy"));
    let args = ["histogram", "--input", &p("v.npy"), "--bins", "16", "--lo", "0", "--hi", "64"];
    assert_passes(&[&args[..], &["--output", &c, "--starts", &s, "--permutation", &q]].concat());
    // Bins of 4 wide: quarters divide exactly, and the outside (below 0, from 64) goes last.
    let bin = |x: f32| if (0.0..64.0).contains(&x) { (x / 4.0) as usize } else { 16 };
    let mut counts = [0u64; 17];
    values.iter().for_each(|&x| counts[bin(x)] += 1);
    let starts: Vec<u64> = counts[..16].iter().scan(0, |acc, &c| Some(std::mem::replace(acc, *acc + c))).collect();
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|&j| bin(values[j as usize]));
    assert!(counts[16] > 0 && counts[..16].iter().all(|&c| c > 0), "every bin and the outside are used");
    assert_eq!(read_npy::<u64>(&c).1, counts[..16]);
    assert_eq!(read_npy::<u64>(&s).1, starts);
    assert_eq!(read_npy::<u32>(&q).1, order);
    // The counts alone take the kernel that only counts; generated values, grouped or not.
    let alone = p("alone.npy");
    assert_passes(&[&args[..], &["--output", &alone]].concat());
    assert_eq!(read_npy::<u64>(&alone).1, counts[..16]);
    assert_passes(&["histogram", "100003", "--bins", "1000"]);
    assert_passes(&["histogram", "100003", "--bins", "1000", "--group", "--type", "i64"]);
}

/// COO row indices (with empty rows, the first and the last among them) to CSR offsets, and
/// offsets back to row indices.
fn csr_files_on_a_gpu() {
    let d = temp_dir();
    let p = |name: &str| d.path().join(name).to_str().unwrap().to_string();
    let nrows = 1000u32;
    let mut rows: Vec<u32> = (0..60_013u64).map(|i| ((i * 7919) % 997) as u32 + 1).filter(|r| r % 10 != 3).collect();
    rows.sort();
    write_npy(Path::new(&p("rows.npy")), &rows);
    let o = p("o.npy");
    assert_passes(&["csr", "--input", &p("rows.npy"), "--rows", &nrows.to_string(), "--output", &o]);
    let offsets: Vec<u32> = (0..=nrows).map(|r| rows.iter().filter(|&&x| x < r).count() as u32).collect();
    assert_eq!(read_npy::<u32>(&o), (vec![nrows as u64 + 1], offsets.clone()));
    let back = p("back.npy");
    assert_passes(&["csr", "--to-coo", "--input", &o, "--output", &back]);
    assert_eq!(read_npy::<u32>(&back).1, rows);
    // Offsets written by hand, their rows counted out on the CPU.
    let given: Vec<u32> = vec![0, 0, 3, 3, 4, 9, 9];
    write_npy(Path::new(&p("given.npy")), &given);
    let r = p("r.npy");
    assert_passes(&["csr", "--to-coo", "--input", &p("given.npy"), "--output", &r]);
    let want: Vec<u32> =
        given.windows(2).enumerate().flat_map(|(row, w)| vec![row as u32; (w[1] - w[0]) as usize]).collect();
    assert_eq!(read_npy::<u32>(&r).1, want);
}

/// The recurrence of factors in {-1, 0, 1} and integer offsets from x0 = 3 (every value an
/// integer well within f64's exact range, so any order of the scan gives the loop's result).
fn recurrence_files_on_a_gpu() {
    let d = temp_dir();
    let p = |name: &str| d.path().join(name).to_str().unwrap().to_string();
    let n = 70_001usize;
    let a: Vec<f64> = (0..n as i64).map(|t| [1.0, -1.0, 1.0, 0.0, 1.0][(t * 7 % 5) as usize]).collect();
    let b: Vec<f64> = (0..n as i64).map(|t| ((t * 7919) % 201 - 100) as f64).collect();
    write_npy(Path::new(&p("a.npy")), &a);
    write_npy(Path::new(&p("b.npy")), &b);
    let x = p("x.npy");
    assert_passes(&["recurrence", "--a", &p("a.npy"), "--b", &p("b.npy"), "--x0", "3", "--output", &x]);
    let mut prev = 3.0;
    let want: Vec<f64> = (0..n)
        .map(|t| {
            prev = a[t] * prev + b[t];
            prev
        })
        .collect();
    assert_eq!(read_npy::<f64>(&x).1, want);
    let again = ["recurrence", "--a", &p("a.npy"), "--b", &p("b.npy"), "--output", &x];
    assert_output_is_error(&again, &host(&again), 2, "x.npy: exists; pass --force");
}
