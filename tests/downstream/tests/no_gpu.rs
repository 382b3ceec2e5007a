//! The program scans where a GPU is, and elsewhere says why not in the library's words (its
//! `Display`, not its `Debug`) with exit code 3.

use std::process::Command;

#[test]
fn scans_or_says_why_not() {
    let out = Command::new(env!("CARGO_BIN_EXE_gpu-scan-downstream")).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    match gpu_scan::Gpu::new(0) {
        Ok(_) => {
            assert!(out.status.success(), "{stderr}");
            assert_eq!(stdout.trim(), "[0, 3, 4, 11, 11, 15, 16, 22]");
        }
        Err(e) => {
            assert_eq!(out.status.code(), Some(3), "{stderr}");
            assert_eq!(stderr.trim(), format!("error: {e}"));
            assert!(!stderr.contains("NoDriver") && !stderr.contains("NoDevice"), "{stderr}");
            if !gpu_scan::driver_present() {
                assert!(stderr.contains("no CUDA driver found"), "{stderr}");
            }
        }
    }
}
