//! The benchmark sweep: medians of CUDA-event timings after a checked warm-up run, against a
//! device-to-device copy of the same bytes timed in the same run, and against CUB (and torch or
//! CuPy) when their CSVs from the same run are given. Rows go to a table, CSV and JSON (and,
//! through `plot`, a PNG).
//!
//! Every configuration is first run once and checked against the CPU reference; a wrong answer
//! is reported as FAIL and never as a speed.

use crate::experiment::time;
use crate::memory::{self, bytes_of, total};
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::reference::verify;
use gpu_scan::{with_elem_type, ElemType, Element, Error, Gpu, Op, Result, ScanOptions, TempStorage, Tuning};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

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

    /// The CUB row matching a scan with `op`: a deterministic scan is matched only by CUB's
    /// deterministic (`run_to_run`) inclusive sum, never by its ordinary scans.
    pub fn cub(&self, op: Op, exclusive: bool, deterministic: bool, ty: &str, n: u64) -> Option<f64> {
        let label = match (op, exclusive, deterministic) {
            (Op::Add, false, true) => "det_inclusive_sum",
            (_, _, true) => return None,
            (Op::Add, false, false) => "inclusive_sum",
            (Op::Add, true, false) => "exclusive_sum",
            (Op::Max, false, false) => "inclusive_max",
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

/// The scan `chosen` describes, with `op`, on elements of `T`.
fn typed<T>(op: Op, chosen: &ScanOptions<()>) -> ScanOptions<T> {
    ScanOptions::new(op)
        .exclusive(chosen.exclusive)
        .algorithm(chosen.algorithm)
        .status_ordering(chosen.status_ordering)
        .backoff_ns(chosen.backoff_ns)
        .deterministic(chosen.deterministic)
        .kernel(chosen.kernel)
}

/// Plans every row of `cfg` with `tuning` before anything runs: an error naming the first row
/// that cannot run, else (host bytes, device bytes) of the most demanding row.
pub fn plan(tuning: &Tuning, cfg: &BenchConfig) -> Result<(u64, u64)> {
    let (mut host, mut device) = (0u64, 0u64);
    for &ty in &cfg.types {
        for &op in &cfg.ops {
            for &n in &cfg.sizes {
                for (name, chosen) in &cfg.scans {
                    let what = format!("the {name} {} {} scan of n = {n}", ty.name(), op.name());
                    let refuse = |e: Error| if e.is_usage() { Error::invalid(format!("{what}: {e}")) } else { e };
                    if !op.supports(ty) {
                        return Err(refuse(gpu_scan::element::unsupported(op, ty)));
                    }
                    let temp = with_elem_type!(ty, T => {
                        let opts = typed::<T>(op, chosen);
                        let request = opts.request(n);
                        gpu_scan::plan::scan::plan(tuning, &request).map_err(refuse)?.temp_bytes()
                    });
                    let bytes = bytes_of(n, ty.size() as u64, &what)?;
                    // The input, the result read back, the CPU reference (two f64 per element
                    // for float sums and products) and the deterministic order's replica.
                    let reference = if op.order_sensitive(ty) { bytes_of(n, 16, &what)? } else { bytes };
                    let replica = if chosen.deterministic { bytes } else { 0 };
                    host = host.max(total(&[bytes, bytes, reference, replica], &what)?);
                    device = device.max(total(&[bytes, bytes, temp.0, temp.1], &what)?);
                }
            }
        }
    }
    Ok((host, device))
}

/// Runs every configuration of `cfg` (planned first with [`plan`]), calling
/// `progress(done, total, label)` before each.
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
            for &op in &cfg.ops {
                let label = |name: &str| format!("{name} {} {} n={n}", ty.name(), op.name());
                progress(done, total, &label("input for"));
                let mut sweep = with_elem_type!(ty, T => Sweep::<T>::new(gpu, cfg, cub, op, n).map(AnySweep::from))?;
                for (name, opts) in &cfg.scans {
                    progress(done, total, &label(name));
                    done += 1;
                    rows.push(sweep.measure(name, opts, &mut temp)?);
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
        let data = memory::generate::<T>(op, cfg.seed, crate::args::host_len(n, "a size")?)?;
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
        let opts = typed::<T>(self.op, chosen);
        gpu.check_memory("benchmark temporary storage", gpu.scan_temp_bytes::<T>(n, &opts)?)?;
        stream.memset_zeros(&mut self.d_out)?;
        gpu.scan(&stream, &self.d_in, &mut self.d_out, &opts, temp)?;
        stream.synchronize()?;
        let got = gpu.download(&stream, &self.d_out)?;
        let (verdict, replicated) = verify::verify_run(gpu.tuning(), &opts, &self.data, &got)?;
        let gbps = |ms: f64| 2.0 * bytes as f64 / (ms * 1e-3) / 1e9;
        let ty = T::TYPE.name().to_string();
        let cub_ms = self.cub.and_then(|c| c.cub(self.op, opts.exclusive, opts.deterministic, &ty, n));
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

/// The columns of a `bench.csv`, in order.
pub const COLUMNS: [&str; 14] = [
    "algorithm",
    "type",
    "op",
    "n",
    "check",
    "ms",
    "min_ms",
    "gbps",
    "copy_ms",
    "copy_gbps",
    "of_copy",
    "cub_ms",
    "vs_cub",
    "max_rel_error",
];

/// Reads rows back from a `bench.csv` (to plot or tabulate them again without a GPU): every
/// column `bench` writes, and at least one row.
pub fn read_csv(path: &Path) -> Result<Vec<Row>> {
    let bad = |e: &dyn std::fmt::Display| Error::invalid(format!("{}: {e}", path.display()));
    if path.is_dir() {
        return Err(bad(&"is a folder; give a bench.csv"));
    }
    let mut reader = csv::Reader::from_path(path).map_err(|e| bad(&e))?;
    let headers = reader.headers().map_err(|e| bad(&e))?.clone();
    if let Some(missing) = COLUMNS.iter().find(|c| !headers.iter().any(|h| h == **c)) {
        return Err(bad(&format!("not a bench.csv: no column `{missing}` (bench writes {})", COLUMNS.join(","))));
    }
    let rows: Vec<Row> = reader.deserialize().map(|r| r.map_err(|e| bad(&e))).collect::<Result<_>>()?;
    if rows.is_empty() {
        return Err(bad(&"holds no rows"));
    }
    Ok(rows)
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

/// Writes the rows to the CSV at `path` (as [`crate::io::write_file`] does).
pub fn write_csv(path: &Path, rows: &[Row], force: bool) -> Result<()> {
    crate::io::write_file(path, force, |tmp| {
        let io = |e: &dyn std::fmt::Display| Error::invalid(format!("cannot write {}: {e}", path.display()));
        let mut w = csv::Writer::from_path(tmp).map_err(|e| io(&e))?;
        for r in rows {
            w.serialize(r).map_err(|e| io(&e))?;
        }
        w.flush().map_err(|e| io(&e))
    })
}

/// Writes the rows to the JSON file at `path` (as [`crate::io::write_file`] does).
pub fn write_json(path: &Path, rows: &[Row], force: bool) -> Result<()> {
    let json = serde_json::to_string_pretty(rows)
        .map_err(|e| Error::invalid(format!("cannot write {}: {e}", path.display())))?;
    crate::io::write_text(path, force, &json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_rows_are_compared_with_cubs_deterministic_scan_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cub.csv");
        let csv =
            "op,type,n,ms\ninclusive_sum,f32,1024,0.5\nexclusive_sum,f32,1024,0.6\ndet_inclusive_sum,f32,1024,0.7\n";
        std::fs::write(&path, csv).unwrap();
        let b = Baseline::read(&path).unwrap();
        assert_eq!(b.cub(Op::Add, false, false, "f32", 1024), Some(0.5));
        assert_eq!(b.cub(Op::Add, false, true, "f32", 1024), Some(0.7));
        assert_eq!(b.cub(Op::Add, true, true, "f32", 1024), None);
        assert_eq!(b.cub(Op::Add, false, true, "u32", 1024), None);
    }
}
