//! Standard output that ends the program quietly when its reader goes away (`host plot x.csv |
//! head -1`): Rust ignores SIGPIPE, so a write to a closed pipe fails with `BrokenPipe`, where
//! `println!` would panic. Every line the command line prints goes through [`outln!`] or
//! [`out!`].
//!
//! A closed pipe exits with status 141, the status a shell reports for a program ended by
//! SIGPIPE, so a pipeline under `set -o pipefail` sees that the output was cut short, never a
//! PASS that was not printed.

use std::io::Write;

/// The exit status after the reader of standard output went away.
pub const CLOSED_PIPE: i32 = 128 + 13;

/// Writes `args` to standard output; a closed pipe ends the program quietly, any other failure
/// with a one-line error.
pub fn write(args: std::fmt::Arguments) {
    let written = {
        let mut stdout = std::io::stdout().lock();
        stdout.write_fmt(args).and_then(|()| stdout.flush())
    };
    if let Err(e) = written {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(CLOSED_PIPE);
        }
        eprintln!("error: cannot write to standard output: {e}");
        std::process::exit(1);
    }
}

/// `println!` that ends quietly on a closed pipe.
macro_rules! outln {
    () => { $crate::out::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::write(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` that ends quietly on a closed pipe.
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::write(format_args!($($arg)*)) };
}

pub(crate) use {out, outln};

#[cfg(test)]
mod tests {
    /// Whether `line` calls the macro `name` (not one whose name ends like it, as `eprintln!`).
    fn calls(line: &str, name: &str) -> bool {
        line.match_indices(name)
            .any(|(i, _)| !line[..i].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_'))
    }

    /// Every line goes through `outln!`/`out!`: a `println!` anywhere would panic on a closed pipe.
    #[test]
    fn nothing_prints_around_the_closed_pipe_handling() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = vec![src.clone()];
        let mut offenders = Vec::new();
        while let Some(p) = files.pop() {
            if p.is_dir() {
                files.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
            } else if p.extension().is_some_and(|e| e == "rs") && !p.ends_with("out.rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                for (i, line) in text.lines().enumerate() {
                    if calls(line, "println!(") || calls(line, "print!(") {
                        offenders.push(format!("{}:{}: {}", p.display(), i + 1, line.trim()));
                    }
                }
            }
        }
        assert!(offenders.is_empty(), "use outln!/out! instead:\n{}", offenders.join("\n"));
    }
}
