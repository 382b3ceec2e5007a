//! Changing a tuning's choices by name, as `--tune key=value` does on the command line: the same
//! [`Tuning`] a program can build in code and pass to `Gpu::with_tuning`.

use crate::error::{Error, Result, TuningError};
use scan_abi::shape::BySize;
use scan_abi::tuning::limits::*;
use scan_abi::tuning::Range;
use scan_abi::Tuning;

/// Every key [`set`] takes, with what it sets and its valid values (those of
/// `scan_abi::tuning::limits`, which [`Tuning::validate`] checks).
pub const KEYS: &[(&str, &str)] = &[
    ("pipe_stages", "tiles in flight per pipelined block, for every pipeline (1 to 16)"),
    ("pipe_blocks", "most pipelined blocks per SM (1 to 32)"),
    ("pipelined_min_mib", "the pipelined scan from this many MiB of input, for every element size"),
    ("recurrence_pipelined_min_mib", "the pipelined recurrence from this many MiB of maps"),
    ("compact_pipelined_min_mib", "the pipelined compaction from this many MiB of input"),
    ("segmented_pipelined_min_mib", "the pipelined segmented scan from this many MiB of values"),
    ("backoff_ns", "nanoseconds the look-back sleeps between polls (0 to 1000000)"),
    ("column_strip", "columns per strip of the column tiles (8 to 256)"),
    ("column_window", "tiles each look-back thread of the vector column tiles reads a round (1 or 4)"),
    ("bulk_rows", "rows per thread group of the column tiles in shared memory (1 to 48)"),
    ("bulk_ahead", "tiles ahead the column tiles in shared memory bring into L2 (0 to 1048576; 0: none)"),
    ("bulk_max_vectors", "widest row, in 16-byte vectors, the column tiles in shared memory take (1 to 32)"),
    ("columns_pipelined_min_mib", "matrices of 32-byte rows scan down the columns pipelined from this size"),
    ("columns16_pipelined_min_mib", "matrices of 16-byte rows scan down the columns pipelined from this size"),
    ("row_kernel_min_rows", "fewest rows the one-block-per-row kernel takes (at least 1)"),
    (
        "row_kernel_max_blocks",
        "most blocks of the row kernels, beyond which blocks take several rows (1 to 2147483647)",
    ),
    ("long_rows_pipelined_min_tiles", "few long rows run as one pipelined launch from this many tiles a row"),
    ("launch_bounds", "on, or off to load every kernel without launch bounds"),
    (
        "pipelined_fixed_order",
        "on: deterministic float sums take the pipelined kernel's order where it is the default; off: the tiles'",
    ),
];

/// Sets choice `key` of `tuning` to `value` (see [`KEYS`]). It takes exactly the values
/// [`Tuning::validate`] (and so `Gpu::with_tuning`) accepts: out of range, it fails with
/// [`Error::Tuning`] naming the key and its range, and leaves `tuning` as it was.
pub fn set(tuning: &mut Tuning, key: &str, value: &str) -> Result<()> {
    let bad = |why: &str| Error::invalid(format!("--tune {key}={value}: {why}"));
    let number = || value.trim().parse::<u64>().map_err(|_| bad("not a whole number"));
    let checked = |r: Range| -> Result<u64> { Ok(r.check(number()?)?) };
    // Every range of a u32 field ends below 2^32.
    let small = |r: Range| checked(r).map(|v| v as u32);
    let mib = || -> Result<u64> {
        let v = number()?;
        v.checked_mul(1 << 20).ok_or_else(|| Error::Tuning(TuningError::new(key_name(key), v, 0, u64::MAX >> 20)))
    };
    let mut t = *tuning;
    let c = &mut t.choices;
    match key {
        "pipe_stages" => c.pipeline_stages = Some(small(PIPE_STAGES)?),
        "pipe_blocks" => c.pipeline_blocks_per_sm = Some(small(PIPE_BLOCKS)?),
        "pipelined_min_mib" => c.pipelined_min_bytes = BySize::split(mib()?, mib()?),
        "recurrence_pipelined_min_mib" => c.recurrence_pipelined_min_bytes = mib()?,
        "compact_pipelined_min_mib" => c.compact_pipelined_min_bytes = mib()?,
        "segmented_pipelined_min_mib" => c.segmented_pipelined_min_bytes = mib()?,
        "backoff_ns" => c.lookback_backoff_ns = small(BACKOFF_NS)?,
        "column_strip" => c.column_strip = Some(small(COLUMN_STRIP)?),
        "column_window" => c.column_window = Some(small(COLUMN_WINDOW)?),
        "bulk_rows" => c.bulk_rows = small(BULK_ROWS)?,
        "bulk_ahead" => c.bulk_ahead = small(BULK_AHEAD)?,
        "bulk_max_vectors" => c.bulk_max_row_vectors = checked(BULK_MAX_VECTORS)?,
        "columns_pipelined_min_mib" => c.columns_pipelined_min_bytes = mib()?,
        "columns16_pipelined_min_mib" => c.columns16_pipelined_min_bytes = mib()?,
        "row_kernel_min_rows" => c.row_kernel_min_rows = checked(ROW_KERNEL_MIN_ROWS)?,
        "row_kernel_max_blocks" => c.row_kernel_max_blocks = checked(ROW_KERNEL_MAX_BLOCKS)?,
        "long_rows_pipelined_min_tiles" => c.long_rows_pipelined_min_tiles = number()?,
        "pipelined_fixed_order" => {
            c.pipelined_fixed_order = match value {
                "on" => true,
                "off" => false,
                _ => return Err(bad("must be on or off")),
            }
        }
        "launch_bounds" => match value {
            "on" => t.launch_bounds = scan_abi::tuning::for_arch(t.arch).launch_bounds,
            "off" => t.launch_bounds = &[],
            _ => return Err(bad("must be on or off")),
        },
        _ => {
            let keys: Vec<&str> = KEYS.iter().map(|k| k.0).collect();
            return Err(Error::invalid(format!("--tune {key}: no such key; keys: {}", keys.join(", "))));
        }
    }
    t.validate()?;
    *tuning = t;
    Ok(())
}

/// `key` as the `'static` name in [`KEYS`] it equals.
fn key_name(key: &str) -> &'static str {
    KEYS.iter().find(|k| k.0 == key).map_or("tuning", |k| k.0)
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
        let table = scan_abi::tuning::for_arch(90).choices.pipelined_fixed_order;
        apply(&mut t, [if table { "pipelined_fixed_order=off" } else { "pipelined_fixed_order=on" }]).unwrap();
        assert_eq!(t.choices.pipelined_fixed_order, !table);
        assert!(apply(&mut t, ["pipelined_fixed_order=yes"]).unwrap_err().to_string().contains("on or off"));
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

    /// The value of the field `key` sets.
    fn get(t: &Tuning, key: &str) -> u64 {
        let c = &t.choices;
        match key {
            "pipe_stages" => c.pipeline_stages.unwrap().into(),
            "pipe_blocks" => c.pipeline_blocks_per_sm.unwrap().into(),
            "backoff_ns" => c.lookback_backoff_ns.into(),
            "column_strip" => c.column_strip.unwrap().into(),
            "column_window" => c.column_window.unwrap().into(),
            "bulk_rows" => c.bulk_rows.into(),
            "bulk_ahead" => c.bulk_ahead.into(),
            "bulk_max_vectors" => c.bulk_max_row_vectors,
            "row_kernel_min_rows" => c.row_kernel_min_rows,
            "row_kernel_max_blocks" => c.row_kernel_max_blocks,
            _ => unreachable!("{key}"),
        }
    }

    /// Each key with a range takes exactly the values of that range (as `validate` does), keeps
    /// them whole, says the range in its help, and a refused value leaves the tuning as it was.
    #[test]
    fn keys_take_exactly_the_values_validate_accepts() {
        let ranged = [
            PIPE_STAGES,
            PIPE_BLOCKS,
            BACKOFF_NS,
            COLUMN_STRIP,
            COLUMN_WINDOW,
            BULK_ROWS,
            BULK_AHEAD,
            BULK_MAX_VECTORS,
            ROW_KERNEL_MIN_ROWS,
            ROW_KERNEL_MAX_BLOCKS,
        ];
        let table = *scan_abi::tuning::for_arch(90);
        for r in ranged {
            let help = KEYS.iter().find(|k| k.0 == r.key).map(|k| k.1).unwrap_or_else(|| panic!("{} is no key", r.key));
            let valid = match (r.only, r.max) {
                ([a, b], _) => format!("({a} or {b})"),
                (_, u64::MAX) => format!("(at least {})", r.min),
                _ => format!("({} to {}", r.min, r.max),
            };
            assert!(help.contains(&valid), "{}: {help} does not say {valid}", r.key);
            let edges = [0, 1, r.min.wrapping_sub(1), r.min, r.max, r.max.wrapping_add(1), u32::MAX.into(), u64::MAX];
            for v in edges.into_iter().chain(r.only.iter().map(|v| v + 1)) {
                let mut t = table;
                let result = set(&mut t, r.key, &v.to_string());
                assert_eq!(result.is_ok(), r.contains(v), "{}={v}: {result:?}", r.key);
                match result {
                    Ok(()) => assert_eq!((get(&t, r.key), t.validate()), (v, Ok(())), "{}={v}", r.key),
                    Err(Error::Tuning(e)) => {
                        assert_eq!((e.key, e.value), (r.key, v));
                        assert_eq!(t, table, "{}={v} changed the tuning", r.key);
                    }
                    Err(e) => panic!("{}={v}: {e}", r.key),
                }
            }
        }
    }

    #[test]
    fn sizes_in_mib_that_overflow_bytes_are_refused() {
        let mut t = *scan_abi::tuning::for_arch(90);
        set(&mut t, "compact_pipelined_min_mib", &(u64::MAX >> 20).to_string()).unwrap();
        assert_eq!(t.choices.compact_pipelined_min_bytes, (u64::MAX >> 20) << 20);
        let e = set(&mut t, "compact_pipelined_min_mib", &((u64::MAX >> 20) + 1).to_string()).unwrap_err();
        assert!(matches!(e, Error::Tuning(TuningError { key: "compact_pipelined_min_mib", .. })), "{e}");
    }
}
