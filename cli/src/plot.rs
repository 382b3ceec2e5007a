//! The benchmark plot: GB/s against n, one panel per (type, operator), one line per algorithm
//! plus the same-run copy, CUB and any other baseline. Text uses an embedded DejaVu Sans, so
//! plotting needs no system fonts.

use crate::sweep::{Baseline, Row};
use gpu_scan::timeline::{TileRecord, PHASES};
use gpu_scan::ElemType;
use gpu_scan::{Error, Result};
use plotters::prelude::*;
use plotters::style::FontStyle;
use scan_abi::timeline::TIMED;
use std::collections::BTreeMap;
use std::path::Path;

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

pub(crate) fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

type Series = BTreeMap<String, Vec<(f64, f64)>>;

/// The same series gets the same color in every panel.
fn color(name: &str) -> RGBColor {
    match name {
        "device copy" => BLACK,
        "CUB" => RGBColor(214, 39, 40),
        "torch" => RGBColor(148, 103, 189),
        "cupy" => RGBColor(44, 160, 44),
        "single-pass" => RGBColor(31, 119, 180),
        "hierarchical" => RGBColor(255, 127, 14),
        other => {
            let h = other.bytes().fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(b as u32));
            let c = Palette99::pick(h as usize % 99).to_rgba();
            RGBColor(c.0, c.1, c.2)
        }
    }
}

/// Draws the plot of `rows` (and `peers`) into a PNG at `path`, written as
/// [`crate::io::write_file`] writes files.
pub fn write_png(path: &Path, force: bool, rows: &[Row], peers: Option<&Baseline>, title: &str) -> Result<()> {
    crate::io::write_file(path, force, |tmp| {
        plot(tmp, rows, peers, title).map_err(|e| Error::invalid(format!("cannot draw {}: {e}", path.display())))
    })
}

/// Draws tiles `from..from + count` of `records` (see [`timeline`]) into a PNG at `path`,
/// written as [`crate::io::write_file`] writes files.
pub fn write_timeline(path: &Path, force: bool, records: &[TileRecord], from: usize, count: usize) -> Result<()> {
    crate::io::write_file(path, force, |tmp| {
        timeline(tmp, records, from, count).map_err(|e| Error::invalid(format!("cannot draw {}: {e}", path.display())))
    })
}

/// Plots `rows` into a PNG at `path`.
pub fn plot(
    path: &Path,
    rows: &[Row],
    peers: Option<&Baseline>,
    title: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    register_font();
    let mut panels: BTreeMap<(String, String), Series> = BTreeMap::new();
    let size_of = |ty: &str| ElemType::parse(ty).map_or(4, |t| t.size()) as f64;
    for r in rows {
        let panel = panels.entry((r.ty.clone(), r.op.clone())).or_default();
        let x = (r.n as f64).log2();
        let gbps = |ms: f64| 2.0 * r.n as f64 * size_of(&r.ty) / (ms * 1e-3) / 1e9;
        if let Some(g) = r.gbps {
            panel.entry(r.algorithm.clone()).or_default().push((x, g));
        }
        panel.entry("device copy".into()).or_default().push((x, r.copy_gbps));
        if let Some(c) = r.cub_ms {
            panel.entry("CUB".into()).or_default().push((x, gbps(c)));
        }
        if let Some(p) = peers {
            for label in p.labels() {
                if let Some(ms) = p.get(&label, &r.ty, r.n) {
                    panel.entry(label).or_default().push((x, gbps(ms)));
                }
            }
        }
    }
    for series in panels.values_mut() {
        for points in series.values_mut() {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            points.dedup_by(|a, b| a.0 == b.0);
        }
    }
    let cols = panels.len().clamp(1, 2);
    let rows_n = panels.len().div_ceil(cols).max(1);
    let root = BitMapBackend::new(path, (900 * cols as u32, 560 * rows_n as u32 + 40)).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, body) = root.split_vertically(40);
    top.titled(title, ("sans-serif", 24))?;
    let areas = body.split_evenly((rows_n, cols));
    for (((ty, op), series), area) in panels.iter().zip(areas.iter()) {
        let (xmin, xmax, ymax) = series
            .values()
            .flatten()
            .fold((f64::MAX, f64::MIN, 1.0f64), |(a, b, c), &(x, y)| (a.min(x), b.max(x), c.max(y)));
        let mut chart = ChartBuilder::on(area)
            .caption(format!("{ty} {op}"), ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(xmin..xmax.max(xmin + 1.0), 0.0..ymax * 1.1)?;
        chart
            .configure_mesh()
            .x_desc("log2(n)")
            .y_desc("GB/s (2·n·size / time)")
            .label_style(("sans-serif", 14))
            .draw()?;
        for (name, points) in series.iter() {
            let style = color(name).stroke_width(2);
            chart
                .draw_series(LineSeries::new(points.iter().copied(), style))?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
            chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, style.filled())))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// Draws tiles `from..from + count` of `records` as a PNG at `path`: one row per tile, time
/// running right (microseconds from the first drawn tile's start), each phase in its color, so
/// that waits show as long red bars and convoys as red bars ending together.
pub fn timeline(
    path: &Path,
    records: &[TileRecord],
    from: usize,
    count: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let drawn = &records[from.min(records.len())..(from + count).min(records.len())];
    if drawn.is_empty() {
        return Err("no tiles to draw".into());
    }
    register_font();
    let t0 = drawn.iter().map(|r| r.times[0]).min().unwrap_or(0);
    let t1 = drawn.iter().map(|r| r.times[TIMED.len() - 1]).max().unwrap_or(t0 + 1);
    let us = |t: u64| (t.saturating_sub(t0)) as f64 / 1e3;
    let root = BitMapBackend::new(path, (1400, 900)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("single-pass u32 tiles {}..{}: where each tile's time goes", from, from + drawn.len()),
            ("sans-serif", 22),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..us(t1), (from as f64)..((from + drawn.len()) as f64))?;
    chart
        .configure_mesh()
        .x_desc("microseconds")
        .y_desc("tile")
        .y_label_formatter(&|y| format!("{}", *y as u64))
        .disable_mesh()
        .draw()?;
    for phase in PHASES {
        let (r, g, b) = phase.color;
        let color = RGBColor(r, g, b);
        chart
            .draw_series(drawn.iter().enumerate().map(|(i, rec)| {
                let y = (from + i) as f64;
                Rectangle::new([(us(rec.at(phase.from)), y), (us(rec.at(phase.to)), y + 0.8)], color.filled())
            }))?
            .label(phase.name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(algorithm: &str, ty: &str, n: u64, ms: f64) -> Row {
        Row {
            algorithm: algorithm.into(),
            ty: ty.into(),
            op: "add".into(),
            n,
            check: "PASS".into(),
            ms: Some(ms),
            min_ms: Some(ms),
            gbps: Some(2.0 * n as f64 * 4.0 / (ms * 1e-3) / 1e9),
            copy_ms: ms * 0.7,
            copy_gbps: 2.0 * n as f64 * 4.0 / (ms * 0.7e-3) / 1e9,
            of_copy: Some(0.7),
            cub_ms: Some(ms * 0.9),
            vs_cub: Some(0.9),
            max_rel_error: None,
        }
    }

    #[test]
    fn draws_a_png_with_every_panel() {
        let rows: Vec<Row> = [10u32, 20, 30]
            .iter()
            .flat_map(|&e| {
                let n = 1u64 << e;
                vec![row("single-pass", "u32", n, n as f64 * 1e-9), row("hierarchical", "f64", n, n as f64 * 2e-9)]
            })
            .collect();
        let path = std::env::temp_dir().join(format!("gpu-scan-plot-{}.png", std::process::id()));
        plot(&path, &rows, None, "test").unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000, "{} bytes", bytes.len());
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn the_plot_draws_the_tiles_asked_for() {
        let records: Vec<TileRecord> = (0..50u64)
            .map(|i| {
                let s = 100 * i;
                let times = [s, s + 300, s + 1500, s + 1510, s + 1510 + 40 * (i % 7), s + 2600];
                TileRecord { times, polls: 1 + i as u32 % 3, sm: 7 }
            })
            .collect();
        let path = std::env::temp_dir().join(format!("gpu-scan-timeline-{}.png", std::process::id()));
        timeline(&path, &records, 10, 30).unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 1000);
        std::fs::remove_file(&path).unwrap();
        assert!(timeline(&path, &records, 60, 10).is_err());
    }
}
