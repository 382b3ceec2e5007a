//! The pipelined kernels' entry points.

use crate::kernels::SHAPES;
use scan_abi::args::{ColumnsArgs, ScanArgs};
use scan_abi::shape::{vector_elems, Pipeline};
use super::{columns_pipelined, single_pass_pipelined};

/// One pipelined kernel `$name` over `$t` with operator `$op` and the shape `$shape` (a
/// `Pipeline`), its buffers then a [`ScanArgs`]; with `rows`, each row of `args.row` elements scanned
/// on its own ([`single_pass_pipelined`]'s `ROWS`). Stamped out below as `single_pass_pipe_<t>_<op>`
/// for every element type and operator (`Shapes::scan_pipeline_of`), the linear recurrence's
/// `recurrence_pipe_<t>` (`Shapes::recurrence_pipeline`), the batched scan along few long rows'
/// `batched_rows_pipe_<t>_<op>`; with `fixed`, the look-back in the fixed order (the deterministic
/// float scans' `single_pass_pipe_det_<t>_<op>`).
macro_rules! pipelined_kernel {
    ($name:ident, $t:ty, $op:ident, $shape:expr) => {
        pipelined_kernel!(@emit $name, $t, $op, $shape, false, false);
    };
    ($name:ident, $t:ty, $op:ident, $shape:expr, fixed) => {
        pipelined_kernel!(@emit $name, $t, $op, $shape, false, true);
    };
    ($name:ident, $t:ty, $op:ident, $shape:expr, rows) => {
        pipelined_kernel!(@emit $name, $t, $op, $shape, true, false);
    };
    (@emit $name:ident, $t:ty, $op:ident, $shape:expr, $rows:literal, $fixed:literal) => {
        #[no_mangle]
        // A `[f64; 2]` initial value makes the parameter hold an array, as the host's does.
        #[allow(improper_ctypes_definitions)]
        pub unsafe extern "ptx-kernel" fn $name(inp: *const $t, out: *mut $t, temp: *mut u8, args: ScanArgs<$t>) {
            const SIZE: usize = core::mem::size_of::<$t>();
            const P: Pipeline = $shape;
            const V: usize = vector_elems(SIZE) as usize;
            const D: usize = SHAPES.lookback_depth;
            const B: usize = P.blocked_run(V as u32);
            const K: usize = SHAPES.lookback_windows;
            let ScanArgs { n, row, flags, pipe, init } = args;
            // The row length: the whole input unless the kernel takes rows.
            let row = if $rows { row } else { n };
            single_pass_pipelined::<
                $t,
                crate::op::$op,
                { P.warps },
                { P.split },
                { P.items as usize / V },
                D,
                B,
                $rows,
                $fixed,
                K,
            >(
                inp,
                out,
                n,
                row,
                crate::kernels::initial(flags, temp, init),
                flags,
                temp,
                pipe,
            )
        }
    };
}

macro_rules! pipelined_kernels {
    ($t:ident, [$($op:ident),*]) => { paste::paste! { $(
        pipelined_kernel!(
            [<single_pass_pipe_ $t _ $op:lower>], $t, $op,
            SHAPES.scan_pipeline_of(<$t as crate::op::Element>::TYPE, scan_abi::Op::$op)
        );
    )* } };
}
crate::kernels::for_each_type!(pipelined_kernels);

/// `single_pass_pipe_det_<t>_<op>`: the float sums and products whose rounding depends on the
/// combine order, with the look-back in the fixed order (a deterministic scan's result is then a
/// fixed function of its input; `gpu_scan::reference::replica` computes it on the CPU).
macro_rules! fixed_pipelined_kernels {
    ($($t:ident),*) => { $( fixed_pipelined_kernels!(@ops $t, [Add, Mul]); )* };
    (@ops $t:ident, [$($op:ident),*]) => { paste::paste! { $(
        pipelined_kernel!(
            [<single_pass_pipe_det_ $t _ $op:lower>], $t, $op,
            SHAPES.scan_pipeline_of(<$t as crate::op::Element>::TYPE, scan_abi::Op::$op), fixed
        );
    )* } };
}
fixed_pipelined_kernels!(f32, f64);

/// `batched_rows_pipe_<t>_<op>`: the rows of `cols` elements of a row-major matrix, each scanned
/// on its own in one launch (the batched scan along few long rows), with the single-pass pipelined
/// kernel's shape (`Shapes::scan_pipeline_of`).
macro_rules! rows_pipelined_kernels {
    ($($t:ident),*) => { $( rows_pipelined_kernels!(@ops $t, [Add, Mul, Min, Max]); )* };
    (@ops $t:ident, [$($op:ident),*]) => { paste::paste! { $(
        pipelined_kernel!(
            [<batched_rows_pipe_ $t _ $op:lower>], $t, $op,
            SHAPES.scan_pipeline_of(<$t as crate::op::Element>::TYPE, scan_abi::Op::$op), rows
        );
    )* } };
}
rows_pipelined_kernels!(u32, i32, u64, i64, f32, f64);

/// `<name>_<t>_<op>`: [`columns_pipelined`] for rows of `C` columns, in the tile shape
/// `Shapes::<shape>`; the status words carry whole rows.
macro_rules! columns_pipelined_kernels {
    ($name:ident, $shape:ident: $($t:ident: $c:literal),*) => { paste::paste! { $(
        columns_pipelined_kernels!(@one $name, $shape, $t, $c, Add);
        columns_pipelined_kernels!(@one $name, $shape, $t, $c, Mul);
        columns_pipelined_kernels!(@one $name, $shape, $t, $c, Min);
        columns_pipelined_kernels!(@one $name, $shape, $t, $c, Max);
    )* } };
    (@one $name:ident, $shape:ident, $t:ident, $c:literal, $op:ident) => { paste::paste! {
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn [<$name _ $t _ $op:lower>](
            inp: *const $t, out: *mut $t, temp: *mut u8, args: ColumnsArgs,
        ) {
            const SIZE: usize = core::mem::size_of::<$t>();
            const P: Pipeline = SHAPES.$shape.at(SIZE);
            const V: usize = vector_elems(SIZE) as usize;
            const D: usize = SHAPES.lookback_depth;
            // Blocked runs are of whole matrix rows, `C / V` vectors each.
            const B: usize = P.blocked_run(V as u32) / ($c / V);
            const { assert!(P.blocked_run(V as u32) % ($c / V) == 0) };
            let ColumnsArgs { n, flags, pipe } = args;
            columns_pipelined::<$t, crate::op::$op, V, $c, { P.warps }, { P.split }, { P.items as usize / V }, D, B>(
                inp, out, n, flags, temp, pipe,
            )
        }
    } };
}
// Rows of two 16-byte vectors (`names::BATCHED_COLUMNS_PIPELINED`) and of one
// (`names::BATCHED_COLUMNS_PIPELINED16`).
columns_pipelined_kernels!(batched_columns_pipe, columns_pipeline: u32: 8, i32: 8, f32: 8, u64: 4, i64: 4, f64: 4);
columns_pipelined_kernels!(batched_columns_pipe16, columns16_pipeline: u32: 4, i32: 4, f32: 4, u64: 2, i64: 2, f64: 2);

// The linear recurrence's scans of affine maps (see `single_pass::recurrence_f32`).
pipelined_kernel!(recurrence_pipe_f32, u64, AffineF32, SHAPES.recurrence_pipeline.at(8));
pipelined_kernel!(recurrence_pipe_f64, [f64; 2], AffineF64, SHAPES.recurrence_pipeline.at(16));

