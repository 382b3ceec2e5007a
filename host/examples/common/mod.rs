//! What the examples share: how a run's outcome becomes the exit status, as the command line's
//! (0 PASS, 1 FAIL, 2 a usage mistake, 3 no driver or no device).

use gpu_scan::Error;
use std::process::ExitCode;

/// A run's verdict: `()` for a demonstration, `bool` for a run that checks itself.
pub trait Passed {
    fn passed(&self) -> bool;
}

impl Passed for () {
    fn passed(&self) -> bool {
        true
    }
}

impl Passed for bool {
    fn passed(&self) -> bool {
        *self
    }
}

/// Success for a run that passed, failure for one that failed its check; an error, printed as a
/// person reads it (its message, not its `Debug` form), exits with the status of its kind.
pub fn exit<P: Passed>(outcome: gpu_scan::Result<P>) -> ExitCode {
    match outcome {
        Ok(p) if p.passed() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(status(&e))
        }
    }
}

/// 3 where there is no driver or no device, 2 for a caller's mistake (the library's
/// [`Error::is_usage`]), 1 for anything else: a failure of the GPU or the machine.
fn status(e: &Error) -> u8 {
    match e {
        Error::NoDriver | Error::NoDevice(_) => 3,
        e if e.is_usage() => 2,
        _ => 1,
    }
}
