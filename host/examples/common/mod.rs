//! What the examples share: how a run's outcome becomes the exit status.

use std::fmt::Display;
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

/// Success for a run that passed; failure for one that failed its check, and for an error,
/// printed as a person reads it (its message, not its `Debug` form).
pub fn exit<P: Passed, E: Display>(outcome: Result<P, E>) -> ExitCode {
    match outcome {
        Ok(p) if p.passed() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
