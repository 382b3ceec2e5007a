//! Segmented scans: every segment scanned on its own, in one pass (see
//! `gpu/src/kernels/segmented.rs`). Segments are given by head flags, by start offsets, or by a
//! fixed length (the rows of a row-major matrix, see `crate::apps::batched`).

use crate::dispatch::{check_output, grid, TempStorage};
use crate::element::{Element, Op, OpVisitor, ScanOp};
use crate::error::{Error, Result};
use crate::runtime::Gpu;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, PushKernelArg};
use scan_abi::{layout, names, tuning};
use std::sync::Arc;

/// Where segments start.
pub enum Segments<'a> {
    /// `heads[i] != 0` starts a segment at `i` (one byte per element).
    Heads(&'a CudaSlice<u8>),
    /// A segment starts at every multiple of this length (rows of a row-major matrix).
    Every(u64),
}

/// The operators the segmented kernels are built for.
pub const OPS: [Op; 4] = [Op::Add, Op::Mul, Op::Min, Op::Max];

/// The CPU reference: the scan of every segment on its own (segments start where `head(i)`),
/// sequential.
pub fn reference<T: Element>(op: Op, input: &[T], head: impl Fn(usize) -> bool, exclusive: bool) -> Result<Vec<T>> {
    struct Visit<'a, T, H> {
        input: &'a [T],
        head: H,
        exclusive: bool,
    }
    impl<T: Element, H: Fn(usize) -> bool> OpVisitor<T> for Visit<'_, T, H> {
        type Output = Vec<T>;
        fn visit<O: ScanOp<T>>(self) -> Vec<T> {
            let mut acc: Option<T> = None;
            let mut out = Vec::with_capacity(self.input.len());
            for (i, &x) in self.input.iter().enumerate() {
                if (self.head)(i) {
                    acc = None;
                }
                let next = acc.map_or(x, |a| O::combine(a, x));
                out.push(if self.exclusive { acc.unwrap_or_else(O::identity) } else { next });
                acc = Some(next);
            }
            out
        }
    }
    T::visit_op(op, Visit { input, head, exclusive })
}

pub(crate) fn supported<T: Element>(op: Op) -> Result<()> {
    if OPS.contains(&op) && matches!(T::TYPE.size(), 4 | 8) {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "segmented scans are built for add, mul, min and max on 32- and 64-bit types, not {} on {}",
        op.name(),
        T::TYPE.name()
    )))
}

impl Gpu {
    /// Head flags (one byte per element, zeroed elsewhere) from segment start offsets.
    pub fn heads_from_offsets(
        &self,
        stream: &Arc<CudaStream>,
        offsets: &CudaSlice<u64>,
        n: u64,
    ) -> Result<CudaSlice<u8>> {
        let mut heads = self.alloc_zeros::<u8>(stream, "segment heads", n.max(1) as usize)?;
        let count = offsets.len() as u64;
        if count > 0 {
            let name = format!("{}_heads_u64", names::SEGMENTED);
            let f = self.kernel(&name)?;
            let (o, _r) = offsets.device_ptr(stream);
            let (h, _w) = heads.device_ptr_mut(stream);
            let mut b = stream.launch_builder(&f);
            b.arg(&o).arg(&count).arg(&n).arg(&h);
            // SAFETY: matches segmented_heads_u64; heads holds n bytes, offsets count entries.
            unsafe { b.launch(grid(count.div_ceil(256), 256, 0)?) }.map_err(|e| Error::kernel(&name, e))?;
        }
        Ok(heads)
    }

    /// Scans every segment of `input` on its own into `output` with `op` (add, mul, min, max;
    /// 32- and 64-bit types). Exclusive: a segment's first element gets the identity.
    #[allow(clippy::too_many_arguments)]
    pub fn segmented_scan<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &CudaSlice<T>,
        segments: Segments<'_>,
        output: &mut CudaSlice<T>,
        op: Op,
        exclusive: bool,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = input.len() as u64;
        check_output(output.len(), n, "elements")?;
        let (heads, seg_len) = match segments {
            Segments::Heads(h) if (h.len() as u64) < n => {
                return Err(Error::invalid(format!("the head flags hold {} bytes, the input {n} elements", h.len())));
            }
            Segments::Heads(h) => (h.device_ptr(stream).0, 0u64),
            Segments::Every(0) => return Err(Error::invalid("segments of length 0")),
            Segments::Every(len) => (0, len),
        };
        let (i, _r) = input.device_ptr(stream);
        let (o, _w) = output.device_ptr_mut(stream);
        self.segmented_raw::<T>(stream, i, o, n, heads, seg_len, op, exclusive, temp)
    }

    /// The segmented kernel on raw pointers (`output` may equal `input`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn segmented_raw<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: u64,
        output: u64,
        n: u64,
        heads: u64,
        seg_len: u64,
        op: Op,
        exclusive: bool,
        temp: &mut TempStorage,
    ) -> Result<()> {
        supported::<T>(op)?;
        if n == 0 {
            return Ok(());
        }
        let size = T::TYPE.size();
        let shape = tuning::single_pass(tuning::DEFAULT_ARCH, size);
        let (tiles, base, epoch, counter_base) = temp.tiles(self, stream, n, shape, size)?;
        let name = format!("{}_{}_{}", names::SEGMENTED, T::TYPE.name(), op.name());
        let f = self.kernel(&name)?;
        let flags = if exclusive { scan_abi::flags::EXCLUSIVE } else { 0 };
        let cfg = grid(tiles, shape.threads, layout::segmented_smem(tuning::DEFAULT_ARCH, size))?;
        let mut b = stream.launch_builder(&f);
        b.arg(&input)
            .arg(&heads)
            .arg(&seg_len)
            .arg(&output)
            .arg(&n)
            .arg(&flags)
            .arg(&base)
            .arg(&counter_base)
            .arg(&epoch);
        // SAFETY: matches segmented_kernels! in gpu/; input, output (and heads) hold n elements,
        // the tile state temp_bytes().
        temp.poison_on_error(unsafe { b.launch(cfg) }.map(drop).map_err(|e| Error::kernel(&name, e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_restarts_at_heads() {
        let x = [1u32, 2, 3, 4, 5, 6];
        let heads = [true, false, true, false, false, true];
        assert_eq!(reference(Op::Add, &x, |i| heads[i], false).unwrap(), [1, 3, 3, 7, 12, 6]);
        assert_eq!(reference(Op::Add, &x, |i| heads[i], true).unwrap(), [0, 1, 0, 3, 7, 0]);
        assert_eq!(reference(Op::Max, &x, |i| i % 4 == 0, false).unwrap(), [1, 2, 3, 4, 5, 6]);
        assert!(reference::<u32>(Op::Add, &[], |_| false, false).unwrap().is_empty());
    }

    /// The kernel's algorithm, step for step on the CPU (tiles, warps, chunks, lanes, the
    /// Kogge-Stone steps over (head, value) pairs, the tile carry chain), for wrapping u32 sums:
    /// it must equal the reference for any heads. This checks the pair logic without a GPU.
    #[allow(clippy::needless_range_loop)]
    fn emulate(x: &[u32], heads: &[bool], exclusive: bool) -> Vec<u32> {
        type P = (bool, u32);
        let comb = |a: P, b: P| -> P { (a.0 | b.0, if b.0 { b.1 } else { a.1.wrapping_add(b.1) }) };
        let none: P = (false, 0);
        let warp_scan = |v: [P; 32]| -> [P; 32] {
            let mut v = v;
            let mut d = 1;
            while d < 32 {
                let before = v;
                for l in d..32 {
                    v[l] = comb(before[l - d], before[l]);
                }
                d *= 2;
            }
            v
        };
        let shape = tuning::single_pass(tuning::DEFAULT_ARCH, 4);
        let (threads, items, vw) = (shape.threads as usize, shape.items as usize, tuning::vector_elems(4) as usize);
        let (warps, chunks, tile) = (threads / 32, items / vw, shape.tile() as usize);
        let mut out = vec![0u32; x.len()];
        let mut carry = 0u32;
        for (t, start) in (0..x.len()).step_by(tile).enumerate() {
            let at = |i: usize| (start + i < x.len()).then_some(start + i);
            let mut vals = vec![0u32; tile];
            let mut hd = vec![false; tile];
            for i in 0..tile {
                if let Some(g) = at(i) {
                    vals[i] = x[g];
                    hd[i] = heads[g];
                }
            }
            let mut lane_in = vec![none; tile / vw];
            let mut totals = [none; 32];
            for (w, total) in totals.iter_mut().enumerate().take(warps) {
                let mut running = none;
                for c in 0..chunks {
                    let base = (w * chunks + c) * 32 * vw;
                    let mut mine = [none; 32];
                    for (l, m) in mine.iter_mut().enumerate() {
                        let e = base + l * vw;
                        let mut any = hd[e];
                        for k in 1..vw {
                            if !hd[e + k] {
                                vals[e + k] = vals[e + k - 1].wrapping_add(vals[e + k]);
                            }
                            any |= hd[e + k];
                        }
                        *m = (any, vals[e + vw - 1]);
                    }
                    let inc = warp_scan(mine);
                    for l in 0..32 {
                        lane_in[base / vw + l] = comb(running, if l > 0 { inc[l - 1] } else { none });
                    }
                    running = comb(running, inc[31]);
                }
                *total = running;
            }
            let inc = warp_scan(totals);
            let tile_total = inc[warps - 1];
            let tile_carry = if t == 0 { 0 } else { carry };
            carry = if t == 0 || tile_total.0 { tile_total.1 } else { tile_carry.wrapping_add(tile_total.1) };
            for v in 0..tile / vw {
                let w = v * vw / (32 * items);
                let warp_in = comb((false, tile_carry), if w > 0 { inc[w - 1] } else { none });
                let incoming = comb(warp_in, lane_in[v]).1;
                let (mut seen, mut prev) = (false, incoming);
                for k in 0..vw {
                    let i = v * vw + k;
                    seen |= hd[i];
                    let inclusive = if seen { vals[i] } else { incoming.wrapping_add(vals[i]) };
                    if let Some(g) = at(i) {
                        out[g] = if !exclusive {
                            inclusive
                        } else if hd[i] {
                            0
                        } else {
                            prev
                        };
                    }
                    prev = inclusive;
                }
            }
        }
        out
    }

    #[test]
    fn the_kernels_algorithm_equals_the_reference() {
        let tile = tuning::single_pass(tuning::DEFAULT_ARCH, 4).tile() as usize;
        for n in [0, 1, 5, 33, 1000, tile - 1, tile, tile + 1, 3 * tile + 17] {
            for every in [1usize, 3, 7, 128, 4096, 100_000] {
                let x: Vec<u32> = (0..n as u64).map(|i| crate::input::bits(n as u64, i) as u32).collect();
                let sparse: Vec<bool> =
                    (0..n as u64).map(|i| crate::input::bits(every as u64, i).is_multiple_of(every as u64)).collect();
                let rows: Vec<bool> = (0..n).map(|i| i % every == 0).collect();
                for heads in [&sparse, &rows] {
                    for exclusive in [false, true] {
                        let want = reference(Op::Add, &x, |i| heads[i], exclusive).unwrap();
                        assert_eq!(emulate(&x, heads, exclusive), want, "n={n} every={every} exclusive={exclusive}");
                    }
                }
            }
        }
    }
}
