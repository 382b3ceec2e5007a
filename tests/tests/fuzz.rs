//! File-reader fuzzing (proptest): arbitrary bytes, and damaged copies of a valid `.npy` file,
//! give a value or a clear error, never a panic.

use gpu_scan::io;
use proptest::prelude::*;

fn valid_npy() -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("gpu-scan-fuzz-src-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("v.npy");
    if !p.exists() {
        io::write::<u32>(&p, &[1, 2, 3, 4, 5, 6, 7, 8], true).unwrap();
    }
    std::fs::read(&p).unwrap()
}

fn try_all(bytes: &[u8], case: u64) -> Result<(), TestCaseError> {
    let dir = std::env::temp_dir().join(format!("gpu-scan-fuzz-{}-{case}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["f.npy", "f.bin"] {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        let _ = io::input_type(&p, None);
        let _ = io::count(&p, gpu_scan::ElemType::U32);
        if let Err(e) = io::read::<u32>(&p) {
            prop_assert!(e.to_string().contains(name), "errors name the file: {e}");
        }
        let _ = io::read::<f64>(&p);
    }
    std::fs::remove_dir_all(&dir).unwrap();
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300), case: u64) {
        try_all(&bytes, case)?;
    }

    #[test]
    fn damaged_npy(at in 0usize..200, value: u8, cut in 0usize..200, case: u64) {
        let mut bytes = valid_npy();
        let at = at % bytes.len();
        bytes[at] = value;
        bytes.truncate(bytes.len() - cut % bytes.len());
        try_all(&bytes, case)?;
    }
}
