//! Host memory: what a run needs is checked against what the machine has before anything is
//! allocated, and the command line's own large buffers (generated inputs, files read) are
//! allocated fallibly, so that a request too large for the machine is an error, never an abort.

use gpu_scan::{input, ElemType, Element, Error, Op, Result};
use rayon::prelude::*;

/// Bytes of memory a new allocation can take without swapping (`MemAvailable` in
/// `/proc/meminfo`), where the system says.
pub fn available() -> Option<u64> {
    mem_available(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find_map(|l| l.strip_prefix("MemAvailable:"))?;
    let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    kib.checked_mul(1024)
}

/// `bytes` for a person: `256.0 GiB (274877906944 bytes)`.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {} ({bytes} bytes)", UNITS[unit])
    }
}

/// An error unless `bytes` of host memory are available for `what` (nothing is checked where
/// the system does not say what is available).
pub fn check(what: &str, bytes: u64) -> Result<()> {
    check_against(what, bytes, available())
}

fn check_against(what: &str, bytes: u64, available: Option<u64>) -> Result<()> {
    match available {
        Some(free) if bytes > free => Err(Error::invalid(format!(
            "{what} needs {} of host memory, but {} is available: ask for less",
            human(bytes),
            human(free)
        ))),
        _ => Ok(()),
    }
}

/// Bytes of `n` items of `size` bytes, as a refusal when the product overflows.
pub fn bytes_of(n: u64, size: u64, what: &str) -> Result<u64> {
    n.checked_mul(size).ok_or_else(|| Error::invalid(format!("{what}: {n} items of {size} bytes overflow 64 bits")))
}

/// A sum of byte counts, as a refusal when it overflows.
pub fn total(parts: &[u64], what: &str) -> Result<u64> {
    parts
        .iter()
        .try_fold(0u64, |a, &b| a.checked_add(b))
        .ok_or_else(|| Error::invalid(format!("{what}: the bytes needed overflow 64 bits")))
}

/// An empty vector with room for `n` items, or an error saying how much could not be had.
pub fn with_capacity<T>(n: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        let bytes = (n as u64).saturating_mul(std::mem::size_of::<T>() as u64);
        Error::invalid(format!("{what}: cannot allocate {} of host memory", human(bytes)))
    })?;
    Ok(v)
}

/// `f(0), f(1), .., f(n - 1)`, computed in parallel into a fallibly allocated vector.
pub fn from_fn<T: Send>(n: usize, what: &str, f: impl Fn(usize) -> T + Sync + Send) -> Result<Vec<T>> {
    let mut v = with_capacity(n, what)?;
    // The capacity is already there: collecting into it allocates nothing.
    (0..n).into_par_iter().map(f).collect_into_vec(&mut v);
    Ok(v)
}

/// [`input::generate`]'s values, fallibly allocated.
pub fn generate<T: Element>(op: Op, seed: u64, n: usize) -> Result<Vec<T>> {
    from_fn(n, "the generated input", |i| input::value::<T>(op, seed, i as u64))
}

/// [`input::uniform`]'s values, fallibly allocated.
pub fn uniform<T: Element>(seed: u64, n: usize, lo: f64, hi: f64) -> Result<Vec<T>> {
    from_fn(n, "the generated input", |i| from_f64::<T>(uniform_value(seed, i as u64, lo, hi)))
}

/// [`input::cub_pattern`]'s values, fallibly allocated.
pub fn cub_pattern<T: Element>(n: usize) -> Result<Vec<T>> {
    from_fn(n, "the generated input", |i| {
        let k = (i as u64).wrapping_mul(2_654_435_761) % 7;
        if T::TYPE.is_float() {
            from_f64::<T>(k as f64)
        } else {
            T::from_bits(k)
        }
    })
}

/// Element `i` of [`input::uniform`] of `seed` over `[lo, hi)`, in f64.
pub fn uniform_value(seed: u64, i: u64, lo: f64, hi: f64) -> f64 {
    let unit = (input::bits(seed, i) >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
    lo + (hi - lo) * unit
}

/// The float element nearest `x` (for float types).
fn from_f64<T: Element>(x: f64) -> T {
    match T::TYPE {
        ElemType::F32 => T::from_bits((x as f32).to_bits() as u64),
        _ => T::from_bits(x.to_bits()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_available_is_read_in_bytes() {
        let text = "MemTotal:       65536000 kB\nMemFree:         1000 kB\nMemAvailable:   32768000 kB\n";
        assert_eq!(mem_available(text), Some(32768000 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
        assert_eq!(mem_available("MemAvailable: lots\n"), None);
    }

    #[test]
    fn a_request_beyond_the_available_memory_is_refused_with_both_sizes() {
        let e = check_against("scan of 2^36 u32", 1 << 38, Some(1 << 34)).unwrap_err();
        let msg = e.to_string();
        assert!(e.is_usage(), "{e:?}");
        assert!(
            msg.contains("256.0 GiB (274877906944 bytes)") && msg.contains("16.0 GiB (17179869184 bytes)"),
            "{msg}"
        );
        assert!(check_against("x", 1 << 30, Some(1 << 34)).is_ok());
        assert!(check_against("x", u64::MAX, None).is_ok());
    }

    #[test]
    fn an_impossible_allocation_is_an_error_not_an_abort() {
        let e = with_capacity::<u64>(usize::MAX / 4, "the input").unwrap_err().to_string();
        assert!(e.contains("the input: cannot allocate"), "{e}");
        assert!(bytes_of(1 << 40, 1 << 30, "x").is_err());
        assert!(total(&[u64::MAX, 1], "x").is_err());
    }

    #[test]
    fn generated_inputs_are_the_librarys() {
        assert_eq!(generate::<u32>(Op::Add, 7, 1000).unwrap(), input::generate::<u32>(Op::Add, 7, 1000));
        assert_eq!(generate::<f64>(Op::Mul, 7, 1000).unwrap(), input::generate::<f64>(Op::Mul, 7, 1000));
        assert_eq!(uniform::<f32>(3, 1000, -1.0, 1.0).unwrap(), input::uniform::<f32>(3, 1000, -1.0, 1.0));
        assert_eq!(uniform::<f64>(3, 1000, 0.5, 9.0).unwrap(), input::uniform::<f64>(3, 1000, 0.5, 9.0));
        assert_eq!(cub_pattern::<i64>(1000).unwrap(), input::cub_pattern::<i64>(1000));
        assert_eq!(cub_pattern::<f32>(1000).unwrap(), input::cub_pattern::<f32>(1000));
    }

    #[test]
    fn sizes_read_as_a_person_writes_them() {
        assert_eq!(human(512), "512 bytes");
        assert_eq!(human(3 << 29), "1.5 GiB (1610612736 bytes)");
    }
}
