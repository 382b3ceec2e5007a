//! LSD radix sort: stable, 8 bits per pass (4 passes for 32-bit keys, 8 for 64-bit). Each pass
//! is one sweep: a stable partition whose digit offsets come from the single-pass scan's
//! decoupled look-back over the tiles' digit counts, one digit per thread. Keys are ordered by
//! their `order_key` (floats: `-0.0` before `+0.0`, NaNs last); u32 values ride along.

use super::partition::check_len;
use crate::dispatch::single_pass::{allow_shared_memory, blocks_per_sm};
use crate::dispatch::{at_least, grid, TempStorage};
use crate::element::{ElemType, Element};
use crate::error::{Error, Result};
use crate::runtime::Gpu;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, PushKernelArg};
use rayon::prelude::*;
use scan_abi::partition::RADIX_BITS;
use scan_abi::{layout, names, status, tuning};
use std::sync::Arc;

/// Key types the sort handles.
pub const KEY_TYPES: [ElemType; 6] =
    [ElemType::U32, ElemType::I32, ElemType::U64, ElemType::I64, ElemType::F32, ElemType::F64];

/// The CPU reference: a stable sort by `order_key`, values alongside.
pub fn reference<T: Element>(keys: &[T], values: Option<&[u32]>) -> (Vec<T>, Option<Vec<u32>>) {
    let mut idx: Vec<usize> = (0..keys.len()).collect();
    idx.par_sort_by_key(|&i| keys[i].order_key());
    (idx.iter().map(|&i| keys[i]).collect(), values.map(|v| idx.iter().map(|&i| v[i]).collect()))
}

/// The device memory a sort works in besides its keys and values: the second key and value
/// buffers the passes alternate with, every pass's digit counts, and the tile state. Reused
/// across calls (grown when a call needs more), so repeated sorts allocate nothing.
#[derive(Default)]
pub struct SortBuffers<T> {
    keys: Option<CudaSlice<T>>,
    values: Option<CudaSlice<u32>>,
    counts: Option<CudaSlice<u32>>,
    temp: TempStorage,
}

impl<T: Element> SortBuffers<T> {
    pub fn new() -> SortBuffers<T> {
        SortBuffers { keys: None, values: None, counts: None, temp: TempStorage::new() }
    }
}

impl Gpu {
    /// Sorts `keys` (and `values` with them, when given; as long as `keys`) on `stream`.
    pub fn sort<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        keys: &mut CudaSlice<T>,
        values: Option<&mut CudaSlice<u32>>,
    ) -> Result<()> {
        self.sort_with(stream, keys, values, &mut SortBuffers::new())
    }

    /// [`Gpu::sort`] in the memory of `bufs`, kept for the next call.
    ///
    /// One read of the keys counts every pass's digits; then each pass moves the keys once (see
    /// `gpu/src/kernels/onesweep.rs`): 1 + passes launches, no host round trip.
    pub fn sort_with<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        keys: &mut CudaSlice<T>,
        values: Option<&mut CudaSlice<u32>>,
        bufs: &mut SortBuffers<T>,
    ) -> Result<()> {
        if !KEY_TYPES.contains(&T::TYPE) {
            return Err(Error::invalid(format!(
                "sort keys of type {} are not supported (u32, i32, u64, i64, f32, f64)",
                T::TYPE.name()
            )));
        }
        let n = keys.len() as u64;
        check_len(n)?;
        if values.as_ref().is_some_and(|v| v.len() != keys.len()) {
            return Err(Error::invalid("the values must be as many as the keys"));
        }
        if n <= 1 {
            return Ok(());
        }
        let size = T::TYPE.size();
        let passes = 8 * size as u32 / RADIX_BITS;
        let digits = 1usize << RADIX_BITS;
        let alt_keys = at_least(self, stream, &mut bufs.keys, "sort buffer", n as usize)?.0;
        let alt_values = match values {
            Some(_) => Some(at_least(self, stream, &mut bufs.values, "sort value buffer", n as usize)?.0),
            None => None,
        };
        let counts = at_least(self, stream, &mut bufs.counts, "digit counts", passes as usize * digits)?.0;
        stream.memset_zeros(counts)?;
        let name = format!("{}_{}", names::SORT_COUNTS, T::TYPE.name());
        let f = self.kernel(&name)?;
        let (a, _ra) = keys.device_ptr_mut(stream);
        let (b, _rb) = alt_keys.device_ptr_mut(stream);
        let (va, _rva) = values.map(|v| v.device_ptr_mut(stream)).unzip();
        let (vb, _rvb) = alt_values.map(|v| v.device_ptr_mut(stream)).unzip();
        let (va, vb) = (va.unwrap_or(0), vb.unwrap_or(0));
        let counting = tuning::sort_counts(tuning::DEFAULT_ARCH, size);
        let count_smem = layout::sort_counts_smem(size);
        // As many blocks as fit on the GPU at once (each counts a contiguous share of the tiles).
        let per_sm = blocks_per_sm(&f, self.info().ordinal, &name, counting.threads, count_smem)
            .map_err(|e| Error::kernel(&name, e))?
            .max(1);
        let blocks = n.div_ceil(counting.tile() as u64).min(per_sm as u64 * self.info().multiprocessors as u64);
        {
            let (c, _w) = counts.device_ptr_mut(stream);
            let mut l = stream.launch_builder(&f);
            l.arg(&a).arg(&n).arg(&c);
            // SAFETY: matches onesweep_kernels! in gpu/; keys hold n elements, counts passes × 256.
            unsafe { l.launch(grid(blocks, counting.threads, count_smem)?) }.map_err(|e| Error::kernel(&name, e))?;
        }

        let shape = tuning::sort(tuning::DEFAULT_ARCH, size);
        let tiles = n.div_ceil(shape.tile() as u64);
        let smem = layout::sort_pass_smem(tuning::DEFAULT_ARCH, size, va != 0);
        let pass = if va != 0 { names::SORT_PASS_VALUES } else { names::SORT_PASS };
        let name = format!("{}_{}", pass, T::TYPE.name());
        let f = self.kernel(&name)?;
        allow_shared_memory(&f, smem).map_err(|e| Error::kernel(&name, e))?;
        let (c, _rc) = counts.device_ptr(stream);
        for p in 0..passes {
            let status_bytes = status::temp_bytes(tiles * digits as u64, 4);
            let (base, epoch, counter_base) = bufs.temp.single_pass(self, stream, status_bytes, tiles as u32)?;
            // Even passes go to the spare buffers, odd ones back: an even count ends in `keys`.
            let (ki, ko, vi, vo) = if p % 2 == 0 { (a, b, va, vb) } else { (b, a, vb, va) };
            let shift = p * RADIX_BITS;
            let pass_counts = c + (p as usize * digits * 4) as u64;
            let mut l = stream.launch_builder(&f);
            l.arg(&ki)
                .arg(&vi)
                .arg(&ko)
                .arg(&vo)
                .arg(&n)
                .arg(&shift)
                .arg(&pass_counts)
                .arg(&base)
                .arg(&counter_base)
                .arg(&epoch);
            // SAFETY: matches onesweep_kernels! in gpu/; the key (and value) buffers hold n
            // elements each, counts this pass's 256 words, the tile state 256 words per tile.
            let launched = unsafe { l.launch(grid(tiles, shape.threads, smem)?) };
            bufs.temp.poison_on_error(launched.map(drop).map_err(|e| Error::kernel(&name, e)))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_abi::partition::radix_digit;

    /// One pass of the sort kernel, thread by thread on the CPU for `u32` keys: warp-striped
    /// tiles, ranks within a warp in index order, warps' first places per digit, the tile's digit
    /// runs, per-digit look-back offsets from the overall counts, the gather in digit order and
    /// the write-out. It must equal a stable counting sort by the digit.
    fn emulate_pass(keys: &[u32], shift: u32) -> Vec<u32> {
        const WARP: usize = 32;
        let shape = tuning::sort(tuning::DEFAULT_ARCH, 4);
        let (threads, it) = (shape.threads as usize, shape.items as usize);
        let (warps, tile_elems) = (threads / WARP, threads * it);
        let digit = |k: u32| radix_digit(k as u64, shift) as usize;
        let n = keys.len();
        let mut overall = [0usize; 256];
        for &k in keys {
            overall[digit(k)] += 1;
        }
        let mut start = [0usize; 256];
        for d in 1..256 {
            start[d] = start[d - 1] + overall[d - 1];
        }
        let mut out = vec![u32::MAX; n];
        let mut published = vec![[0usize; 256]; n.div_ceil(tile_elems)];
        for tile in 0..n.div_ceil(tile_elems) {
            let index = |w: usize, r: usize, l: usize| tile * tile_elems + w * WARP * it + r * WARP + l;
            let mut warp_digits = vec![[0usize; 256]; warps];
            let mut rank = vec![0usize; tile_elems];
            for (w, counts) in warp_digits.iter_mut().enumerate() {
                for r in 0..it {
                    for l in 0..WARP {
                        if index(w, r, l) < n {
                            let d = digit(keys[index(w, r, l)]);
                            rank[w * WARP * it + r * WARP + l] = counts[d];
                            counts[d] += 1;
                        }
                    }
                }
            }
            let mut tile_count = [0usize; 256];
            for d in 0..256 {
                for counts in warp_digits.iter_mut() {
                    let c = counts[d];
                    counts[d] = tile_count[d];
                    tile_count[d] += c;
                }
            }
            let mut tile_start = [0usize; 256];
            for d in 1..256 {
                tile_start[d] = tile_start[d - 1] + tile_count[d - 1];
            }
            let before: Vec<usize> =
                (0..256).map(|d| if tile == 0 { start[d] } else { published[tile - 1][d] }).collect();
            for d in 0..256 {
                published[tile][d] = before[d] + tile_count[d];
            }
            let mut staged = vec![0u32; tile_elems];
            for w in 0..warps {
                for r in 0..it {
                    for l in 0..WARP {
                        let i = index(w, r, l);
                        if i < n {
                            let d = digit(keys[i]);
                            staged[tile_start[d] + warp_digits[w][d] + rank[w * WARP * it + r * WARP + l]] = keys[i];
                        }
                    }
                }
            }
            for (i, &k) in staged.iter().enumerate().take((n - tile * tile_elems).min(tile_elems)) {
                out[before[digit(k)] - tile_start[digit(k)] + i] = k;
            }
        }
        out
    }

    #[test]
    fn the_sort_pass_algorithm_is_a_stable_partition_by_digit() {
        let tile = tuning::sort(tuning::DEFAULT_ARCH, 4).tile() as usize;
        for n in [0, 1, 33, tile - 1, tile, tile + 1, 3 * tile + 17] {
            for few_digits in [false, true] {
                let keys: Vec<u32> = (0..n as u64)
                    .map(|i| crate::input::bits(n as u64, i) as u32 & if few_digits { 0x0303_0303 } else { u32::MAX })
                    .collect();
                for shift in [0, 8, 24] {
                    let mut want = keys.clone();
                    want.sort_by_key(|&k| radix_digit(k as u64, shift));
                    assert_eq!(emulate_pass(&keys, shift), want, "n={n} shift={shift} few_digits={few_digits}");
                }
            }
        }
    }
}
