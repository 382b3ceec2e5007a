//! The harness of the workspace tests and what they share.
//!
//! Each test file declares its tests as [`Trial`]s and hands them to [`main`]. A GPU test
//! ([`gpu_test`]) runs where a CUDA device exists and is reported `ignored` where none does; with
//! `GPU_SCAN_REQUIRE_DEVICE=1` it fails instead. A test that needs a tool ([`needs`]: rustup,
//! ptxas) is ignored without it, saying which. Fixtures are compiled into the test executables,
//! so they run from any folder, on any machine.

pub mod calls;
pub mod checks;
pub mod exact;

use gpu_scan::Gpu;
pub use libtest_mimic::{Failed, Trial};
use std::process::ExitCode;
use std::sync::OnceLock;

/// Set to 1 on GPU machines: a GPU test then fails instead of being ignored without a device.
pub const REQUIRE_DEVICE: &str = "GPU_SCAN_REQUIRE_DEVICE";

/// The GPU shared by the tests of this executable, or why there is none.
pub fn gpu() -> Result<&'static Gpu, &'static str> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(|| Gpu::new(0).map_err(|e| e.to_string())).as_ref().map_err(String::as_str)
}

fn require_device() -> bool {
    std::env::var(REQUIRE_DEVICE).as_deref() == Ok("1")
}

/// A test that needs nothing but the CPU.
pub fn test(name: &str, f: fn()) -> Trial {
    Trial::test(name, move || {
        f();
        Ok(())
    })
}

/// A test of the GPU: ignored where no device is (failing under `GPU_SCAN_REQUIRE_DEVICE=1`).
pub fn gpu_test(name: &str, f: fn(&'static Gpu)) -> Trial {
    match gpu() {
        Ok(g) => Trial::test(name, move || {
            f(g);
            Ok(())
        }),
        Err(e) if require_device() => {
            let why = format!("{REQUIRE_DEVICE}=1 but no usable GPU: {e}");
            Trial::test(name, move || Err(why.into()))
        }
        Err(e) => {
            let why = format!("no GPU: {e}");
            Trial::test(name, move || Err(why.into())).with_ignored_flag(true)
        }
    }
}

/// A GPU test that also needs what `missing` names (`None` when it is there): ignored without
/// it, and without a device as [`gpu_test`] is.
pub fn gpu_test_needing(name: &str, missing: Option<String>, f: fn(&'static Gpu)) -> Trial {
    match (gpu(), missing) {
        (Ok(_), Some(why)) => Trial::test(name, move || Err(why.into())).with_ignored_flag(true),
        _ => gpu_test(name, f),
    }
}

/// A test that needs what `missing` names (`None` when it is there): ignored without it.
pub fn needs(name: &str, missing: Option<String>, f: fn()) -> Trial {
    match missing {
        None => test(name, f),
        Some(why) => Trial::test(name, move || Err(why.into())).with_ignored_flag(true),
    }
}

/// Runs `trials` as the standard test harness would (filters, `--ignored`, `--test-threads`),
/// first saying on stderr why GPU tests are ignored when they are.
pub fn main(trials: Vec<Trial>) -> ExitCode {
    run(libtest_mimic::Arguments::from_args(), trials)
}

/// [`main`] for tests that read or change state of the whole process (the device's free memory,
/// cudarc's multi-stream mode): they run one at a time, whatever `--test-threads` says.
pub fn main_serial(trials: Vec<Trial>) -> ExitCode {
    let args = libtest_mimic::Arguments { test_threads: Some(1), ..libtest_mimic::Arguments::from_args() };
    run(args, trials)
}

fn run(args: libtest_mimic::Arguments, trials: Vec<Trial>) -> ExitCode {
    if let Err(e) = gpu() {
        if !require_device() && !args.list {
            eprintln!("GPU tests are ignored: {e} (set {REQUIRE_DEVICE}=1 to make them fail)");
        }
    }
    libtest_mimic::run(&args, trials).exit_code()
}

/// A proptest configuration of `cases` cases for runners started by hand (the harness has no
/// source file for proptest to record failures beside).
pub fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    proptest::test_runner::Config { cases, failure_persistence: None, ..proptest::test_runner::Config::default() }
}

/// The lecture vectors (tests/vectors/lecture_examples.json, every value recomputed).
pub fn vectors() -> serde_json::Value {
    serde_json::from_str(include_str!("../vectors/lecture_examples.json")).expect("the lecture vectors parse")
}
