//! Batched scans of a row-major `rows × cols` matrix along either axis, each one pass over the
//! data (the paths are in `crate::plan::batched`).

use crate::element::Element;
use crate::error::{Error, Result};
use crate::launch::batched as launch;
use crate::options::{BatchedOptions, Matrix};
use crate::plan::batched::{plan, BatchedPlan, BatchedRequest};
use crate::plan::check_output;
use crate::plan::scan::aligned;
use crate::runtime::Gpu;
use crate::temp::TempStorage;
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use std::sync::Arc;

impl Gpu {
    /// Scans every column (`Axis::Columns`) or every row (`Axis::Rows`) of the row-major `matrix`
    /// in `input` on its own, into `output`, as `opts` says (add, mul, min, max; 32- and 64-bit
    /// types).
    pub fn batched_scan<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<T>,
        matrix: Matrix,
        output: &mut impl DevicePtrMut<T>,
        opts: &BatchedOptions,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = input.len() as u64;
        if matrix.rows.checked_mul(matrix.cols) != Some(n) {
            return Err(Error::invalid(format!(
                "a {} x {} matrix is not the input's {n} elements",
                matrix.rows, matrix.cols
            )));
        }
        check_output(output.len(), n, "elements")?;
        let (i, _r) = input.device_ptr(stream);
        let (o, _w) = output.device_ptr_mut(stream);
        let plan = self.batched_plan::<T>(matrix, opts, aligned(i) && aligned(o))?;
        launch::run(self, stream, &plan, (i, o), (matrix.rows, matrix.cols), T::identity(opts.op)?, temp)
    }

    /// How [`Gpu::batched_scan`] would scan `matrix` (buffers on 16-byte boundaries when
    /// `aligned`): the kernel path and its launch, without running it.
    pub fn batched_plan<T: Element>(
        &self,
        matrix: Matrix,
        opts: &BatchedOptions,
        aligned: bool,
    ) -> Result<BatchedPlan> {
        let req = BatchedRequest {
            ty: T::TYPE,
            op: opts.op,
            exclusive: opts.exclusive,
            matrix,
            axis: opts.axis,
            kernel: opts.kernel,
            aligned,
        };
        plan(self.tuning(), &req)
    }
}
