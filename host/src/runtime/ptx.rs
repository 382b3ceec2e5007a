//! The kernels' PTX, split into small modules loaded on first use.
//!
//! The whole module holds about 1300 kernels; having the driver JIT-compile all of them would
//! take seconds at every start. Instead the text is split into top-level items once, and each
//! group of kernels (`scan_abi::kernel::Group`: one family and element type) becomes its own module: the header and every
//! non-kernel item (declarations, device functions) followed by the group's kernels, with the
//! launch bounds the tuning gives them.

use scan_abi::kernel::{Group, Kernel};
use std::collections::{BTreeMap, HashMap};

/// The kernels embedded at build time, deflated: built from gpu/ in the repository (build.rs), or
/// prebuilt in a packaged crate (packaged/build.rs).
const EMBEDDED_DEFLATED: &[u8] = include_bytes!(env!("GPU_SCAN_PTX_DEFLATED"));

/// The PTX text of the embedded kernels.
pub fn embedded() -> String {
    let bytes = miniz_oxide::inflate::decompress_to_vec(EMBEDDED_DEFLATED).expect("the embedded PTX inflates");
    String::from_utf8(bytes).expect("the embedded PTX is UTF-8")
}

/// Launch bounds by kernel name: (threads per block, blocks per SM).
pub type Bounds = HashMap<String, (u32, u32)>;

/// The launch bounds `tuning` gives, by kernel name.
pub fn bounds(tuning: &scan_abi::Tuning) -> Bounds {
    scan_abi::bounds::bounded_kernels(tuning).map(|(k, threads, blocks)| (k.to_string(), (threads, blocks))).collect()
}

/// `ptx` with the launch bounds of `bounds` in the kernels they name.
pub fn with_bounds(ptx: &str, bounds: &Bounds) -> String {
    let mut out = String::with_capacity(ptx.len() + 64 * bounds.len());
    scan_abi::bounds::insert(ptx, |name| bounds.get(name).copied(), &mut out).expect("writing to a String");
    out
}

/// A PTX module split into groups of kernels.
#[derive(Debug)]
pub struct PtxModule {
    prelude: String,
    groups: BTreeMap<Group, Vec<(String, String)>>,
    /// Entries that name no kernel the host knows (none in a module built from this source).
    unknown: Vec<String>,
    arch: Option<u32>,
}

impl PtxModule {
    pub fn parse(text: &str) -> PtxModule {
        let mut prelude = String::new();
        let known: HashMap<String, Kernel> = Kernel::all().map(|k| (k.to_string(), k)).collect();
        let mut groups: BTreeMap<Group, Vec<(String, String)>> = BTreeMap::new();
        let mut unknown = Vec::new();
        let mut item = String::new();
        let (mut depth, mut opened) = (0i32, false);
        for line in text.lines() {
            item.push_str(line);
            item.push('\n');
            for c in line.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            let trimmed = line.trim();
            if depth == 0 && (opened || trimmed.is_empty() || trimmed.ends_with(';')) {
                match entry_name(&item) {
                    Some(name) => match known.get(&name) {
                        Some(k) => groups.entry(k.group()).or_default().push((name, std::mem::take(&mut item))),
                        None => {
                            unknown.push(name);
                            item.clear();
                        }
                    },
                    None => prelude.push_str(&std::mem::take(&mut item)),
                }
                opened = false;
            }
        }
        prelude.push_str(&item);
        let arch = text
            .lines()
            .find_map(|l| l.trim().strip_prefix(".target sm_"))
            .and_then(|s| s.trim_end_matches(|c: char| !c.is_ascii_digit()).parse().ok());
        PtxModule { prelude, groups, unknown, arch }
    }

    /// The `sm_XY` architecture the module targets, as `XY`.
    pub fn arch(&self) -> Option<u32> {
        self.arch
    }

    /// Source of the module for one group of kernels, with `bounds`, or `None` if no kernel is in
    /// the group.
    pub fn group_source(&self, group: Group, bounds: &Bounds) -> Option<String> {
        let kernels = self.groups.get(&group)?;
        let mut src = self.prelude.clone();
        for (_, text) in kernels {
            src.push_str(&with_bounds(text, bounds));
        }
        Some(src)
    }

    /// Every kernel name, known to the host or not.
    pub fn kernel_names(&self) -> impl Iterator<Item = &str> {
        self.groups.values().flatten().map(|(n, _)| n.as_str()).chain(self.unknown.iter().map(String::as_str))
    }
}

/// The kernel an item defines, if it is a kernel (`.entry`).
fn entry_name(item: &str) -> Option<String> {
    let head = &item[..item.find('{').unwrap_or(item.len())];
    let rest = head.split(".entry").nth(1)?;
    Some(rest.trim_start().split(|c: char| c == '(' || c.is_whitespace()).next()?.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_abi::block::BlockAlgo;
    use scan_abi::{ElemType, Family, Op};

    const SAMPLE: &str = "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 8.3\n.target sm_90\n.address_size 64\n\n\
        \t// .globl\tfoo\n.extern .shared .align 16 .b8 gpu_launch_sized_workgroup_mem[];\n\n\
        .visible .func helper()\n{\n\tret;\n}\n\
        \t// .globl\tsingle_pass_u32_add\n.visible .entry single_pass_u32_add(\n\t.param .u64 p\n)\n{\n\t{ .reg .pred p; }\n\tret;\n}\n\
        \t// .globl\tsingle_pass_u32_min\n.visible .entry single_pass_u32_min(\n\t.param .u64 p\n)\n{\n\tret;\n}\n\
        \t// .globl\tnaive_f32_add\n.visible .entry naive_f32_add(\n\t.param .u64 p\n)\n{\n\tret;\n}\n";

    const SINGLE_PASS_U32: Group = Group { family: Family::SinglePass, ty: ElemType::U32 };

    #[test]
    fn splits_kernels_into_groups_with_the_shared_prelude() {
        let m = PtxModule::parse(SAMPLE);
        assert_eq!(m.arch(), Some(90));
        let names: Vec<_> = m.kernel_names().collect();
        assert_eq!(names, ["naive_f32_add", "single_pass_u32_add", "single_pass_u32_min"]);
        let g = m.group_source(SINGLE_PASS_U32, &Bounds::new()).unwrap();
        assert!(g.contains(".target sm_90") && g.contains("gpu_launch_sized_workgroup_mem") && g.contains("helper()"));
        assert!(g.contains("single_pass_u32_add(") && g.contains("single_pass_u32_min("));
        assert!(!g.contains("naive_f32_add"));
        let hier = Kernel::new(Family::HierTile(BlockAlgo::KoggeStone), ElemType::U32, Op::Add).group();
        assert!(m.group_source(hier, &Bounds::new()).is_none());
    }

    #[test]
    fn launch_bounds_go_into_the_named_kernels_only() {
        let m = PtxModule::parse(SAMPLE);
        let bounds = Bounds::from([("single_pass_u32_min".to_string(), (256, 3))]);
        let g = m.group_source(SINGLE_PASS_U32, &bounds).unwrap();
        let min = &g[g.find(".entry single_pass_u32_min").unwrap()..];
        assert!(min.contains(")\n.maxntid 256, 1, 1\n.minnctapersm 3\n{\n"), "{g}");
        assert_eq!(g.matches(".maxntid").count(), 1, "only the named kernel, not the function or the other kernel");
        let plain = m.group_source(SINGLE_PASS_U32, &Bounds::new()).unwrap();
        assert_eq!(g.replace(".maxntid 256, 1, 1\n.minnctapersm 3\n", ""), plain, "nothing else changes");
    }

    #[test]
    fn the_embedded_module_has_the_tunings_bounded_kernels() {
        let m = PtxModule::parse(&embedded());
        assert_eq!(m.arch(), Some(scan_abi::tuning::DEFAULT_ARCH));
        let have: std::collections::HashSet<&str> = m.kernel_names().collect();
        let bounds = bounds(scan_abi::tuning::for_arch(90));
        assert!(!bounds.is_empty());
        for name in bounds.keys() {
            assert!(have.contains(name.as_str()), "launch bounds for {name}, which the PTX lacks");
        }
    }

    #[test]
    fn every_kernel_is_in_its_groups_module() {
        let m = PtxModule::parse(&embedded());
        assert!(m.unknown.is_empty(), "entries the host does not know: {:?}", m.unknown);
        let mut groups: BTreeMap<Group, Vec<Kernel>> = BTreeMap::new();
        for k in Kernel::all() {
            groups.entry(k.group()).or_default().push(k);
        }
        for (group, kernels) in groups {
            let src = m.group_source(group, &Bounds::new()).unwrap_or_else(|| panic!("no module for {group}"));
            for k in kernels {
                assert!(src.contains(&format!(".entry {k}(")), "{k} is not in {group}'s module");
            }
        }
    }
}
