//! The kernels build into one PTX module that holds every kernel the host can ask for, and, when
//! ptxas is available (PTXAS or PATH), assembles for sm_90 without local memory (no spills, no
//! stack frames) except the few kernels `scan_abi::tuning::MEASURED_SPILLS` names.

mod common;

use gpu_scan::{BlockAlgo, ElemType, Op};
use std::path::PathBuf;

/// Whether the Rust toolchain manager is here (it is not on GPU machines that only run binaries).
fn have_rustup() -> bool {
    std::process::Command::new("rustup").arg("--version").output().is_ok_and(|o| o.status.success())
}

fn built() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let opts =
        ptx_builder::Options { arch: ptx_builder::DEFAULT_ARCH.into(), ..ptx_builder::Options::for_workspace(&root) };
    ptx_builder::build(&opts).expect("the PTX build").ptx
}

/// Every kernel name the host's drivers can request.
fn expected_kernels() -> Vec<String> {
    let mut names = Vec::new();
    for ty in ElemType::ALL {
        for op in Op::ALL.into_iter().filter(|o| o.supports(ty)) {
            let suffix = format!("{}_{}", ty.name(), op.name());
            names.push(format!("single_pass_{suffix}"));
            if op.order_sensitive(ty) {
                names.push(format!("single_pass_det_{suffix}"));
            }
            if gpu_scan::apps::segmented::OPS.contains(&op) && matches!(ty.size(), 4 | 8) {
                names.push(format!("segmented_{suffix}"));
                names.push(format!("batched_columns_{suffix}"));
                names.push(format!("batched_column_vectors_{suffix}"));
                names.push(format!("batched_rows_{suffix}"));
                names.push(format!("batched_short_rows_{suffix}"));
                names.push(format!("batched_long_rows_{suffix}"));
                use scan_abi::names::*;
                for kernels in [
                    BATCHED_COLUMNS_VEC,
                    BATCHED_COLUMNS_VEC_WINDOW4,
                    BATCHED_COLUMNS_BULK,
                    BATCHED_COLUMNS_PIPELINED,
                    BATCHED_COLUMNS_PIPELINED16,
                    BATCHED_ROWS_PIPELINED,
                ] {
                    names.push(format!("{kernels}_{suffix}"));
                }
            }
            if matches!(ty.size(), 4 | 8) {
                names.push(format!("single_pass_staged_{suffix}"));
            }
            names.push(format!("naive_{suffix}"));
            names.push(format!("hier_reduce_{suffix}"));
            names.push(format!("hier_add_{suffix}"));
            for b in BlockAlgo::ALL {
                names.push(format!("hier_{}_{suffix}", b.token()));
                if b.traceable() {
                    names.push(format!("trace_{}_{suffix}", b.token()));
                }
            }
        }
    }
    for ty in gpu_scan::apps::sort::KEY_TYPES {
        names.push(format!("partition_count_{}", ty.name()));
        names.push(format!("partition_scatter_{}", ty.name()));
        names.push(format!("sort_counts_{}", ty.name()));
        names.push(format!("sort_pass_{}", ty.name()));
        names.push(format!("sort_pass_values_{}", ty.name()));
    }
    for ty in ElemType::ALL {
        names.push(format!("compact_{}", ty.name()));
    }
    for ty in ["u32", "i32", "u64", "i64", "f32", "f64"] {
        names.push(format!("compact_pipe_{ty}"));
    }
    names.extend(
        [
            "recurrence_f32",
            "recurrence_f64",
            "recurrence_staged_f32",
            "recurrence_staged_f64",
            "single_pass_timeline_u32_add",
            "segmented_heads_u64",
            "csr_count_u32",
            "csr_heads_u32",
        ]
        .map(String::from),
    );
    names
}

#[test]
fn ptx_holds_every_kernel_the_host_requests() {
    if !have_rustup() {
        common::skip("PTX build test: no rustup here (this machine only runs prebuilt binaries)");
        return;
    }
    let text = std::fs::read_to_string(built()).unwrap();
    let module = gpu_scan::ptx::PtxModule::parse(&text);
    let have: std::collections::HashSet<&str> = module.kernel_names().collect();
    let missing: Vec<String> = expected_kernels().into_iter().filter(|k| !have.contains(k.as_str())).collect();
    assert!(missing.is_empty(), "missing kernels: {missing:?}");
    assert!(text.contains(".target sm_90"));
    // A renamed kernel must not silently lose its launch bounds, or its register check.
    let tables = scan_abi::tuning::BOUNDED.iter().flat_map(|(table, _)| table.iter());
    let tables = tables.chain(scan_abi::tuning::UNBOUNDED_SORT);
    let stale: Vec<&str> = tables.map(|(name, _, _)| *name).filter(|name| !have.contains(name)).collect();
    assert!(stale.is_empty(), "launch bounds or fits for kernels that do not exist: {stale:?}");
}

#[test]
fn ptxas_assembles_every_kernel_without_unmeasured_local_memory() {
    if !have_rustup() {
        common::skip("ptxas check: no rustup here to build the PTX (this machine only runs prebuilt binaries)");
        return;
    }
    let Some(ptxas) = ptx_builder::find_ptxas() else {
        if std::env::var("GPU_SCAN_REQUIRE_PTXAS").as_deref() == Ok("1") {
            panic!("GPU_SCAN_REQUIRE_PTXAS=1 but no ptxas (set PTXAS or put it on PATH)");
        }
        common::skip("ptxas check: no ptxas found (set PTXAS, or `pip install nvidia-cuda-nvcc`)");
        return;
    };
    // The module as the host embeds it: with the tuning table's launch bounds.
    let bounds = |k: &str| scan_abi::tuning::launch_bounds(90, k);
    let bounded = ptx_builder::write_with_launch_bounds(&built(), bounds).expect("writing the bounded module");
    let kernels = ptx_builder::ptxas_report(&ptxas, &bounded, "sm_90").expect("ptxas accepts the module");
    // The bounds took effect: each such kernel fits its blocks per SM (registers in units of 8),
    // as do the kernels left free because ptxas does better without bounds.
    for k in kernels.iter() {
        let fit = bounds(&k.name).or_else(|| scan_abi::tuning::unbounded_fit(90, &k.name));
        if let Some((threads, blocks)) = fit {
            assert!(
                k.registers.div_ceil(8) * 8 * threads * blocks <= 65536,
                "{} uses {} registers, too many for {blocks} blocks of {threads} threads",
                k.name,
                k.registers
            );
        }
    }
    assert!(kernels.len() >= expected_kernels().len(), "ptxas compiled only {} kernels", kernels.len());
    // Local memory only where the tuning table accepts it, and no more of it than it states.
    let allowed =
        |name: &str| scan_abi::tuning::MEASURED_SPILLS.iter().find(|(k, _)| *k == name).map_or(0, |&(_, bytes)| bytes);
    let local: Vec<_> = kernels
        .iter()
        .filter(|k| k.stack_bytes.max(k.spill_store_bytes).max(k.spill_load_bytes) > allowed(&k.name))
        .map(|k| format!("{} (stack {}, spills {}/{})", k.name, k.stack_bytes, k.spill_store_bytes, k.spill_load_bytes))
        .collect();
    assert!(local.is_empty(), "kernels using more local memory than tuning::MEASURED_SPILLS allows: {local:?}");
}
