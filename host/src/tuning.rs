//! Changing a tuning's choices by name, as `--tune key=value` does on the command line: the same
//! [`Tuning`] a program can build in code and pass to `Gpu::with_tuning`.

use crate::error::{Error, Result};
use scan_abi::shape::BySize;
use scan_abi::Tuning;

/// Every key [`set`] takes, with what it sets.
pub const KEYS: &[(&str, &str)] = &[
    ("pipe_stages", "tiles in flight per pipelined block, for every pipeline (1 to 16)"),
    ("pipe_blocks", "most pipelined blocks per SM"),
    ("pipelined_min_mib", "the pipelined scan from this many MiB of input, for every element size"),
    ("recurrence_pipelined_min_mib", "the pipelined recurrence from this many MiB of maps"),
    ("compact_pipelined_min_mib", "the pipelined compaction from this many MiB of input"),
    ("backoff_ns", "nanoseconds the look-back sleeps between polls"),
    ("column_strip", "columns per strip of the column tiles (8 to 256)"),
    ("column_window", "tiles each look-back thread of the vector column tiles reads a round (1 or 4)"),
    ("bulk_rows", "rows per thread group of the column tiles in shared memory (1 to 48)"),
    ("bulk_ahead", "tiles ahead the column tiles in shared memory bring into L2 (0: none)"),
    ("bulk_max_vectors", "widest row, in 16-byte vectors, the column tiles in shared memory take (1 to 32)"),
    ("columns_pipelined_min_mib", "matrices of 32-byte rows scan down the columns pipelined from this size"),
    ("columns16_pipelined_min_mib", "matrices of 16-byte rows scan down the columns pipelined from this size"),
    ("row_kernel_min_rows", "fewest rows the one-block-per-row kernel takes"),
    ("launch_bounds", "on, or off to load every kernel without launch bounds"),
];

/// Sets choice `key` of `tuning` to `value` (see [`KEYS`]).
pub fn set(tuning: &mut Tuning, key: &str, value: &str) -> Result<()> {
    let c = &mut tuning.choices;
    let bad = |why: &str| Error::invalid(format!("--tune {key}={value}: {why}"));
    let number = |lo: u64, hi: u64| -> Result<u64> {
        let v: u64 = value.trim().parse().map_err(|_| bad("not a whole number"))?;
        if (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(bad(&format!("must be from {lo} to {hi}")))
        }
    };
    let mib = || number(0, 1 << 30).map(|v| v << 20);
    match key {
        "pipe_stages" => c.pipeline_stages = Some(number(1, 16)? as u32),
        "pipe_blocks" => c.pipeline_blocks_per_sm = Some(number(1, 32)? as u32),
        "pipelined_min_mib" => c.pipelined_min_bytes = BySize::split(mib()?, mib()?),
        "recurrence_pipelined_min_mib" => c.recurrence_pipelined_min_bytes = mib()?,
        "compact_pipelined_min_mib" => c.compact_pipelined_min_bytes = mib()?,
        "backoff_ns" => c.lookback_backoff_ns = number(0, 1_000_000)? as u32,
        "column_strip" => c.column_strip = Some(number(8, 256)? as u32),
        "column_window" => match number(1, 4)? {
            w @ (1 | 4) => c.column_window = Some(w as u32),
            _ => return Err(bad("must be 1 or 4")),
        },
        "bulk_rows" => c.bulk_rows = number(1, 48)? as u32,
        "bulk_ahead" => c.bulk_ahead = number(0, 1 << 20)? as u32,
        "bulk_max_vectors" => c.bulk_max_row_vectors = number(1, 32)?,
        "columns_pipelined_min_mib" => c.columns_pipelined_min_bytes = mib()?,
        "columns16_pipelined_min_mib" => c.columns16_pipelined_min_bytes = mib()?,
        "row_kernel_min_rows" => c.row_kernel_min_rows = number(1, u64::MAX)?,
        "launch_bounds" => match value {
            "on" => tuning.launch_bounds = scan_abi::tuning::for_arch(tuning.arch).launch_bounds,
            "off" => tuning.launch_bounds = &[],
            _ => return Err(bad("must be on or off")),
        },
        _ => {
            let keys: Vec<&str> = KEYS.iter().map(|k| k.0).collect();
            return Err(Error::invalid(format!("--tune {key}: no such key; keys: {}", keys.join(", "))));
        }
    }
    Ok(())
}

/// Applies `key=value` settings in order.
pub fn apply<'a>(tuning: &mut Tuning, settings: impl IntoIterator<Item = &'a str>) -> Result<()> {
    for s in settings {
        let (key, value) =
            s.split_once('=').ok_or_else(|| Error::invalid(format!("--tune {s}: write it as key=value")))?;
        set(tuning, key.trim(), value.trim())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_change_choices_and_leave_shapes_alone() {
        let mut t = *scan_abi::tuning::for_arch(90);
        apply(&mut t, ["pipe_stages=5", "column_window=1", "bulk_rows=23", "launch_bounds=off", "pipelined_min_mib=1"])
            .unwrap();
        assert_eq!(t.choices.pipeline_stages, Some(5));
        assert_eq!((t.choices.column_window, t.choices.bulk_rows), (Some(1), 23));
        assert!(t.launch_bounds.is_empty());
        assert_eq!(t.choices.pipelined_min_bytes.at(1), 1 << 20);
        assert_eq!(t.shapes, scan_abi::tuning::for_arch(90).shapes);
        apply(&mut t, ["launch_bounds=on"]).unwrap();
        assert_eq!(t.launch_bounds, scan_abi::tuning::for_arch(90).launch_bounds);
    }

    #[test]
    fn bad_settings_say_what_is_wrong() {
        let mut t = *scan_abi::tuning::for_arch(90);
        let e = |s: &str| apply(&mut t.clone(), [s]).unwrap_err().to_string();
        assert!(e("pipe_stages=0").contains("from 1 to 16"));
        assert!(e("column_window=2").contains("1 or 4"));
        assert!(e("pipe_stages").contains("key=value"));
        assert!(e("warp_size=64").contains("no such key"));
        assert!(e("bulk_rows=x").contains("not a whole number"));
        assert!(apply(&mut t, ["backoff_ns = 100"]).is_ok());
    }
}
