//! `cargo xtask package`: the library (`gpu-scan`) and `scan-abi` as `.crate` files that build on
//! stable alone.
//!
//! In the repository the library's build script compiles the kernels with the pinned nightly.
//! The packaged library instead carries the PTX module prebuilt and deflated in `kernels/`, and
//! ships `host/packaged/build.rs` as its build script, which only names that file. The two crates
//! are staged as a workspace of their own (the repository's manifests, with the PTX builder
//! dropped from the build dependencies and `scan-abi` given its version), then packaged and
//! verified together by `cargo package`, which builds the packaged library once from its
//! `.crate` before it reports success.

use crate::{root, run, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use toml_edit::{value, DocumentMut, Item, Table};

/// Where the staged workspace is written (replaced on every run).
const STAGE: &str = "package-stage";

/// The packaged crates, as `(folder in the repository, package name)`.
const CRATES: [(&str, &str); 2] = [("abi", "scan-abi"), ("host", "gpu-scan")];

/// The repository's files each packaged crate carries besides its manifest.
const FILES: [&str; 4] = ["src", "examples", "tests", "README.md"];

/// Packages both crates into `<target>/package/` and returns the `.crate` files.
pub fn package() -> Result<Vec<PathBuf>> {
    let root = root();
    let target = target_dir(&root);
    // The kernels are built apart from the host's own build of them (`gpu-ptx`), so the test that
    // the packaged module equals the one the library embeds compares two builds, not one file.
    let mut opts = ptx_builder::Options::for_workspace(&root);
    opts.target_dir = target.join("package-ptx");
    let built = ptx_builder::build(&opts)?;
    let ptx = std::fs::read(&built.ptx)?;

    let stage = target.join(STAGE);
    if stage.exists() {
        std::fs::remove_dir_all(&stage)?;
    }
    let workspace = std::fs::read_to_string(root.join("Cargo.toml"))?.parse::<DocumentMut>()?;
    let version = workspace["workspace"]["package"]["version"]
        .as_str()
        .ok_or("the workspace manifest has no [workspace.package] version")?
        .to_string();
    std::fs::create_dir_all(&stage)?;
    std::fs::write(stage.join("Cargo.toml"), stage_manifest(&workspace, &version).to_string())?;
    std::fs::copy(root.join("Cargo.lock"), stage.join("Cargo.lock"))?;

    for (dir, name) in CRATES {
        let to = stage.join(name);
        let from = root.join(dir);
        std::fs::create_dir_all(&to)?;
        for f in FILES {
            let src = if f == "README.md" { root.join(f) } else { from.join(f) };
            if src.exists() {
                copy_tree(&src, &to.join(f))?;
            }
        }
        for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
            std::fs::copy(root.join(license), to.join(license))?;
        }
        let mut manifest = std::fs::read_to_string(from.join("Cargo.toml"))?.parse::<DocumentMut>()?;
        prepare_manifest(&mut manifest);
        std::fs::write(to.join("Cargo.toml"), manifest.to_string())?;
    }
    let lib = stage.join("gpu-scan");
    std::fs::copy(root.join("host/packaged/build.rs"), lib.join("build.rs"))?;
    std::fs::create_dir_all(lib.join("kernels"))?;
    let deflated = miniz_oxide::deflate::compress_to_vec(&ptx, 9);
    std::fs::write(lib.join("kernels").join(format!("gpu_scan_kernels.{}.ptx.deflate", opts.arch)), &deflated)?;
    println!(
        "PTX module: {} ({} MB, {} MB deflated, {}, built by {})",
        built.ptx.display(),
        ptx.len() / 1_000_000,
        deflated.len() / 1_000_000,
        opts.arch,
        built.toolchain
    );

    // Packaged and verified together: the library's verification build resolves `scan-abi` to the
    // package made beside it. Cargo identifies that package by its version alone, both where it
    // unpacks it and in the build it keeps of it, so an earlier run's copy and build go first.
    forget_unpacked(&version)?;
    run(Command::new(env!("CARGO"))
        .current_dir(&stage)
        .env("CARGO_TARGET_DIR", &target)
        .args(["clean", "-p", "scan-abi"]))?;
    run(Command::new(env!("CARGO")).current_dir(&stage).env("CARGO_TARGET_DIR", &target).args([
        "package",
        "--workspace",
        "--no-metadata",
    ]))?;
    let crates: Vec<PathBuf> =
        CRATES.iter().map(|(_, name)| target.join("package").join(format!("{name}-{version}.crate"))).collect();
    for c in &crates {
        let bytes = std::fs::metadata(c).map_err(|e| format!("{}: {e}", c.display()))?.len();
        println!("{} ({:.1} MB)", c.display(), bytes as f64 / 1e6);
    }
    Ok(crates)
}

/// Removes the copies of our crates that an earlier `cargo package` unpacked into
/// `$CARGO_HOME/registry/src/`. Cargo verifies the library against `scan-abi` unpacked from a
/// temporary registry there, and reuses a copy of the same version found in place without
/// comparing its contents, so a stale one would be built instead of the crate just packaged.
fn forget_unpacked(version: &str) -> Result<()> {
    let home = match std::env::var_os("CARGO_HOME") {
        Some(h) => PathBuf::from(h),
        None => match std::env::var_os("HOME") {
            Some(h) => PathBuf::from(h).join(".cargo"),
            None => return Ok(()),
        },
    };
    let Ok(registries) = std::fs::read_dir(home.join("registry").join("src")) else { return Ok(()) };
    for registry in registries {
        let registry = registry?.path();
        for (_, name) in CRATES {
            let unpacked = registry.join(format!("{name}-{version}"));
            if unpacked.is_dir() {
                std::fs::remove_dir_all(&unpacked).map_err(|e| format!("{}: {e}", unpacked.display()))?;
            }
        }
    }
    Ok(())
}

/// The target directory this build uses (`CARGO_TARGET_DIR`, else `target/`).
fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(|t| root.join(t)).unwrap_or_else(|| root.join("target"))
}

/// The staged workspace: the repository's `[workspace.package]`, and `scan-abi` as a dependency
/// with a version, which a package needs.
fn stage_manifest(workspace: &DocumentMut, version: &str) -> DocumentMut {
    let mut doc = DocumentMut::new();
    let mut ws = Table::new();
    ws["resolver"] = value("2");
    let mut members = toml_edit::Array::new();
    for (_, name) in CRATES {
        members.push(name);
    }
    ws["members"] = value(members);
    ws["package"] = workspace["workspace"]["package"].clone();
    let mut deps = Table::new();
    let mut abi = toml_edit::InlineTable::new();
    abi.insert("path", "scan-abi".into());
    abi.insert("version", format!("={version}").into());
    deps["scan-abi"] = value(abi);
    ws["dependencies"] = Item::Table(deps);
    doc["workspace"] = Item::Table(ws);
    doc
}

/// A crate's manifest as it is packaged: the repository's, without the PTX builder (the kernels
/// come prebuilt), with the README it carries.
fn prepare_manifest(manifest: &mut DocumentMut) {
    manifest.remove("build-dependencies");
    let package = manifest["package"].as_table_mut().expect("a [package] table");
    package["readme"] = value("README.md");
    package.remove("publish");
}

/// Copies a file, or a folder with everything in it.
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    if from.is_dir() {
        std::fs::create_dir_all(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
    } else {
        std::fs::copy(from, to)?;
    }
    Ok(())
}
