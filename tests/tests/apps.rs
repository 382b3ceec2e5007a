//! The applications on the GPU against their CPU references: awkward sizes, every type, every
//! way of choosing, and user mistakes.

mod common;

use common::{assert_none_failed, gpu};
use gpu_scan::apps::compact::{self, Keep};
use gpu_scan::{input, Element, Gpu, TempStorage};

fn tile<T>() -> usize {
    scan_abi::tuning::single_pass(scan_abi::tuning::DEFAULT_ARCH, std::mem::size_of::<T>()).tile() as usize
}

fn sizes<T>() -> Vec<usize> {
    let t = tile::<T>();
    vec![0, 1, 31, 33, 1023, t - 1, t, t + 1, 3 * t + 7, 100_003, (1 << 20) + 7, 10_000_019]
}

fn compact_case<T: Element>(gpu: &Gpu, temp: &mut TempStorage, n: usize, keep: Keep<T>) -> Option<String> {
    let data: Vec<T> = input::generate::<T>(gpu_scan::Op::Xor, n as u64, n);
    let data: Vec<T> = match keep {
        // Small values, so that a threshold keeps some and drops some.
        Keep::Greater(_) => input::cub_pattern::<T>(n).into_iter().zip(&data).map(|(c, _)| c).collect(),
        _ => data.iter().enumerate().map(|(i, &x)| if i % 3 == 0 { T::zero() } else { x }).collect(),
    };
    let flags: Vec<u8> = (0..n as u64).map(|i| (input::bits(7, i) % 3 == 0) as u8).collect();
    let stream = gpu.stream().clone();
    let d_in = gpu.upload(&stream, "in", &data).unwrap();
    let d_flags = gpu.upload(&stream, "flags", &flags).unwrap();
    let poison = vec![input::value::<T>(gpu_scan::Op::Xor, 99, 0); n];
    let mut d_out = gpu.upload(&stream, "out", &poison).unwrap();
    let kept = gpu.compact(&stream, &d_in, Some(&d_flags), keep, &mut d_out, temp).unwrap() as usize;
    let got = gpu.download(&stream, &d_out).unwrap();
    let want = compact::reference(&data, Some(&flags), keep);
    let what = format!("compact {} n={n} {keep:?}", T::TYPE.name());
    if kept != want.len() {
        return Some(format!("{what}: kept {kept}, expected {}", want.len()));
    }
    let bits = |v: &[T]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    (bits(&got[..kept]) != bits(&want)).then(|| format!("{what}: wrong elements"))
}

#[test]
fn compaction_matches_the_cpu() {
    let Some(gpu) = gpu("compaction_matches_the_cpu") else { return };
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    macro_rules! each {
        ($($t:ty),*) => {$(
            for n in sizes::<$t>() {
                let three: $t = "3".parse().unwrap();
                for keep in [Keep::Greater(three), Keep::NonZero, Keep::Flags] {
                    failures.extend(compact_case::<$t>(gpu, &mut temp, n, keep));
                }
            }
        )*};
    }
    each!(u8, u16, u32, i32, u64, i64, f32, f64);
    failures.extend(compact_case::<u32>(gpu, &mut temp, 1 << 28, Keep::Greater(3)));
    assert_none_failed(&failures);
}

#[test]
fn compaction_mistakes_are_errors() {
    let Some(gpu) = gpu("compaction_mistakes_are_errors") else { return };
    let stream = gpu.stream().clone();
    let mut temp = TempStorage::new();
    let d_in = gpu.upload(&stream, "in", &[1u32, 2, 3]).unwrap();
    let mut short = gpu.alloc_zeros::<u32>(&stream, "out", 2).unwrap();
    let mut out = gpu.alloc_zeros::<u32>(&stream, "out", 3).unwrap();
    let flags = gpu.upload(&stream, "flags", &[1u8]).unwrap();
    let e = gpu.compact(&stream, &d_in, None, Keep::NonZero, &mut short, &mut temp).unwrap_err();
    assert!(e.to_string().contains("output holds 2"), "{e}");
    let e = gpu.compact(&stream, &d_in, None, Keep::Flags, &mut out, &mut temp).unwrap_err();
    assert!(e.to_string().contains("needs a flags array"), "{e}");
    let e = gpu.compact(&stream, &d_in, Some(&flags), Keep::Flags, &mut out, &mut temp).unwrap_err();
    assert!(e.to_string().contains("flags array holds 1"), "{e}");
    assert_eq!(gpu.compact(&stream, &d_in, None, Keep::Greater(1), &mut out, &mut temp).unwrap(), 2);
}
