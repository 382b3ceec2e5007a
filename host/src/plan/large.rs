//! The planners beyond 2^32 elements, on the sm_90 table: tiles, grids and temporary storage as
//! the shapes give them (figures worked out by hand from `scan_abi::tuning::sm90`), and sizes
//! whose products leave 64 bits, or whose tiles leave the kernels' 32-bit indices, refused as
//! [`Error::OutOfRange`].

use super::batched::{self, BatchedPlan, BatchedRequest};
use super::scan::{self, ScanPlan, ScanRequest};
use super::segmented::Marks;
use super::{compact, multi, partition, segmented, sort, Grid, MAX_TILES};
use crate::error::Error;
use crate::options::{Algorithm, Axis, BatchedKernel, CompactKernel, Matrix, ScanKernel, SegmentedKernel};
use scan_abi::kernel::predicate;
use scan_abi::partition::Digit;
use scan_abi::tuning::{for_arch, Tuning};
use scan_abi::{ElemType, Family, Op};

const SM90: &Tuning = for_arch(90);
const BEYOND: u64 = (1 << 32) + 1;

fn out_of_range<T: std::fmt::Debug>(r: crate::error::Result<T>) -> bool {
    matches!(r, Err(Error::OutOfRange { .. }))
}

fn tiles_scan(ty: ElemType, n: u64) -> crate::error::Result<ScanPlan> {
    scan::plan(SM90, &ScanRequest { kernel: ScanKernel::Tiles, ..ScanRequest::new(ty, Op::Add, n) })
}

#[test]
fn single_pass_scans_beyond_2_32_have_a_tile_and_a_status_word_per_8192_u32() {
    // (type, tiles, bytes): u8 tiles of 32768, u32 of 8192, f64 of 4096 in 16-byte words.
    for (ty, tiles, bytes) in [
        (ElemType::U8, 131_073, 1_048_712),
        (ElemType::U32, 524_289, 4_194_440),
        (ElemType::F64, 1_048_577, 16_777_360),
    ] {
        let Ok(ScanPlan::SinglePass(s)) = tiles_scan(ty, BEYOND) else { panic!("{ty:?}") };
        assert_eq!((s.launch.grid, s.state.slots, s.state.bytes()), (Grid::Blocks(tiles), tiles, bytes), "{ty:?}");
    }
}

#[test]
fn tiles_beyond_32_bit_indices_are_out_of_range_for_every_kernel_and_type() {
    let last = (MAX_TILES - 1) * 8192;
    assert!(matches!(tiles_scan(ElemType::U32, last), Ok(ScanPlan::SinglePass(_))));
    assert!(out_of_range(tiles_scan(ElemType::U32, last + 1)));
    for ty in ElemType::ALL {
        for kernel in ScanKernel::ALL {
            for algorithm in [Algorithm::SinglePass, Algorithm::hierarchical(), Algorithm::Naive] {
                for n in [1 << 60, u64::MAX] {
                    let req = ScanRequest { kernel, algorithm, ..ScanRequest::new(ty, Op::Max, n) };
                    let r = scan::plan(SM90, &req);
                    assert!(r.is_err(), "{ty:?} {kernel:?} {algorithm:?} n={n}: {r:?}");
                }
            }
        }
    }
}

#[test]
fn hierarchical_scratch_at_2_40_holds_three_levels() {
    let req = ScanRequest { algorithm: Algorithm::hierarchical(), ..ScanRequest::new(ElemType::U32, Op::Add, 1 << 40) };
    let Ok(ScanPlan::Hierarchical(h)) = scan::plan(SM90, &req) else { panic!() };
    // 2^29, 2^18 and 128 tile totals of 4 bytes, each level on 256 bytes.
    assert_eq!(h.scratch_bytes, (1 << 31) + (1 << 20) + 512);
    let req = ScanRequest { n: u64::MAX, ..req };
    assert!(out_of_range(scan::plan(SM90, &req)));
}

#[test]
fn recurrences_and_compactions_beyond_2_32() {
    // f32 maps of 8 bytes: 2^33 of them are pipelined, in tiles of 2048.
    let p = scan::recurrence(SM90, ElemType::F32, 1 << 33, ScanKernel::Auto, true).unwrap();
    assert_eq!(p.launch.kernel.family, Family::RecurrencePipelined);
    assert_eq!(p.launch.grid, Grid::Persistent { tiles: 4_194_304, per_sm: None });
    assert!(out_of_range(scan::recurrence(SM90, ElemType::F64, u64::MAX, ScanKernel::Auto, true)));
    // u32 pipelined compaction tiles hold 5120 elements.
    let c = compact::plan(SM90, ElemType::U32, 1 << 33, predicate::GREATER, CompactKernel::Auto, true).unwrap();
    assert_eq!((c.launch.kernel.family, c.state.slots), (Family::CompactPipelined, 1_677_722));
    for kernel in CompactKernel::ALL {
        let r = compact::plan(SM90, ElemType::U64, u64::MAX, predicate::GREATER, kernel, true);
        assert!(out_of_range(r), "{kernel:?}");
    }
}

fn batched(ty: ElemType, rows: u64, cols: u64, axis: Axis) -> crate::error::Result<BatchedPlan> {
    let req = BatchedRequest {
        ty,
        op: Op::Add,
        exclusive: false,
        matrix: Matrix::new(rows, cols),
        axis,
        kernel: BatchedKernel::Auto,
        aligned: true,
    };
    batched::plan(SM90, &req)
}

#[test]
fn matrices_beyond_2_32_elements() {
    // 2^33 rows of two u32 columns: scalar column tiles of 2048 rows, a status word per column
    // of each of the 2^22 row blocks.
    let Ok(BatchedPlan::ColumnTiles { launch, state, .. }) = batched(ElemType::U32, 1 << 33, 2, Axis::Columns) else {
        panic!()
    };
    assert_eq!((launch.grid, state.slots, state.bytes()), (Grid::Blocks(1 << 22), 1 << 23, 67_108_992));
    // Three rows of 2^32 + 1 u32: a chain of 524,289 tiles each.
    let Ok(BatchedPlan::RowChains { launch, tiles_per_row, .. }) = batched(ElemType::U32, 3, BEYOND, Axis::Rows) else {
        panic!()
    };
    assert_eq!((launch.grid, tiles_per_row), (Grid::Blocks(1_572_867), 524_289));
}

#[test]
fn matrices_whose_elements_or_bytes_leave_64_bits_are_refused() {
    for axis in Axis::ALL {
        // 2^63 elements fit, their 2^66 bytes do not.
        assert!(out_of_range(batched(ElemType::F64, 1 << 62, 2, axis)), "{axis:?}");
        assert!(out_of_range(batched(ElemType::U32, u64::MAX, 2, axis)), "{axis:?}");
    }
}

#[test]
fn sorts_partitions_segments_and_ranks_beyond_2_32() {
    assert!(out_of_range(sort::plan(SM90, ElemType::U32, 1 << 32, false, false)));
    // 8064 keys a tile, a status word per tile and digit.
    assert_eq!(sort::plan(SM90, ElemType::U32, (1 << 32) - 2, false, false).unwrap().state.slots, 136_348_416);
    // 2^22 tiles of 2048, 256 digit counts each.
    let p = partition::plan(SM90, ElemType::F32, 1 << 33, &Digit::radix(0)).unwrap();
    assert_eq!((p.tiles, p.entries), (1 << 22, 1 << 30));
    assert!(out_of_range(partition::plan(SM90, ElemType::F32, u64::MAX, &Digit::radix(0))));
    // u64 segments in tiles of 4096, 16-byte status words.
    let seg = |n, kernel| segmented::plan(SM90, ElemType::U64, Op::Add, n, false, kernel, Marks::Flags);
    assert_eq!(seg(1 << 33, SegmentedKernel::Tiles).unwrap().state.bytes(), 128 + (1 << 21) * 16);
    assert!(out_of_range(seg(u64::MAX, SegmentedKernel::Tiles)));
    // Pipelined: tiles of 1280.
    assert_eq!(seg(1 << 33, SegmentedKernel::Auto).unwrap().state.slots, (1u64 << 33).div_ceil(1280));
    assert!(out_of_range(seg(u64::MAX, SegmentedKernel::Auto)));
    let shard = ScanRequest::new(ElemType::U32, Op::Add, 1 << 40);
    assert_eq!(multi::plan(SM90, &shard, 8).unwrap().reduce.len(), 4);
    assert!(out_of_range(multi::plan(SM90, &ScanRequest { n: u64::MAX, ..shard }, 8)));
}

#[test]
fn histograms_take_1_to_max_bins() {
    let bins = |b| partition::plan(SM90, ElemType::F32, 1000, &Digit::bins(b, 0.0, 1.0));
    assert!(bins(1).is_ok() && bins(scan_abi::partition::MAX_BINS).is_ok());
    for b in [0, scan_abi::partition::MAX_BINS + 1, u32::MAX] {
        assert!(out_of_range(bins(b)), "{b}");
    }
}
