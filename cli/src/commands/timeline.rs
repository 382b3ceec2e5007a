//! `timeline`: the `u32` add single-pass scan with every tile's timestamps, summarized per phase
//! (and, optionally, as a CSV and a PNG of 600 tiles).

use crate::args::{host_len, parse_count, Global, Runs};
use crate::experiment::{self, first_difference, Check, Experiment};
use crate::plot;
use clap::Args;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::timeline::{summarize, TileRecord};
use gpu_scan::{input, reference, Error, Gpu, Op, Result, TempStorage};
use scan_abi::timeline::TIMED;
use std::path::PathBuf;

#[derive(Args)]
pub struct TimelineArgs {
    /// Number of u32 elements (2^28, 1e8, ...).
    #[arg(value_parser = parse_count)]
    n: u64,
    /// Also write every tile's record (nanoseconds from the first tile's start) to this CSV.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Also draw 600 tiles from the middle of the array, phase by phase, into this PNG.
    #[arg(long)]
    png: Option<PathBuf>,
    #[command(flatten)]
    runs: Runs,
}

pub fn run(args: &TimelineArgs, global: &Global) -> Result<bool> {
    let n = host_len(args.n, "N")?;
    global.resolve()?;
    let data: Vec<u32> = input::generate(Op::Add, args.runs.seed, n);
    let mut exp = Timeline { data, buffers: None, temp: TempStorage::new(), records: Vec::new() };
    let passed = experiment::run(global, args.runs.iters, &mut exp)?;
    if let Some(path) = &args.csv {
        let first = exp.records.iter().map(|r| r.times[0]).min().unwrap_or(0);
        let mut text = String::from("tile,");
        text += &TIMED.map(|e| format!("{e:?}").to_lowercase() + "_ns").join(",");
        text += ",polls,sm\n";
        for (i, r) in exp.records.iter().enumerate() {
            let times: Vec<String> = r.times.iter().map(|&t| (t as i64 - first as i64).to_string()).collect();
            text += &format!("{i},{},{},{}\n", times.join(","), r.polls, r.sm);
        }
        std::fs::write(path, text).map_err(|e| Error::invalid(format!("{}: {e}", path.display())))?;
        println!("wrote {}", path.display());
    }
    if let Some(path) = &args.png {
        const DRAWN: usize = 600;
        plot::timeline(path, &exp.records, (exp.records.len() / 2).saturating_sub(DRAWN / 2), DRAWN)?;
        println!("wrote {}", path.display());
    }
    Ok(passed)
}

struct Timeline {
    data: Vec<u32>,
    buffers: Option<(CudaSlice<u32>, CudaSlice<u32>)>,
    temp: TempStorage,
    records: Vec<TileRecord>,
}

impl Experiment for Timeline {
    fn title(&self) -> String {
        format!("timeline: n={} u32 add inclusive, single-pass with per-tile timestamps", self.data.len())
    }

    fn device_bytes(&self) -> u64 {
        let n = self.data.len() as u64;
        8 * n + n / 128
    }

    fn traffic(&self) -> (u64, u64) {
        let bytes = 4 * self.data.len() as u64;
        (2 * bytes, bytes)
    }

    fn prepare(&mut self, gpu: &Gpu) -> Result<()> {
        let stream = gpu.stream().clone();
        self.buffers =
            Some((gpu.upload(&stream, "input", &self.data)?, gpu.alloc_zeros(&stream, "output", self.data.len())?));
        Ok(())
    }

    fn run(&mut self, gpu: &Gpu) -> Result<()> {
        let (d_in, d_out) = self.buffers.as_mut().expect("prepared");
        self.records = gpu.scan_timeline(gpu.stream(), d_in, d_out, &mut self.temp)?;
        Ok(())
    }

    fn check(&mut self, gpu: &Gpu) -> Result<Check> {
        let (_, d_out) = self.buffers.as_ref().expect("prepared");
        let want = reference::scan(Op::Add, &self.data, false, None)?;
        let got = gpu.download(gpu.stream(), d_out)?;
        let mut check = Check::new(format!("{} elements", self.data.len()), first_difference(&got, &want));
        let s = summarize(&self.records);
        check.notes.push(format!(
            "{} tiles in {:.1} us; on average {:.0} tiles between their start and their stores; look-back {:.2} rounds of polls per tile on average, {} at most",
            s.tiles, s.span_ns as f64 / 1e3, s.mean_in_flight, s.mean_polls, s.most_polls
        ));
        check
            .notes
            .push(format!("{:<16} {:>9} {:>9} {:>9} {:>9}   (ns per tile)", "phase", "median", "p90", "p99", "max"));
        for (name, [p50, p90, p99, max]) in &s.phases {
            check.notes.push(format!("{name:<16} {p50:>9} {p90:>9} {p99:>9} {max:>9}"));
        }
        check.notes.push("what the look-backs waited on (replayed from the records):".into());
        let c = &s.chain;
        for (name, [p50, p90, p99, max], unit) in [
            (
                "predecessors",
                c.waited,
                "ns after the tile's own aggregate until a prefix and every aggregate after it were out",
            ),
            ("polls", c.after_ready, "ns from then until the look-back had its prefix"),
            ("depth", c.depth, "tiles back to that prefix"),
        ] {
            check.notes.push(format!("{name:<16} {p50:>9} {p90:>9} {p99:>9} {max:>9}   ({unit})"));
        }
        Ok(check)
    }
}
