//! Traced one-block scans: the state of the kernel's shared array after every round, read back
//! from the GPU (the lectures' pictures, drawn by the kernels themselves).

use crate::element::Element;
use crate::error::{Error, Result};
use crate::launch::scan::{trace as launch, TraceBuffers};
use crate::plan::scan::trace as plan;
use crate::runtime::Gpu;
use cudarc::driver::{DevicePtr, DevicePtrMut};
use scan_abi::block::{phase, BlockAlgo};
use scan_abi::Op;

/// The shared array after one round.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceStep<T> {
    /// "scan" (Kogge-Stone), "up", "zero-root" or "down".
    pub phase: &'static str,
    /// The round's stride (0 for zero-root).
    pub stride: u32,
    pub state: Vec<T>,
}

/// A traced scan, read back from the GPU.
#[derive(Clone, Debug)]
pub struct Trace<T> {
    pub algorithm: BlockAlgo,
    pub steps: Vec<TraceStep<T>>,
    pub exclusive: Vec<T>,
    pub inclusive: Vec<T>,
}

impl Gpu {
    /// Scans `input` (1 to `TRACE_MAX_N` elements) in one block, one element per thread, with
    /// `algorithm`, recording the shared array after every round.
    pub fn trace<T: Element>(&self, algorithm: BlockAlgo, op: Op, input: &[T]) -> Result<Trace<T>> {
        let launch_plan = plan(T::TYPE, op, algorithm, input.len())?;
        let m = input.len() as u32;
        let stream = self.stream().clone();
        let width = algorithm.trace_width(m) as usize;
        let rounds = algorithm.trace_rounds(m) as usize;
        let d_in = self.upload(&stream, "trace input", input)?;
        let mut d_out = self.alloc_zeros::<T>(&stream, "trace output", 2 * input.len())?;
        let mut d_states = self.alloc_zeros::<T>(&stream, "trace states", rounds * width)?;
        let mut d_meta = self.alloc_zeros::<u32>(&stream, "trace phases", 2 * rounds)?;
        let mut d_rounds = self.alloc_zeros::<u32>(&stream, "trace round count", 1)?;
        {
            let (input, _r) = d_in.device_ptr(&stream);
            let (output, _w) = d_out.device_ptr_mut(&stream);
            let (states, _ws) = d_states.device_ptr_mut(&stream);
            let (meta, _wm) = d_meta.device_ptr_mut(&stream);
            let (rounds, _wr) = d_rounds.device_ptr_mut(&stream);
            launch(self, &stream, &launch_plan, &TraceBuffers { input, output, states, meta, rounds })?;
        }
        stream.synchronize().map_err(|e| Error::kernel(launch_plan.kernel, e))?;
        let out = self.download(&stream, &d_out)?;
        let states = self.download(&stream, &d_states)?;
        let meta = self.download(&stream, &d_meta)?;
        let recorded = (self.download(&stream, &d_rounds)?[0] as usize).min(rounds);
        let steps = (0..recorded)
            .map(|r| TraceStep {
                phase: phase::name(meta[2 * r]),
                stride: meta[2 * r + 1],
                state: states[r * width..(r + 1) * width].to_vec(),
            })
            .collect();
        Ok(Trace { algorithm, steps, exclusive: out[..input.len()].to_vec(), inclusive: out[input.len()..].to_vec() })
    }
}
