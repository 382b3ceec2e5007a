//! Lexical analysis by scans: a byte starts a token where it is not white space and the byte
//! before it is (or it is the first). Compacting the positions by those flags gives every
//! token's start; the exclusive scan of the flags numbers each token; a token ends where the
//! next one starts less the white space between, found by compacting the positions where a
//! token's last byte is. Reads the file given as the first argument, or makes a text. Checked
//! against a split on white space on the CPU.
//!
//!     cargo run --release -p gpu-scan --example lexer [FILE]

use gpu_scan::{CompactOptions, Gpu, Keep, Op, ScanOptions, TempStorage};
use std::process::ExitCode;

mod common;

fn main() -> ExitCode {
    common::exit(run())
}

fn run() -> gpu_scan::Result<bool> {
    let text = match std::env::args().nth(1) {
        Some(path) => std::fs::read(&path).map_err(|e| gpu_scan::Error::invalid(format!("{path}: {e}")))?,
        None => "the scan  of\tflags numbers\nevery token ".repeat(200_000).into_bytes(),
    };
    let gpu = Gpu::new(0)?;
    let stream = gpu.stream().clone();
    let space = |i: usize| text[i].is_ascii_whitespace();
    let starts_flags: Vec<u8> = (0..text.len()).map(|i| (!space(i) && (i == 0 || space(i - 1))) as u8).collect();
    let ends_flags: Vec<u8> =
        (0..text.len()).map(|i| (!space(i) && (i + 1 == text.len() || space(i + 1))) as u8).collect();
    let positions: Vec<u32> = (0..text.len() as u32).collect();
    let d_positions = gpu.upload(&stream, "positions", &positions)?;
    let mut temp = TempStorage::new();
    let mut tokens = |flags: &[u8]| -> gpu_scan::Result<Vec<u32>> {
        let d_flags = gpu.upload(&stream, "flags", flags)?;
        let mut out = gpu.alloc_zeros::<u32>(&stream, "positions kept", flags.len())?;
        let mut count = gpu.alloc_zeros::<u64>(&stream, "count", 1)?;
        let opts = CompactOptions::new(Keep::Flags);
        gpu.compact_flagged(&stream, &d_positions, &d_flags, &mut out, &mut count, &opts, &mut temp)?;
        let n = gpu.read_count(&stream, &count)? as usize;
        Ok(gpu.download(&stream, &out)?[..n].to_vec())
    };
    let starts = tokens(&starts_flags)?;
    let ends = tokens(&ends_flags)?;
    let flags32: Vec<u32> = starts_flags.iter().map(|&f| f as u32).collect();
    let numbers = gpu.scan_host(&flags32, &ScanOptions::new(Op::Add).exclusive(true))?;
    let lengths: Vec<u32> = starts.iter().zip(&ends).map(|(s, e)| e - s + 1).collect();
    let want: Vec<&[u8]> = text.split(|b| b.is_ascii_whitespace()).filter(|t| !t.is_empty()).collect();
    let got: Vec<&[u8]> = starts.iter().zip(&lengths).map(|(&s, &l)| &text[s as usize..(s + l) as usize]).collect();
    let numbered = starts.iter().enumerate().all(|(k, &s)| numbers[s as usize] == k as u32);
    let pass = got == want && numbered;
    println!(
        "{} bytes: {} tokens, starts and lengths from scans of flags: {}",
        text.len(),
        starts.len(),
        if pass { "PASS" } else { "FAIL" }
    );
    Ok(pass)
}
