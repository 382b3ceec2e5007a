//! Driver of the hierarchical scan: level by level until one tile holds all the totals.

use super::{grid, kernel_flags, kernel_name, Job, Propagation, TempStorage};
use crate::element::Element;
use crate::error::{Error, Result};
use cudarc::driver::PushKernelArg;
use scan_abi::block::BlockAlgo;
use scan_abi::{layout, names, tuning};

fn shape(elem_size: usize) -> tuning::TileShape {
    tuning::hierarchical(tuning::DEFAULT_ARCH, elem_size)
}

/// Bytes of the tile-total array of one level, aligned for the next.
fn sums_bytes(tiles: u64, elem_size: usize) -> u64 {
    (tiles * elem_size as u64).next_multiple_of(256)
}

/// Tile totals of every level: as many levels as n needs.
fn levels(n: u64, tile: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut count = n;
    while count > tile {
        count = count.div_ceil(tile);
        v.push(count);
    }
    v
}

pub(super) fn temp_bytes(elem_size: usize, n: u64) -> u64 {
    levels(n, shape(elem_size).tile() as u64).iter().map(|&t| sums_bytes(t, elem_size)).sum()
}

pub(super) fn run<T: Element>(
    job: &Job<'_, T>,
    block: BlockAlgo,
    propagation: Propagation,
    temp: &mut TempStorage,
) -> Result<()> {
    let temp_base = temp.scratch(job.gpu, job.stream, temp_bytes(std::mem::size_of::<T>(), job.n))?;
    let level = Level { job, block, propagation };
    level.scan(job.input, job.output, job.n, job.opts.init, job.opts.exclusive, temp_base)
}

struct Level<'a, T> {
    job: &'a Job<'a, T>,
    block: BlockAlgo,
    propagation: Propagation,
}

impl<T: Element> Level<'_, T> {
    /// Scans `n` elements at `input` into `output`, using temporary storage from `temp` on.
    fn scan(&self, input: u64, output: u64, n: u64, init: Option<T>, exclusive: bool, temp: u64) -> Result<()> {
        let size = std::mem::size_of::<T>();
        let shape = shape(size);
        let tiles = n.div_ceil(shape.tile() as u64);
        let null = 0u64;
        if tiles == 1 {
            return self.tile_scan(input, output, n, null, null, init, exclusive, 1);
        }
        let sums = temp;
        let rest = temp + sums_bytes(tiles, size);
        match self.propagation {
            Propagation::ReduceThenScan => {
                self.reduce(input, n, sums, tiles)?;
                self.scan(sums, sums, tiles, init, true, rest)?;
                self.tile_scan(input, output, n, sums, null, None, exclusive, tiles)
            }
            Propagation::ScanThenAdd => {
                self.tile_scan(input, output, n, null, sums, None, exclusive, tiles)?;
                self.scan(sums, sums, tiles, init, true, rest)?;
                self.add(output, n, sums, tiles)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn tile_scan(
        &self,
        input: u64,
        output: u64,
        n: u64,
        offsets: u64,
        sums: u64,
        init: Option<T>,
        exclusive: bool,
        tiles: u64,
    ) -> Result<()> {
        let job = self.job;
        let size = std::mem::size_of::<T>() as u32;
        let shape = shape(size as usize);
        let name = kernel_name(&format!("{}_{}", names::HIER_TILE, self.block.token()), T::TYPE, job.opts.op);
        let f = job.gpu.kernel(&name)?;
        let init_value = init.unwrap_or(T::identity(job.opts.op)?);
        let flags = kernel_flags(exclusive, init.is_some());
        let cfg = grid(tiles, shape.threads, layout::tile_scan_smem(self.block, shape.threads, shape.items, size))?;
        let mut b = job.stream.launch_builder(&f);
        b.arg(&input).arg(&output).arg(&n).arg(&offsets).arg(&sums).arg(&init_value).arg(&flags);
        // SAFETY: arguments match hierarchical_kernels! in gpu/; offsets and sums (when not
        // null) hold one element per tile.
        unsafe { b.launch(cfg) }.map_err(|e| Error::kernel(&name, e))?;
        Ok(())
    }

    fn reduce(&self, input: u64, n: u64, sums: u64, tiles: u64) -> Result<()> {
        let job = self.job;
        let size = std::mem::size_of::<T>() as u32;
        let shape = shape(size as usize);
        let name = kernel_name(names::HIER_REDUCE, T::TYPE, job.opts.op);
        let f = job.gpu.kernel(&name)?;
        let cfg = grid(tiles, shape.threads, layout::tile_reduce_smem(shape.threads, shape.items, size))?;
        let mut b = job.stream.launch_builder(&f);
        b.arg(&input).arg(&n).arg(&sums);
        // SAFETY: arguments match hierarchical_kernels!; sums holds one element per tile.
        unsafe { b.launch(cfg) }.map_err(|e| Error::kernel(&name, e))?;
        Ok(())
    }

    fn add(&self, output: u64, n: u64, offsets: u64, tiles: u64) -> Result<()> {
        let job = self.job;
        let shape = shape(std::mem::size_of::<T>());
        let name = kernel_name(names::HIER_ADD, T::TYPE, job.opts.op);
        let f = job.gpu.kernel(&name)?;
        let cfg = grid(tiles, shape.threads, 0)?;
        let mut b = job.stream.launch_builder(&f);
        b.arg(&output).arg(&n).arg(&offsets);
        // SAFETY: arguments match hierarchical_kernels!; offsets holds one element per tile.
        unsafe { b.launch(cfg) }.map_err(|e| Error::kernel(&name, e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_continue_until_one_tile_holds_the_totals() {
        assert!(levels(2048, 2048).is_empty());
        assert_eq!(levels(2049, 2048), vec![2]);
        assert_eq!(levels(1 << 28, 2048), vec![131072, 64]);
        assert_eq!(levels((1 << 33) + 1, 2048), vec![4194305, 2049, 2]);
    }
}
