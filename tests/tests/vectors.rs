//! The lecture vectors (tests/vectors/lecture_examples.json, every value recomputed): the CPU
//! reference, the work counts, and, on a GPU, every scan algorithm and the round-by-round traces
//! read back from the kernels.

use gpu_scan::reference as cpu;
use gpu_scan::{Algorithm, BlockAlgo, Gpu, Op, Propagation, ScanOptions};
use serde_json::Value;
use std::process::ExitCode;
use workspace_tests::{gpu_test, test, vectors};

fn main() -> ExitCode {
    workspace_tests::main(vec![
        test("cpu_reference_matches_every_scan_example", cpu_reference_matches_every_scan_example),
        test("hierarchical_example_by_hand", hierarchical_example_by_hand),
        test("work_counts", work_counts),
        gpu_test("every_algorithm_on_the_gpu_matches_every_scan_example", every_algorithm_matches_every_scan_example),
        gpu_test("gpu_traces_match_the_lecture_traces", gpu_traces_match_the_lecture_traces),
        gpu_test("traces_work_for_sizes_that_are_not_powers_of_two", traces_work_for_other_sizes),
    ])
}

fn nums(v: &Value) -> Vec<u32> {
    v.as_array().expect("an array").iter().map(|x| x.as_u64().expect("a number") as u32).collect()
}

fn scans() -> Vec<Value> {
    vectors()["scans"].as_array().expect("scans").clone()
}

fn cpu_reference_matches_every_scan_example() {
    for s in scans() {
        assert_eq!(s["op"], "add");
        let input = nums(&s["input"]);
        assert_eq!(cpu::scan(Op::Add, &input, false, None).unwrap(), nums(&s["inclusive"]), "{}", s["name"]);
        assert_eq!(cpu::scan(Op::Add, &input, true, None).unwrap(), nums(&s["exclusive"]), "{}", s["name"]);
    }
    let f = &vectors()["flag_to_address"];
    assert_eq!(cpu::scan(Op::Add, &nums(&f["flags"]), true, None).unwrap(), nums(&f["exclusive"]));
    let s = &vectors()["sandwich"];
    let marks = cpu::scan(Op::Add, &nums(&s["demands"]), false, None).unwrap();
    assert_eq!(marks, nums(&s["cut_marks_inclusive"]));
    assert_eq!(s["length"].as_u64().unwrap() as u32 - marks.last().unwrap(), s["leftover"].as_u64().unwrap() as u32);
}

fn hierarchical_example_by_hand() {
    let h = &vectors()["hierarchical"];
    let input = nums(&h["input"]);
    let b = h["block_size"].as_u64().unwrap() as usize;
    let totals: Vec<u32> = input.chunks(b).map(|c| c.iter().sum()).collect();
    assert_eq!(totals, nums(&h["block_totals"]));
    let offsets = cpu::scan(Op::Add, &totals, true, None).unwrap();
    assert_eq!(offsets, nums(&h["block_offsets"]));
    let local = cpu::scan(Op::Add, &input[b..], true, None).unwrap();
    assert_eq!(local, nums(&h["second_block_local_exclusive"]));
    let global: Vec<u32> = local.iter().map(|x| x + offsets[1]).collect();
    assert_eq!(global, nums(&h["second_block_global_exclusive"]));
}

fn work_counts() {
    let w = &vectors()["work_counts"];
    for (m, adds) in w["kogge_stone_adds"].as_object().unwrap() {
        assert_eq!(BlockAlgo::KoggeStone.combines(m.parse().unwrap()), adds.as_u64().unwrap(), "m={m}");
    }
    for (m, adds) in w["blelloch_adds_2n_minus_2"].as_object().unwrap() {
        assert_eq!(BlockAlgo::Blelloch.combines(m.parse().unwrap()), adds.as_u64().unwrap(), "m={m}");
    }
}

fn every_algorithm_matches_every_scan_example(gpu: &Gpu) {
    let mut algorithms = vec![Algorithm::SinglePass, Algorithm::Naive];
    for block in BlockAlgo::ALL.into_iter().filter(|b| *b != BlockAlgo::KoggeStoneRacy) {
        for propagation in [Propagation::ReduceThenScan, Propagation::ScanThenAdd] {
            algorithms.push(Algorithm::Hierarchical { block, propagation });
        }
    }
    for s in scans() {
        let input = nums(&s["input"]);
        for algorithm in &algorithms {
            for (exclusive, key) in [(false, "inclusive"), (true, "exclusive")] {
                let opts = ScanOptions::new(Op::Add).exclusive(exclusive).algorithm(*algorithm);
                assert_eq!(
                    gpu.scan_host(&input, &opts).unwrap(),
                    nums(&s[key]),
                    "{} {} {key}",
                    s["name"],
                    algorithm.name()
                );
            }
        }
    }
}

fn states(trace: &gpu_scan::trace::Trace<u32>, phases: &[&str]) -> Vec<(String, u32, Vec<u32>)> {
    trace
        .steps
        .iter()
        .filter(|s| phases.contains(&s.phase))
        .map(|s| (s.phase.to_string(), s.stride, s.state.clone()))
        .collect()
}

fn gpu_traces_match_the_lecture_traces(gpu: &Gpu) {
    let mut checked = 0;
    for s in scans() {
        let input = nums(&s["input"]);
        let name = s["name"].as_str().unwrap().to_string();
        if let Some(expected) = s["kogge_stone_trace"].as_array() {
            let want: Vec<(String, u32, Vec<u32>)> = expected
                .iter()
                .map(|r| ("scan".to_string(), r["stride"].as_u64().unwrap() as u32, nums(&r["state"])))
                .collect();
            for algo in [BlockAlgo::KoggeStone, BlockAlgo::KoggeStoneInPlace] {
                let t = gpu.trace(algo, Op::Add, &input).unwrap();
                assert_eq!(states(&t, &["scan"]), want, "{name} {}", algo.name());
                assert_eq!(t.inclusive, nums(&s["inclusive"]));
                assert_eq!(t.exclusive, nums(&s["exclusive"]));
                checked += 1;
            }
        }
        if let Some(expected) = s["blelloch_trace"].as_array() {
            let want: Vec<(String, u32, Vec<u32>)> = expected
                .iter()
                .map(|r| {
                    (
                        r["phase"].as_str().unwrap().to_string(),
                        r["stride"].as_u64().unwrap_or(0) as u32,
                        nums(&r["state"]),
                    )
                })
                .collect();
            for algo in [BlockAlgo::Blelloch, BlockAlgo::BlellochNoPad] {
                let t = gpu.trace(algo, Op::Add, &input).unwrap();
                assert_eq!(states(&t, &["up", "zero-root", "down"]), want, "{name} {}", algo.name());
                assert_eq!(t.exclusive, nums(&s["exclusive"]));
                checked += 1;
            }
            // Brent-Kung shares Blelloch's up-sweep, then ends with the inclusive scan in place.
            let t = gpu.trace(BlockAlgo::BrentKung, Op::Add, &input).unwrap();
            let ups: Vec<_> = want.iter().filter(|w| w.0 == "up").cloned().collect();
            assert_eq!(states(&t, &["up"]), ups, "{name} brent-kung up-sweep");
            assert_eq!(t.steps.last().unwrap().state, nums(&s["inclusive"]), "{name} brent-kung result");
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} traces checked");
}

fn traces_work_for_other_sizes(gpu: &Gpu) {
    for n in [1usize, 3, 5, 10, 33, 100, 1000, 1024] {
        let input: Vec<u32> = (0..n as u32).map(|i| (i * 7 + 3) % 11).collect();
        let inclusive = cpu::scan(Op::Add, &input, false, None).unwrap();
        let exclusive = cpu::scan(Op::Add, &input, true, None).unwrap();
        for algo in BlockAlgo::ALL.into_iter().filter(|a| a.traceable() && *a != BlockAlgo::KoggeStoneRacy) {
            let t = gpu.trace(algo, Op::Add, &input).unwrap();
            assert_eq!(t.inclusive, inclusive, "n={n} {}", algo.name());
            assert_eq!(t.exclusive, exclusive, "n={n} {}", algo.name());
            assert!(t.steps.len() as u32 <= algo.trace_rounds(n as u32));
        }
    }
}
