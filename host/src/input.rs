//! Deterministic inputs: element `i` of seed `s` is a function of `(s, i)` alone, so inputs are
//! reproducible from the seed, generated in parallel, and never all zeros. Values are chosen per
//! operator so that the scan stays informative: odd factors for integer products (an even factor
//! would drive the product to 0), factors near 1 for float products, and sparse zero (or one)
//! bits for `and` (or `or`).

use crate::element::{ElemType, Element};
use rayon::prelude::*;
use scan_abi::op::Affine;
use scan_abi::Op;

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Random bits of element `i` of stream `seed`.
pub fn bits(seed: u64, i: u64) -> u64 {
    splitmix64(seed ^ splitmix64(i))
}

/// A uniform f64 in [0, 1) from 53 random bits.
fn unit(b: u64) -> f64 {
    (b >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Element `i` for a scan with `op`.
pub fn value<T: Element>(op: Op, seed: u64, i: u64) -> T {
    let b = bits(seed, i);
    let float = T::TYPE.is_float();
    let bits_out = match (op, float) {
        (Op::Add | Op::Min | Op::Max, true) => return from_f64::<T>(2.0 * unit(b) - 1.0),
        (Op::Mul, true) => return from_f64::<T>(1.0 + (2.0 * unit(b) - 1.0) / 1024.0),
        (Op::Mul, false) => b | 1,
        (Op::And, _) => {
            !(b & bits(seed ^ 1, i) & bits(seed ^ 2, i) & bits(seed ^ 3, i) & bits(seed ^ 4, i) & bits(seed ^ 5, i))
        }
        (Op::Or, _) => {
            b & bits(seed ^ 1, i) & bits(seed ^ 2, i) & bits(seed ^ 3, i) & bits(seed ^ 4, i) & bits(seed ^ 5, i)
        }
        (Op::Affine, _) => Affine::pack(b as u32 | 1, (b >> 32) as u32),
        _ => b,
    };
    T::from_bits(bits_out)
}

fn from_f64<T: Element>(x: f64) -> T {
    match T::TYPE {
        ElemType::F32 => T::from_bits((x as f32).to_bits() as u64),
        _ => T::from_bits(x.to_bits()),
    }
}

/// `n` elements for a scan with `op`, from `seed`.
pub fn generate<T: Element>(op: Op, seed: u64, n: usize) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    (0..n).into_par_iter().map(|i| value::<T>(op, seed, i as u64)).collect_into_vec(&mut v);
    v
}

/// `n` floats uniform in `[lo, hi)` from `seed` (for error studies).
pub fn uniform<T: Element>(seed: u64, n: usize, lo: f64, hi: f64) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    (0..n).into_par_iter().map(|i| from_f64::<T>(lo + (hi - lo) * unit(bits(seed, i as u64)))).collect_into_vec(&mut v);
    v
}

/// `n` values `(i * 2654435761) mod 7`: the input of ../shared/bench/cub_baseline.cu, so that
/// our timings and CUB's are of the same data.
pub fn cub_pattern<T: Element>(n: usize) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    (0..n)
        .into_par_iter()
        .map(|i| {
            let k = (i as u64).wrapping_mul(2_654_435_761) % 7;
            if T::TYPE.is_float() {
                from_f64::<T>(k as f64)
            } else {
                T::from_bits(k)
            }
        })
        .collect_into_vec(&mut v);
    v
}

/// Parses comma-separated values, e.g. `3,1,7,0`.
pub fn parse_list<T: Element>(s: &str) -> Result<Vec<T>, String> {
    s.split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| v.parse::<T>().map_err(|_| format!("`{v}` is not a valid {} value", T::TYPE.name())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproducible_and_not_trivial() {
        let a = generate::<u32>(Op::Add, 7, 1000);
        assert_eq!(a, generate::<u32>(Op::Add, 7, 1000));
        assert_ne!(a, generate::<u32>(Op::Add, 8, 1000));
        assert!(a.iter().filter(|&&x| x == 0).count() < 3);
        assert!(generate::<i64>(Op::Mul, 1, 100).iter().all(|x| x % 2 != 0));
        let f = generate::<f32>(Op::Add, 1, 10_000);
        assert!(f.iter().all(|x| (-1.0..1.0).contains(x)));
        assert!(generate::<f64>(Op::Mul, 1, 100).iter().all(|x| (x - 1.0).abs() <= 1.0 / 1024.0));
    }

    #[test]
    fn parses_lists() {
        assert_eq!(parse_list::<u32>("3,1, 7,0").unwrap(), [3, 1, 7, 0]);
        assert!(parse_list::<u32>("3,x").unwrap_err().contains("`x` is not a valid u32"));
    }
}
