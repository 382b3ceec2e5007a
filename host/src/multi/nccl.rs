//! Groups over NCCL, loaded at run time: one process driving several GPUs, or one process per
//! GPU joined by a shared id.

use super::{Collective, Exchange, Group};
use crate::error::{Error, Result};
use crate::runtime::Gpu;
use cudarc::nccl::{group_end, group_start, Comm, Id};
use std::sync::Arc;

/// Whether NCCL can be loaded (cudarc looks for `libnccl.so`).
pub fn nccl_present() -> bool {
    // SAFETY: only tries to open the shared library.
    unsafe { cudarc::nccl::sys::is_culib_present() }
}

fn need_nccl() -> Result<()> {
    if nccl_present() {
        Ok(())
    } else {
        Err(Error::NoNccl)
    }
}

fn failed(rank: usize, e: impl std::fmt::Debug) -> Error {
    Error::Collective { rank, message: format!("{e:?}") }
}

/// The id that joins the processes of one group: made by one of them ([`NcclId::new`]), sent to
/// the others as its 128 bytes ([`NcclId::bytes`], [`NcclId::from_bytes`]), as torchrun or MPI
/// programs do.
#[derive(Clone, Copy, Debug)]
pub struct NcclId(Id);

impl NcclId {
    pub fn new() -> Result<NcclId> {
        need_nccl()?;
        Id::new().map(NcclId).map_err(|e| failed(0, e))
    }

    pub fn bytes(&self) -> [u8; 128] {
        self.0.internal().map(|c| c as u8)
    }

    pub fn from_bytes(bytes: [u8; 128]) -> NcclId {
        NcclId(Id::uninit(bytes.map(|b| b as core::ffi::c_char)))
    }
}

/// NCCL communicators, one per local rank, in the members' order.
struct Nccl(Vec<Comm>);

impl Collective for Nccl {
    fn all_gather(&self, exchanges: &mut [&mut Exchange], bytes: usize) -> Result<()> {
        group_start().map(drop).map_err(|e| failed(self.0[0].rank(), e))?;
        let mut result = Ok(());
        for (comm, e) in self.0.iter().zip(exchanges.iter_mut()) {
            let world = comm.world_size();
            let send = e.send.slice(0..bytes);
            let mut recv = e.recv.slice_mut(0..bytes * world);
            if let Err(err) = comm.all_gather(&send, &mut recv).map(drop) {
                result = Err(failed(comm.rank(), err));
                break;
            }
        }
        let ended = group_end().map(drop).map_err(|e| failed(self.0[0].rank(), e));
        result.and(ended)
    }
}

impl Group {
    /// One process driving the GPUs `ordinals` (rank `k` on `ordinals[k]`), over NCCL.
    pub fn from_devices(ordinals: &[usize]) -> Result<Group> {
        need_nccl()?;
        Group::from_gpus(ordinals.iter().map(|&o| Gpu::new(o).map(Arc::new)).collect::<Result<Vec<_>>>()?)
    }

    /// [`Group::from_devices`] on GPUs the caller opened (with their tuning), rank `k` on
    /// `gpus[k]` and its stream; every GPU a different device.
    pub fn from_gpus(gpus: Vec<Arc<Gpu>>) -> Result<Group> {
        if gpus.is_empty() {
            return Err(Error::invalid("a group needs at least one GPU"));
        }
        need_nccl()?;
        let streams: Vec<_> = gpus.iter().map(|g| g.stream().clone()).collect();
        let comms = Comm::from_devices(streams.clone()).map_err(|e| failed(0, e))?;
        let world = gpus.len();
        let members = gpus.into_iter().zip(streams).enumerate().map(|(r, (g, s))| (g, s, r)).collect();
        Group::new(world, members, Box::new(Nccl(comms)))
    }

    /// This process's rank `rank` of `world`, on `gpu`, joined to the others by `id` (every
    /// process passes the same id). Blocks until every rank has joined.
    pub fn from_rank(gpu: Arc<Gpu>, rank: usize, world: usize, id: NcclId) -> Result<Group> {
        if rank >= world {
            return Err(Error::invalid(format!("rank {rank} of a group of {world}")));
        }
        need_nccl()?;
        let stream = gpu.stream().clone();
        let comm = Comm::from_rank(stream.clone(), rank, world, id.0).map_err(|e| failed(rank, e))?;
        Group::new(world, vec![(gpu, stream, rank)], Box::new(Nccl(vec![comm])))
    }
}
