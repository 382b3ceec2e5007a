//! A fingerprint of the contract a PTX module was built against: this crate's sources and the
//! tile shapes the kernels were compiled with. The kernels' module carries it as the global
//! [`SYMBOL`]; the host takes a module from elsewhere (`Gpu::with_ptx`) only when it carries the
//! fingerprint of the shapes the host plans with, built from the same sources of this crate.

use crate::element::ElemType;
use crate::op::Op;
use crate::shape::{BySize, Pipeline, Tile};
use crate::tuning::{Shapes, Split};

/// The name of the PTX global (a `u64`) that holds the fingerprint.
pub const SYMBOL: &str = "SCAN_ABI_FINGERPRINT";

/// Every source file of this crate: a change to any of them (a layout, a flag, a table) changes
/// the fingerprint.
const SOURCES: [&str; 17] = [
    include_str!("lib.rs"),
    include_str!("args.rs"),
    include_str!("block.rs"),
    include_str!("bounds.rs"),
    include_str!("element.rs"),
    include_str!("fingerprint.rs"),
    include_str!("kernel.rs"),
    include_str!("op.rs"),
    include_str!("partition.rs"),
    include_str!("shape.rs"),
    include_str!("smem.rs"),
    include_str!("status.rs"),
    include_str!("timeline.rs"),
    include_str!("tuning/mod.rs"),
    include_str!("tuning/sm90.rs"),
    include_str!("widening.rs"),
    env!("CARGO_PKG_VERSION"),
];

/// The fingerprint of this crate's sources with `shapes`.
pub const fn of(shapes: &Shapes) -> u64 {
    let mut h = Fnv::new();
    let mut i = 0;
    while i < SOURCES.len() {
        h = h.bytes(SOURCES[i].as_bytes()).u64(SOURCES[i].len() as u64);
        i += 1;
    }
    let Shapes {
        single_pass,
        staged,
        compact,
        hierarchical,
        naive_threads,
        helper_threads,
        partition,
        sort,
        sort_values,
        sort_counts,
        sort_ballot,
        sort_lookback_window,
        rows,
        columns,
        column_groups,
        columns_vec,
        columns_bulk_threads,
        column_vectors,
        column_vector_bytes,
        scan_pipeline,
        scan_splits,
        columns_pipeline,
        columns16_pipeline,
        recurrence_pipeline,
        compact_pipeline,
        segmented_pipeline,
        widening_scale,
        lookback_depth,
        lookback_windows,
        prefetch_tiles,
        compact_prefetch_tiles,
    } = *shapes;
    h = h.tiles(single_pass).tiles(staged).tiles(compact).tile(hierarchical);
    h = h.u64(naive_threads as u64).u64(helper_threads as u64).tile(partition);
    h = h.tiles(sort).tiles(sort_values).tiles(sort_counts).flags(sort_ballot).u64(sort_lookback_window as u64);
    h = h.tiles(rows).tiles(columns).u64(column_groups as u64).tile(columns_vec);
    h = h.u64(columns_bulk_threads as u64).tile(column_vectors).sizes(column_vector_bytes);
    h = h.pipelines(scan_pipeline).splits(scan_splits).pipelines(columns_pipeline);
    h = h.pipelines(columns16_pipeline).pipelines(recurrence_pipeline).pipelines(compact_pipeline);
    h = h.pipelines(segmented_pipeline).sizes(widening_scale);
    h = h.u64(lookback_depth as u64).u64(lookback_windows as u64);
    h = h.u64(prefetch_tiles as u64).u64(compact_prefetch_tiles as u64);
    h.0
}

/// The value of the global [`SYMBOL`] in the PTX text `ptx`, as rustc's nvptx backend writes it
/// (eight bytes, `.b8 SCAN_ABI_FINGERPRINT[8] = {..}`, or one `.u64`/`.b64`), or `None` where
/// there is none or it is written otherwise.
pub fn find(ptx: &str) -> Option<u64> {
    ptx.lines().find_map(|line| {
        let line = line.trim();
        let decl = line.strip_prefix(".visible ").unwrap_or(line).strip_prefix(".global ")?;
        let (decl, value) = decl.split_once('=')?;
        let mut words = decl.split_whitespace().filter(|w| !w.starts_with(".align") && w.parse::<u32>().is_err());
        let (ty, name) = (words.next()?, words.next()?);
        if words.next().is_some() {
            return None;
        }
        let value = value.trim().strip_suffix(';')?.trim();
        match (ty, name.strip_prefix(SYMBOL)?) {
            (".u64" | ".b64", "") => parse_u64(value),
            (".b8", "[8]") => {
                let bytes = value.strip_prefix('{')?.strip_suffix('}')?;
                let mut le = [0u8; 8];
                let mut n = 0;
                for b in bytes.split(',') {
                    *le.get_mut(n)? = u8::try_from(parse_u64(b.trim())?).ok()?;
                    n += 1;
                }
                (n == 8).then_some(u64::from_le_bytes(le))
            }
            _ => None,
        }
    })
}

/// A decimal or `0x` hexadecimal integer.
fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// 64-bit FNV-1a, in `const` steps.
struct Fnv(u64);

impl Fnv {
    const fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    const fn bytes(mut self, bytes: &[u8]) -> Fnv {
        let mut i = 0;
        while i < bytes.len() {
            self.0 = (self.0 ^ bytes[i] as u64).wrapping_mul(0x0000_0100_0000_01b3);
            i += 1;
        }
        self
    }

    const fn u64(self, v: u64) -> Fnv {
        self.bytes(&v.to_le_bytes())
    }

    const fn tile(self, t: Tile) -> Fnv {
        self.u64(t.threads as u64).u64(t.items as u64)
    }

    const fn tiles(mut self, t: BySize<Tile>) -> Fnv {
        let mut i = 0;
        while i < t.0.len() {
            self = self.tile(t.0[i]);
            i += 1;
        }
        self
    }

    const fn flags(mut self, b: BySize<bool>) -> Fnv {
        let mut i = 0;
        while i < b.0.len() {
            self = self.u64(b.0[i] as u64);
            i += 1;
        }
        self
    }

    const fn sizes(mut self, s: BySize<usize>) -> Fnv {
        let mut i = 0;
        while i < s.0.len() {
            self = self.u64(s.0[i] as u64);
            i += 1;
        }
        self
    }

    const fn pipeline(self, p: Pipeline) -> Fnv {
        let Pipeline { warps, items, stages, split, blocked } = p;
        self.u64(warps as u64).u64(items as u64).u64(stages as u64).u64(split as u64).u64(blocked as u64)
    }

    const fn pipelines(mut self, p: BySize<Pipeline>) -> Fnv {
        let mut i = 0;
        while i < p.0.len() {
            self = self.pipeline(p.0[i]);
            i += 1;
        }
        self
    }

    const fn splits(mut self, splits: &[Split]) -> Fnv {
        self = self.u64(splits.len() as u64);
        let mut i = 0;
        while i < splits.len() {
            let Split { ty, ops, split } = splits[i];
            self = self.ty(ty).ops(ops).u64(split as u64);
            i += 1;
        }
        self
    }

    const fn ty(self, ty: ElemType) -> Fnv {
        self.u64(ty as u64)
    }

    const fn ops(mut self, ops: &[Op]) -> Fnv {
        self = self.u64(ops.len() as u64);
        let mut i = 0;
        while i < ops.len() {
            self = self.u64(ops[i] as u64);
            i += 1;
        }
        self
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::tuning::sm90::SM90;
    use std::string::String;
    use std::vec::Vec;

    #[test]
    fn every_source_file_is_hashed() {
        fn walk(dir: &std::path::Path, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, out);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    out.push(std::fs::read_to_string(&path).unwrap());
                }
            }
        }
        let mut files = Vec::new();
        walk(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
        assert_eq!(files.len(), SOURCES.len() - 1, "a source file is missing from SOURCES");
        for text in &files {
            assert!(SOURCES.contains(&text.as_str()), "a source file is missing from SOURCES");
        }
    }

    #[test]
    fn any_change_of_shape_changes_the_fingerprint() {
        let base = of(&SM90.shapes);
        let mut a = SM90.shapes;
        a.compact_prefetch_tiles += 1;
        let mut b = SM90.shapes;
        b.scan_pipeline = b.scan_pipeline.with(4, Pipeline { stages: 5, ..b.scan_pipeline.at(4) });
        let mut c = SM90.shapes;
        c.scan_splits = &c.scan_splits[1..];
        let mut d = SM90.shapes;
        d.sort_ballot = d.sort_ballot.with(1, true);
        let mut e = SM90.shapes;
        e.sort_values = e.sort_values.with(8, e.sort_values.at(4));
        for (name, s) in [("prefetch", a), ("pipeline", b), ("splits", c), ("ballot", d), ("sort values", e)] {
            assert_ne!(of(&s), base, "{name}");
        }
        assert_eq!(of(&SM90.shapes), base);
    }

    #[test]
    fn the_global_is_found_as_the_backend_writes_it() {
        let v: u64 = 0x0123_4567_89ab_cdef;
        let bytes: Vec<String> = v.to_le_bytes().iter().map(|b| std::format!("{b}")).collect();
        let b8 = std::format!(".visible .global .align 8 .b8 {SYMBOL}[8] = {{{}}};", bytes.join(", "));
        let module = std::format!(".version 8.3\n.target sm_90\n\n{b8}\n\n.visible .entry k()\n{{\n}}\n");
        assert_eq!(find(&module), Some(v));
        assert_eq!(find(&std::format!(".global .align 8 .u64 {SYMBOL} = {v};")), Some(v));
        assert_eq!(find(&std::format!(".visible .global .align 8 .b64 {SYMBOL} = 0x{v:x};")), Some(v));
        assert_eq!(find(&std::format!(".visible .global .align 8 .b8 {SYMBOL}[8] = {{1, 2, 3}};")), None);
        assert_eq!(find(&std::format!(".visible .global .align 8 .u64 {SYMBOL}_OTHER = 1;")), None);
        assert_eq!(find(".visible .entry k()\n{\n}\n"), None);
    }
}
