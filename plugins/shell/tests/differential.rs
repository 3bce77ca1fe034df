//! The command reader checked against bash: a bounded run with a fixed seed (see
//! `support/differential.rs`; the long run is `examples/differential.rs`). Runs without the
//! test harness, because this binary is also the recorder bash runs in place of every program.

#[path = "support/differential.rs"]
mod differential;

/// Enough to cover every production of the grammar many times, in well under a minute.
const COUNT: u64 = 2_000;
const SEED: u64 = 0x39_0006;

fn main() {
    differential::stub_main_if_stub();
    let count = std::env::var("DIFFERENTIAL_COUNT")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(COUNT);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let started = std::time::Instant::now();
    let summary = differential::run(SEED, count, threads);
    println!(
        "differential (seed {SEED:#x}, {:.1?}):\n{}",
        started.elapsed(),
        summary.report()
    );
    assert_eq!(summary.commands, count);
    assert!(
        summary.classes.get("programs run").copied().unwrap_or(0) > count,
        "bash ran too few programs: the recorders do not record"
    );
    assert_eq!(
        summary.failures(),
        0,
        "bash ran what the reader, claiming it saw everything, did not report"
    );
}
