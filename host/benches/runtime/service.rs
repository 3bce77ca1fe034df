//! `service`: `acp-gate serve` under load, on SQLite and (when the tests' PostgreSQL answers:
//! scripts/install-test-services.sh starts one) on PostgreSQL, driven by the gates' own client
//! (`acp_gate::service::client`) from this process over loopback. Each figure is set against a
//! bare HTTP round trip to the same service in the same run (`GET /v1/health`): escalations a
//! second against health checks a second, the p99 of a decision's way to its gate with 1,000
//! gates waiting against the p99 of a health check among them, and audit records a second
//! against one health check per batch. The figures are absolute (≥ 2,000
//! escalations/s on SQLite, p99 ≤ 50 ms, ≥ 10,000 records/s): they are the targets.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use acp_gate::service::client::ServiceClient;
use acp_gate::service::{AuditBatch, ShippedRecord, Submission};

use super::{Comparison, Fixture, Report, Stats, Target, acp_gate, repo, unix_ns};

/// How many escalations the throughput run submits per round, and how many at once.
const ESCALATIONS: usize = 5000;
const ROUNDS: usize = 3;
const CONCURRENCY: usize = 64;
/// Gates waiting at once while decisions are taken one by one.
const WAITING: usize = 1000;
/// Audit records ingested, in batches of this size from this many logs at once.
const RECORDS: usize = 50_000;
const BATCH: usize = 500;
const LOGS: usize = 4;

struct Served {
    child: Child,
    url: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(database: &str) -> Result<Served> {
    use std::io::BufRead;
    let mut child = Command::new(acp_gate())
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--database",
            database,
            "--rate-limit",
            "0",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let stderr = child.stderr.take().context("no stderr")?;
    let mut lines = std::io::BufReader::new(stderr).lines();
    let url = loop {
        let line = lines
            .next()
            .context("acp-gate serve ended before listening")??;
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_owned();
        }
    };
    // What the service says after that (its errors) shows beside the benchmark's own output.
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            eprintln!("    acp-gate serve: {line}");
        }
    });
    Ok(Served { child, url })
}

fn token(database: &str, role: &str, name: &str) -> Result<String> {
    let output = Command::new(acp_gate())
        .args([
            "serve",
            "token",
            "create",
            "--role",
            role,
            "--name",
            name,
            "--database",
            database,
        ])
        .output()?;
    if !output.status.success() {
        bail!("token create: {}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(String::from_utf8(output.stdout)?.trim().to_owned())
}

fn submission(n: usize, run: &str) -> Submission {
    let fingerprint = format!("{:064x}", n + 1);
    Submission {
        id: format!("esc-{run}-{n}"),
        session_id: format!("bench-{run}"),
        fingerprint,
        kind: "execute".into(),
        tool: "Bash".into(),
        title: "terraform apply".into(),
        subject: format!("terraform apply -target=module.m{n}"),
        reasons: vec!["unknown command: a person must answer".into()],
        handlers: json!([{"name": "builtin-commands", "tier": "builtin", "verdict": "ask", "reason": "unknown", "elapsed_us": 40}]),
        input: json!({"command": format!("terraform apply -target=module.m{n}")}),
        paths: Vec::new(),
        developer: "dev".into(),
        machine: "bench".into(),
        workspace: "/ws".into(),
        agent: "bench-agent".into(),
    }
}

/// Runs `count` calls of `call`, `at_once` at a time: the seconds it took.
async fn flood<F, Fut>(count: usize, at_once: usize, call: F) -> Result<f64>
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<()>> + Send + 'static,
{
    let call = Arc::new(call);
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..at_once)
        .map(|_| {
            let (call, next) = (call.clone(), next.clone());
            tokio::spawn(async move {
                loop {
                    let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if n >= count {
                        return Ok::<(), anyhow::Error>(());
                    }
                    call(n).await?;
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await??;
    }
    Ok(started.elapsed().as_secs_f64())
}

/// One bare round trip to the service: the floor every figure here is set against.
async fn health(http: reqwest::Client, url: String) -> Result<()> {
    http.get(format!("{url}/v1/health"))
        .send()
        .await?
        .error_for_status()?;
    Ok(())
}

/// `count` health checks, `at_once` at a time: the seconds they took.
async fn health_checks(
    http: &reqwest::Client,
    url: &str,
    count: usize,
    at_once: usize,
) -> Result<f64> {
    let (http, url) = (http.clone(), url.to_owned());
    flood(count, at_once, move |_| health(http.clone(), url.clone())).await
}

pub async fn compare(fixture: &Fixture, report: &mut Report) -> Result<()> {
    // Ids unique to this run: a PostgreSQL server keeps what earlier runs stored.
    let run = format!("{:x}", unix_ns());
    let sqlite = fixture.path("review.db").display().to_string();
    backend(report, "sqlite", "SQLite", &sqlite, &run).await?;
    match postgres() {
        Some(url) => backend(report, "postgres", "PostgreSQL", &url, &run).await?,
        None => report.skip(
            "service/postgres",
            "no PostgreSQL answers (scripts/install-test-services.sh starts one; $ACP_GATE_TEST_POSTGRES names another)",
        ),
    }
    Ok(())
}

/// The tests' PostgreSQL (tests/serve.rs finds it the same way), if it answers.
fn postgres() -> Option<String> {
    let url = std::env::var("ACP_GATE_TEST_POSTGRES").ok().or_else(|| {
        std::fs::read_to_string(repo().join("target/test-postgres.url"))
            .ok()
            .map(|s| s.trim().to_owned())
    })?;
    let answers = Command::new("psql")
        .args([url.as_str(), "-qAtc", "SELECT 1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    answers.then_some(url)
}

async fn backend(
    report: &mut Report,
    key: &str,
    name: &str,
    database: &str,
    run: &str,
) -> Result<()> {
    report.section(&format!(
        "review service (`acp-gate serve` on {name}, loopback)"
    ));
    let gate = token(database, "gate", &format!("gate@bench-{run}"))?;
    let reviewer = token(database, "reviewer", &format!("reviewer-{run}"))?;
    let served = serve(database)?;
    let url = served.url.clone();
    let client = ServiceClient::new(&url, gate)?;
    let http = reqwest::Client::new();

    // Escalations a second against health checks a second, the same way, rounds interleaved.
    let (mut submitted, mut checked) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let seconds = health_checks(&http, &url, ESCALATIONS, CONCURRENCY).await?;
        checked.push(ESCALATIONS as f64 / seconds);
        let (client, run) = (client.clone(), format!("{run}-rate{round}"));
        let seconds = flood(ESCALATIONS, CONCURRENCY, move |n| {
            let (client, submission) = (client.clone(), submission(n, &run));
            async move { client.submit(&submission).await }
        })
        .await?;
        submitted.push(ESCALATIONS as f64 / seconds);
    }
    let mut escalations = Comparison::new(
        format!("service/{key}/escalations-per-second"),
        "req/s",
        (
            format!("escalations submitted ({CONCURRENCY} at once)"),
            Stats::of(submitted),
        ),
        ("health checks (bare round trips)", Stats::of(checked)),
    );
    if key == "sqlite" {
        escalations = escalations.target(Target::OursAtLeast(
            2000.0,
            "≥ 2,000 escalations/s on SQLite",
        ));
    }
    report.add(escalations);

    // A decision's way to its gate with 1,000 gates waiting, against a health check's round
    // trip among them.
    // The gates submit and wait at once; each says when its escalation is in.
    let deadline = Instant::now() + Duration::from_secs(600);
    let (submitted, mut in_) = tokio::sync::mpsc::channel(WAITING);
    let waiters: Vec<_> = (0..WAITING)
        .map(|n| {
            let (client, submitted) = (client.clone(), submitted.clone());
            let submission = submission(n, &format!("{run}-wait"));
            tokio::spawn(async move {
                client.submit_until(&submission, deadline).await?;
                let _ = submitted.send(()).await;
                // A gate that fails to submit ends the count below instead of hanging it.
                drop(submitted);
                let decided = client.wait(&submission.id, deadline).await?;
                Ok::<_, anyhow::Error>((Instant::now(), decided.is_some()))
            })
        })
        .collect();
    drop(submitted);
    for _ in 0..WAITING {
        in_.recv().await.context("a gate failed to submit")?;
    }
    // Every gate's long-poll has arrived before the first decision.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (mut latencies, mut round_trips, mut bare) = (Vec::new(), Vec::new(), Vec::new());
    for (n, waiter) in waiters.into_iter().enumerate() {
        let sent = Instant::now();
        health(http.clone(), url.clone()).await?;
        bare.push(sent.elapsed());
        let sent = Instant::now();
        let decision = http
            .post(format!("{url}/v1/escalations/esc-{run}-wait-{n}/decision"))
            .bearer_auth(&reviewer)
            .json(&json!({ "choice": if n % 2 == 0 { "allow" } else { "deny" } }))
            .send()
            .await?;
        let answered = Instant::now();
        if !decision.status().is_success() {
            bail!("decision {n}: {}", decision.text().await?);
        }
        let (woke, decided) = waiter.await??;
        if !decided {
            bail!("gate {n} was not decided");
        }
        latencies.push(woke.saturating_duration_since(sent));
        round_trips.push(answered.saturating_duration_since(sent));
    }
    report.add(
        Comparison::new(
            format!("service/{key}/decision-to-gate-p99"),
            "ms",
            (
                "p99, decision sent → its gate woken",
                Stats::one(percentile(&latencies, 0.99)),
            ),
            (
                "p99, health check round trip",
                Stats::one(percentile(&bare, 0.99)),
            ),
        )
        .target(Target::OursAtMost(
            50.0,
            "p99 ≤ 50 ms with 1,000 gates waiting",
        ))
        .extra_stats("decision_to_gate_ms", Stats::millis(&latencies))
        .extra_stats("reviewer_round_trip_ms", Stats::millis(&round_trips))
        .extra_stats("health_round_trip_ms", Stats::millis(&bare)),
    );

    // Audit records a second (chained batches from several logs at once) against one health
    // check per batch, as many at once.
    let batches = RECORDS / BATCH;
    let floor = RECORDS as f64 / health_checks(&http, &url, batches, LOGS).await?;
    let per_log = RECORDS / LOGS;
    let started = Instant::now();
    let shippers: Vec<_> = (0..LOGS)
        .map(|log| {
            let (client, name) = (client.clone(), format!("bench-{run}-log-{log}"));
            tokio::spawn(async move {
                let mut prev: Option<String> = None;
                for start in (0..per_log).step_by(BATCH) {
                    let records = (start..start + BATCH)
                        .map(|seq| {
                            let hash = format!("{:064x}", seq + 1 + log * per_log);
                            ShippedRecord {
                                log: name.clone(),
                                seq: seq as u64 + 1,
                                prev: prev.replace(hash.clone()),
                                hash,
                                record: audit_record(seq),
                            }
                        })
                        .collect();
                    let ingested = client.ship(&AuditBatch { records }).await?;
                    if ingested.accepted != BATCH || !ingested.breaks.is_empty() {
                        bail!("batch at {start} of {name}: {ingested:?}");
                    }
                }
                Ok::<(), anyhow::Error>(())
            })
        })
        .collect();
    for shipper in shippers {
        shipper.await??;
    }
    let rate = RECORDS as f64 / started.elapsed().as_secs_f64();
    report.add(
        Comparison::new(
            format!("service/{key}/audit-records-per-second"),
            "rec/s",
            (
                format!("{RECORDS} records, batches of {BATCH}, {LOGS} logs at once"),
                Stats::one(rate),
            ),
            (
                format!("one health check per {BATCH} records"),
                Stats::one(floor),
            ),
        )
        .target(Target::OursAtLeast(10_000.0, "≥ 10,000 audit records/s")),
    );
    drop(served);
    Ok(())
}

/// A typical audit line as a gate ships it.
fn audit_record(n: usize) -> Value {
    json!({
        "timestamp_ms": 1_764_000_000_000u64 + n as u64,
        "request_digest": format!("{n:064x}"),
        "session_id": "bench",
        "tool_call_id": format!("call-{n}"),
        "source": "permission_request",
        "tool_name": "Bash",
        "kind": "execute",
        "title": "cargo test",
        "subject": if n.is_multiple_of(10) { "terraform plan" } else { "cargo test" },
        "decision": if n.is_multiple_of(10) { "ask" } else { "allow" },
        "by_default": false,
        "reasons": ["known safe command"],
        "handlers": [{"name": "builtin-commands", "tier": "builtin", "verdict": "allow", "reason": "known safe command", "elapsed_us": 35}],
        "answer": "allow-once",
        "allowed": true,
        "agent": "claude-code-acp",
    })
}

/// The `q` quantile of `samples`, in milliseconds.
fn percentile(samples: &[Duration], q: f64) -> f64 {
    let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    ms[((ms.len() - 1) as f64 * q).round() as usize]
}
