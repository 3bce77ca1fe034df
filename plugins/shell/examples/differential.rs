//! The long run of the differential test of the command reader against bash:
//!
//! ```text
//! cargo run --release --manifest-path plugins/Cargo.toml -p acp-gate-shell \
//!     --example differential -- [COUNT [SEED [THREADS]]]
//! ```
//!
//! Prints how many commands were compared and the disagreements by class; exits 1 when bash
//! ran something the reader, claiming it saw everything, did not report.

#[path = "../tests/support/differential.rs"]
mod differential;

fn main() {
    differential::stub_main_if_stub();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count = args.first().and_then(|n| n.parse().ok()).unwrap_or(100_000);
    let seed = args
        .get(1)
        .and_then(|s| {
            s.strip_prefix("0x")
                .map_or_else(|| s.parse().ok(), |h| u64::from_str_radix(h, 16).ok())
        })
        .unwrap_or(1);
    let threads = args
        .get(2)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    if let Some(command) = std::env::var_os("DIFFERENTIAL_READ") {
        let reading = acp_gate_shell::read_shell(&command.to_string_lossy(), "/home", "/w");
        for c in &reading.commands {
            let argv: Vec<_> = c.argv.iter().map(|a| (&a.text, a.dynamic)).collect();
            println!("{:?} {argv:?} env {:?} cwd {:?}", c.name, c.env, c.cwd);
        }
        println!("notes {:?}", reading.notes);
        return;
    }
    if std::env::var_os("DIFFERENTIAL_SHOW").is_some() {
        for index in 0..count {
            println!("{}", differential::generate(seed, index));
        }
        return;
    }
    let started = std::time::Instant::now();
    let summary = differential::run(seed, count, threads);
    println!(
        "differential: seed {seed:#x}, {threads} threads, {:.1?}\n{}",
        started.elapsed(),
        summary.report()
    );
    if summary.failures() > 0 {
        std::process::exit(1);
    }
}
