//! The application subcommands (`compact`, ...): generate an input, run the library function on
//! the GPU, time it against a same-run device copy (and CUB where it has the same operation),
//! and check it against the CPU.

use crate::CompactArgs;
use gpu_scan::apps::compact::{self, Keep};
use gpu_scan::bench::{median_ms, Baseline};
use gpu_scan::{input, Element, Error, Gpu, TempStorage};

/// The device line every subcommand starts with.
fn open_gpu() -> Result<Gpu, Error> {
    let gpu = Gpu::new(0)?;
    let info = gpu.info();
    println!("device: {} ({} SMs)", info.name, info.multiprocessors);
    Ok(gpu)
}

/// Prints the timing line: median time, GB/s of `bytes` moved, percent of a same-run device copy
/// of `copy_bytes` (timed here), and CUB's time when known.
fn report_time(ms: (f64, f64), iters: u32, bytes: u64, copy_ms: f64, cub_ms: Option<f64>) {
    let (ms, min_ms) = ms;
    let cub = cub_ms.map(|c| format!("; CUB {c:.4} ms, ours {:.2}x its speed", c / ms)).unwrap_or_default();
    println!(
        "time: {ms:.4} ms (median of {iters}, min {min_ms:.4}), {:.1} GB/s moved, {:.1}% of the speed of a same-run copy of the input ({copy_ms:.4} ms){cub}",
        bytes as f64 / (ms * 1e-3) / 1e9,
        100.0 * copy_ms / ms
    );
}

/// Prints the check line; true when `wrong` is empty.
fn report_check(what: &str, wrong: Option<String>) -> bool {
    match &wrong {
        None => println!("check: {what} against the CPU reference: PASS"),
        Some(w) => println!("check: {what}: {w}: FAIL"),
    }
    wrong.is_none()
}

/// Milliseconds of a device copy of `bytes` bytes (median of `iters`).
fn copy_ms(gpu: &Gpu, bytes: usize, iters: u32) -> Result<f64, Error> {
    let stream = gpu.stream().clone();
    let a = gpu.alloc_zeros::<u8>(&stream, "copy yardstick", bytes.max(1))?;
    let mut b = gpu.alloc_zeros::<u8>(&stream, "copy yardstick", bytes.max(1))?;
    Ok(median_ms(iters, || gpu.time_ms(&stream, || Ok(stream.memcpy_dtod(&a, &mut b)?)))?.0)
}

/// The first index where `got` and `want` differ, described.
fn first_difference<T: PartialEq + std::fmt::Display>(got: &[T], want: &[T]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} elements, expected {}", got.len(), want.len()));
    }
    let i = got.iter().zip(want).position(|(g, w)| g != w)?;
    Some(format!("first difference at {i}: expected {}, got {}", want[i], got[i]))
}

fn parse_keep<T: Element>(s: &str) -> Result<Keep<T>, Error> {
    match s {
        "nonzero" => Ok(Keep::NonZero),
        "flags" => Ok(Keep::Flags),
        _ => {
            let t = s
                .strip_prefix("gt:")
                .ok_or_else(|| Error::invalid(format!("--keep `{s}`: expected gt:<threshold>, nonzero or flags")))?;
            let t = t
                .parse::<T>()
                .map_err(|_| Error::invalid(format!("--keep `{s}`: `{t}` is not a valid {} value", T::TYPE.name())))?;
            Ok(Keep::Greater(t))
        }
    }
}

pub fn compact<T: Element>(args: &CompactArgs) -> Result<bool, Error> {
    let keep = parse_keep::<T>(&args.keep)?;
    let n = usize::try_from(args.n).map_err(|_| Error::invalid("N does not fit this machine's memory"))?;
    let cub = args.baseline.as_deref().map(Baseline::read).transpose()?;
    let gpu = open_gpu()?;
    let size = T::TYPE.size() as u64;
    gpu.check_memory("the input, flags and output", args.n * (2 * size + 1))?;
    println!("compact: n={n} {} keep {}", T::TYPE.name(), args.keep);
    let data = input::cub_pattern::<T>(n);
    let flags: Option<Vec<u8>> =
        (keep == Keep::Flags).then(|| (0..n as u64).map(|i| (input::bits(args.seed, i) & 1) as u8).collect());
    let stream = gpu.stream().clone();
    let d_in = gpu.upload(&stream, "compaction input", &data)?;
    let d_flags = flags.as_deref().map(|f| gpu.upload(&stream, "compaction flags", f)).transpose()?;
    let mut d_out = gpu.alloc_zeros::<T>(&stream, "compaction output", n)?;
    let mut temp = TempStorage::new();
    let kept = gpu.compact(&stream, &d_in, d_flags.as_ref(), keep, &mut d_out, &mut temp)? as usize;
    let got = gpu.download(&stream, &d_out)?;
    let times = median_ms(args.iters, || {
        gpu.time_ms(&stream, || gpu.compact_async(&stream, &d_in, d_flags.as_ref(), keep, &mut d_out, &mut temp))
    })?;
    let bytes = args.n * size + kept as u64 * size + flags.as_ref().map_or(0, |f| f.len() as u64);
    let cub_ms = match keep {
        Keep::Greater(t) if "3".parse::<T>().ok() == Some(t) => {
            cub.as_ref().and_then(|c| c.get("select_if_gt3", T::TYPE.name(), args.n))
        }
        _ => None,
    };
    report_time(times, args.iters, bytes, copy_ms(&gpu, n * size as usize, args.iters)?, cub_ms);
    println!("kept: {kept} of {n}");
    let want = compact::reference(&data, flags.as_deref(), keep);
    Ok(report_check(&format!("{kept} kept elements"), first_difference(&got[..kept.min(n)], &want)))
}
