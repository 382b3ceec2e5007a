//! Scans across the GPUs of a group of ranks. Each rank holds a shard of the data on its own
//! device; the scan of the whole is each shard scanned from the combination of the shards before
//! it (`crate::plan::multi`):
//! 1. every rank reduces its shard to one total;
//! 2. the totals are all-gathered, device to device, by a [`Collective`];
//! 3. every rank scans the gathered totals to its carry and scans its shard from it, the kernels
//!    reading the carry from device memory (`INIT_FROM_TEMP`): it never visits the host.
//!
//! A group is formed over NCCL (the `nccl` feature: [`Group::from_devices`] for one process
//! driving several GPUs, [`Group::from_rank`] for one process per GPU), or as [`Group::simulated`]
//! ranks on one device, which run the same steps with device-to-device copies for the
//! all-gather. Every argument is checked and every launch planned on every local rank before any
//! collective starts, so a caller's mistake fails on every rank alike.

#[cfg(feature = "nccl")]
mod nccl;
mod simulated;

use crate::element::Element;
use crate::error::{Error, Result};
use crate::launch::scan::{hier_steps, run, single_pass_init_from, Operands};
use crate::options::{CompactOptions, ScanOptions};
use crate::plan::multi::{plan, RankPlan};
use crate::plan::scan::{ScanPlan, ScanRequest};
use crate::runtime::Gpu;
use crate::scan::request;
use crate::temp::TempStorage;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use scan_abi::Op;
use std::sync::Arc;

#[cfg(feature = "nccl")]
pub use nccl::{nccl_present, NcclId};

/// Bytes of one rank's total in the exchange buffers: the widest element.
const SLOT: usize = 16;

/// One rank's exchange buffers: its own total, and every rank's total in rank order.
pub struct Exchange {
    pub send: CudaSlice<u8>,
    pub recv: CudaSlice<u8>,
}

/// How the ranks of a group share their totals.
pub trait Collective {
    /// For every local rank `l`, enqueues on its stream the gathering of the first `bytes` bytes
    /// of every rank's `send` into `exchanges[l].recv`, rank `k`'s at `k * bytes`.
    fn all_gather(&self, exchanges: &mut [&mut Exchange], bytes: usize) -> Result<()>;
}

/// A rank this process drives.
pub struct Member {
    pub gpu: Arc<Gpu>,
    pub stream: Arc<CudaStream>,
    /// The rank in the group (0 holds the first shard).
    pub rank: usize,
    temp: TempStorage,
    exchange: Exchange,
    carries: CudaSlice<u8>,
}

/// A group of ranks scanning one array together.
pub struct Group {
    world: usize,
    members: Vec<Member>,
    collective: Box<dyn Collective>,
}

impl Group {
    /// A group of `members` (this process's ranks) out of `world`, sharing totals through
    /// `collective`.
    fn new(
        world: usize,
        members: Vec<(Arc<Gpu>, Arc<CudaStream>, usize)>,
        collective: Box<dyn Collective>,
    ) -> Result<Group> {
        let members = members
            .into_iter()
            .map(|(gpu, stream, rank)| {
                let exchange = Exchange {
                    send: gpu.alloc_zeros::<u8>(&stream, "a rank's total", SLOT)?,
                    recv: gpu.alloc_zeros::<u8>(&stream, "the ranks' totals", SLOT * world)?,
                };
                let carries = gpu.alloc_zeros::<u8>(&stream, "the ranks' carries", SLOT * world)?;
                Ok(Member { gpu, stream, rank, temp: TempStorage::new(), exchange, carries })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Group { world, members, collective })
    }

    /// `ranks` ranks on `gpu`, sharing its stream, the all-gather done by copies on the device:
    /// the same steps as a group of GPUs, to test and measure them on one.
    pub fn simulated(gpu: Arc<Gpu>, ranks: usize) -> Result<Group> {
        if ranks == 0 {
            return Err(Error::invalid("a group needs at least one rank"));
        }
        let stream = gpu.stream().clone();
        let members = (0..ranks).map(|r| (gpu.clone(), stream.clone(), r)).collect();
        Group::new(ranks, members, Box::new(simulated::Copies))
    }

    /// The number of ranks in the group.
    pub fn world(&self) -> usize {
        self.world
    }

    /// The ranks this process drives, in the order its shards are passed.
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// Waits for every local rank's stream.
    pub fn synchronize(&self) -> Result<()> {
        self.members.iter().try_for_each(|m| Ok(m.stream.synchronize()?))
    }

    /// Scans the array whose shards, in rank order, are `inputs` (one per local rank, on its
    /// device) into `outputs`, as `opts` says: the result is the one-GPU scan of the whole array.
    /// Shards may be uneven or empty. Asynchronous on the ranks' streams.
    pub fn scan<T: Element>(
        &mut self,
        inputs: &[impl DevicePtr<T>],
        outputs: &mut [impl DevicePtrMut<T>],
        opts: &ScanOptions<T>,
    ) -> Result<()> {
        let local = self.members.len();
        if inputs.len() != local || outputs.len() != local {
            return Err(Error::invalid(format!(
                "{} input and {} output shards for {local} local ranks",
                inputs.len(),
                outputs.len()
            )));
        }
        let size = std::mem::size_of::<T>();
        debug_assert!(size <= SLOT);
        let identity = T::identity(opts.op)?;
        // Plan every rank before anything runs, so that a mistake stops every rank alike.
        let streams: Vec<Arc<CudaStream>> = self.members.iter().map(|m| m.stream.clone()).collect();
        let (mut work, mut guards) = (Vec::with_capacity(local), Vec::with_capacity(2 * local));
        for ((m, stream), (input, output)) in
            self.members.iter().zip(&streams).zip(inputs.iter().zip(outputs.iter_mut()))
        {
            let n = input.len() as u64;
            if output.len() as u64 != n {
                return Err(Error::invalid(format!(
                    "rank {}: the output shard holds {} elements, the input shard {n}",
                    m.rank,
                    output.len()
                )));
            }
            let (i, read) = input.device_ptr(stream);
            let (o, write) = output.device_ptr_mut(stream);
            guards.extend([read, write]);
            let req: ScanRequest = request(opts, n, i, o);
            work.push((plan(m.gpu.tuning(), &req, self.world)?, i, o, n));
        }
        for (m, (p, i, _, n)) in self.members.iter_mut().zip(&work) {
            let (send, _w) = m.exchange.send.device_ptr_mut(&m.stream);
            let ops = Operands { input: *i, output: send, n: *n, init: identity, identity };
            let scratch = m.temp.scratch(&m.gpu, &m.stream, p.reduce_scratch)?;
            hier_steps(&m.gpu, &m.stream, &p.reduce, &ops, scratch)?;
        }
        let mut exchanges: Vec<&mut Exchange> = self.members.iter_mut().map(|m| &mut m.exchange).collect();
        self.collective.all_gather(&mut exchanges, size)?;
        for (m, (p, i, o, n)) in self.members.iter_mut().zip(&work) {
            carry_and_scan(m, p, (*i, *o, *n), opts, identity, self.world)?;
        }
        Ok(())
    }

    /// Compacts the array whose shards are `inputs` (one per local rank; `flags` alike when
    /// `opts` keeps by flags) as `opts` says: each rank keeps its elements in order at the front
    /// of its `outputs` shard. Returns, for each local rank, where its kept elements start in the
    /// compacted whole and how many there are: the starts are an exclusive scan of the ranks'
    /// counts across the group, on the devices. Waits for the ranks' streams.
    pub fn compact<T: Element>(
        &mut self,
        inputs: &[CudaSlice<T>],
        flags: Option<&[CudaSlice<u8>]>,
        outputs: &mut [CudaSlice<T>],
        opts: &CompactOptions<T>,
    ) -> Result<Vec<(u64, u64)>> {
        let local = self.members.len();
        if inputs.len() != local || outputs.len() != local || flags.is_some_and(|f| f.len() != local) {
            return Err(Error::invalid(format!(
                "{} input and {} output shards for {local} local ranks",
                inputs.len(),
                outputs.len()
            )));
        }
        let mut counts = Vec::with_capacity(local);
        for (l, m) in self.members.iter_mut().enumerate() {
            let mut count = m.gpu.alloc_zeros::<u64>(&m.stream, "a rank's count", 1)?;
            match flags {
                Some(f) => m.gpu.compact_flagged(
                    &m.stream,
                    &inputs[l],
                    &f[l],
                    &mut outputs[l],
                    &mut count,
                    opts,
                    &mut m.temp,
                )?,
                None => m.gpu.compact(&m.stream, &inputs[l], &mut outputs[l], &mut count, opts, &mut m.temp)?,
            }
            counts.push(count);
        }
        let mut starts = self
            .members
            .iter()
            .map(|m| m.gpu.alloc_zeros::<u64>(&m.stream, "a rank's start", 1))
            .collect::<Result<Vec<_>>>()?;
        self.scan(&counts, &mut starts, &ScanOptions::new(Op::Add).exclusive(true))?;
        let mut placed = Vec::with_capacity(local);
        for (m, (count, start)) in self.members.iter().zip(counts.iter().zip(&starts)) {
            placed.push((m.stream.clone_dtoh(start)?[0], m.stream.clone_dtoh(count)?[0]));
        }
        Ok(placed)
    }
}

/// Step 3 of a rank: its carry from the gathered totals, then its shard's scan from it.
fn carry_and_scan<T: Element>(
    m: &mut Member,
    p: &RankPlan,
    (input, output, n): (u64, u64, u64),
    opts: &ScanOptions<T>,
    identity: T,
    world: usize,
) -> Result<()> {
    let size = std::mem::size_of::<T>() as u64;
    let (recv, _r) = m.exchange.recv.device_ptr(&m.stream);
    let (carries, _w) = m.carries.device_ptr_mut(&m.stream);
    let init = opts.init.unwrap_or(identity);
    let totals = Operands { input: recv, output: carries, n: world as u64, init, identity };
    run(&m.gpu, &m.stream, &p.carries, totals, &mut m.temp)?;
    let Some(scan) = &p.scan else { return Ok(()) };
    let ops = Operands { input, output, n, init, identity };
    if m.rank == 0 && opts.init.is_none() {
        // Nothing comes before the first shard: combining the identity in front could still
        // change a float's sign of zero.
        return run(&m.gpu, &m.stream, &ScanPlan::SinglePass(*scan), ops, &mut m.temp);
    }
    single_pass_init_from(&m.gpu, &m.stream, scan, ops, carries + m.rank as u64 * size, &mut m.temp)
}
