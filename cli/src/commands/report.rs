//! `report`: docs/performance.md, its CSV and its plot, from the results of one benchmark run
//! (`run.sh bench` of the GPU bundle writes them): our scan sweep, CUB (the toolkit's and the
//! newest), torch and CuPy, and the applications' and batched scans' records. No GPU needed.

use crate::experiment::Record;
use crate::out::outln;
use crate::sweep::{self, Baseline, Row};
use crate::{io, plot, sweep::read_csv};
use clap::Args;
use gpu_scan::{Error, Result};
use std::fmt::Write;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct ReportArgs {
    /// The results folder of one run (`run.sh bench` writes it: scan/bench.csv and the
    /// baselines' CSVs).
    results: PathBuf,
    /// The folder performance.md, bench.csv and bench.png go to (created where missing).
    #[arg(long, default_value = "docs", value_name = "DIR")]
    out: PathBuf,
    /// Replace existing performance.md, bench.csv and bench.png files (as regenerating
    /// docs/ does).
    #[arg(long)]
    force: bool,
    /// The command that produced the results, quoted in the report.
    #[arg(long, default_value = "bash .gpu-bundle/run.sh bench")]
    command: String,
}

/// A baseline CSV of the results folder, if the run wrote it.
fn optional(dir: &Path, name: &str) -> Result<Option<Baseline>> {
    let path = dir.join(name);
    if path.exists() {
        Baseline::read(&path).map(Some)
    } else {
        Ok(None)
    }
}

/// `base / ours` as a ratio, or a dash.
fn ratio(base: Option<f64>, ours: Option<f64>) -> String {
    match (base, ours) {
        (Some(b), Some(o)) if o > 0.0 => format!("{:.2}x", b / o),
        _ => "–".into(),
    }
}

fn percent(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{:.1}%", 100.0 * v))
}

/// The first line of a CSV that starts with `#` (the device and version the baselines print).
fn comment(dir: &Path, name: &str) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(name)).ok()?;
    text.lines().find_map(|l| l.strip_prefix("# ").map(String::from))
}

pub fn run(args: &ReportArgs) -> Result<bool> {
    let dir = &args.results;
    if !dir.is_dir() {
        return Err(Error::invalid(format!("{}: not a results folder", dir.display())));
    }
    let [page, csv, png] = ["performance.md", "bench.csv", "bench.png"].map(|f| args.out.join(f));
    for path in [&page, &csv, &png] {
        io::check_creatable(path, args.force)?;
    }
    let mut rows = read_csv(&dir.join("scan").join("bench.csv"))?;
    let cub = optional(dir, "cub.csv")?;
    let cub35 = optional(dir, "cub35.csv")?;
    let peers = optional(dir, "peers.csv")?;
    let peers_batched = optional(dir, "peers-batched.csv")?;
    let mut md = String::from("# Performance\n\n");
    md += "Every figure on this page comes from one run on one GPU, with its yardsticks timed in the same \
           run: a device-to-device copy of the same bytes (the ceiling a scan can reach, counting reads \
           and writes), NVIDIA CUB (the toolkit's and the newest), and torch and CuPy. Times are medians of \
           CUDA-event timings after a warm-up; every result was checked against the CPU first.\n\n";
    let _ = writeln!(md, "Produced by `{}`, then `cargo xtask bench --results <that folder>`.\n", args.command);
    for (name, file) in [("CUB (toolkit)", "cub.csv"), ("CUB (newest)", "cub35.csv")] {
        if let Some(c) = comment(dir, file) {
            let _ = writeln!(md, "- {name}: {c}");
        }
    }
    let _ = write!(md, "\n## {SCANS}\n\n");
    md += "| type | n | ms | % of copy | vs CUB (toolkit) | vs CUB (newest) | vs torch | vs CuPy |\n";
    md += "|---|---|---|---|---|---|---|---|\n";
    // torch has no unsigned 32- and 64-bit cumsum: its signed twins run the same code.
    fn torch_type(ty: &str) -> &str {
        match ty {
            "u32" => "i32",
            "u64" => "i64",
            other => other,
        }
    }
    for r in rows.iter().filter(|r| r.algorithm == "single-pass" && r.op == "add") {
        let get = |b: &Option<Baseline>, label: &str, ty: &str| b.as_ref().and_then(|b| b.get(label, ty, r.n));
        let _ = writeln!(
            md,
            "| {} | 2^{} | {} | {} | {} | {} | {} | {} |",
            r.ty,
            r.n.trailing_zeros(),
            r.ms.map_or("–".into(), |v| format!("{v:.4}")),
            percent(r.of_copy),
            ratio(get(&cub, "inclusive_sum", &r.ty), r.ms),
            ratio(get(&cub35, "inclusive_sum", &r.ty), r.ms),
            ratio(get(&peers, "torch", torch_type(&r.ty)), r.ms),
            ratio(get(&peers, "cupy", torch_type(&r.ty)), r.ms),
        );
    }
    let others: Vec<&Row> = rows.iter().filter(|r| r.algorithm != "single-pass").collect();
    if !others.is_empty() {
        let _ = write!(md, "\n## {OTHERS}\n\n");
        md += "| algorithm | type | n | % of copy | vs CUB (newest) |\n|---|---|---|---|---|\n";
        for r in others {
            let label = if r.algorithm.ends_with("+det") { "det_inclusive_sum" } else { "inclusive_sum" };
            let base = cub35.as_ref().and_then(|b| b.get(label, &r.ty, r.n));
            let _ = writeln!(
                md,
                "| {} | {} | 2^{} | {} | {} |",
                r.algorithm,
                r.ty,
                r.n.trailing_zeros(),
                percent(r.of_copy),
                ratio(base, r.ms)
            );
        }
    }
    md += "\n![scan GB/s against n](bench.png)\n";
    let apps = dir.join("apps.csv");
    if apps.exists() {
        let _ = write!(md, "\n## {APPS}\n\n");
        md += "The copy column is a same-run copy of the input's bytes over the run's time: what the \
               run would take if it only read its input once and wrote it once.\n\n| run | ms | copy of the input | CUB ms | vs CUB |\n|---|---|---|---|---|\n";
        for r in Record::read(&apps)? {
            let cub_ms = r.cub_ms.map_or("–".into(), |c| format!("{c:.4}"));
            let _ = writeln!(
                md,
                "| {} | {:.4} | {} | {cub_ms} | {} |",
                r.title,
                r.ms,
                percent(r.copy_ms.map(|c| c / r.ms)),
                ratio(r.cub_ms, Some(r.ms))
            );
        }
    }
    let batched = dir.join("batched.csv");
    if batched.exists() {
        let _ = write!(md, "\n## {BATCHED}\n\n");
        md += "| run | ms | % of copy | vs torch.cumsum |\n|---|---|---|---|\n";
        for r in Record::read(&batched)? {
            let torch =
                torch_batched(&r.title).and_then(|(shape, dim)| peers_batched.as_ref()?.get("torch", &shape, dim));
            let _ = writeln!(
                md,
                "| {} | {:.4} | {} | {} |",
                r.title,
                r.ms,
                percent(r.copy_ms.map(|c| c / r.ms)),
                ratio(torch, Some(r.ms))
            );
        }
    }
    for r in rows.iter_mut() {
        r.cub_ms = cub35.as_ref().and_then(|b| b.get("inclusive_sum", &r.ty, r.n)).or(r.cub_ms);
    }
    sweep::write_csv(&csv, &rows, args.force)?;
    let title = "scan GB/s against n (same run: copy, CUB, torch, CuPy)";
    plot::write_png(&png, args.force, &rows, peers.as_ref(), title)?;
    // Sections written by hand into the page (runs of their own, notes) outlive a regeneration.
    if let Ok(old) = std::fs::read_to_string(&page) {
        md += &hand_sections(&old);
    }
    io::write_text(&page, args.force, &md)?;
    outln!("wrote {}, bench.csv and bench.png in {}", page.display(), args.out.display());
    Ok(true)
}

/// The titles of the sections this command writes.
const SCANS: &str = "Scans (inclusive sum, single-pass)";
const OTHERS: &str = "Other strategies and the deterministic order";
const APPS: &str = "Applications";
const BATCHED: &str = "Batched scans";

/// The `## ` sections of `page` that this command does not write, in their order, each from its
/// heading to the next, after a blank line.
fn hand_sections(page: &str) -> String {
    let mut sections: Vec<String> = Vec::new();
    let mut keep = false;
    for line in page.split_inclusive('\n') {
        if let Some(title) = line.strip_prefix("## ") {
            keep = ![SCANS, OTHERS, APPS, BATCHED].contains(&title.trim_end());
            if keep {
                sections.push(String::new());
            }
        }
        if let Some(section) = sections.last_mut().filter(|_| keep) {
            *section += line;
        }
    }
    sections.iter().map(|s| format!("\n{}\n", s.trim_end())).collect()
}

/// The torch peer of a batched record's title (`batched: R x C f32 add down each column`):
/// ("RxC", dim), keyed as peers.py writes it (dim in the n column).
fn torch_batched(title: &str) -> Option<(String, u64)> {
    let rest = title.strip_prefix("batched: ")?;
    let mut words = rest.split_whitespace();
    let (rows, _, cols) = (words.next()?, words.next()?, words.next()?);
    let dim = if title.ends_with("down each column") { 0 } else { 1 };
    Some((format!("{rows}x{cols}"), dim))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_written_by_hand_are_kept_in_order() {
        let page = "# Performance\n\nintro\n\n## Scans (inclusive sum, single-pass)\n\nold table\n\n## Mid sizes\n\nby hand\n\n## Applications\n\nold apps\n\n## Python\n\nmore by hand\n";
        assert_eq!(hand_sections(page), "\n## Mid sizes\n\nby hand\n\n## Python\n\nmore by hand\n");
        assert_eq!(hand_sections("# Performance\n\n## Batched scans\n\nx\n"), "");
    }

    #[test]
    fn batched_titles_name_their_torch_peer() {
        assert_eq!(torch_batched("batched: 1048576 x 256 f32 add down each column"), Some(("1048576x256".into(), 0)));
        assert_eq!(torch_batched("batched: 8 x 33554432 f32 add along each row"), Some(("8x33554432".into(), 1)));
        assert_eq!(torch_batched("compact: n=1 u32 keep gt:3"), None);
        assert_eq!(ratio(Some(2.0), Some(1.0)), "2.00x");
        assert_eq!(ratio(None, Some(1.0)), "–");
    }
}
