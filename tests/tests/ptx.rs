//! The PTX module embedded in the library holds exactly the kernels the host names
//! (`scan_abi::Kernel::all`), and, with ptxas, assembles for sm_90 within the tuning's launch
//! bounds without local memory, except where the tuning accepts some. Both check the module the
//! binaries carry, so they run wherever the test executable does.

use gpu_scan::ptx::{bounds, embedded, with_bounds, PtxModule};
use scan_abi::bounds::{allowed_spill_bytes, expand};
use scan_abi::tuning::{for_arch, DEFAULT_ARCH};
use scan_abi::Kernel;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;
use workspace_tests::{needs, test};

fn main() -> ExitCode {
    workspace_tests::main(vec![
        test("ptx_holds_exactly_the_kernels_the_host_names", ptx_holds_exactly_the_named_kernels),
        needs(
            "ptxas_assembles_every_kernel_within_its_bounds_without_unmeasured_local_memory",
            missing_ptxas(),
            ptxas_assembles_every_kernel,
        ),
    ])
}

/// Why there is no ptxas, if there is none. `PTXAS`, when set, must name it (the test then fails
/// if it does not).
fn missing_ptxas() -> Option<String> {
    if std::env::var_os("PTXAS").is_some() || ptx_builder::find_ptxas().is_some() {
        return None;
    }
    Some("no ptxas (set PTXAS or put it on PATH; PyPI's nvidia-cuda-nvcc has one)".into())
}

fn ptx_holds_exactly_the_named_kernels() {
    let text = embedded();
    let module = PtxModule::parse(&text);
    let have: BTreeSet<String> = module.kernel_names().map(String::from).collect();
    let named: BTreeSet<String> = Kernel::all().map(|k| k.to_string()).collect();
    let missing: Vec<&String> = named.difference(&have).collect();
    let unnamed: Vec<&String> = have.difference(&named).collect();
    assert!(missing.is_empty(), "kernels the host names but the PTX lacks: {missing:?}");
    assert!(unnamed.is_empty(), "kernels in the PTX that no family names: {unnamed:?}");
    assert!(text.contains(".target sm_90"));
}

fn ptxas_assembles_every_kernel() {
    let ptxas = match std::env::var_os("PTXAS") {
        Some(p) => PathBuf::from(p),
        None => ptx_builder::find_ptxas().expect("checked by missing_ptxas"),
    };
    assert!(ptxas.is_file(), "PTXAS={} is not a file", ptxas.display());
    let tuning = for_arch(DEFAULT_ARCH);
    // The module as the host loads it: with the tuning's launch bounds.
    let dir = tempfile::tempdir().unwrap();
    let bounded = dir.path().join("kernels.bounded.ptx");
    std::fs::write(&bounded, with_bounds(&embedded(), &bounds(tuning))).unwrap();
    let kernels = ptx_builder::ptxas_report(&ptxas, &bounded, "sm_90").expect("ptxas accepts the module");
    assert_eq!(kernels.len(), Kernel::all().count(), "ptxas compiled every kernel");
    let by_name: std::collections::HashMap<String, Kernel> = Kernel::all().map(|k| (k.to_string(), k)).collect();
    // Each bounded kernel, and each left free that must still fit, fits its blocks per SM
    // (registers in units of 8).
    let fits: Vec<(String, u32, u32)> = expand(tuning.launch_bounds, &tuning.shapes)
        .chain(expand(tuning.unbounded_fits, &tuning.shapes))
        .map(|(k, threads, blocks)| (k.to_string(), threads, blocks))
        .collect();
    for k in &kernels {
        if let Some((_, threads, blocks)) = fits.iter().find(|f| f.0 == k.name) {
            assert!(
                k.registers.div_ceil(8) * 8 * threads * blocks <= 65536,
                "{} uses {} registers, too many for {blocks} blocks of {threads} threads",
                k.name,
                k.registers
            );
        }
    }
    let local: Vec<String> = kernels
        .iter()
        .filter(|k| {
            k.stack_bytes.max(k.spill_store_bytes).max(k.spill_load_bytes)
                > allowed_spill_bytes(tuning, by_name[&k.name])
        })
        .map(|k| format!("{} (stack {}, spills {}/{})", k.name, k.stack_bytes, k.spill_store_bytes, k.spill_load_bytes))
        .collect();
    assert!(local.is_empty(), "kernels using more local memory than the tuning's spills allow: {local:?}");
}
