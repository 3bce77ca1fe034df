//! `service`: `acp-gate serve` under load, on SQLite and (when the tests' PostgreSQL answers:
//! scripts/install-test-services.sh starts one) on PostgreSQL, driven by the gates' own client
//! (`acp_gate::service::client`) from this process over loopback. Each figure is set against a
//! bare HTTP round trip to the same service in the same run (`GET /v1/health`): escalations a
//! second against health checks a second, the p99 of a decision's way to its gate with 1,000
//! gates waiting against the p99 of a health check among them (on PostgreSQL also with the
//! gates on one instance and the reviewer on another: LISTEN/NOTIFY), and audit records a
//! second against one health check per batch. The figures are absolute (≥ 2,000
//! escalations/s on SQLite, p99 ≤ 50 ms, ≥ 10,000 records/s): they are the targets.
//!
//! Then a restart under load: with 1,000 gates waiting and audit logs being shipped, the gates'
//! instance is killed (SIGKILL) halfway through the reviewer's decisions and started again on
//! its port and database. The database is counted afterwards: every escalation stored once,
//! every decision delivered to its own gate (signed, checked with the service's key), every
//! audit record stored once in its chain's order. Anything lost or doubled fails the benchmark.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sqlx::Row;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use acp_gate::config::{self, Escalation, LayerPaths};
use acp_gate::service::client::{ServiceClient, unreachable};
use acp_gate::service::redact::Redaction;
use acp_gate::service::ship::{Destination, Shipper};
use acp_gate::service::{AuditBatch, Expected, Ruling, ShippedRecord, SignedDecision, Submission};

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
/// In the restart run: the gates that submit only once their instance is down, how long it
/// stays down, and the audit lines each log gets between two shipping rounds.
const LATE: usize = WAITING / 4;
const DOWN: Duration = Duration::from_secs(1);
const LINES_PER_ROUND: usize = 50;
const SHIPPING_ROUND: Duration = Duration::from_millis(100);

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

/// Starts `acp-gate serve` on `listen` (`127.0.0.1:0`: a free port) with `database`.
fn serve(database: &str, listen: &str) -> Result<Served> {
    use std::io::BufRead;
    let mut child = Command::new(acp_gate())
        .args([
            "serve",
            "--listen",
            listen,
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
    let mut said = String::new();
    let url = loop {
        let Some(line) = lines.next().transpose()? else {
            let _ = child.wait();
            bail!("acp-gate serve --listen {listen} ended before listening:\n{said}");
        };
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_owned();
        }
        said.push_str(&line);
        said.push('\n');
    };
    // What the service says after that (its errors) shows beside the benchmark's own output.
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            eprintln!("    acp-gate serve: {line}");
        }
    });
    Ok(Served { child, url })
}

/// One `acp-gate serve` of the benchmark, and a gate's client of it.
struct Instance {
    served: Served,
    database: String,
    gate: ServiceClient,
}

impl Instance {
    fn start(database: &str, gate: &str) -> Result<Instance> {
        let served = serve(database, "127.0.0.1:0")?;
        let gate = ServiceClient::new(&served.url, gate.to_owned())?;
        Ok(Instance {
            served,
            database: database.to_owned(),
            gate,
        })
    }

    fn url(&self) -> &str {
        &self.served.url
    }

    /// Kills it (SIGKILL: its waiting gates and posted batches get no answer).
    fn kill(&mut self) -> Result<()> {
        self.served.child.kill()?;
        self.served.child.wait()?;
        Ok(())
    }

    /// Starts it again on the same database and port: its gates' client finds it there.
    fn restart(&mut self) -> Result<()> {
        let address = self.url().trim_start_matches("http://").to_owned();
        self.served = serve(&self.database, &address)?;
        Ok(())
    }
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
        context: Default::default(),
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
    backend(fixture, report, "sqlite", "SQLite", &sqlite, &run).await?;
    match postgres() {
        Some(url) => backend(fixture, report, "postgres", "PostgreSQL", &url, &run).await?,
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
    fixture: &Fixture,
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
    let served = Instance::start(database, &gate)?;
    let (url, client) = (served.url().to_owned(), served.gate.clone());
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

    report.add(
        decision_to_gate(
            format!("service/{key}/decision-to-gate-p99"),
            "p99, decision sent → its gate woken",
            &client,
            &url,
            &reviewer,
            &format!("{run}-wait"),
        )
        .await?,
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

    // On PostgreSQL a second instance on the same database: the reviewer decides there, and
    // its decisions wake the gates waiting on the first through LISTEN/NOTIFY.
    let other = match key {
        "postgres" => Some(Instance::start(database, &gate)?),
        _ => None,
    };
    if let Some(other) = &other {
        report.add(
            decision_to_gate(
                format!("service/{key}/decision-to-gate-across-instances-p99"),
                "p99, decision on B → its gate on A",
                &client,
                other.url(),
                &reviewer,
                &format!("{run}-across"),
            )
            .await?,
        );
    }
    // The restart: the gates' instance is the one killed; the reviewer decides through the
    // other instance where there is one.
    let decide_at = other.as_ref().unwrap_or(&served).url().to_owned();
    let restart = Restart {
        key,
        fixture,
        database,
        reviewer: &reviewer,
        decide_at: &decide_at,
        run: &format!("{run}-restart"),
    };
    restart.run(report, served).await
}

/// A gate of the benchmark: its escalation, word of its submission (until heard; dropped
/// unsent when it failed), and the task waiting for its decision: when the wait ended, and what.
struct Gate {
    submission: Submission,
    submitted: Option<oneshot::Receiver<()>>,
    waited: JoinHandle<Result<(Instant, Option<SignedDecision>)>>,
}

impl Gate {
    /// Submits escalation `n` of `run` (once `start` is true, when given) and waits for its
    /// decision, as a gate with `--wait` does: both tried again while the service cannot be
    /// reached.
    fn start(
        client: &ServiceClient,
        n: usize,
        run: &str,
        start: Option<watch::Receiver<bool>>,
    ) -> Gate {
        let deadline = Instant::now() + Duration::from_secs(600);
        let submission = submission(n, run);
        let (said, submitted) = oneshot::channel();
        let waited = {
            let (client, submission) = (client.clone(), submission.clone());
            tokio::spawn(async move {
                if let Some(mut start) = start {
                    start.wait_for(|go| *go).await?;
                }
                client.submit_until(&submission, deadline).await?;
                let _ = said.send(());
                let decided = client.wait(&submission.id, deadline).await?;
                Ok((Instant::now(), decided))
            })
        };
        Gate {
            submission,
            submitted: Some(submitted),
            waited,
        }
    }

    /// Until its escalation is in; a gate that failed to submit says why.
    async fn submitted(&mut self) -> Result<()> {
        let Some(said) = self.submitted.take() else {
            return Ok(());
        };
        if said.await.is_ok() {
            return Ok(());
        }
        match (&mut self.waited).await? {
            Err(error) => Err(error.context(format!("gate {}", self.submission.id))),
            Ok(_) => bail!("gate {} ended without submitting", self.submission.id),
        }
    }
}

/// A decision's way to its gate: `WAITING` gates submit and long-poll at once through
/// `gates`; a reviewer then decides each in turn through the service at `url`; against a
/// health check's round trip there just before each decision.
async fn decision_to_gate(
    name: String,
    label: &str,
    gates: &ServiceClient,
    url: &str,
    reviewer: &str,
    run: &str,
) -> Result<Comparison> {
    let http = reqwest::Client::new();
    let mut waiting: Vec<_> = (0..WAITING)
        .map(|n| Gate::start(gates, n, run, None))
        .collect();
    for gate in &mut waiting {
        gate.submitted().await?;
    }
    // Every gate's long-poll has arrived before the first decision.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (mut latencies, mut round_trips, mut bare) = (Vec::new(), Vec::new(), Vec::new());
    for (n, gate) in waiting.into_iter().enumerate() {
        let sent = Instant::now();
        health(http.clone(), url.to_owned()).await?;
        bare.push(sent.elapsed());
        let sent = Instant::now();
        decide(&http, url, reviewer, &gate.submission.id, ruling(n)).await?;
        let answered = Instant::now();
        let (woke, decided) = gate.waited.await??;
        if decided.is_none() {
            bail!("gate {n} was not decided");
        }
        latencies.push(woke.saturating_duration_since(sent));
        round_trips.push(answered.saturating_duration_since(sent));
    }
    Ok(Comparison::new(
        name,
        "ms",
        (label, Stats::one(percentile(&latencies, 0.99))),
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
    .extra_stats("health_round_trip_ms", Stats::millis(&bare)))
}

/// The reviewer's answer to the `n`th gate: allow and deny in turn.
fn ruling(n: usize) -> Ruling {
    if n.is_multiple_of(2) {
        Ruling::Allow
    } else {
        Ruling::Deny
    }
}

/// Decides escalation `id` through the service at `url`, trying again while it cannot be
/// reached (restarting); a decision stored before the connection broke is then found stored,
/// by this reviewer, with this ruling.
async fn decide(
    http: &reqwest::Client,
    url: &str,
    reviewer: &str,
    id: &str,
    ruling: Ruling,
) -> Result<()> {
    let choice = match ruling {
        Ruling::Allow => "allow",
        Ruling::Deny => "deny",
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut tried = false;
    loop {
        let sent = http
            .post(format!("{url}/v1/escalations/{id}/decision"))
            .bearer_auth(reviewer)
            .json(&json!({ "choice": choice }))
            .send()
            .await;
        let response = match sent.map_err(anyhow::Error::from) {
            Err(error) if unreachable(&error) && Instant::now() < deadline => {
                tried = true;
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            sent => sent?,
        };
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        if tried && status == reqwest::StatusCode::CONFLICT {
            let stored: Value = http
                .get(format!("{url}/v1/escalations/{id}"))
                .bearer_auth(reviewer)
                .send()
                .await?
                .error_for_status()?
                .json()
                .await?;
            let status = if ruling == Ruling::Allow {
                "allowed"
            } else {
                "denied"
            };
            if stored["status"] == status {
                return Ok(());
            }
            bail!("decision of {id}: stored as {stored}, not {status}");
        }
        bail!("decision of {id}: {status}: {}", response.text().await?);
    }
}

/// The restart under load, on one backend: the gates' instance is killed (SIGKILL) halfway
/// through the reviewer's decisions, while audit logs are being shipped to it and a quarter
/// of the gates have not submitted yet (they submit while it is down), and started again on
/// its port and database after [`DOWN`]. Then the database and the gates' answers are
/// counted.
struct Restart<'a> {
    key: &'a str,
    fixture: &'a Fixture,
    database: &'a str,
    reviewer: &'a str,
    /// Where the reviewer decides: the killed instance itself, or another on its database.
    decide_at: &'a str,
    run: &'a str,
}

/// What one restart run found, against what it expected.
#[derive(Default)]
struct Counted {
    escalations: (usize, usize),
    decisions: (usize, usize),
    records: (usize, usize),
    /// Everything lost, doubled or out of place, in words.
    wrong: Vec<String>,
}

impl Restart<'_> {
    async fn run(&self, report: &mut Report, mut instance: Instance) -> Result<()> {
        let gates = instance.gate.clone();
        let http = reqwest::Client::new();
        let (down_tx, down) = watch::channel(false);
        let mut waiting: Vec<_> = (0..WAITING)
            .map(|n| {
                let late = n >= WAITING - LATE;
                Gate::start(&gates, n, self.run, late.then(|| down.clone()))
            })
            .collect();
        for gate in &mut waiting[..WAITING - LATE] {
            gate.submitted().await?;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let logs: Vec<_> = (0..LOGS)
            .map(|log| {
                let path = self
                    .fixture
                    .path(&format!("audit-{}-{log}.jsonl", self.key));
                let id = format!("{}-{}-{log}", self.run, self.key);
                let shipper = Shipper::new(
                    &path,
                    Destination::Service(gates.clone()),
                    Redaction::default(),
                );
                tokio::spawn(write_and_ship(path, id, shipper, stop.clone()))
            })
            .collect();
        tokio::time::sleep(Duration::from_secs(1)).await;

        // Halfway through the decisions: killed, down for a second, started again.
        let (midway_tx, midway) = oneshot::channel::<()>();
        let killer = tokio::spawn(async move {
            midway.await?;
            let killed = Instant::now();
            instance.kill()?;
            let _ = down_tx.send(true);
            tokio::time::sleep(DOWN).await;
            let instance = tokio::task::spawn_blocking(move || {
                instance.restart()?;
                Ok::<_, anyhow::Error>(instance)
            })
            .await??;
            Ok::<_, anyhow::Error>((instance, killed.elapsed()))
        });
        let mut midway_tx = Some(midway_tx);
        let mut sent = Vec::new();
        for (n, gate) in waiting.iter_mut().enumerate() {
            if n == WAITING / 2
                && let Some(midway) = midway_tx.take()
            {
                let _ = midway.send(());
            }
            gate.submitted().await?;
            sent.push(Instant::now());
            decide(
                &http,
                self.decide_at,
                self.reviewer,
                &gate.submission.id,
                ruling(n),
            )
            .await?;
        }
        let (instance, downtime) = killer.await??;

        let escalation = self.service_key(&http, instance.url()).await?;
        let key = &escalation.key.as_ref().context("no key read")?.1;
        let mut latencies = Vec::new();
        let mut counted = Counted::default();
        for (n, gate) in waiting.into_iter().enumerate() {
            let (woke, decided) = gate.waited.await??;
            latencies.push(woke.saturating_duration_since(sent[n]));
            let submission = &gate.submission;
            let expected = Expected {
                escalation: &submission.id,
                session_id: &submission.session_id,
                fingerprint: &submission.fingerprint,
            };
            match decided.map(|d| d.verify(key, &expected)) {
                Some(Ok(statement)) if statement.ruling == ruling(n) => counted.decisions.1 += 1,
                Some(Ok(statement)) => counted.wrong.push(format!(
                    "gate {n} got {:?}, the reviewer said {:?}",
                    statement.ruling,
                    ruling(n)
                )),
                Some(Err(error)) => counted.wrong.push(format!("gate {n}: {error:#}")),
                None => counted.wrong.push(format!("gate {n} got no decision")),
            }
        }
        counted.decisions.0 = WAITING;
        stop.store(true, Ordering::SeqCst);
        let mut written = Vec::new();
        for log in logs {
            written.push(log.await??);
        }
        let failed_rounds: usize = written.iter().map(|log| log.failed_rounds).sum();
        if failed_rounds == 0 {
            counted
                .wrong
                .push("no shipping round failed: the restart came between rounds".into());
        }
        self.count(&mut counted, &written).await?;
        drop(instance);

        let name = format!("service/{}/restart", self.key);
        report.add(
            Comparison::new(
                name.clone(),
                "ms",
                (
                    "slowest decision → its gate",
                    Stats::one(
                        latencies
                            .iter()
                            .max()
                            .map_or(0.0, |d| d.as_secs_f64() * 1e3),
                    ),
                ),
                (
                    "the instance down (SIGKILL → listening)",
                    Stats::one(downtime.as_secs_f64() * 1e3),
                ),
            )
            .extra_stats("decision_to_gate_ms", Stats::millis(&latencies))
            .extra("escalations_expected", counted.escalations.0 as f64)
            .extra("escalations_stored_once", counted.escalations.1 as f64)
            .extra("decisions_expected", counted.decisions.0 as f64)
            .extra("decisions_at_their_gate", counted.decisions.1 as f64)
            .extra("audit_records_expected", counted.records.0 as f64)
            .extra("audit_records_stored_once", counted.records.1 as f64)
            .extra("shipping_rounds_failed", failed_rounds as f64),
        );
        if !counted.wrong.is_empty() {
            bail!(
                "{name}: LOST OR DOUBLED through the restart:\n  {}",
                counted.wrong.join("\n  ")
            );
        }
        println!("    nothing lost or doubled through the restart");
        Ok(())
    }

    /// The service's key, read as a gate reads it: from an org file's `[escalation] key`.
    async fn service_key(&self, http: &reqwest::Client, url: &str) -> Result<Escalation> {
        let key: Value = http
            .get(format!("{url}/v1/key"))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let pem = self.fixture.path(&format!("service-{}.pem", self.key));
        std::fs::write(&pem, key["public_key"].as_str().context("no public_key")?)?;
        let org = self.fixture.path(&format!("org-{}.toml", self.key));
        std::fs::write(
            &org,
            format!(
                "[escalation]\nurl = \"{url}\"\nkey = \"{}\"\n",
                pem.display()
            ),
        )?;
        config::load(&LayerPaths {
            org: Some(org),
            ..Default::default()
        })?
        .escalation
        .context("the org file's [escalation] was not read")
    }

    /// Counts in the database: this run's escalations (each once, each delivered) and each
    /// log's records (each once, in its chain's order, the chain not flagged broken).
    async fn count(&self, counted: &mut Counted, written: &[Written]) -> Result<()> {
        sqlx::any::install_default_drivers();
        let url = match self.database.starts_with("postgres") {
            true => self.database.to_owned(),
            false => format!("sqlite://{}?mode=ro", self.database),
        };
        let db = sqlx::AnyPool::connect(&url).await?;
        let row = sqlx::query(
            "SELECT COUNT(*) AS rows_, COUNT(DISTINCT id) AS ids, \
             COALESCE(SUM(CASE WHEN delivered_ms IS NOT NULL THEN 1 ELSE 0 END), 0) AS delivered \
             FROM escalations WHERE id LIKE $1",
        )
        .bind(format!("esc-{}-%", self.run))
        .fetch_one(&db)
        .await?;
        let (rows, ids, delivered) = (
            row.try_get::<i64, _>("rows_")? as usize,
            row.try_get::<i64, _>("ids")? as usize,
            row.try_get::<i64, _>("delivered")? as usize,
        );
        counted.escalations = (WAITING, ids);
        if rows != WAITING || ids != WAITING {
            counted.wrong.push(format!(
                "{WAITING} escalations submitted, {rows} stored ({ids} distinct ids)"
            ));
        }
        if delivered != WAITING {
            counted.wrong.push(format!(
                "{WAITING} decisions, {delivered} marked delivered to their gate"
            ));
        }
        for Written { log, links, .. } in written {
            counted.records.0 += links.len();
            let stored: Vec<Link> = sqlx::query(
                "SELECT seq, prev, hash FROM audit_records WHERE log = $1 ORDER BY seq",
            )
            .bind(log)
            .fetch_all(&db)
            .await?
            .iter()
            .map(|row| {
                Ok(Link {
                    seq: row.try_get::<i64, _>("seq")? as u64,
                    prev: row.try_get("prev")?,
                    hash: row.try_get("hash")?,
                })
            })
            .collect::<Result<_>>()?;
            let in_place = stored
                .iter()
                .zip(links)
                .take_while(|(stored, written)| stored == written)
                .count();
            counted.records.1 += in_place;
            if stored.len() != links.len() || in_place != links.len() {
                counted.wrong.push(format!(
                    "log {log}: {} records written, {} stored, the first {in_place} in place",
                    links.len(),
                    stored.len()
                ));
            }
            let broken: Option<i64> =
                sqlx::query("SELECT broken_seq FROM audit_chains WHERE log = $1")
                    .bind(log)
                    .fetch_one(&db)
                    .await?
                    .try_get("broken_seq")?;
            if let Some(seq) = broken {
                counted
                    .wrong
                    .push(format!("log {log}: the service flagged a break at {seq}"));
            }
        }
        db.close().await;
        Ok(())
    }
}

/// An audit log of the restart run: its id, each line's place in its chain (what the service
/// must store for it), and the shipping rounds that failed (the service down).
struct Written {
    log: String,
    links: Vec<Link>,
    failed_rounds: usize,
}

/// A written audit line's place in its chain: what the service must store for it.
#[derive(Debug, PartialEq)]
struct Link {
    seq: u64,
    prev: Option<String>,
    hash: String,
}

/// A gate's audit log `log` at `path` as `run` and `proxy` keep it: lines appended (chained:
/// each names the hash of the one before), shipped in rounds by the gates' own [`Shipper`]
/// (a round that fails leaves them in the log for the next) until `stop`, then until all is
/// shipped.
async fn write_and_ship(
    path: std::path::PathBuf,
    log: String,
    shipper: Shipper,
    stop: Arc<AtomicBool>,
) -> Result<Written> {
    use std::io::Write;
    let mut file = std::fs::File::create(&path)?;
    let mut links: Vec<Link> = Vec::new();
    let mut failed_rounds = 0;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        if !stopping {
            let mut lines = String::new();
            for _ in 0..LINES_PER_ROUND {
                let seq = links.len() as u64 + 1;
                let prev = links.last().map(|l| l.hash.clone());
                let mut line = audit_record(seq as usize);
                line["log"] = log.clone().into();
                line["seq"] = seq.into();
                if let Some(prev) = &prev {
                    line["prev"] = prev.clone().into();
                }
                let text = line.to_string();
                let hash = format!("{:x}", Sha256::digest(text.as_bytes()));
                lines.push_str(&text);
                lines.push('\n');
                links.push(Link { seq, prev, hash });
            }
            file.write_all(lines.as_bytes())?;
        }
        match shipper.ship().await {
            Ok(shipped) if !shipped.ingested.breaks.is_empty() => {
                bail!(
                    "log {log}: the service found breaks: {:?}",
                    shipped.ingested.breaks
                )
            }
            Ok(_) if stopping => {
                return Ok(Written {
                    log,
                    links,
                    failed_rounds,
                });
            }
            Ok(_) => {}
            Err(error) if Instant::now() > deadline => {
                return Err(error.context(format!("log {log}: not all shipped")));
            }
            Err(_) => failed_rounds += 1,
        }
        tokio::time::sleep(SHIPPING_ROUND).await;
    }
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
