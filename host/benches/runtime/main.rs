//! `cargo bench --features bench --bench runtime -- [--json FILE] [--only SECTION,...]`: what
//! acp-gate costs, each figure against a baseline measured in the same run (figures are noisy
//! on a shared 2-core machine: read the ratios). BENCHMARKS.md has the results.
//!
//! Sections (the names `--only` takes):
//! - `instances`: one handler evaluation per built-in plugin, a fresh instance per request (what
//!   the chain does) against one reused instance.
//! - `decision`: the default chain's decision against the same checks as plain Rust calls of the
//!   built-in plugins' own code (the floor: what the sandbox costs), and against process-per-
//!   request hooks in bash and Python (the way Claude Code hooks work).
//! - `policy`: rules of the org policy through the sandbox against the same rules in Rego,
//!   evaluated in-process by regorus.
//! - `startup`: `acp-gate check` on one request (nothing compiles at start: the built-ins' native
//!   code is in the binary) against starting `true`.
//! - `proxy`: 10,000 `session/update` notifications through `acp-gate proxy` against a direct
//!   pipe: messages per second and latency per message.
//! - `load`: 1,000 permission requests sent at once through `acp-gate run` and through
//!   `acp-gate proxy`: each one's latency (median, p99) against the same requests one at a
//!   time, and that every one was decided as alone.
//! - `memory`: peak RSS of `acp-gate check`; RSS growth over the last 10,000 of 20,000
//!   permission requests in one `acp-gate run` (and over its first 10,000: the pool warming up).
//! - `heavy`: the JavaScript, Python and Go example plugins, and the `plugin new` template of
//!   every language on one request: fresh against reused instance per decision, and the
//!   compile cache (first load against the second).
//! - `hooks`: `acp-gate hook claude` as the process an agent starts per tool call (its resident
//!   server answering, and in its own process), against a bash hook that only prints a fixed
//!   answer (and beside a `jq` hook and `acp-gate check`); `acp-gate hook serve` answering the
//!   same call over HTTP, per call (p50, p99).
//! - `service`: `acp-gate serve` on SQLite and on PostgreSQL (two instances on one database):
//!   escalations a second, a decision's way to its gate with 1,000 gates waiting, audit records
//!   ingested a second, and an instance killed and restarted under load, counted afterwards
//!   (`service.rs`).
//! - `replay`: 1,000,000 recorded requests decided again under the default chain and a 100-rule
//!   org policy, a worker per core, against the same chain one at a time (`replay.rs`).
//!
//! With `--json FILE`, FILE gets one JSON object per comparison, one per line: `name`, `unit`,
//! `ours`, `baseline` (medians), `ours_p10`, `ours_p90`, `baseline_p10`, `baseline_p90`,
//! `ratio` (ours / baseline), `target` and `target_met` where there is a target, and figures of
//! the comparison's own; a section that cannot run writes `{"name", "skipped"}`.
//!
//! This binary is also the agent of the `proxy` and `memory` sections (run with
//! $ACP_GATE_BENCH_AGENT set it speaks ACP on stdio: `agent.rs`), the plain relay `proxy`
//! compares with (`--relay COMMAND...`), and what `memory` measures a command's peak RSS with
//! (`--peak-rss FILE COMMAND...`).

mod agent;
mod hooks;
mod native;
mod policy;
mod processes;
mod replay;
mod sandbox;
mod service;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use acp_gate::request::{SessionContext, ToolRequest};
use acp_gate::runtime::Runtime;

const SECTIONS: [&str; 11] = [
    "instances",
    "decision",
    "policy",
    "startup",
    "proxy",
    "load",
    "memory",
    "heavy",
    "hooks",
    "service",
    "replay",
];

/// Set (to anything) to make this binary the agent (agent.rs).
const AGENT: &str = "ACP_GATE_BENCH_AGENT";
/// Where the agent writes the resident memory of its client (agent.rs, `permissions N`).
const RSS_FILE: &str = "ACP_GATE_BENCH_RSS";
/// Where the agent writes its requests' latencies (agent.rs, `alone N` / `burst N`).
const LATENCY_FILE: &str = "ACP_GATE_BENCH_LATENCY";
/// The first argument of the `peak-rss` role (processes.rs, `peak_rss_role`).
const PEAK_RSS: &str = "--peak-rss";
/// The first argument of the `relay` role (processes.rs, `relay_role`).
const RELAY: &str = "--relay";

fn main() -> Result<()> {
    // First: the command `peak-rss` runs may be `acp-gate run` with $ACP_GATE_BENCH_AGENT set
    // for its agent.
    match std::env::args().nth(1).as_deref() {
        Some(PEAK_RSS) => return processes::peak_rss_role(),
        Some(RELAY) => return processes::relay_role(),
        _ => {}
    }
    if std::env::var_os(AGENT).is_some() {
        return agent::run();
    }
    let args = Args::parse(std::env::args().skip(1))?;
    // As acp-gate runs: a worker per core, where a plugin's spare instances are made and used
    // ones dropped while the next request is evaluated.
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(bench(args))
}

struct Args {
    json: Option<PathBuf>,
    only: Vec<String>,
}

impl Args {
    fn parse(mut args: impl Iterator<Item = String>) -> Result<Args> {
        let usage = "usage: cargo bench --features bench --bench runtime -- [--json FILE] [--only SECTION,...]";
        let mut parsed = Args {
            json: None,
            only: Vec::new(),
        };
        while let Some(arg) = args.next() {
            match arg.as_str() {
                // cargo passes `--bench` to every benchmark binary.
                "--bench" => {}
                "--json" => parsed.json = Some(args.next().context(usage)?.into()),
                "--only" => {
                    for name in args.next().context(usage)?.split(',') {
                        if !SECTIONS.contains(&name) {
                            bail!(
                                "unknown section `{name}` (sections: {})",
                                SECTIONS.join(", ")
                            );
                        }
                        parsed.only.push(name.to_owned());
                    }
                }
                other => bail!("unexpected argument `{other}`\n{usage}"),
            }
        }
        Ok(parsed)
    }

    fn runs(&self, section: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|s| s == section)
    }
}

async fn bench(args: Args) -> Result<()> {
    let fixture = Fixture::new()?;
    let mut report = Report::default();
    println!("acp-gate benchmark: every figure against its baseline, measured in this run");
    if args.runs("instances") {
        sandbox::instances(&fixture, &mut report).await?;
    }
    if args.runs("decision") {
        sandbox::decision(&fixture, &mut report).await?;
    }
    if args.runs("policy") {
        policy::compare(&fixture, &mut report).await?;
    }
    if args.runs("startup") {
        processes::startup(&fixture, &mut report)?;
    }
    if args.runs("proxy") {
        processes::proxy(&fixture, &mut report)?;
    }
    if args.runs("load") {
        processes::load(&fixture, &mut report)?;
    }
    if args.runs("memory") {
        processes::memory(&fixture, &mut report)?;
    }
    if args.runs("heavy") {
        sandbox::heavy(&fixture, &mut report).await?;
    }
    if args.runs("hooks") {
        hooks::hooks(&fixture, &mut report)?;
    }
    if args.runs("service") {
        service::compare(&fixture, &mut report).await?;
    }
    if args.runs("replay") {
        replay::replay(&fixture, &mut report).await?;
    }
    report.finish(args.json.as_deref())
}

/// What every section works in: a scratch directory with a workspace, and one runtime whose
/// compile cache lives there too.
struct Fixture {
    scratch: tempfile::TempDir,
    workspace: PathBuf,
    runtime: std::sync::Arc<Runtime>,
}

impl Fixture {
    fn new() -> Result<Fixture> {
        let scratch = tempfile::tempdir()?;
        let workspace = scratch.path().join("workspace");
        std::fs::create_dir_all(workspace.join("src"))?;
        let runtime = Runtime::new(Some(scratch.path().join("cache")))?;
        Ok(Fixture {
            scratch,
            workspace,
            runtime,
        })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.scratch.path().join(name)
    }

    /// The normalised request for `session/request_permission` params, in the workspace.
    fn request(&self, params: Value) -> Result<ToolRequest> {
        ToolRequest::from_permission_request(
            &params,
            None,
            &SessionContext::for_workspace("bench", &self.workspace),
        )
    }

    /// The typical requests every decision section uses: (short name, what it is, request).
    fn requests(&self) -> Result<Vec<(&'static str, &'static str, ToolRequest)>> {
        [
            (
                "command",
                "command `cargo test && git status`",
                permission_params("Bash", json!({"command": "cargo test && git status"})),
            ),
            (
                "edit",
                "edit `src/main.rs`",
                permission_params(
                    "Edit",
                    json!({"file_path": "src/main.rs", "old_string": "a", "new_string": "b"}),
                ),
            ),
            (
                "ssh-key",
                "write `~/.ssh/authorized_keys`",
                permission_params(
                    "Write",
                    json!({"file_path": "~/.ssh/authorized_keys", "content": "k"}),
                ),
            ),
        ]
        .into_iter()
        .map(|(name, what, params)| Ok((name, what, self.request(params)?)))
        .collect()
    }
}

/// `session/request_permission` params the way Claude Code's adapter sends them: the tool's
/// name as the title, its input as `rawInput`.
fn permission_params(tool: &str, input: Value) -> Value {
    json!({
        "sessionId": "bench",
        "toolCall": {"toolCallId": "call-1", "title": tool, "rawInput": input},
        "options": [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"}
        ]
    })
}

/// The repository's root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The release binary cargo built for this benchmark.
fn acp_gate() -> &'static str {
    env!("CARGO_BIN_EXE_acp-gate")
}

/// Runs `work` where acp-gate makes its decisions: in a task on a runtime worker (`run` and
/// `proxy` spawn one per request), and returns what it measured. A decision's clean-up (used
/// instances dropped, spares made: `runtime::instance::Batch`) is spawned onto that worker
/// and runs when the task yields, as `work` does between timed calls; spawned from this
/// benchmark's main thread, outside the runtime, it would wake another thread inside the
/// decision instead.
async fn on_worker<T: Send + 'static>(
    work: impl std::future::Future<Output = T> + Send + 'static,
) -> Result<T> {
    Ok(tokio::spawn(work).await?)
}

/// Fails unless a baseline decides what acp-gate decides: a comparison of like with like.
fn same_decision(what: &str, ours: &str, baseline: (&str, &str)) -> Result<()> {
    if ours != baseline.1 {
        bail!(
            "{what}: acp-gate says {ours}, {} says {}",
            baseline.0,
            baseline.1
        );
    }
    Ok(())
}

/// Nanoseconds since the Unix epoch: the clock the agent stamps messages with and the editor
/// side reads them by (one machine, so one clock).
fn unix_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos()
}

/// Median and the 10th–90th percentile spread of samples, in a comparison's unit.
#[derive(Clone, Copy, Debug)]
struct Stats {
    median: f64,
    p10: f64,
    p90: f64,
}

impl Stats {
    fn of(mut samples: Vec<f64>) -> Stats {
        assert!(!samples.is_empty(), "no samples");
        samples.sort_by(f64::total_cmp);
        let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
        Stats {
            median: at(0.5),
            p10: at(0.1),
            p90: at(0.9),
        }
    }

    fn micros(samples: &[Duration]) -> Stats {
        Stats::of(samples.iter().map(|d| d.as_secs_f64() * 1e6).collect())
    }

    fn millis(samples: &[Duration]) -> Stats {
        Stats::of(samples.iter().map(|d| d.as_secs_f64() * 1e3).collect())
    }

    /// One measurement (a size, a count): no spread.
    fn one(value: f64) -> Stats {
        Stats::of(vec![value])
    }
}

/// What a comparison's target asks of its ratio (ours / baseline), or of our own figure where
/// the goal is absolute (the review service's, issue 30).
enum Target {
    AtMost(f64, &'static str),
    AtLeast(f64, &'static str),
    OursAtMost(f64, &'static str),
    OursAtLeast(f64, &'static str),
}

impl Target {
    fn met(&self, ratio: f64, ours: f64) -> bool {
        match *self {
            Target::AtMost(limit, _) => ratio <= limit,
            Target::AtLeast(limit, _) => ratio >= limit,
            Target::OursAtMost(limit, _) => ours <= limit,
            Target::OursAtLeast(limit, _) => ours >= limit,
        }
    }

    fn text(&self) -> &'static str {
        match *self {
            Target::AtMost(_, text)
            | Target::AtLeast(_, text)
            | Target::OursAtMost(_, text)
            | Target::OursAtLeast(_, text) => text,
        }
    }
}

/// One figure against its baseline.
struct Comparison {
    name: String,
    /// `µs`, `ms`, `msg/s`, `KiB`.
    unit: &'static str,
    ours_label: String,
    ours: Stats,
    baseline_label: String,
    baseline: Stats,
    target: Option<Target>,
    /// Figures of this comparison's own, also printed.
    extra: Vec<Extra>,
}

/// A figure of a comparison's own: one value, or a median with its spread.
enum Extra {
    Value(&'static str, f64),
    Spread(&'static str, Stats),
}

impl Comparison {
    fn new(
        name: impl Into<String>,
        unit: &'static str,
        ours: (impl Into<String>, Stats),
        baseline: (impl Into<String>, Stats),
    ) -> Comparison {
        Comparison {
            name: name.into(),
            unit,
            ours_label: ours.0.into(),
            ours: ours.1,
            baseline_label: baseline.0.into(),
            baseline: baseline.1,
            target: None,
            extra: Vec::new(),
        }
    }

    fn target(mut self, target: Target) -> Comparison {
        self.target = Some(target);
        self
    }

    fn extra(mut self, key: &'static str, value: f64) -> Comparison {
        self.extra.push(Extra::Value(key, value));
        self
    }

    /// An extra figure with its spread: KEY, KEY_p10 and KEY_p90 in the JSON.
    fn extra_stats(mut self, key: &'static str, stats: Stats) -> Comparison {
        self.extra.push(Extra::Spread(key, stats));
        self
    }

    fn ratio(&self) -> f64 {
        self.ours.median / self.baseline.median
    }
}

/// What the run prints as it goes and writes at the end.
#[derive(Default)]
struct Report {
    json: Vec<Value>,
    /// Name, target, the figure it is judged on, met.
    targets: Vec<(String, &'static str, String, bool)>,
}

impl Report {
    fn section(&self, title: &str) {
        println!("\n== {title}");
    }

    /// Prints a comparison (name, ratio and target; ours; the baseline; extra figures) and
    /// keeps its JSON.
    fn add(&mut self, c: Comparison) {
        let ratio = c.ratio();
        let figure = |s: Stats| {
            format!(
                "{} {} [p10 {}, p90 {}]",
                number(s.median),
                c.unit,
                number(s.p10),
                number(s.p90)
            )
        };
        let mut json = json!({
            "name": c.name,
            "unit": c.unit,
            "ours": c.ours.median,
            "ours_p10": c.ours.p10,
            "ours_p90": c.ours.p90,
            "baseline": c.baseline.median,
            "baseline_p10": c.baseline.p10,
            "baseline_p90": c.baseline.p90,
            "ratio": ratio,
        });
        let mut headline = format!("{}: ratio {}", c.name, number(ratio));
        if let Some(target) = &c.target {
            let met = target.met(ratio, c.ours.median);
            headline.push_str(&format!(
                "  (target {}: {})",
                target.text(),
                if met { "met" } else { "MISSED" }
            ));
            json["target"] = target.text().into();
            json["target_met"] = met.into();
            let figure = match target {
                Target::OursAtMost(..) | Target::OursAtLeast(..) => {
                    format!("{} {}", number(c.ours.median), c.unit)
                }
                Target::AtMost(..) | Target::AtLeast(..) => format!("ratio {}", number(ratio)),
            };
            self.targets
                .push((c.name.clone(), target.text(), figure, met));
        }
        println!("{headline}");
        println!("    {:<34} {}", c.ours_label, figure(c.ours));
        println!("    {:<34} {}", c.baseline_label, figure(c.baseline));
        for extra in &c.extra {
            match *extra {
                Extra::Value(key, value) => {
                    println!("    {key:<34} {}", number(value));
                    json[key] = value.into();
                }
                Extra::Spread(key, stats) => {
                    println!("    {key:<34} {}", figure(stats));
                    json[key] = stats.median.into();
                    json[format!("{key}_p10")] = stats.p10.into();
                    json[format!("{key}_p90")] = stats.p90.into();
                }
            }
        }
        self.json.push(json);
    }

    fn skip(&mut self, name: &str, why: &str) {
        println!("{name}: skipped: {why}");
        self.json.push(json!({"name": name, "skipped": why}));
    }

    fn finish(self, json: Option<&Path>) -> Result<()> {
        if !self.targets.is_empty() {
            println!("\n== targets");
            for (name, target, figure, met) in &self.targets {
                println!(
                    "{:<8} {name}: {figure} (target {target})",
                    if *met { "met" } else { "MISSED" },
                );
            }
        }
        if let Some(path) = json {
            let lines: String = self.json.iter().map(|v| format!("{v}\n")).collect();
            std::fs::write(path, lines).with_context(|| format!("{}", path.display()))?;
            println!(
                "\nwrote {} comparisons to {}",
                self.json.len(),
                path.display()
            );
        }
        Ok(())
    }
}

/// Three significant figures, at least one decimal below 100.
fn number(x: f64) -> String {
    match x.abs() {
        a if a >= 100.0 => format!("{x:.0}"),
        a if a >= 10.0 => format!("{x:.1}"),
        a if a >= 0.1 => format!("{x:.2}"),
        _ => format!("{x:.4}"),
    }
}
