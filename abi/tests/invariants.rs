//! What the tuning table, the kernel names, the shared-memory layouts and the status words must
//! satisfy, for every architecture's table.

use scan_abi::block::BlockAlgo;
use scan_abi::bounds::{self, block_threads, bounded_kernels};
use scan_abi::kernel::{Family, Kernel};
use scan_abi::shape::{vector_elems, Pipeline, Tile};
use scan_abi::tuning::{for_arch, Tuning, DEFAULT_ARCH, TABLES};
use scan_abi::{smem, status, ElemType, Op};
use std::collections::HashSet;

/// An H200 SM: 228 KiB of shared memory, 1 KiB of it kept back per block, and 2048 threads.
const SM_SHARED: u32 = 228 * 1024;
const SM_SHARED_PER_BLOCK: u32 = 1024;
const SM_THREADS: u32 = 2048;

fn tables() -> impl Iterator<Item = &'static Tuning> {
    TABLES.into_iter()
}

#[test]
fn kernel_names_are_unique_and_follow_the_family_type_operator_pattern() {
    let names: Vec<String> = Kernel::all().map(|k| k.to_string()).collect();
    let unique: HashSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "two kernels share a name");
    assert_eq!(Kernel::new(Family::SinglePass, ElemType::U32, Op::Add).to_string(), "single_pass_u32_add");
    let blelloch = Kernel::new(Family::HierTile(BlockAlgo::Blelloch), ElemType::I64, Op::Max);
    assert_eq!(blelloch.to_string(), "hier_blelloch_i64_max");
    assert_eq!(
        Kernel::new(Family::Compact, ElemType::U8, Op::Add).to_string(),
        "compact_u8",
        "no operator in the name"
    );
    assert_eq!(Kernel::typed(Family::RecurrencePipelined, ElemType::F64).to_string(), "recurrence_pipe_f64");
    let add = Kernel::new(Family::SinglePass, ElemType::U32, Op::Add);
    assert_eq!(add.group(), Kernel::new(Family::SinglePass, ElemType::U32, Op::Max).group(), "operators share one");
    assert_ne!(add.group(), Kernel::new(Family::SinglePass, ElemType::I32, Op::Add).group());
    assert_eq!(add.group().to_string(), "single_pass_u32");
    assert_eq!(Kernel::typed(Family::Compact, ElemType::U8).group().to_string(), "compact_u8");
}

#[test]
fn every_family_is_built_for_some_type_and_only_for_operators_its_types_support() {
    for family in Family::all() {
        assert!(Kernel::all().any(|k| k.family == family), "{family:?} has no kernel");
    }
    for k in Kernel::all() {
        assert_eq!(k.op.is_some(), k.family.has_op(), "{k}");
        assert!(k.op.is_none_or(|op| op.supports(k.ty)), "{k}");
    }
    assert!(!Kernel::new(Family::Segmented, ElemType::U8, Op::Add).exists());
    assert!(!Kernel::new(Family::SinglePassDet, ElemType::U32, Op::Add).exists());
    assert!(Kernel::new(Family::BatchedColumnsBulk, ElemType::F64, Op::Mul).exists());
}

#[test]
fn the_default_architecture_has_a_table_of_its_own() {
    assert_eq!(for_arch(DEFAULT_ARCH).arch, DEFAULT_ARCH);
}

#[test]
fn every_rule_names_kernels_that_exist() {
    for t in tables() {
        for (kind, rules) in [("launch bound", t.launch_bounds), ("spill", t.spills), ("fit", t.unbounded_fits)] {
            for r in rules {
                assert!(Kernel::all().any(|k| r.covers(k)), "the {kind} rule {r:?} names no kernel");
                let every_type = r.types.iter().all(|&ty| Kernel::all().any(|k| k.family == r.family && k.ty == ty));
                assert!(every_type, "the {kind} rule {r:?} names a type its family is not built for");
            }
        }
    }
}

/// A pipeline of two stages, the fewest that overlap loads with work: a pipelined kernel's bound
/// must leave room for at least that (its stages are a launch choice; more cost blocks).
fn two_stages(p: Pipeline) -> Pipeline {
    Pipeline { stages: 2, ..p }
}

#[test]
fn bounded_blocks_fit_an_sm_in_threads_and_shared_memory() {
    for t in tables() {
        let s = &t.shapes;
        for (k, threads, blocks) in bounded_kernels(t) {
            assert!(threads * blocks <= SM_THREADS, "{k}: {blocks} blocks of {threads} threads");
            let size = k.ty.size();
            let shared = match k.family {
                Family::SinglePass | Family::SinglePassDet | Family::BatchedLongRows => smem::single_pass(s, size),
                Family::RecurrenceStaged => smem::single_pass_staged(s, 2 * size),
                Family::Compact => smem::compact(s, size),
                Family::Segmented => smem::segmented(s, size),
                Family::BatchedShortRows => smem::short_rows(s, size),
                Family::SortPass => smem::sort_pass(s, size, false),
                Family::SortPassValues => smem::sort_pass(s, size, true),
                Family::SortCounts => smem::sort_counts(size),
                Family::SinglePassPipelined | Family::BatchedRowsPipelined => {
                    smem::pipelined(two_stages(s.scan_pipeline_of(k.ty, k.op.expect("named per operator"))), size, size)
                }
                Family::SinglePassPipelinedDet => {
                    let p = two_stages(s.scan_pipeline_of(k.ty, k.op.expect("named per operator")));
                    smem::pipelined(p, size, size) + smem::fixed_lookback(s, size)
                }
                Family::WideningPipelined(src) => {
                    smem::pipelined(two_stages(s.widening_pipeline_of(src.size(), k.ty)), src.size(), size)
                }
                Family::BatchedColumnsPipelined => smem::pipelined(two_stages(s.columns_pipeline.at(size)), size, 32),
                Family::BatchedColumnsPipelined16 => {
                    smem::pipelined(two_stages(s.columns16_pipeline.at(size)), size, 16)
                }
                other => panic!("no shared-memory rule for the bounded family {other:?}"),
            };
            assert!(blocks * (shared + SM_SHARED_PER_BLOCK) <= SM_SHARED, "{k}: {blocks} blocks of {shared} bytes");
        }
        assert!(!t.launch_bounds.is_empty());
    }
}

#[test]
fn column_tiles_in_shared_memory_leave_two_blocks_to_an_sm_and_no_taller_would() {
    for t in tables() {
        let fits_two = |shared: u32| 2 * (shared + SM_SHARED_PER_BLOCK) <= SM_SHARED;
        for size in [4, 8] {
            let rows = t.choices.bulk_rows;
            assert!(fits_two(smem::columns_bulk(&t.shapes, size, rows)), "{size}-byte elements");
            assert!(!fits_two(smem::columns_bulk(&t.shapes, size, rows + 1)), "{size}-byte elements");
        }
    }
}

#[test]
fn tiles_hold_whole_vectors_and_pipelines_whole_shares() {
    for t in tables() {
        let s = &t.shapes;
        for size in [1usize, 2, 4, 8] {
            let v = vector_elems(size);
            let tiles = [
                ("single-pass", s.single_pass.at(size)),
                ("staged", s.staged.at(size)),
                ("compact", s.compact.at(size)),
            ];
            for (name, tile) in tiles {
                assert_eq!(tile.items % v, 0, "{name} {size}-byte tiles");
                assert_eq!(tile.threads % 32, 0, "{name} {size}-byte tiles");
            }
            let p: Pipeline = s.scan_pipeline.at(size);
            assert_eq!(p.items % (v * p.split), 0, "{size}-byte pipeline shares");
        }
        for ty in ElemType::ALL {
            for op in Op::ALL.into_iter().filter(|o| o.supports(ty)) {
                let p = s.scan_pipeline_of(ty, op);
                assert_eq!(p.items % (vector_elems(ty.size()) * p.split), 0, "{} {}", ty.name(), op.name());
            }
        }
        assert_eq!(s.scan_pipeline_of(ElemType::U32, Op::Add), s.scan_pipeline.at(4));
        for size in [4, 8] {
            let p = s.columns_pipeline.at(size);
            assert_eq!(p.blocked_run(vector_elems(size)) % 2, 0, "runs of whole 32-byte rows");
        }
    }
}

#[test]
fn choices_cover_every_matrix_and_size() {
    for t in tables() {
        let c = &t.choices;
        assert_eq!(c.column_strips.last().map(|s| s.0), Some(u64::MAX), "every width has a strip");
        assert!(c.column_strips.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(c.never_pipelined.iter().all(|&(ty, op)| op.supports(ty)));
        for size in [1, 2, 4, 8, 16] {
            assert!(c.pipelined_min_bytes.at(size) > 0);
        }
    }
}

#[test]
fn every_kernel_has_threads_but_the_traced_scan_whose_launch_decides() {
    let s = &for_arch(DEFAULT_ARCH).shapes;
    for k in Kernel::all() {
        match k.family {
            Family::Trace(_) => assert_eq!(block_threads(s, k), None),
            _ => assert!(block_threads(s, k).is_some_and(|t| t % 32 == 0 && t <= 1024), "{k}"),
        }
    }
}

#[test]
fn status_words_hold_value_and_flag_in_one_single_copy_atomic_word() {
    assert_eq!(status::word_bytes(1), 8);
    assert_eq!(status::word_bytes(4), 8);
    assert_eq!(status::word_bytes(8), 16);
    assert_eq!(status::word_bytes(16), 32, "pairs of f64: two 16-byte words");
    assert_eq!(status::word_bytes(32), 64, "32-byte rows: four");
    assert_eq!(status::temp_bytes(10, 4), status::COUNTER_BYTES as u64 + 80);
    assert_ne!(status::status(1, status::FLAG_AGGREGATE), status::status(2, status::FLAG_AGGREGATE));
}

#[test]
fn shared_memory_windows_are_16_byte_aligned() {
    assert_eq!(smem::window(1, 4), 16);
    assert_eq!(smem::window(4, 4), 16);
    assert_eq!(smem::window(5, 4), 32);
    assert_eq!(smem::window(0, 8), 0);
    let s = &for_arch(DEFAULT_ARCH).shapes;
    for size in [4, 8] {
        let tile_bytes = s.staged.at(size).tile() * size as u32;
        assert_eq!(smem::single_pass_staged(s, size), smem::single_pass(s, size) + tile_bytes);
    }
}

#[test]
fn launch_bounds_go_into_the_named_kernels_only() {
    let ptx = ".version 8.5\n.target sm_90\n.func helper()\n{\n\tret;\n}\n\
               .visible .entry bounded(\n\t.param .u64 p\n)\n{\n\tret;\n}\n\
               .visible .entry free(\n\t.param .u64 p\n)\n{\n\tret;\n}\n";
    let mut out = String::new();
    bounds::insert(ptx, |k| (k == "bounded").then_some((256, 3)), &mut out).unwrap();
    let bounded = &out[out.find(".entry bounded").unwrap()..out.find(".entry free").unwrap()];
    assert!(bounded.contains(")\n.maxntid 256, 1, 1\n.minnctapersm 3\n{\n"), "{out}");
    assert_eq!(out.matches(".maxntid").count(), 1, "only the named kernel, not the function or the other kernel");
    assert_eq!(out.replace(".maxntid 256, 1, 1\n.minnctapersm 3\n", ""), ptx, "nothing else changes");
}

#[test]
fn tile_rows_count_thread_groups_times_items() {
    assert_eq!(Tile::new(256, 27).tile_rows(4), 64 * 27);
    assert_eq!(Tile::new(256, 16).tile(), 4096);
}
