//! The benchmark sweep: medians of CUDA-event timings after a checked warm-up run, against a
//! device-to-device copy of the same bytes timed in the same run, and against CUB (and torch or
//! CuPy) when their CSVs from the same run are given. Rows go to a table, CSV and JSON (and,
//! through `plot`, a PNG).
//!
//! Every configuration is first run once and checked against the CPU reference; a wrong answer
//! is reported as FAIL and never as a speed.

use crate::experiment::time;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::reference::verify;
use gpu_scan::{input, with_elem_type, ElemType, Element, Error, Gpu, Op, Result, ScanOptions, TempStorage};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    pub types: Vec<ElemType>,
    pub ops: Vec<Op>,
    /// (name, options) pairs; the name labels rows and plot lines. The options' operator is
    /// replaced by each of `ops`.
    pub scans: Vec<(String, ScanOptions<()>)>,
    pub sizes: Vec<u64>,
    pub iters: u32,
    pub seed: u64,
}

/// One measured configuration.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    pub algorithm: String,
    #[serde(rename = "type")]
    pub ty: String,
    pub op: String,
    pub n: u64,
    /// "PASS", or "FAIL: ..." (then no timings are reported).
    pub check: String,
    pub ms: Option<f64>,
    pub min_ms: Option<f64>,
    pub gbps: Option<f64>,
    pub copy_ms: f64,
    pub copy_gbps: f64,
    /// Copy time over scan time: 1.0 means the scan runs at copy speed.
    pub of_copy: Option<f64>,
    pub cub_ms: Option<f64>,
    /// CUB time over ours: above 1.0 we are faster.
    pub vs_cub: Option<f64>,
    pub max_rel_error: Option<f64>,
}

/// Reference timings from another library's CSV (ms by (label, type, n)).
#[derive(Clone, Debug, Default)]
pub struct Baseline {
    ms: HashMap<(String, String, u64), f64>,
}

impl Baseline {
    /// Reads `cub_baseline.cu`'s CSV (`op,type,n,ms,...`, `#` comments) or `peers.py`'s
    /// (`lib,type,n,ms,...`): the first column becomes the label.
    pub fn read(path: &Path) -> Result<Baseline> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::invalid(format!("cannot read baseline {}: {e}", path.display())))?;
        let body: String = text.lines().filter(|l| !l.starts_with('#')).map(|l| format!("{l}\n")).collect();
        let mut reader = csv::Reader::from_reader(body.as_bytes());
        let mut ms = HashMap::new();
        for rec in reader.records() {
            let rec = rec.map_err(|e| Error::invalid(format!("{}: {e}", path.display())))?;
            let (Some(label), Some(ty), Some(n), Some(t)) = (rec.get(0), rec.get(1), rec.get(2), rec.get(3)) else {
                continue;
            };
            if let (Ok(n), Ok(t)) = (n.parse::<u64>(), t.parse::<f64>()) {
                ms.insert((label.to_string(), ty.to_string(), n), t);
            }
        }
        if ms.is_empty() {
            return Err(Error::invalid(format!("{} holds no timing rows", path.display())));
        }
        Ok(Baseline { ms })
    }

    pub fn get(&self, label: &str, ty: &str, n: u64) -> Option<f64> {
        self.ms.get(&(label.to_string(), ty.to_string(), n)).copied()
    }

    /// The CUB row matching a scan with `op`.
    pub fn cub(&self, op: Op, exclusive: bool, ty: &str, n: u64) -> Option<f64> {
        let label = match (op, exclusive) {
            (Op::Add, false) => "inclusive_sum",
            (Op::Add, true) => "exclusive_sum",
            (Op::Max, false) => "inclusive_max",
            _ => return None,
        };
        self.get(label, ty, n)
    }

    /// Labels present (e.g. "torch", "cupy").
    pub fn labels(&self) -> Vec<String> {
        let mut v: Vec<String> = self.ms.keys().map(|k| k.0.clone()).collect();
        v.sort();
        v.dedup();
        v
    }
}

/// Runs every configuration of `cfg`, calling `progress(done, total, label)` before each.
pub fn run(
    gpu: &Gpu,
    cfg: &BenchConfig,
    cub: Option<&Baseline>,
    mut progress: impl FnMut(usize, usize, &str),
) -> Result<Vec<Row>> {
    let total = cfg.types.len() * cfg.ops.len() * cfg.sizes.len() * cfg.scans.len();
    let mut done = 0;
    let mut rows = Vec::new();
    let mut temp = TempStorage::new();
    for &ty in &cfg.types {
        for &n in &cfg.sizes {
            for &op in cfg.ops.iter().filter(|o| o.supports(ty)) {
                let label = |name: &str| format!("{name} {} {} n={n}", ty.name(), op.name());
                progress(done, total, &label("input for"));
                let sweep = with_elem_type!(ty, T => Sweep::<T>::new(gpu, cfg, cub, op, n).map(AnySweep::from));
                let mut sweep = match sweep {
                    Ok(s) => s,
                    Err(Error::OutOfMemory { .. }) => {
                        done += cfg.scans.len();
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                for (name, opts) in &cfg.scans {
                    progress(done, total, &label(name));
                    done += 1;
                    match sweep.measure(name, opts, &mut temp) {
                        Ok(row) => rows.push(row),
                        Err(Error::OutOfMemory { .. }) | Err(Error::InvalidArgument(_)) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }
    progress(total, total, "done");
    Ok(rows)
}

/// One input on the device, shared by every algorithm measured on it.
struct Sweep<'a, T> {
    gpu: &'a Gpu,
    cfg: &'a BenchConfig,
    cub: Option<&'a Baseline>,
    op: Op,
    data: Vec<T>,
    d_in: CudaSlice<T>,
    d_out: CudaSlice<T>,
    copy_ms: f64,
}

/// A [`Sweep`] of any element type.
macro_rules! any_sweep {
    ($($v:ident: $t:ty),*) => {
        enum AnySweep<'a> { $($v(Sweep<'a, $t>)),* }
        $(impl<'a> From<Sweep<'a, $t>> for AnySweep<'a> {
            fn from(s: Sweep<'a, $t>) -> Self { AnySweep::$v(s) }
        })*
        impl AnySweep<'_> {
            fn measure(&mut self, name: &str, opts: &ScanOptions<()>, temp: &mut TempStorage) -> Result<Row> {
                match self { $(AnySweep::$v(s) => s.measure(name, opts, temp)),* }
            }
        }
    };
}
any_sweep!(U8: u8, U16: u16, U32: u32, I32: i32, U64: u64, I64: i64, F32: f32, F64: f64);

impl<'a, T: Element> Sweep<'a, T> {
    fn new(gpu: &'a Gpu, cfg: &'a BenchConfig, cub: Option<&'a Baseline>, op: Op, n: u64) -> Result<Self> {
        let stream = gpu.stream().clone();
        let bytes = n * T::TYPE.size() as u64;
        gpu.check_memory("benchmark buffers", 2 * bytes)?;
        let data = input::generate::<T>(op, cfg.seed, n as usize);
        let d_in = gpu.upload(&stream, "benchmark input", &data)?;
        let mut d_out: CudaSlice<T> = gpu.alloc_zeros(&stream, "benchmark output", n as usize)?;
        let (copy_ms, _) = time(gpu, cfg.iters, || Ok(()), || Ok(stream.memcpy_dtod(&d_in, &mut d_out)?))?;
        Ok(Sweep { gpu, cfg, cub, op, data, d_in, d_out, copy_ms })
    }

    fn measure(&mut self, name: &str, chosen: &ScanOptions<()>, temp: &mut TempStorage) -> Result<Row> {
        let gpu = self.gpu;
        let n = self.data.len() as u64;
        let stream = gpu.stream().clone();
        let bytes = n * T::TYPE.size() as u64;
        let opts = ScanOptions::<T>::new(self.op)
            .exclusive(chosen.exclusive)
            .algorithm(chosen.algorithm)
            .status_ordering(chosen.status_ordering)
            .backoff_ns(chosen.backoff_ns)
            .deterministic(chosen.deterministic)
            .kernel(chosen.kernel);
        gpu.check_memory("benchmark temporary storage", gpu.scan_temp_bytes::<T>(n, &opts)?)?;
        stream.memset_zeros(&mut self.d_out)?;
        gpu.scan(&stream, &self.d_in, &mut self.d_out, &opts, temp)?;
        stream.synchronize()?;
        let got = gpu.download(&stream, &self.d_out)?;
        let (verdict, replicated) = verify::verify_run(&opts, &self.data, &got)?;
        let gbps = |ms: f64| 2.0 * bytes as f64 / (ms * 1e-3) / 1e9;
        let ty = T::TYPE.name().to_string();
        let cub_ms = self.cub.and_then(|c| c.cub(self.op, opts.exclusive, &ty, n));
        let mut row = Row {
            algorithm: if replicated { format!("{name}+det") } else { name.to_string() },
            ty,
            op: self.op.name().to_string(),
            n,
            check: "PASS".into(),
            ms: None,
            min_ms: None,
            gbps: None,
            copy_ms: self.copy_ms,
            copy_gbps: gbps(self.copy_ms),
            of_copy: None,
            cub_ms,
            vs_cub: None,
            max_rel_error: verdict.max_rel_error,
        };
        if !verdict.passed() {
            let f = verdict.first.expect("failed verdicts name a mismatch");
            row.check =
                format!("FAIL: {} wrong, first at {} (expected {}, got {})", verdict.wrong, f.index, f.expected, f.got);
            return Ok(row);
        }
        let (d_in, d_out) = (&self.d_in, &mut self.d_out);
        let (ms, min_ms) = time(gpu, self.cfg.iters, || Ok(()), || gpu.scan(&stream, d_in, d_out, &opts, temp))?;
        row.ms = Some(ms);
        row.min_ms = Some(min_ms);
        row.gbps = Some(gbps(ms));
        row.of_copy = Some(self.copy_ms / ms);
        row.vs_cub = cub_ms.map(|c| c / ms);
        Ok(row)
    }
}

/// Reads rows back from a `bench.csv` (to plot or tabulate them again without a GPU).
pub fn read_csv(path: &Path) -> Result<Vec<Row>> {
    let bad = |e: &dyn std::fmt::Display| Error::invalid(format!("{}: {e}", path.display()));
    let mut reader = csv::Reader::from_path(path).map_err(|e| bad(&e))?;
    reader.deserialize().map(|r| r.map_err(|e| bad(&e))).collect()
}

/// A fixed-width table of the rows.
pub fn table(rows: &[Row]) -> String {
    let mut s = format!(
        "{:<28} {:<4} {:<4} {:>11} {:>10} {:>9} {:>8} {:>10} {:>8}  check\n",
        "algorithm", "type", "op", "n", "ms", "GB/s", "of copy", "CUB ms", "vs CUB"
    );
    let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map(f).unwrap_or_else(|| "-".into());
    for r in rows {
        s += &format!(
            "{:<28} {:<4} {:<4} {:>11} {:>10} {:>9} {:>8} {:>10} {:>8}  {}\n",
            r.algorithm,
            r.ty,
            r.op,
            r.n,
            opt(r.ms, &|v| format!("{v:.4}")),
            opt(r.gbps, &|v| format!("{v:.0}")),
            opt(r.of_copy, &|v| format!("{:.1}%", 100.0 * v)),
            opt(r.cub_ms, &|v| format!("{v:.4}")),
            opt(r.vs_cub, &|v| format!("{v:.2}x")),
            r.check
        );
    }
    s
}

/// Writes `bench.csv` and `bench.json` into `dir`; returns their paths.
pub fn write(dir: &Path, rows: &[Row]) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| Error::invalid(format!("cannot create {}: {e}", dir.display())))?;
    let io = |p: &Path, e: &dyn std::fmt::Display| Error::invalid(format!("cannot write {}: {e}", p.display()));
    let csv_path = dir.join("bench.csv");
    let mut w = csv::Writer::from_path(&csv_path).map_err(|e| io(&csv_path, &e))?;
    for r in rows {
        w.serialize(r).map_err(|e| io(&csv_path, &e))?;
    }
    w.flush().map_err(|e| io(&csv_path, &e))?;
    let json_path = dir.join("bench.json");
    let json = serde_json::to_string_pretty(rows).map_err(|e| io(&json_path, &e))?;
    std::fs::write(&json_path, json).map_err(|e| io(&json_path, &e))?;
    Ok(vec![csv_path, json_path])
}
