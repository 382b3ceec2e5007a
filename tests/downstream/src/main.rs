//! The README's library example as a program of its own: an exclusive sum of its own
//! `CudaSlice` on its own stream. Without a GPU it prints the library's message and exits with 3.

use gpu_scan::{Gpu, Op, ScanOptions, TempStorage};
use std::process::ExitCode;

fn main() -> ExitCode {
    match run() {
        Ok(sums) => {
            println!("{sums:?}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(if e.is_usage() { 2 } else { 3 })
        }
    }
}

fn run() -> Result<Vec<u32>, gpu_scan::Error> {
    let gpu = Gpu::new(0)?; // the context and kernels, once
    let stream = gpu.new_stream()?; // any stream of the context
    let input = stream.clone_htod(&[3u32, 1, 7, 0, 4, 1, 6, 3])?;
    let mut output = stream.alloc_zeros::<u32>(8)?;
    let mut temp = TempStorage::new(); // reused, repeated calls allocate nothing
    gpu.scan(&stream, &input, &mut output, &ScanOptions::new(Op::Add).exclusive(true), &mut temp)?;
    Ok(stream.clone_dtoh(&output)?)
}
