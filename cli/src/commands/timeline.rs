//! `timeline`: the `u32` add single-pass scan with every tile's timestamps, summarized per phase
//! (and, optionally, as a CSV and a PNG of 600 tiles).

use crate::args::{host_len, positive, Global, Runs};
use crate::experiment::{self, first_difference, Check, Experiment, Needs};
use crate::memory::{self, bytes_of, total};
use crate::out::outln;
use crate::{io, plot};
use clap::Args;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::timeline::{summarize, TileRecord};
use gpu_scan::{reference, Gpu, Op, Result, TempStorage};
use scan_abi::timeline::TIMED;
use std::path::PathBuf;

#[derive(Args)]
pub struct TimelineArgs {
    /// Number of u32 elements (2^28, 1e8, ...).
    #[arg(value_parser = positive)]
    n: u64,
    /// Also write every tile's record (nanoseconds from the first tile's start) to this CSV, in
    /// an existing folder.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Also draw 600 tiles from the middle of the array, phase by phase, into this PNG, in an
    /// existing folder.
    #[arg(long, value_name = "FILE")]
    png: Option<PathBuf>,
    /// Replace an existing --csv or --png file.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    runs: Runs,
}

pub fn run(args: &TimelineArgs, global: &Global) -> Result<bool> {
    let (tuning, _) = global.resolve()?;
    let n = host_len(args.n, "N")?;
    for path in [&args.csv, &args.png].into_iter().flatten() {
        io::check_writable(path, args.force)?;
    }
    let plan = gpu_scan::plan::scan::timeline(&tuning, args.n)?;
    let what = format!("a timeline of {} u32", args.n);
    let bytes = bytes_of(args.n, 4, &what)?;
    let records = bytes_of(plan.state.slots, std::mem::size_of::<TileRecord>() as u64, &what)?;
    // The input, the records, the result read back and the CPU's (and the CSV's text, about as
    // large as the records).
    let needs = Needs {
        host: total(&[bytes, records, records, bytes, bytes], &what)?,
        device: total(&[bytes, bytes, records, plan.state.bytes()], &what)?,
        what,
    };
    let make = || -> Result<Timeline> {
        let data = memory::generate::<u32>(Op::Add, args.runs.seed, n)?;
        Ok(Timeline { data, buffers: None, temp: TempStorage::new(), records: Vec::new() })
    };
    let ran = experiment::run(global, args.runs.iters, &needs, make)?;
    let exp = ran.exp;
    if let Some(path) = &args.csv {
        let first = exp.records.iter().map(|r| r.times[0]).min().unwrap_or(0);
        let mut text = String::from("tile,");
        text += &TIMED.map(|e| format!("{e:?}").to_lowercase() + "_ns").join(",");
        text += ",polls,sm\n";
        for (i, r) in exp.records.iter().enumerate() {
            let times: Vec<String> = r.times.iter().map(|&t| (t as i64 - first as i64).to_string()).collect();
            text += &format!("{i},{},{},{}\n", times.join(","), r.polls, r.sm);
        }
        io::write_text(path, args.force, &text)?;
        outln!("wrote {}", path.display());
    }
    if let Some(path) = &args.png {
        const DRAWN: usize = 600;
        let from = (exp.records.len() / 2).saturating_sub(DRAWN / 2);
        plot::write_timeline(path, args.force, &exp.records, from, DRAWN)?;
        outln!("wrote {}", path.display());
    }
    Ok(ran.passed)
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
