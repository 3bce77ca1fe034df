//! `cargo bench --bench runtime`: what a decision costs, measured against baselines taken in the
//! same run (figures are noisy on a shared 2-core machine: read the ratios).
//!
//! 1. One handler evaluation per built-in plugin: a fresh instance per request (what the chain
//!    does) against one reused instance (the floor the sandbox's isolation is paid on top of).
//! 2. The default chain's whole decision for typical requests.
//! 3. Start-up of `acp-gate check` on one request: cold compile cache against warm.
//! 4. The compile cache on heavy plugins: the first load of the JavaScript and Python examples
//!    (examples/plugins/, built here with their own toolchains) against the second.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use acp_gate::request::{SessionContext, ToolRequest};
use acp_gate::runtime::{Limits, Runtime};
use acp_gate::{LoadOptions, builtin, load_chain};

const EVALUATIONS: usize = 2000;
const STARTS: usize = 15;

/// Median and the 10th..90th percentile spread of `samples`.
struct Stats {
    median: Duration,
    p10: Duration,
    p90: Duration,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    Stats {
        median: at(0.5),
        p10: at(0.1),
        p90: at(0.9),
    }
}

fn show(name: &str, ours: &Stats, baseline_name: &str, baseline: &Stats) {
    let ratio = ours.median.as_secs_f64() / baseline.median.as_secs_f64();
    println!(
        "{name:<44} {:>10.1} µs  (p10 {:.1}, p90 {:.1})   vs {baseline_name} {:.1} µs   ratio {ratio:.2}",
        micros(ours.median),
        micros(ours.p10),
        micros(ours.p90),
        micros(baseline.median),
    );
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn requests(workspace: &Path) -> Vec<(&'static str, ToolRequest)> {
    let ctx = SessionContext::for_workspace("bench", workspace);
    let make = |params: serde_json::Value| {
        ToolRequest::from_permission_request(&params, None, &ctx).unwrap()
    };
    let options = serde_json::json!([{"optionId": "a", "name": "Allow", "kind": "allow_once"}, {"optionId": "r", "name": "Reject", "kind": "reject_once"}]);
    vec![
        (
            "command `cargo test && git status`",
            make(
                serde_json::json!({"toolCall": {"toolCallId": "1", "title": "Bash", "rawInput": {"command": "cargo test && git status"}}, "options": options}),
            ),
        ),
        (
            "edit `src/main.rs`",
            make(
                serde_json::json!({"toolCall": {"toolCallId": "2", "title": "Edit", "rawInput": {"file_path": "src/main.rs", "old_string": "a", "new_string": "b"}}, "options": options}),
            ),
        ),
        (
            "write `~/.ssh/authorized_keys`",
            make(
                serde_json::json!({"toolCall": {"toolCallId": "3", "title": "Write", "rawInput": {"file_path": "~/.ssh/authorized_keys", "content": "k"}}, "options": options}),
            ),
        ),
    ]
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let scratch = tempfile::tempdir()?;
    let workspace = scratch.path().join("workspace");
    std::fs::create_dir_all(workspace.join("src"))?;
    println!(
        "acp-gate runtime benchmark ({} evaluations per figure; {} starts)\n",
        EVALUATIONS, STARTS
    );

    println!("== one handler evaluation: fresh instance per request vs one reused instance");
    let runtime = Runtime::new(Some(scratch.path().join("cache")))?;
    let request = &requests(&workspace)[0].1;
    for name in builtin::names() {
        let plugin = runtime.load(
            name,
            builtin::bytes(name).unwrap(),
            None,
            &builtin::grants(name),
        )?;
        let limits = Limits::default();
        let mut fresh = Vec::with_capacity(EVALUATIONS);
        for _ in 0..EVALUATIONS {
            let started = Instant::now();
            let evaluation = runtime.evaluate(&plugin, request, "{}", limits).await;
            fresh.push(started.elapsed());
            evaluation.outcome.map_err(anyhow::Error::msg)?;
        }
        let mut instance = runtime
            .instantiate(&plugin, request, limits)
            .await
            .map_err(anyhow::Error::msg)?;
        let mut reused = Vec::with_capacity(EVALUATIONS);
        for _ in 0..EVALUATIONS {
            let started = Instant::now();
            instance
                .evaluate(request, "{}")
                .await
                .map_err(anyhow::Error::msg)?;
            reused.push(started.elapsed());
        }
        show(
            &format!("{name}, fresh instance"),
            &stats(fresh),
            "reused instance",
            &stats(reused),
        );
    }

    println!("\n== the default chain's decision (three built-ins, fresh instances)");
    let chain = load_chain(&LoadOptions {
        workspace: workspace.clone(),
        ..Default::default()
    })
    .await?;
    for (name, request) in requests(&workspace) {
        let mut samples = Vec::with_capacity(EVALUATIONS);
        let mut outcome = "";
        for _ in 0..EVALUATIONS {
            let started = Instant::now();
            outcome = chain.decide(&request).await.outcome.as_str();
            samples.push(started.elapsed());
        }
        let s = stats(samples);
        println!(
            "{name:<44} {:>10.1} µs  (p10 {:.1}, p90 {:.1})   -> {outcome}",
            micros(s.median),
            micros(s.p10),
            micros(s.p90)
        );
    }

    println!("\n== start-up: `acp-gate check` on one request, cold compile cache vs warm");
    let request_file = scratch.path().join("request.json");
    std::fs::write(
        &request_file,
        r#"{"toolCall": {"toolCallId": "1", "rawInput": {"command": "cargo test"}}}"#,
    )?;
    let check = |cache: &Path| -> anyhow::Result<Duration> {
        let started = Instant::now();
        let output = Command::new(env!("CARGO_BIN_EXE_acp-gate"))
            .args(["check", "--format", "json"])
            .arg(&request_file)
            .current_dir(&workspace)
            .env("HOME", scratch.path())
            .env("ACP_GATE_CACHE_DIR", cache)
            .output()?;
        anyhow::ensure!(
            output.status.success(),
            "check failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        Ok(started.elapsed())
    };
    let warm_cache = scratch.path().join("warm-cache");
    check(&warm_cache)?;
    let mut cold = Vec::new();
    let mut warm = Vec::new();
    for run in 0..STARTS {
        let cold_cache = scratch.path().join(format!("cold-cache-{run}"));
        cold.push(check(&cold_cache)?);
        warm.push(check(&warm_cache)?);
    }
    let (cold, warm) = (stats(cold), stats(warm));
    let ratio = cold.median.as_secs_f64() / warm.median.as_secs_f64();
    println!(
        "cold cache {:.1} ms (p10 {:.1}, p90 {:.1}); warm cache {:.1} ms (p10 {:.1}, p90 {:.1}); cold / warm = {ratio:.1}x",
        micros(cold.median) / 1e3,
        micros(cold.p10) / 1e3,
        micros(cold.p90) / 1e3,
        micros(warm.median) / 1e3,
        micros(warm.p10) / 1e3,
        micros(warm.p90) / 1e3,
    );

    println!("\n== the compile cache on heavy plugins: first load (compiles) vs second (cached)");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (lang, wasm) in [
        ("js", "domain_allowlist.wasm"),
        ("python", "change_freeze.wasm"),
    ] {
        let out = repo.join("target/examples").join(lang).join(wasm);
        let build = Command::new("bash")
            .arg(repo.join("examples/plugins").join(lang).join("build.sh"))
            .env("OUT", &out)
            .output()?;
        anyhow::ensure!(
            build.status.success(),
            "building the {lang} example failed (run scripts/install-plugin-toolchains.sh): {}",
            String::from_utf8_lossy(&build.stderr)
        );
        let load = |cache: &Path| -> anyhow::Result<Duration> {
            let started = Instant::now();
            let output = Command::new(env!("CARGO_BIN_EXE_acp-gate"))
                .args(["plugin", "validate", "--imports", "log"])
                .arg(&out)
                .env("ACP_GATE_CACHE_DIR", cache)
                .output()?;
            anyhow::ensure!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            Ok(started.elapsed())
        };
        let cache = scratch.path().join(format!("{lang}-cache"));
        let first = load(&cache)?;
        let second = stats(
            (0..5)
                .map(|_| load(&cache))
                .collect::<anyhow::Result<Vec<_>>>()?,
        );
        let size = std::fs::metadata(&out)?.len() >> 10;
        println!(
            "{lang:<7} {size:>6} KiB   first load {:>8.1} ms   second load {:>6.1} ms (median of 5)   first / second = {:.0}x",
            micros(first) / 1e3,
            micros(second.median) / 1e3,
            first.as_secs_f64() / second.median.as_secs_f64()
        );
    }
    Ok(())
}
