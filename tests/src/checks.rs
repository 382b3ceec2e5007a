//! Checking scans on the GPU against the CPU reference, case by case, and collecting failures.

use crate::exact;
use gpu_scan::cudarc::driver::CudaStream;
use gpu_scan::reference::{self, verify};
use gpu_scan::{input, Algorithm, Element, Gpu, Op, ScanKernel, ScanOptions, TempStorage};
use std::sync::Arc;

/// One scan configuration to check.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    pub op: Op,
    pub algorithm: Algorithm,
    pub exclusive: bool,
    pub in_place: bool,
    pub with_init: bool,
    pub n: usize,
    pub seed: u64,
    pub kernel: ScanKernel,
    pub deterministic: bool,
}

impl Case {
    pub fn new(op: Op, algorithm: Algorithm, n: usize) -> Case {
        Case {
            op,
            algorithm,
            exclusive: false,
            in_place: false,
            with_init: false,
            n,
            seed: 0x5eed ^ n as u64,
            kernel: ScanKernel::Auto,
            deterministic: false,
        }
    }
}

/// Runs `case` on the GPU's default stream with `input` (generated when `None`) and returns a
/// description of the failure, if any.
pub fn check<T: Element>(gpu: &Gpu, temp: &mut TempStorage, case: Case, data: Option<&[T]>) -> Option<String> {
    check_on(gpu, gpu.stream(), temp, case, data)
}

/// [`check`] on `stream`.
pub fn check_on<T: Element>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    temp: &mut TempStorage,
    case: Case,
    data: Option<&[T]>,
) -> Option<String> {
    let generated;
    let data = match data {
        Some(d) => d,
        None => {
            generated = input::generate::<T>(case.op, case.seed, case.n);
            &generated
        }
    };
    let init = case.with_init.then(|| input::value::<T>(case.op, case.seed ^ 0xabc, u64::MAX));
    let what = format!("{} {} {:?}", T::TYPE.name(), case.op.name(), case);
    match run(gpu, stream, temp, case, data, init) {
        Err(e) => Some(format!("{what}: error: {e}")),
        Ok(got) => match verify::verify(case.op, case.algorithm, data, case.exclusive, init, &got) {
            Err(e) => Some(format!("{what}: verify error: {e}")),
            Ok(v) if v.passed() => None,
            Ok(v) => {
                let f = v.first.expect("failed verdicts name a mismatch");
                Some(format!("{what}: {} wrong, first at {}: expected {}, got {}", v.wrong, f.index, f.expected, f.got))
            }
        },
    }
}

/// Runs `case` on integer-valued float inputs ([`exact::floats`], an initial value from
/// [`exact::init`]), exact in any combine order, and compares the result with the sequential
/// scan bit for bit: a description of the failure, if any.
pub fn check_exact<T: Element>(gpu: &Gpu, temp: &mut TempStorage, case: Case) -> Option<String> {
    let data = exact::floats::<T>(case.op, case.seed, case.n);
    check_exact_data(gpu, temp, case, &data)
}

/// [`check_exact`] of the given `data` (exact in any order, as [`exact::floats`] makes it).
pub fn check_exact_data<T: Element>(gpu: &Gpu, temp: &mut TempStorage, case: Case, data: &[T]) -> Option<String> {
    let init = case.with_init.then(|| exact::init::<T>(case.op, case.seed));
    let what = format!("{} {} integer-valued {:?} init={init:?}", T::TYPE.name(), case.op.name(), case);
    let want = match reference::scan(case.op, data, case.exclusive, init) {
        Ok(w) => w,
        Err(e) => return Some(format!("{what}: reference: {e}")),
    };
    match run(gpu, gpu.stream(), temp, case, data, init) {
        Err(e) => Some(format!("{what}: error: {e}")),
        Ok(got) => exact::first_difference(&got, &want).map(|i| {
            let show = |v: &[T]| v.get(i).map_or("nothing".to_string(), |x| x.to_string());
            format!("{what}: first difference at {i}: expected {}, got {}", show(&want), show(&got))
        }),
    }
}

/// The result of `case` on `data` from `init` on the GPU.
fn run<T: Element>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    temp: &mut TempStorage,
    case: Case,
    data: &[T],
    init: Option<T>,
) -> gpu_scan::Result<Vec<T>> {
    let opts = ScanOptions::new(case.op)
        .exclusive(case.exclusive)
        .init(init)
        .algorithm(case.algorithm)
        .kernel(case.kernel)
        .deterministic(case.deterministic);
    let d_in = gpu.upload(stream, "input", data)?;
    if case.in_place {
        let mut d = d_in;
        gpu.scan_in_place(stream, &mut d, &opts, temp)?;
        stream.synchronize()?;
        gpu.download(stream, &d)
    } else {
        // Poison the output so unwritten elements cannot pass by accident.
        let poison = vec![input::value::<T>(Op::Xor, 99, 0); data.len()];
        let mut d_out = gpu.upload(stream, "output", &poison)?;
        gpu.scan(stream, &d_in, &mut d_out, &opts, temp)?;
        stream.synchronize()?;
        gpu.download(stream, &d_out)
    }
}

/// Panics listing every failure.
pub fn assert_none_failed(failures: &[String]) {
    if !failures.is_empty() {
        let shown: Vec<&str> = failures.iter().take(40).map(String::as_str).collect();
        panic!("{} failing cases:\n{}", failures.len(), shown.join("\n"));
    }
}
