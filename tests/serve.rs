//! The review service with real parts: `acp-gate serve` on SQLite and on PostgreSQL (a
//! throwaway cluster scripts/install-test-services.sh starts), gated `acp-gate run`s that
//! escalate to it and wait, reviewers deciding through its API and, in Debian's Chromium, on
//! its page; decisions checked by the gate; audit shipped once; chains checked.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Sandbox, repo, sdk_agent_script, stderr};
use crate::orchestrator::said;

/// A running `acp-gate serve`, stopped when dropped.
pub struct Service {
    child: Child,
    pub url: String,

    log: Arc<Mutex<String>>,
}

impl Service {
    /// Starts the service on a free loopback port with `database`.
    pub fn start(sandbox: &Sandbox, database: &str, extra: &[&str]) -> Service {
        Service::on(sandbox, database, "127.0.0.1:0", extra)
    }

    pub fn on(sandbox: &Sandbox, database: &str, listen: &str, extra: &[&str]) -> Service {
        let mut args = vec!["serve", "--listen", listen, "--database", database];
        args.extend(extra);
        let mut child = sandbox
            .command(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut seen = String::new();
        let url = loop {
            let Some(Ok(line)) = lines.next() else {
                let _ = child.kill();
                panic!("acp-gate serve did not start:\n{seen}");
            };
            seen.push_str(&line);
            seen.push('\n');
            if let Some(rest) = line.split("listening on ").nth(1) {
                break rest.split_whitespace().next().unwrap().to_owned();
            }
        };
        let log = Arc::new(Mutex::new(seen));
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                sink.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        Service { child, url, log }
    }

    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Stops it as an operator would (SIGTERM) and waits.
    pub fn stop(mut self) {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `acp-gate serve token create --role ROLE --name NAME` on `database`: the token.
pub fn token(
    sandbox: &Sandbox,
    database: &str,
    role: &str,
    name: &str,
    team: Option<&str>,
) -> String {
    let mut args = vec![
        "serve",
        "token",
        "create",
        "--role",
        role,
        "--name",
        name,
        "--database",
        database,
    ];
    if let Some(team) = team {
        args.extend(["--team", team]);
    }
    let output = sandbox.command(&args).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// `acp-gate serve key` written to a file in the sandbox: the gates' copy of the key.
pub fn key_file(sandbox: &Sandbox, database: &str) -> PathBuf {
    let output = sandbox
        .command(&["serve", "key", "--database", database])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    sandbox.write(
        "service-key.pem",
        &String::from_utf8(output.stdout).unwrap(),
    )
}

/// Runs `future` to its end on a runtime of its own.
fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// One HTTP request to the service: its status and JSON body.
pub fn call(method: &str, url: &str, token: &str, body: Option<Value>) -> (u16, Value) {
    call_with(method, url, token, body, &[])
}

/// [`call`] with more `headers`.
fn call_with(
    method: &str,
    url: &str,
    token: &str,
    body: Option<Value>,
    headers: &[(&str, &str)],
) -> (u16, Value) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    block_on(async {
        let client = reqwest::Client::new();
        let mut request = client
            .request(method.parse().unwrap(), url)
            .bearer_auth(token)
            .timeout(Duration::from_secs(60));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    })
}

/// Waits until the reviewer sees an open escalation; returns it.
pub fn first_open(service: &Service, reviewer: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let (status, list) = call(
            "GET",
            &format!("{}/v1/escalations", service.url),
            reviewer,
            None,
        );
        assert_eq!(status, 200, "{list}");
        if let Some(first) = list.as_array().and_then(|l| l.first()) {
            return first.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no escalation arrived:\n{}",
            service.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `acp-gate run --non-interactive --format json` of the SDK agent's PROMPT, escalating to
/// `service` with the gate's `token`, started in the background.
pub fn gated_run(
    sandbox: &Sandbox,
    service_url: &str,
    token: &str,
    key: &Path,
    args: &[&str],
    prompt: &str,
) -> Child {
    let audit = sandbox.root.join("audit.jsonl");
    let script = sdk_agent_script();
    let mut all = vec![
        "run",
        "--non-interactive",
        "--format",
        "json",
        "--audit",
        audit.to_str().unwrap(),
        "--escalate-to",
        service_url,
        "--service-key",
        key.to_str().unwrap(),
    ];
    all.extend(args);
    all.extend(["-p", prompt, "--", "node", &script]);
    sandbox
        .command(&all)
        .env("ACP_GATE_SERVICE_TOKEN", token)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A finished run: its exit code, the agent's STEP lines, stdout and stderr.
pub fn finished(child: Child) -> (Option<i32>, Vec<String>, String) {
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let lines: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let steps = said(&lines)
        .into_iter()
        .filter(|l| l.starts_with("STEP "))
        .collect();
    (
        output.status.code(),
        steps,
        format!("{stdout}\n{}", stderr(&output)),
    )
}

/// The audit log's lines.
fn audit_lines(sandbox: &Sandbox) -> Vec<Value> {
    lines_of(&sandbox.root.join("audit.jsonl"))
}

/// The lines of a JSON Lines file (none when it is missing).
fn lines_of(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A service on `database` with a gate token (alice's), a reviewer token (bob's) and the
/// gates' copy of its key.
pub struct Review {
    pub sandbox: Sandbox,
    pub database: String,
    pub service: Service,
    pub gate: String,
    pub reviewer: String,
    pub key: PathBuf,
}

impl Review {
    /// On a SQLite file in the sandbox.
    pub fn sqlite(extra: &[&str]) -> Review {
        let sandbox = Sandbox::new();
        let database = sandbox.root.join("review.db").display().to_string();
        Review::on(sandbox, database, extra)
    }

    pub fn on(sandbox: Sandbox, database: String, extra: &[&str]) -> Review {
        let service = Service::start(&sandbox, &database, extra);
        let gate = token(
            &sandbox,
            &database,
            "gate",
            "alice@laptop",
            Some("payments"),
        );
        let reviewer = token(&sandbox, &database, "reviewer", "bob", None);
        let key = key_file(&sandbox, &database);
        Review {
            sandbox,
            database,
            service,
            gate,
            reviewer,
            key,
        }
    }

    /// A gated run of the SDK agent's `prompt` (see [`gated_run`]).
    pub fn run(&self, args: &[&str], prompt: &str) -> Child {
        gated_run(
            &self.sandbox,
            &self.service.url,
            &self.gate,
            &self.key,
            args,
            prompt,
        )
    }

    /// The first open escalation's id, once one arrives.
    pub fn escalated(&self) -> String {
        first_open(&self.service, &self.reviewer)["id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// `token` decides escalation `id`: the status and body of the answer.
    pub fn decide(&self, token: &str, id: &str, body: Value) -> (u16, Value) {
        let url = format!("{}/v1/escalations/{id}/decision", self.service.url);
        call("POST", &url, token, Some(body))
    }
}

/// A fresh database on the test PostgreSQL server (scripts/install-test-services.sh starts
/// one and writes its URL to target/test-postgres.url; $ACP_GATE_TEST_POSTGRES names another).
pub fn postgres_database(name: &str) -> String {
    let server = std::env::var("ACP_GATE_TEST_POSTGRES").ok().or_else(|| {
        std::fs::read_to_string(repo().join("target/test-postgres.url"))
            .ok()
            .map(|s| s.trim().to_owned())
    });
    let server = server.expect(
        "no PostgreSQL for the tests: run scripts/install-test-services.sh (it starts a throwaway cluster) or set ACP_GATE_TEST_POSTGRES",
    );
    let database = format!("{name}_{}_{}", std::process::id(), rand_suffix());
    let created = Command::new("psql")
        .args([&server, "-qAtc", &format!("CREATE DATABASE {database}")])
        .output()
        .unwrap();
    assert!(
        created.status.success(),
        "cannot create a database on {server} (is it running? scripts/install-test-services.sh starts one): {}",
        stderr(&created)
    );
    let (base, _) = server.rsplit_once('/').unwrap();
    format!("{base}/{database}")
}

fn rand_suffix() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos()
}

/// A reviewer allows the escalation of a run that waits: the agent is told yes in the same
/// turn, and the audit line names the reviewer. Against `database` (SQLite or PostgreSQL).
fn a_waiting_run_goes_on_when_a_reviewer_allows(review: Review) {
    let run = review.run(&["--wait", "60s"], "deploy");
    let escalation = first_open(&review.service, &review.reviewer);
    assert_eq!(escalation["subject"], "terraform apply");
    assert_eq!(escalation["requester"], "alice@laptop");
    assert_eq!(escalation["team"], "payments");
    let id = escalation["id"].as_str().unwrap().to_owned();

    // Alice's own reviewer token cannot decide it, however her name is spelt (case, fullwidth
    // letters, surrounding space, a zero-width space), nor can a gate's; Bob's can.
    let (sandbox, database) = (&review.sandbox, &review.database);
    let allow = json!({ "choice": "allow" });
    for alice in [
        "alice",
        "Alice",
        " alice",
        "ＡＬＩＣＥ",
        "ali\u{200B}ce@desk",
    ] {
        let alice = token(sandbox, database, "reviewer", alice, None);
        let (status, refused) = review.decide(&alice, &id, allow.clone());
        assert_eq!(status, 403, "{refused}");
        assert!(
            refused["error"].as_str().unwrap().contains("own request"),
            "{refused}"
        );
    }
    let (status, refused) = review.decide(&review.gate, &id, allow.clone());
    assert_eq!(status, 403, "a gate's token decides nothing: {refused}");
    assert_eq!(escalation["gate"]["state"], "waiting", "{escalation}");
    let (status, decided) = review.decide(&review.reviewer, &id, allow);
    assert_eq!(status, 200, "{decided}");

    let (code, steps, output) = finished(run);
    assert_eq!(steps, ["STEP deploy selected:allow-once"], "{output}");
    assert_eq!(code, Some(0), "{output}");
    let shown = format!("{}/v1/escalations/{id}", review.service.url);
    let shown = call("GET", &shown, &review.reviewer, None).1;
    assert_eq!(shown["reached"]["state"], "delivered", "{shown}");
    let audit = audit_lines(sandbox);
    let line = audit
        .iter()
        .find(|l| l["subject"] == "terraform apply")
        .unwrap();
    assert_eq!(line["decision"], "ask");
    assert_eq!(line["allowed"], true);
    assert_eq!(
        line["answer"],
        format!("allow-once (reviewer: {id} by bob)")
    );
    // Deciding twice is refused.
    let (status, _) = review.decide(&review.reviewer, &id, json!({ "choice": "deny" }));
    assert_eq!(status, 409);
}

#[test]
fn a_waiting_run_goes_on_when_a_reviewer_allows_on_sqlite() {
    a_waiting_run_goes_on_when_a_reviewer_allows(Review::sqlite(&[]));
}

#[test]
fn a_waiting_run_goes_on_when_a_reviewer_allows_on_postgres() {
    let database = postgres_database("allow");
    a_waiting_run_goes_on_when_a_reviewer_allows(Review::on(Sandbox::new(), database, &[]));
}

/// A deny reaches the agent as a rejection with the reviewer's message; a run whose deadline
/// passes is denied and escalated, as without a service.
#[test]
fn a_deny_carries_the_reviewers_message_and_a_deadline_denies() {
    let review = Review::sqlite(&[]);
    let run = review.run(&["--wait", "60s"], "deploy");
    let id = review.escalated();
    let body = json!({ "choice": "deny", "message": "not on the shared cluster" });
    assert_eq!(review.decide(&review.reviewer, &id, body).0, 200);
    let (code, steps, output) = finished(run);
    assert_eq!(steps, ["STEP deploy selected:reject"], "{output}");
    assert_eq!(
        code,
        Some(0),
        "a reviewer answered: nothing is left escalated\n{output}"
    );
    let audit = audit_lines(&review.sandbox);
    let line = audit
        .iter()
        .find(|l| l["subject"] == "terraform apply")
        .unwrap();
    assert_eq!(
        line["answer"],
        format!("reject (reviewer: {id} by bob: not on the shared cluster)")
    );

    // Nobody decides within the deadline: denied and escalated (exit 3).
    let started = Instant::now();
    let (code, steps, output) =
        finished(review.run(&["--wait", "1s", "--session", "late"], "deploy"));
    assert_eq!(code, Some(3), "{output}");
    assert_eq!(steps, ["STEP deploy selected:reject"], "{output}");
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// Without --wait, the escalation goes to the service and the run exits 3; the reviewer's
/// allow becomes a grant the resumed session claims once, checked by the gate.
#[test]
fn a_reviewers_grant_lets_the_resumed_session_through_once() {
    let review = Review::sqlite(&[]);
    let (code, _, output) = finished(review.run(&["--session", "job"], "deploy"));
    assert_eq!(code, Some(3), "{output}");
    let id = review.escalated();
    assert!(
        output.contains(&id),
        "the escalation record names its id: {output}"
    );

    // Not decided yet: the resume is refused before anything runs.
    let resume = ["--resume", "job", "--grant", &id];
    let (code, _, output) = finished(review.run(&resume, "deploy"));
    assert_eq!(code, Some(1), "{output}");
    assert!(output.contains("not decided yet"), "{output}");

    assert_eq!(
        review
            .decide(&review.reviewer, &id, json!({ "choice": "allow" }))
            .0,
        200
    );
    let (code, steps, output) = finished(review.run(&resume, "deploy"));
    assert_eq!(code, Some(0), "{output}");
    assert_eq!(steps, ["STEP deploy selected:allow-once"], "{output}");
    let audit = audit_lines(&review.sandbox);
    assert!(
        audit
            .iter()
            .any(|l| l["answer"] == format!("allow-once (granted: {id} by bob)"))
    );

    // Used once.
    let (code, _, output) = finished(review.run(&resume, "deploy"));
    assert_eq!(code, Some(1), "{output}");
    assert!(
        output.contains("claimed already") || output.contains("granted already"),
        "{output}"
    );
}

/// The service's key is what makes a decision: a gate that pins another key refuses the
/// service's answer (and denies), whatever the service says.
#[test]
fn a_decision_signed_by_another_key_is_refused() {
    let mut review = Review::sqlite(&[]);
    let other = review.sandbox.root.join("other.db").display().to_string();
    review.key = key_file(&review.sandbox, &other);
    let run = review.run(&["--wait", "60s"], "deploy");
    let id = review.escalated();
    review.decide(&review.reviewer, &id, json!({ "choice": "allow" }));
    let (code, steps, output) = finished(run);
    assert_eq!(steps, ["STEP deploy selected:reject"], "{output}");
    assert_eq!(code, Some(3), "{output}");
    assert!(output.contains("not signed by its key"), "{output}");
}

/// Submissions are idempotent on their id; another gate cannot take an id; every input is
/// validated; a gate sees only its own escalations; tokens must be live.
#[test]
fn the_api_refuses_what_it_must() {
    let review = Review::sqlite(&[]);
    let (sandbox, database, service) = (&review.sandbox, &review.database, &review.service);
    let (alice, reviewer) = (&review.gate, &review.reviewer);
    let carol = token(sandbox, database, "gate", "carol", None);
    let submission = submission("esc-0123456789ab", "make deploy");
    let submit = format!("{}/v1/escalations", service.url);
    assert_eq!(
        call("POST", &submit, alice, Some(submission.clone())).0,
        201
    );
    assert_eq!(
        call("POST", &submit, alice, Some(submission.clone())).0,
        200,
        "a retry"
    );
    let (status, body) = call("POST", &submit, &carol, Some(submission.clone()));
    assert_eq!(status, 409, "{body}");
    let mut other = submission.clone();
    other["fingerprint"] = json!("b".repeat(64));
    assert_eq!(call("POST", &submit, alice, Some(other)).0, 409);
    let list = call("GET", &submit, reviewer, None).1;
    assert_eq!(
        list.as_array().unwrap().len(),
        1,
        "one escalation, however often sent"
    );

    let mut bad = submission.clone();
    bad["fingerprint"] = json!("not hex");
    let (status, body) = call("POST", &submit, alice, Some(bad));
    assert_eq!(
        (
            status,
            body["error"].as_str().unwrap().contains("fingerprint")
        ),
        (400, true),
        "{body}"
    );
    let (status, _) = call("POST", &submit, reviewer, Some(submission.clone()));
    assert_eq!(status, 403, "a reviewer submits nothing");
    let (status, _) = call("POST", &submit, "acpg_guessed", Some(submission.clone()));
    assert_eq!(status, 401);
    let show = format!("{}/v1/escalations/esc-0123456789ab", service.url);
    assert_eq!(
        call("GET", &show, &carol, None).0,
        404,
        "another gate's escalation is not shown"
    );
    assert_eq!(call("GET", &show, alice, None).0, 200);
    let huge = json!({ "subject": "x".repeat(300 << 10) });
    assert_eq!(
        call("POST", &submit, alice, Some(huge)).0,
        413,
        "bodies are bounded"
    );

    // A revoked token is refused at once.
    let listed = sandbox
        .command(&[
            "serve",
            "token",
            "list",
            "--format",
            "json",
            "--database",
            database,
        ])
        .output()
        .unwrap();
    let carol_id = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|t| t["name"] == "carol")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let revoked = sandbox
        .command(&[
            "serve",
            "token",
            "revoke",
            &carol_id,
            "--database",
            database,
        ])
        .output()
        .unwrap();
    assert!(revoked.status.success(), "{}", stderr(&revoked));
    assert_eq!(call("GET", &show, &carol, None).0, 401);

    // Plain HTTP is served on loopback only.
    let refused = sandbox
        .command(&["serve", "--listen", "0.0.0.0:0", "--database", database])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("--behind-tls-proxy"),
        "{}",
        stderr(&refused)
    );
}

/// The audit log is chained and shipped: a run's records reach the service once, a service
/// that is down leaves them spooled until `audit ship`, and a tampered log is named.
#[test]
fn audit_records_are_shipped_once_in_order_and_tampering_is_named() {
    let Review {
        sandbox,
        database,
        service,
        gate,
        reviewer,
        key,
    } = Review::sqlite(&[]);
    let url = service.url.clone();
    let (code, _, output) = finished(gated_run(&sandbox, &url, &gate, &key, &[], "hello"));
    assert_eq!(code, Some(0), "{output}");
    let summary =
        |reviewer: &str| call("GET", &format!("{url}/v1/audit/summary"), reviewer, None).1;
    let local = audit_lines(&sandbox).len();
    assert!(local >= 4, "the SDK agent asks four things");
    assert_eq!(summary(&reviewer)["total"]["total"], local);

    // The service goes down: the next run's records wait in the log.
    service.stop();
    let (code, _, output) = finished(gated_run(&sandbox, &url, &gate, &key, &[], "hello"));
    assert_eq!(
        code,
        Some(0),
        "a service that is down does not stop a run that needs no reviewer\n{output}"
    );
    assert!(output.contains("go next time"), "{output}");
    let local = audit_lines(&sandbox).len();

    // Back up on the same address: `audit ship` sends the rest, once.
    let port = url.rsplit(':').next().unwrap();
    let _service = Service::on(&sandbox, &database, &format!("127.0.0.1:{port}"), &[]);
    let log = sandbox.root.join("audit.jsonl");
    let ship = |log: &Path, token: &str| audit_ship(&sandbox, log, &url, &key, token);
    let shipped = |output: std::process::Output| {
        assert!(output.status.success(), "{}", stderr(&output));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    shipped(ship(&log, &gate));
    assert_eq!(summary(&reviewer)["total"]["total"], local);
    let again = shipped(ship(&log, &gate));
    assert!(again.contains("0 record(s) shipped"), "{again}");
    assert_eq!(summary(&reviewer)["total"]["total"], local, "once");

    // The log verifies; an edited line is named by the line after it.
    let verify = |path: &Path| {
        sandbox
            .command(&["audit", "verify", path.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let output = verify(&log);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[1] = lines[1]
        .replace("\"decision\":\"deny\"", "\"decision\":\"allow\"")
        .replace("\"decision\":\"ask\"", "\"decision\":\"allow\"");
    lines[1].push(' ');
    let tampered = sandbox.write("tampered.jsonl", &(lines.join("\n") + "\n"));
    let output = verify(&tampered);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("tampered.jsonl:3: the audit chain breaks here"),
        "{}",
        stderr(&output)
    );

    // Shipped with a line missing, the service flags the break on its page.
    lines.remove(1);
    let gap = sandbox.write("gap.jsonl", &(lines.join("\n") + "\n"));
    let mallory = token(&sandbox, &database, "gate", "mallory", None);
    let output = ship(&gap, &mallory);
    assert!(
        stderr(&output).contains("does not follow"),
        "{}",
        stderr(&output)
    );
    let broken = summary(&reviewer)["broken"].clone();
    assert_eq!(broken[0]["developer"], "mallory", "{broken}");
}

/// Gates shipping at once, each its own log, on SQLite: every batch is taken (none refused
/// with "database is locked") and every record counted once.
#[test]
fn audit_batches_shipped_at_once_by_several_gates_are_all_taken() {
    const LOGS: usize = 4;
    const BATCHES: usize = 10;
    const RECORDS: usize = 50;
    let review = Review::sqlite(&[]);
    let url = format!("{}/v1/audit", review.service.url);
    let hash = |log: usize, seq: usize| format!("{log:032x}{seq:032x}");
    let shippers: Vec<_> = (0..LOGS)
        .map(|log| {
            let (url, gate) = (url.clone(), review.gate.clone());
            std::thread::spawn(move || {
                for batch in 0..BATCHES {
                    let records: Vec<Value> = (1..=RECORDS)
                        .map(|i| {
                            let seq = batch * RECORDS + i;
                            json!({
                                "log": format!("log-{log}"),
                                "seq": seq,
                                "prev": (seq > 1).then(|| hash(log, seq - 1)),
                                "hash": hash(log, seq),
                                "record": {"decision": "allow", "kind": "execute", "subject": "cargo test"},
                            })
                        })
                        .collect();
                    let (status, body) =
                        call("POST", &url, &gate, Some(json!({ "records": records })));
                    assert_eq!(status, 200, "batch {batch} of log {log}: {body}");
                    assert_eq!(body["accepted"], RECORDS, "{body}");
                }
            })
        })
        .collect();
    for shipper in shippers {
        shipper.join().unwrap();
    }
    let summary = call(
        "GET",
        &format!("{}/v1/audit/summary", review.service.url),
        &review.reviewer,
        None,
    )
    .1;
    assert_eq!(summary["total"]["total"], LOGS * BATCHES * RECORDS);
    assert_eq!(summary["broken"], json!([]), "{summary}");
}

/// The audit page counts what happened to each call (allowed, denied, neither) and who
/// decided it (the chain, a person, a reviewer, nobody), read from the answers the gates
/// record, not the chain's verdicts; every row adds up both ways, and each handler's verdicts
/// add up to what it judged.
#[test]
fn the_audit_counts_outcomes_and_who_decided_them() {
    let review = Review::sqlite(&[]);
    let url = &review.service.url;
    // (the chain's verdict, the answer as a gate records it, allowed).
    let calls = [
        ("allow", "allow-once", Some(true)),
        ("deny", "reject", Some(false)),
        ("ask", "allow-once (user)", Some(true)),
        ("ask", "reject (editor)", Some(false)),
        ("ask", "allow-always (session-rule)", Some(true)),
        ("ask", "ask (agent)", None),
        ("ask", "allow-once (reviewer: esc-1 by bob)", Some(true)),
        (
            "ask",
            "reject (reviewer: esc-2 by bob: ask (user) first)",
            Some(false),
        ),
        ("ask", "allow-once (granted: esc-3 by bob)", Some(true)),
        ("ask", "reject (escalated: nobody to ask)", Some(false)),
        ("ask", "cancelled", None),
    ];
    let batch = audit_batch("log-1", &calls, "terraform apply");
    let (status, body) = call(
        "POST",
        &format!("{url}/v1/audit"),
        &review.gate,
        Some(batch),
    );
    assert_eq!(status, 200, "{body}");
    let summary = call(
        "GET",
        &format!("{url}/v1/audit/summary"),
        &review.reviewer,
        None,
    )
    .1;
    let total = &summary["total"];
    let counts = |t: &Value, keys: &[&str]| {
        keys.iter()
            .map(|k| t[k].as_i64().unwrap())
            .collect::<Vec<_>>()
    };
    let (outcomes, deciders) = (
        ["allowed", "denied", "neither"],
        ["chain", "person", "reviewer", "nobody"],
    );
    assert_eq!(counts(total, &["total"]), [11]);
    assert_eq!(counts(total, &outcomes), [5, 4, 2], "{total}");
    assert_eq!(counts(total, &deciders), [2, 4, 3, 2], "{total}");
    let by_outcome = summary["by_outcome"].as_array().unwrap();
    let names: Vec<&str> = by_outcome
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, outcomes);
    let allowed = &by_outcome[0];
    assert_eq!(counts(allowed, &deciders), [1, 2, 2, 0], "{allowed}");
    let tallies = [
        &summary["by_agent"],
        &summary["by_developer"],
        &summary["by_outcome"],
    ];
    for tally in tallies
        .iter()
        .flat_map(|t| t.as_array().unwrap())
        .chain([total])
    {
        let sum = |keys: &[&str]| counts(tally, keys).iter().sum::<i64>();
        assert_eq!(sum(&outcomes), tally["total"].as_i64().unwrap(), "{tally}");
        assert_eq!(sum(&deciders), tally["total"].as_i64().unwrap(), "{tally}");
    }
    for (n, column) in deciders.iter().chain(&["total"]).enumerate() {
        let rows: i64 = by_outcome.iter().map(|t| t[column].as_i64().unwrap()).sum();
        assert_eq!(
            rows,
            total[column].as_i64().unwrap(),
            "column {n} ({column})"
        );
    }
    for handler in summary["by_handler"].as_array().unwrap() {
        let sum: i64 = counts(handler, &["allow", "deny", "ask", "abstain"])
            .iter()
            .sum();
        assert_eq!((sum, &handler["total"]), (11, &json!(11)), "{handler}");
    }
    let page = browse(
        "GET",
        &format!("{url}/audit"),
        &[("cookie", &sign_in(url, &review.reviewer))],
        &[],
    );
    assert_eq!(page.0, 200, "{}", page.2);
    assert!(page.2.contains("Who decided"), "{}", page.2);
}

/// Each new escalation is posted to the webhook (Slack's JSON, with a link), retried after a
/// failure, and never holds the submission.
#[test]
fn a_new_escalation_is_announced_to_the_webhook_with_retries() {
    let receiver = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let hook = format!("http://{}/hook", receiver.local_addr().unwrap());
    let bodies = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = bodies.clone();
    std::thread::spawn(move || {
        for (n, stream) in receiver.incoming().enumerate() {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            seen.lock().unwrap().push(String::from_utf8(body).unwrap());
            // The first try fails.
            let status = if n == 0 {
                "500 Internal Server Error"
            } else {
                "200 OK"
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
        }
    });
    let review = Review::sqlite(&[
        "--webhook",
        &hook,
        "--public-url",
        "https://review.example.org",
    ]);
    let (code, _, output) = finished(review.run(&[], "deploy"));
    assert_eq!(code, Some(3), "{output}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while bodies.lock().unwrap().len() < 2 {
        assert!(
            Instant::now() < deadline,
            "the webhook was not retried: {:?}\n{}",
            bodies.lock().unwrap(),
            review.service.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let body: Value = serde_json::from_str(&bodies.lock().unwrap()[1]).unwrap();
    let text = body["text"].as_str().unwrap();
    assert!(
        text.contains("alice@laptop asks to execute `terraform apply`"),
        "{text}"
    );
    assert!(
        text.contains("https://review.example.org/escalations/esc-"),
        "{text}"
    );
    assert!(
        body["blocks"][0]["text"]["text"]
            .as_str()
            .unwrap()
            .contains("|Review escalation esc-")
    );
}

/// The org file says where escalations go: a flag naming another service is refused, and a
/// project's file cannot say it at all.
#[test]
fn only_the_org_file_says_where_escalations_go() {
    let sandbox = Sandbox::new();
    let org = sandbox.write(
        "org/handlers.toml",
        "[escalation]\nurl = \"https://review.example.org\"\n",
    );
    let output = sandbox
        .command(&[
            "run",
            "--non-interactive",
            "--org-handlers",
            org.to_str().unwrap(),
            "--escalate-to",
            "http://127.0.0.1:1",
            "-p",
            "x",
            "--",
            "true",
        ])
        .env("ACP_GATE_SERVICE_TOKEN", "t")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("a flag cannot change that"),
        "{}",
        stderr(&output)
    );

    sandbox.write(
        "workspace/.acp-gate/handlers.toml",
        "[escalation]\nurl = \"http://127.0.0.1:1\"\n",
    );
    let output = sandbox
        .command(&["run", "--non-interactive", "-p", "x", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("only the org file says where escalations go"),
        "{}",
        stderr(&output)
    );
}

/// An escalation as a gate submits it, asking to run `subject` (alice's, on her laptop).
fn submission(id: &str, subject: &str) -> Value {
    json!({
        "id": id, "session_id": "s", "fingerprint": "a".repeat(64),
        "kind": "execute", "tool": "Bash", "title": "t", "subject": subject,
        "reasons": ["unknown command"], "handlers": [], "input": { "command": subject },
        "paths": [], "developer": "alice", "machine": "laptop", "workspace": "/ws",
        "agent": "claude"
    })
}

/// The text the browser test puts in front of a reviewer to spoof what runs: a right-to-left
/// override, a zero-width space, markup.
const SPOOF: &str = "rm -rf ~/\u{202E}hs.txt\u{200B} && echo '<img src=x onerror=alert(1)>'";

/// Escalations on `review`'s service in every state a page shows: their gates waiting (kept
/// waiting by long-polls until `stop`), stopped waiting, never waited; decided and delivered,
/// denied, an allow that reached no gate, a grant claimed, the reviewer's own; hostile and
/// long unbroken text; and audit records of every outcome, with a broken chain. Returns the
/// ids by state.
fn every_state(review: &Review, stop: &Arc<AtomicBool>) -> Value {
    let url = review.service.url.clone();
    let submit = |gate: &str, id: &str, subject: &str, change: &dyn Fn(&mut Value)| {
        let mut body = submission(id, subject);
        change(&mut body);
        let (status, said) = call("POST", &format!("{url}/v1/escalations"), gate, Some(body));
        assert_eq!(status, 201, "{said}");
    };
    let same = |_: &mut Value| {};
    let decide =
        |id: &str, body: Value| assert_eq!(review.decide(&review.reviewer, id, body).0, 200);
    submit(&review.gate, "esc-hostile", SPOOF, &|body| {
        body["reasons"] = json!(["the agent said \u{2066}nothing to worry about\u{2069}"]);
        body["developer"] = json!("ali\u{200B}ce");
        body["agent"] = json!("\"><script>alert(1)</script>");
        body["paths"] = json!(["/ws/\u{202E}gpj.exe"]);
    });
    let long = format!("curl https://example.org/{}", "a1b2c3d4".repeat(400));
    submit(&review.gate, "esc-long", &long, &same);
    submit(&review.gate, "esc-delivered", "make release", &same);
    submit(
        &review.gate,
        "esc-denied",
        "kubectl delete namespace payments",
        &same,
    );
    let waited = ["esc-hostile", "esc-long", "esc-delivered", "esc-denied"];
    keep_waiting(&url, &review.gate, &waited, stop);
    // Decided once their gate waits: the decisions are delivered to it.
    let show = format!("{url}/v1/escalations/esc-denied");
    while call("GET", &show, &review.reviewer, None).1["gate_until_ms"].is_null() {
        std::thread::sleep(Duration::from_millis(50));
    }
    decide("esc-delivered", json!({ "choice": "allow" }));
    decide(
        "esc-denied",
        json!({ "choice": "deny", "message": "not the shared cluster: use your sandbox" }),
    );

    // Gates that stopped waiting a minute ago, or never waited.
    for id in ["esc-stale", "esc-late"] {
        submit(
            &review.gate,
            id,
            "terraform destroy -target=module.cache",
            &same,
        );
        let wait = format!("{url}/v1/escalations/{id}/decision?wait_ms=0");
        call("GET", &wait, &review.gate, None);
        tamper(
            &review.database,
            "UPDATE escalations SET gate_until_ms = gate_until_ms - 60000, created_ms = created_ms - 90000 WHERE id = $1",
            id,
        );
    }
    decide("esc-late", json!({ "choice": "allow" }));
    for (id, subject) in [
        ("esc-nowait", "psql -c 'VACUUM FULL'"),
        ("esc-claimed", "make migrate"),
    ] {
        submit(&review.gate, id, subject, &same);
        tamper(
            &review.database,
            "UPDATE escalations SET created_ms = created_ms - 60000 WHERE id = $1",
            id,
        );
    }
    decide("esc-claimed", json!({ "choice": "allow_and_propose" }));
    let claim = format!("{url}/v1/escalations/esc-claimed/claim");
    assert_eq!(call("POST", &claim, &review.gate, Some(json!({}))).0, 200);
    let bob = token(
        &review.sandbox,
        &review.database,
        "gate",
        "Bob@desk",
        Some("platform"),
    );
    submit(&bob, "esc-own", "npm publish", &|body| {
        body["developer"] = json!("bob")
    });
    keep_waiting(&url, &bob, &["esc-own"], stop);

    // The audit: every outcome, a hostile subject, and a log with a gap.
    let calls = [
        ("allow", "allow-once", Some(true)),
        ("ask", "allow-once (reviewer: esc-1 by bob)", Some(true)),
        ("ask", "reject (user)", Some(false)),
        ("ask", "reject (escalated: nobody to ask)", Some(false)),
        ("ask", "cancelled", None),
    ];
    let mut batch = audit_batch("log-1", &calls, SPOOF);
    assert_eq!(
        call(
            "POST",
            &format!("{url}/v1/audit"),
            &review.gate,
            Some(batch.clone())
        )
        .0,
        200
    );
    let records = batch["records"].as_array_mut().unwrap();
    records.remove(1);
    let (status, said) = call("POST", &format!("{url}/v1/audit"), &bob, Some(batch));
    assert_eq!(status, 200, "{said}");
    json!({
        "waiting": ["esc-hostile", "esc-long", "esc-own"],
        "stale": ["esc-stale", "esc-nowait"],
        "decided": ["esc-delivered", "esc-denied", "esc-late", "esc-claimed"],
    })
}

/// Keeps `gate`'s escalations `ids` waiting (long-polls one after another, as a gate does)
/// until each is decided or `stop` is set.
fn keep_waiting(url: &str, gate: &str, ids: &[&str], stop: &Arc<AtomicBool>) {
    let mut waiting: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
    let (url, gate, stop) = (url.to_owned(), gate.to_owned(), stop.clone());
    std::thread::spawn(move || {
        while !waiting.is_empty() && !stop.load(Ordering::SeqCst) {
            waiting.retain(|id| {
                let wait = format!("{url}/v1/escalations/{id}/decision?wait_ms=300");
                call("GET", &wait, &gate, None).1["status"] == "open"
            });
        }
    });
}

/// A batch of one audit log's records, one per call: (the chain's verdict, the answer as a
/// gate records it, allowed), each about `subject`.
fn audit_batch(log: &str, calls: &[(&str, &str, Option<bool>)], subject: &str) -> Value {
    let records: Vec<Value> = (calls.iter().enumerate())
        .map(|(n, (decision, answer, allowed))| {
            let handlers = json!([
                {"name": "builtin-commands", "verdict": decision},
                {"name": "builtin-paths", "verdict": "abstain"},
            ]);
            let mut record = json!({"decision": decision, "answer": answer, "kind": "execute",
                "subject": subject, "agent": "claude", "handlers": handlers});
            if let Some(allowed) = allowed {
                record["allowed"] = json!(allowed);
            }
            let hash = |seq: usize| format!("{seq:064x}");
            json!({"log": log, "seq": n + 1, "prev": (n > 0).then(|| hash(n)),
                "hash": hash(n + 1), "record": record})
        })
        .collect();
    json!({ "records": records })
}

/// Every page in a real browser (Debian's Chromium, driven by Playwright,
/// tests/browser/review.mjs): on an empty service and on one holding escalations in every
/// state, each page answers, fits a phone's width (390 px) without scrolling sideways and
/// shows no hidden character as it is; screenshots of each at both widths go to
/// target/review-screenshots. The queue updates itself when an escalation arrives (the tab's
/// title carries the count), and a reviewer allows the escalation of a waiting run on its page:
/// the agent's tool call is allowed in the same turn.
#[test]
fn every_page_draws_in_every_state_in_the_browser_and_a_reviewer_allows_a_waiting_run() {
    let browser = repo().join("tests/browser");
    assert!(
        browser.join("node_modules/playwright-core").is_dir(),
        "tests/browser has no playwright-core: run scripts/install-test-services.sh"
    );
    let shots = repo().join("target/review-screenshots");
    let _ = std::fs::remove_dir_all(&shots);
    std::fs::create_dir_all(&shots).unwrap();
    let empty = Review::sqlite(&[]);
    let review = Review::sqlite(&["--fleet-policy", &fleet_policy('a')]);
    let stop = Arc::new(AtomicBool::new(false));
    let states = every_state(&review, &stop);
    // 55 more decided: the history has a second page.
    for n in 1..=55 {
        let id = format!("esc-lint-{n:02}");
        let body = submission(&id, &format!("make lint-{n}"));
        let url = format!("{}/v1/escalations", review.service.url);
        assert_eq!(call("POST", &url, &review.gate, Some(body)).0, 201);
        let choice = if n % 5 == 0 { "deny" } else { "allow" };
        assert_eq!(
            review
                .decide(&review.reviewer, &id, json!({ "choice": choice }))
                .0,
            200
        );
    }
    let run = review.run(&["--wait", "300s"], "deploy");
    let admin = token(&review.sandbox, &review.database, "admin", "carol", None);
    fleet_reporting(&review);
    let config = json!({
        "shots": shots,
        "empty": { "url": empty.service.url, "reviewer": empty.reviewer },
        "full": {
            "url": review.service.url, "reviewer": review.reviewer, "gate": review.gate,
            "admin": admin, "states": states, "run": "terraform apply", "arrive": submission("esc-arrived", "make deploy-canary"),
            "today": chrono_day(0),
        },
    });
    let output = Command::new("node")
        .arg(browser.join("review.mjs"))
        .arg(config.to_string())
        .output()
        .unwrap();
    stop.store(true, Ordering::SeqCst);
    assert!(
        output.status.success(),
        "{}\n{}",
        stderr(&output),
        review.service.log()
    );
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(seen["subject"], "terraform apply", "{seen}");
    assert_eq!(seen["decided"], "Allowed by bob", "{seen}");
    assert!(seen["drawn"].as_u64().unwrap() >= 30, "{seen}");
    assert!(
        seen["replayed"]
            .as_str()
            .unwrap()
            .contains("request(s) decided again"),
        "{seen}"
    );
    let fleet = &seen["fleet"];
    // The three that reported, and the waiting run's gate (on no org file: flagged too).
    let gates: Vec<&str> = (fleet["gates"].as_array().unwrap().iter())
        .map(|g| g.as_str().unwrap())
        .collect();
    let reported = ["dave@desktop", "erin@build⟨U+200B⟩box", "alice@laptop"];
    assert_eq!(gates.len(), 4, "{seen}");
    assert_eq!(
        (gates.iter().filter(|g| reported.contains(g))).collect::<Vec<_>>(),
        reported.iter().collect::<Vec<_>>(),
        "flagged first, then the latest: {seen}"
    );
    assert_eq!(gates[3], "alice@laptop", "{seen}");
    let flags = fleet["flags"].to_string();
    for flag in [
        "not the org's published",
        "Codex is not gated",
        "silent for 3 days",
        "runs no org policy",
    ] {
        assert!(flags.contains(flag), "no {flag}: {seen}");
    }
    assert!(
        fleet["totals"]
            .as_str()
            .unwrap()
            .starts_with("4 gates 2 on another policy 1 with an agent ungated 1 silent"),
        "{seen}"
    );
    let (code, steps, output) = finished(run);
    assert_eq!(steps, ["STEP deploy selected:allow-once"], "{output}");
    assert_eq!(code, Some(0), "{output}");
    let found = &seen["found"];
    assert!(
        found["none"]
            .as_str()
            .unwrap()
            .contains("No open escalation matches"),
        "{seen}"
    );
    assert!(
        found["second"].as_str().unwrap().starts_with("51–"),
        "{seen}"
    );
    assert_eq!(found["outcomes"], json!(["denied"]), "{seen}");
    let local = found["local"]["text"].as_str().unwrap();
    assert!(local.contains("IST") || local.contains("+5:30"), "{seen}");
    assert!(
        found["keyed"]
            .as_str()
            .unwrap()
            .starts_with("Denied by bob"),
        "{seen}"
    );
    let decided = call(
        "GET",
        &format!(
            "{}/v1/escalations/{}",
            review.service.url,
            states["stale"][1].as_str().unwrap()
        ),
        &review.reviewer,
        None,
    );
    assert_eq!(
        decided.1["status"], "denied",
        "the d key denied it: {}",
        decided.1
    );
    let id = seen["id"].as_str().unwrap();
    let audit = audit_lines(&review.sandbox);
    assert!(
        audit
            .iter()
            .any(|l| l["answer"] == format!("allow-once (reviewer: {id} by bob)"))
    );
}

/// The org's published policy for the fleet tests: a digest of `digit`s.
fn fleet_policy(digit: char) -> String {
    format!("sha256:{}", digit.to_string().repeat(64))
}

/// Three gates report to `review`'s fleet: alice's laptop on the org's policy, dave's desktop
/// on another with Codex ungated, and erin's build box (a hidden character in its name),
/// silent for three days.
fn fleet_reporting(review: &Review) {
    let report = |token: &str, developer: &str, machine: &str, policy: char, codex_gated: bool| {
        let body = json!({
            "developer": developer, "machine": machine, "version": "0.1.0", "via": "hook server",
            "workspace": "/home/dev/src/app", "policy": fleet_policy(policy),
            "layers": [{"tier": "org", "file": "/etc/acp-gate/handlers.toml", "sha256": fleet_policy(policy)},
                       {"tier": "builtin", "file": "<builtin default chain>", "sha256": fleet_policy('c')}],
            "chain_loads": true,
            "agents": [
                {"agent": "claude", "title": "Claude Code", "found": true, "gated": true},
                {"agent": "codex", "title": "Codex", "found": true, "gated": codex_gated,
                 "problems": if codex_gated { json!([]) } else { json!(["no acp-gate hook in ~/.codex/config.toml"]) }},
            ],
        });
        let url = format!("{}/v1/gates/report", review.service.url);
        let (status, said) = call("POST", &url, token, Some(body));
        assert_eq!(status, 200, "{said}");
    };
    let dave = token(
        &review.sandbox,
        &review.database,
        "gate",
        "dave@desktop",
        Some("infra"),
    );
    let erin = token(
        &review.sandbox,
        &review.database,
        "gate",
        "erin@buildbox",
        None,
    );
    report(&review.gate, "alice", "laptop", 'a', true);
    report(&dave, "dave", "desktop", 'b', false);
    report(&erin, "erin", "build\u{200b}box", 'a', true);
    tamper(
        &review.database,
        "UPDATE gates SET last_ms = last_ms - 259200000 WHERE token_id = (SELECT id FROM tokens WHERE name = $1)",
        "erin@buildbox",
    );
}

/// One request to the page as a browser sends it (`form`: a POST's fields), redirects not
/// followed: the status, the `Set-Cookie` values and the body.
fn browse(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    form: &[(&str, &str)],
) -> (u16, Vec<String>, String) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let encode = |value: &str| -> String {
        value
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    char::from(b).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect()
    };
    let body: Vec<String> = form
        .iter()
        .map(|(name, value)| format!("{name}={}", encode(value)))
        .collect();
    block_on(async {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let mut request = client.request(method.parse().unwrap(), url);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if method == "POST" {
            request = request
                .header("content-type", "application/x-www-form-urlencoded")
                .body(body.join("&"));
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let cookies = (response.headers().get_all("set-cookie").iter())
            .map(|v| v.to_str().unwrap().to_owned())
            .collect();
        (status, cookies, response.text().await.unwrap())
    })
}

/// The value cookie `name` is set to among `cookies` (`Set-Cookie` values), unless it is
/// ended.
fn cookie_set(cookies: &[String], name: &str) -> Option<String> {
    let value = cookies
        .iter()
        .find_map(|c| c.strip_prefix(&format!("{name}=")))?;
    let value = value.split(';').next().unwrap();
    (!value.is_empty()).then(|| value.to_owned())
}

/// Signs in to the page at `url` with `token` as a browser would: the session's `Cookie`
/// header.
fn sign_in(url: &str, token: &str) -> String {
    let login = format!("{url}/login");
    let (_, cookies, _) = browse("GET", &login, &[], &[]);
    let csrf = cookie_set(&cookies, "acp_gate_login").unwrap();
    let headers = [
        ("cookie", format!("acp_gate_login={csrf}")),
        ("origin", url.to_owned()),
    ];
    let headers = headers
        .each_ref()
        .map(|(name, value)| (*name, value.as_str()));
    let (status, cookies, body) = browse(
        "POST",
        &login,
        &headers,
        &[("token", token), ("csrf", &csrf)],
    );
    assert_eq!(status, 303, "{body}");
    format!(
        "acp_gate_session={}",
        cookie_set(&cookies, "acp_gate_session").unwrap()
    )
}

/// A sign-in through another site is refused: a form with no sign-in cookie beside it (a
/// SameSite=Strict cookie never goes with another site's post), another CSRF token, an
/// `Origin` of another site or an opaque one, a `Sec-Fetch-Site: cross-site`; the page's own
/// form signs in. Signing out likewise. A flood of unknown tokens from one address is held
/// back (429) before it costs a lookup each, on the API and on the sign-in page; the tokens
/// already found good still work from that address, a new one once the address's budget
/// refills; an `X-Forwarded-For` is believed only behind a proxy, which tells clients apart.
#[test]
fn signing_in_from_another_site_and_floods_of_unknown_tokens_are_refused() {
    let review = Review::sqlite(&[]);
    let url = review.service.url.as_str();
    let (login, logout) = (format!("{url}/login"), format!("{url}/logout"));
    let (status, cookies, _) = browse("GET", &login, &[], &[]);
    assert_eq!(status, 200);
    let csrf = cookie_set(&cookies, "acp_gate_login").unwrap();
    let cookie = format!("acp_gate_login={csrf}");
    let sign_in = |headers: &[(&str, &str)], csrf: &str| {
        let form = [("token", review.reviewer.as_str()), ("csrf", csrf)];
        browse("POST", &login, headers, &form)
    };
    let forged: [(&[(&str, &str)], &str); 5] = [
        (&[], &csrf),
        (&[("cookie", &cookie)], "forged"),
        (
            &[("cookie", &cookie), ("origin", "https://evil.example")],
            &csrf,
        ),
        (&[("cookie", &cookie), ("origin", "null")], &csrf),
        (
            &[("cookie", &cookie), ("sec-fetch-site", "cross-site")],
            &csrf,
        ),
    ];
    for (headers, csrf) in forged {
        let (status, cookies, body) = sign_in(headers, csrf);
        assert_eq!(status, 403, "{headers:?}: {body}");
        assert_eq!(cookie_set(&cookies, "acp_gate_session"), None);
    }
    let ours = [
        ("cookie", cookie.as_str()),
        ("origin", url),
        ("sec-fetch-site", "same-origin"),
    ];
    let (status, cookies, body) = sign_in(&ours, &csrf);
    assert_eq!(status, 303, "{body}");
    let session = format!(
        "acp_gate_session={}",
        cookie_set(&cookies, "acp_gate_session").unwrap()
    );
    let (status, _, page) = browse("GET", &format!("{url}/queue"), &[("cookie", &session)], &[]);
    assert_eq!(status, 200, "{page}");
    let page_csrf = page.split("name=\"csrf\" value=\"").nth(1).unwrap();
    let page_csrf = page_csrf.split('"').next().unwrap();
    for (origin, expected) in [("https://evil.example", 403), ("null", 403), (url, 303)] {
        let headers = [("cookie", session.as_str()), ("origin", origin)];
        let (status, _, body) = browse("POST", &logout, &headers, &[("csrf", page_csrf)]);
        assert_eq!(status, expected, "signing out from {origin}: {body}");
    }

    // A flood of unknown tokens from this address, each claiming another forwarded address
    // (not believed: no proxy is declared).
    let unknown = format!("{url}/v1/escalations/esc-none");
    assert_eq!(
        call("GET", &unknown, &review.gate, None).0,
        404,
        "found good"
    );
    let flood: Vec<u16> = (0..30)
        .map(|n| {
            let forwarded = format!("203.0.113.{n}");
            let headers = [("x-forwarded-for", forwarded.as_str())];
            call_with("GET", &unknown, &format!("acpg_guess{n}"), None, &headers).0
        })
        .collect();
    let held = flood.iter().position(|s| *s == 429).expect("held back");
    assert!(held <= 10, "a burst of ten at most: {flood:?}");
    assert!(flood.iter().all(|s| [401, 429].contains(s)), "{flood:?}");
    assert!(
        flood[held..].iter().filter(|s| **s == 401).count() <= 1,
        "one a second: {flood:?}"
    );
    assert_eq!(
        call("GET", &unknown, &review.gate, None).0,
        404,
        "a token found good still works"
    );
    let form = [("token", "acpg_guess"), ("csrf", csrf.as_str())];
    let (status, _, body) = browse("POST", &login, &[("cookie", &cookie)], &form);
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("too many unknown tokens"), "{body}");
    let carol = token(&review.sandbox, &review.database, "reviewer", "carol", None);
    let list = format!("{url}/v1/escalations");
    assert_eq!(
        call("GET", &list, &carol, None).0,
        429,
        "a new token waits for the budget"
    );
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(
        call("GET", &list, &carol, None).0,
        200,
        "and is looked up once it refills"
    );

    // Behind a proxy, the address it appends to X-Forwarded-For tells clients apart.
    let proxied = Review::sqlite(&["--behind-tls-proxy"]);
    let list = format!("{}/v1/escalations", proxied.service.url);
    let from = |forwarded: &str, token: &str| {
        call_with("GET", &list, token, None, &[("x-forwarded-for", forwarded)]).0
    };
    let flood: Vec<u16> = (0..30)
        .map(|n| from("198.51.100.7", &format!("acpg_guess{n}")))
        .collect();
    assert!(flood.contains(&429), "{flood:?}");
    assert_eq!(
        from("203.0.113.5", &proxied.reviewer),
        200,
        "another client"
    );
    assert_eq!(
        from("203.0.113.5, 198.51.100.7", "acpg_more"),
        429,
        "what the client put before the proxy's address is not believed"
    );
}

/// Two instances on one PostgreSQL: a run waits on one while a reviewer decides on the other
/// (LISTEN/NOTIFY wakes it); then the instance a run waits on restarts in the middle of the
/// wait, the decision is taken meanwhile, and the run gets it: nothing is lost.
#[test]
fn two_instances_on_one_postgres_share_decisions_and_a_restart_loses_nothing() {
    let database = postgres_database("pair");
    let Review {
        sandbox,
        service,
        gate,
        reviewer,
        key,
        ..
    } = Review::on(Sandbox::new(), database.clone(), &[]);
    let other = Service::start(&sandbox, &database, &[]);
    let decide = |id: &str| {
        let url = format!("{}/v1/escalations/{id}/decision", other.url);
        call("POST", &url, &reviewer, Some(json!({ "choice": "allow" })))
    };

    let run = gated_run(
        &sandbox,
        &service.url,
        &gate,
        &key,
        &["--wait", "60s"],
        "deploy",
    );
    let id = first_open(&other, &reviewer)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(decide(&id).0, 200);
    let (code, steps, output) = finished(run);
    assert_eq!(
        (code, steps),
        (Some(0), vec!["STEP deploy selected:allow-once".to_owned()]),
        "{output}"
    );

    let args = ["--wait", "60s", "--session", "second"];
    let run = gated_run(&sandbox, &service.url, &gate, &key, &args, "deploy");
    let id = first_open(&other, &reviewer)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let address = service.url.trim_start_matches("http://").to_owned();
    service.stop();
    assert_eq!(
        decide(&id).0,
        200,
        "decided while the run's instance is down"
    );
    let _restarted = Service::on(&sandbox, &database, &address, &[]);
    let (code, steps, output) = finished(run);
    assert_eq!(
        (code, steps),
        (Some(0), vec!["STEP deploy selected:allow-once".to_owned()]),
        "{output}"
    );
}

/// `acp-gate hook gemini` of the recorded web fetch (the default chain asks; Gemini CLI has
/// no ask of its own) in `session`, with `args`, started in the background: the hook
/// escalates to the review service.
fn gated_hook(review: &Review, session: &str, args: &[&str]) -> Child {
    hook_in_session(review, "gemini", "web-fetch", session, args)
}

/// `acp-gate hook AGENT` of the recorded payload `fixture` in `session`, with `args` and the
/// gate's token, started in the background.
fn hook_in_session(
    review: &Review,
    agent: &str,
    fixture: &str,
    session: &str,
    args: &[&str],
) -> Child {
    let payload = crate::hooks::fixture(&review.sandbox, agent, fixture, false);
    let mut payload: Value = serde_json::from_str(&payload).unwrap();
    payload["session_id"] = json!(session);
    let mut child = review
        .sandbox
        .command(&[&["hook", agent][..], args].concat())
        .env("ACP_GATE_SERVICE_TOKEN", &review.gate)
        .env(
            "ACP_GATE_AUDIT_LOG",
            review.sandbox.root.join("audit.jsonl"),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(payload.to_string().as_bytes()).unwrap();
    drop(stdin);
    child
}

/// A finished hook: its exit code and its answer (Gemini CLI's `decision` and `reason`).
fn hook_answer(child: Child) -> (Option<i32>, Value, String) {
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let answer = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    (
        output.status.code(),
        answer,
        format!("{stdout}\n{}", stderr(&output)),
    )
}

/// Asserts that `hook` answered deny, with a reason that says each of `said`.
fn assert_hook_denied(hook: Child, said: &[&str]) {
    let (code, answer, output) = hook_answer(hook);
    assert_eq!(
        (code, &answer["decision"]),
        (Some(0), &json!("deny")),
        "{output}"
    );
    let reason = answer["reason"].as_str().unwrap();
    for part in said {
        assert!(reason.contains(part), "no `{part}` in: {reason}");
    }
}

/// The audit line of the hook call in `session`.
fn hook_audit_line(review: &Review, session: &str) -> Value {
    let audit = audit_lines(&review.sandbox);
    audit
        .into_iter()
        .find(|l| l["session_id"] == session)
        .unwrap_or_else(|| panic!("no audit line of {session}"))
}

/// A hook whose ask nobody at the agent can answer escalates as `run` does: a reviewer's allow
/// within `--wait` answers allow, recorded with the reviewer's name; a reviewer's deny, a
/// deadline with no decision (the org file's `[escalation]` naming the service) and a service
/// out of reach each answer deny, naming the service: never an allow.
#[test]
fn a_hook_escalates_to_the_review_service_and_answers_as_the_reviewer_decides() {
    let review = Review::sqlite(&[]);
    let url = review.service.url.clone();
    let key = review.key.to_str().unwrap().to_owned();
    let flags = [
        "--escalate-to",
        &url,
        "--service-key",
        &key,
        "--wait",
        "60s",
    ];

    // The workspace is a repository on a branch with a commit no remote has.
    let workspace = &review.sandbox.workspace;
    let git = |args: &[&str]| {
        let done = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .arg("-C")
            .arg(workspace)
            .args(args)
            .output()
            .unwrap();
        assert!(done.status.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "feature-x"]);
    std::fs::write(workspace.join("notes.txt"), "one\n").unwrap();
    git(&["add", "notes.txt"]);
    git(&["commit", "-q", "-m", "add the release notes"]);
    std::fs::write(workspace.join("notes.txt"), "one\ntwo\n").unwrap();

    let hook = gated_hook(&review, "hook-allow", &flags);
    let escalation = first_open(&review.service, &review.reviewer);
    assert_eq!(escalation["agent"], "gemini", "{escalation}");
    // Why it came to a person, and the workspace's state when it asked.
    let context = &escalation["submission"]["context"];
    assert_eq!(
        context["nobody"], "Gemini CLI cannot ask anyone here",
        "{escalation}"
    );
    assert_eq!(context["git"]["branch"], "feature-x", "{context}");
    let outgoing = context["git"]["outgoing"][0].as_str().unwrap_or_default();
    assert!(outgoing.ends_with(" add the release notes"), "{context}");
    let uncommitted = context["git"]["uncommitted"].as_str().unwrap_or_default();
    assert!(uncommitted.starts_with("1 file changed"), "{context}");
    let id = escalation["id"].as_str().unwrap().to_owned();
    let allow = json!({ "choice": "allow" });
    assert_eq!(review.decide(&review.reviewer, &id, allow).0, 200);
    let (code, answer, output) = hook_answer(hook);
    assert_eq!(
        (code, &answer),
        (Some(0), &json!({"decision": "allow"})),
        "{output}"
    );
    let line = hook_audit_line(&review, "hook-allow");
    assert_eq!(line["allowed"], true, "{line}");
    assert_eq!(line["answer"], format!("allowed (reviewer: {id} by bob)"));

    let hook = gated_hook(&review, "hook-deny", &flags);
    let id = review.escalated();
    let deny = json!({ "choice": "deny", "message": "no fetching from the build agents" });
    assert_eq!(review.decide(&review.reviewer, &id, deny).0, 200);
    let denied = format!("a reviewer at the review service {url} denied this");
    assert_hook_denied(
        hook,
        &[&denied, "by bob: no fetching from the build agents"],
    );
    assert_eq!(hook_audit_line(&review, "hook-deny")["allowed"], false);

    // The org file says where escalations go, for hooks too; nobody decides within the wait.
    let org = review.sandbox.write(
        "org/handlers.toml",
        &format!("[escalation]\nurl = \"{url}\"\nkey = \"{key}\"\n"),
    );
    let late = ["--org-handlers", org.to_str().unwrap(), "--wait", "1s"];
    let undecided = format!("no reviewer at the review service {url} decided within 1s");
    assert_hook_denied(
        gated_hook(&review, "hook-late", &late),
        &[&undecided, "escalated as esc-"],
    );

    // A service out of reach: denied, naming it.
    let away = "http://127.0.0.1:1";
    let flags = ["--escalate-to", away, "--service-key", &key, "--wait", "2s"];
    let unreachable = format!("the review service at {away} could not be reached");
    assert_hook_denied(gated_hook(&review, "hook-away", &flags), &[&unreachable]);
}

/// The SDK agent's `deploy` prompted in a new session of the proxy behind `editor`, whose
/// ask (`terraform apply`) the editor cannot answer (it answers with an error): the session
/// and the prompt's id.
fn deploy_the_editor_cannot_answer(
    editor: &mut crate::proxy::Editor,
    review: &Review,
) -> (String, u64) {
    let session = editor.open_session(&review.sandbox.workspace);
    let prompt = editor.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "deploy"}]}),
    );
    let ask = loop {
        let message = editor.next();
        if message["method"] == "session/request_permission" {
            break message;
        }
    };
    editor.send(json!({"jsonrpc": "2.0", "id": ask["id"], "error": {"code": -32601, "message": "Method not found"}}));
    (session, prompt)
}

/// The agent's STEP lines among `messages`.
fn proxied_steps(messages: &[Value]) -> Vec<&str> {
    messages
        .iter()
        .filter_map(crate::proxy::text_of)
        .filter(|t| t.starts_with("STEP "))
        .collect()
}

/// A proxy whose editor cannot answer an ask escalates it as `run` does: the agent's
/// permission request waits for the reviewer, and a reviewer's allow reaches it as its allow
/// option, recorded with the reviewer's name; a `session/cancel` ends a wait, `cancelled`.
#[test]
fn a_proxy_escalates_what_the_editor_cannot_answer_and_a_reviewer_allows_it() {
    let review = Review::sqlite(&[]);
    let audit = review.sandbox.root.join("audit.jsonl");
    let key = review.key.to_str().unwrap();
    let script = sdk_agent_script();
    let mut command = review.sandbox.command(&[
        "proxy",
        "--audit",
        audit.to_str().unwrap(),
        "--escalate-to",
        &review.service.url,
        "--service-key",
        key,
        "--wait",
        "60s",
        "--",
        "node",
        &script,
    ]);
    command.env("ACP_GATE_SERVICE_TOKEN", &review.gate);
    let mut editor = crate::proxy::Editor::spawn(&mut command);
    let (_, prompt) = deploy_the_editor_cannot_answer(&mut editor, &review);
    let escalation = first_open(&review.service, &review.reviewer);
    assert_eq!(escalation["subject"], "terraform apply", "{escalation}");
    let id = escalation["id"].as_str().unwrap().to_owned();
    let allow = json!({ "choice": "allow" });
    assert_eq!(review.decide(&review.reviewer, &id, allow).0, 200);
    let rest = editor.until_response(prompt);
    assert_eq!(
        proxied_steps(&rest),
        ["STEP deploy selected:allow-once"],
        "{rest:?}"
    );
    let audit = audit_lines(&review.sandbox);
    let line = audit
        .iter()
        .find(|l| l["subject"] == "terraform apply")
        .unwrap();
    assert_eq!(line["allowed"], true, "{line}");
    assert_eq!(
        line["answer"],
        format!("allow-once (reviewer: {id} by bob)")
    );

    // In another session, the editor cancels the turn while the request waits for a reviewer.
    let (session, prompt) = deploy_the_editor_cannot_answer(&mut editor, &review);
    let waiting = first_open(&review.service, &review.reviewer);
    assert_ne!(waiting["id"], id.as_str(), "{waiting}");
    editor.send(
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
    );
    let rest = editor.until_response(prompt);
    assert_eq!(proxied_steps(&rest), ["STEP deploy cancelled"], "{rest:?}");
    let (code, stderr) = editor.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

/// A reviewer's "allow once" lets one ask through: the same request asked again in the same
/// waiting session is an escalation of its own (another id) and waits for its own decision;
/// the first allow never answers it. The allow delivered is used: a resumed session cannot
/// claim it again.
#[test]
fn an_allow_once_answers_one_ask_and_the_same_request_asked_again_waits_for_its_own() {
    let review = Review::sqlite(&[]);
    let run = review.run(&["--wait", "60s"], "deploy twice");
    let first = first_open(&review.service, &review.reviewer);
    let first_id = first["id"].as_str().unwrap().to_owned();
    let allow = json!({ "choice": "allow" });
    assert_eq!(review.decide(&review.reviewer, &first_id, allow).0, 200);

    let second = first_open(&review.service, &review.reviewer);
    let second_id = second["id"].as_str().unwrap().to_owned();
    assert_ne!(
        second_id, first_id,
        "the same request asked again is a new escalation"
    );
    for same in ["session_id", "fingerprint", "subject"] {
        assert_eq!(second[same], first[same], "{same}");
    }
    let deny = json!({ "choice": "deny", "message": "once was enough" });
    assert_eq!(review.decide(&review.reviewer, &second_id, deny).0, 200);

    let (code, steps, output) = finished(run);
    assert_eq!(
        steps,
        [
            "STEP deploy-1 selected:allow-once",
            "STEP deploy-2 selected:reject"
        ],
        "{output}"
    );
    assert_eq!(code, Some(0), "{output}");
    let answers: Vec<Value> = audit_lines(&review.sandbox)
        .into_iter()
        .filter(|l| l["subject"] == "terraform apply")
        .map(|l| l["answer"].clone())
        .collect();
    assert_eq!(
        answers,
        [
            json!(format!("allow-once (reviewer: {first_id} by bob)")),
            json!(format!(
                "reject (reviewer: {second_id} by bob: once was enough)"
            )),
        ]
    );

    let claim = format!("{}/v1/escalations/{first_id}/claim", review.service.url);
    let (status, refused) = call("POST", &claim, &review.gate, Some(json!({})));
    assert_eq!(status, 409, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("delivered to the gate that waited for it"),
        "{refused}"
    );
}

/// The service hands a decision out once, whichever way: to the gate that waited for it (a
/// wait asked again gets it again) or as the grant a resumed session claims, never both.
fn a_decision_is_used_once_delivered_to_its_waiting_gate_or_claimed(review: Review) {
    let url = &review.service.url;
    let decided = |id: &str| {
        let submission = submission(id, "make deploy");
        let submit = format!("{url}/v1/escalations");
        assert_eq!(call("POST", &submit, &review.gate, Some(submission)).0, 201);
        let allow = json!({ "choice": "allow" });
        assert_eq!(review.decide(&review.reviewer, id, allow).0, 200);
    };
    let wait = |id: &str| {
        let path = format!("{url}/v1/escalations/{id}/decision?wait_ms=0");
        call("GET", &path, &review.gate, None)
    };
    let claim = |id: &str| {
        let path = format!("{url}/v1/escalations/{id}/claim");
        call("POST", &path, &review.gate, Some(json!({})))
    };

    decided("esc-waited");
    let (status, waited) = wait("esc-waited");
    assert_eq!(
        (status, &waited["status"]),
        (200, &json!("decided")),
        "{waited}"
    );
    assert_eq!(
        wait("esc-waited"),
        (200, waited),
        "the waiting gate asks again"
    );
    let (status, refused) = claim("esc-waited");
    assert_eq!(status, 409, "{refused}");

    decided("esc-claimed");
    assert_eq!(claim("esc-claimed").0, 200);
    let (status, refused) = wait("esc-claimed");
    assert_eq!(status, 409, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("claimed by a resumed session"),
        "{refused}"
    );
}

#[test]
fn a_decision_is_used_once_delivered_to_its_waiting_gate_or_claimed_on_sqlite() {
    a_decision_is_used_once_delivered_to_its_waiting_gate_or_claimed(Review::sqlite(&[]));
}

#[test]
fn a_decision_is_used_once_delivered_to_its_waiting_gate_or_claimed_on_postgres() {
    let database = postgres_database("once");
    let review = Review::on(Sandbox::new(), database, &[]);
    a_decision_is_used_once_delivered_to_its_waiting_gate_or_claimed(review);
}

/// An ask nobody decided within `--wait` is denied and escalated under the id the service
/// knows it by (its own): the service knows until when its gate waited, and once that is past
/// the escalation leaves "Waiting for a decision". A reviewer's allow then reaches no gate: it
/// is said so and kept as a proposal, not "Allowed by bob"; the resumed session claims it by
/// its id, and then it is a grant claimed.
#[test]
fn an_ask_nobody_decided_in_time_is_granted_on_a_resume_by_its_own_id() {
    let review = Review::sqlite(&[]);
    let args = ["--wait", "1s", "--session", "late"];
    let (code, _, output) = finished(review.run(&args, "deploy"));
    assert_eq!(code, Some(3), "{output}");
    let id = review.escalated();
    assert!(
        output.contains(&format!("--grant {id}")),
        "the escalation record resumes the session with the service's id: {output}"
    );
    let url = &review.service.url;
    let show = |id: &str| {
        call(
            "GET",
            &format!("{url}/v1/escalations/{id}"),
            &review.reviewer,
            None,
        )
        .1
    };
    let escalation = show(&id);
    let waited =
        escalation["gate_until_ms"].as_i64().unwrap() - escalation["created_ms"].as_i64().unwrap();
    assert!(
        (500..5000).contains(&waited),
        "its gate waited about 1s: {escalation}"
    );
    // Time passes (the gate's last poll ended a minute ago).
    tamper(
        &review.database,
        "UPDATE escalations SET gate_until_ms = gate_until_ms - 60000 WHERE id = $1",
        &id,
    );
    let escalation = show(&id);
    assert_eq!(escalation["gate"]["state"], "gave_up", "{escalation}");
    let session = sign_in(url, &review.reviewer);
    let page = |path: &str| browse("GET", &format!("{url}{path}"), &[("cookie", &session)], &[]).2;
    let queue = page("/queue");
    let (awaited, stale) = queue
        .split_once("No gate is waiting")
        .expect("a section of its own");
    assert!(!awaited.contains(&id) && stale.contains(&id), "{queue}");
    assert!(queue.contains("gate stopped waiting"), "{queue}");
    assert!(
        !queue.contains("<title>("),
        "no gate waits: no count in the title: {queue}"
    );

    let allow = json!({ "choice": "allow" });
    let (status, decided) = review.decide(&review.reviewer, &id, allow);
    assert_eq!(status, 200, "{decided}");
    assert_eq!(decided["reached"]["state"], "nobody", "{decided}");
    let shown = page(&format!("/escalations/{id}"));
    assert!(
        shown.contains("Allow proposed by bob: no gate received it"),
        "{shown}"
    );
    assert!(!shown.contains("Allowed by bob"), "{shown}");
    assert!(page("/history").contains("allow proposed"));

    let resume = ["--resume", "late", "--grant", &id];
    let (code, steps, output) = finished(review.run(&resume, "deploy"));
    assert_eq!(code, Some(0), "{output}");
    assert_eq!(steps, ["STEP deploy selected:allow-once"], "{output}");
    assert_eq!(show(&id)["reached"]["state"], "claimed");
    let shown = page(&format!("/escalations/{id}"));
    assert!(
        shown.contains("Allowed by bob") && shown.contains("claimed as a grant"),
        "{shown}"
    );
}

/// Two hook processes of one session asking the same (Claude Code in `bypassPermissions`,
/// which might not show an ask: escalated): the reviewer's allow of the first lets the first
/// through; the second is an escalation of its own, and a deny of it, or no decision in time,
/// denies it.
#[test]
fn a_second_hook_asking_the_same_in_the_same_session_waits_for_its_own_decision() {
    let review = Review::sqlite(&[]);
    let (url, key) = (&review.service.url, review.key.to_str().unwrap());
    let ask = |wait: &str| {
        let flags = ["--escalate-to", url, "--service-key", key, "--wait", wait];
        hook_in_session(&review, "claude", "bypass-webfetch", "claude-twice", &flags)
    };
    let told = |hook: Child| {
        let (code, answer, output) = hook_answer(hook);
        assert_eq!(code, Some(0), "{output}");
        answer["hookSpecificOutput"].clone()
    };

    let first = ask("60s");
    let first_id = review.escalated();
    let allow = json!({ "choice": "allow" });
    assert_eq!(review.decide(&review.reviewer, &first_id, allow).0, 200);
    let answer = told(first);
    assert_eq!(answer["permissionDecision"], "allow", "{answer}");

    let second = ask("60s");
    let second_id = review.escalated();
    assert_ne!(second_id, first_id, "another ask, another escalation");
    let deny = json!({ "choice": "deny", "message": "one fetch was approved, not two" });
    assert_eq!(review.decide(&review.reviewer, &second_id, deny).0, 200);
    let answer = told(second);
    assert_eq!(answer["permissionDecision"], "deny", "{answer}");
    let reason = answer["permissionDecisionReason"].as_str().unwrap();
    assert!(
        reason.contains(&format!(
            "{second_id} by bob: one fetch was approved, not two"
        )),
        "{reason}"
    );

    let answer = told(ask("1s"));
    assert_eq!(answer["permissionDecision"], "deny", "{answer}");
    let reason = answer["permissionDecisionReason"].as_str().unwrap();
    assert!(reason.contains("decided within 1s"), "{reason}");
}

/// Runs `sql` (`id` as `$1`) on the service's SQLite database `database`, as whoever can
/// write to it could.
/// Runs `sql` (one UPDATE of one row, `$1` bound to `id`) on the service's database behind
/// its back: SQLite, or PostgreSQL through `psql`.
pub fn tamper(database: &str, sql: &str, id: &str) {
    use sqlx::Connection;
    if database.starts_with("postgres") {
        assert!(!id.contains('\''), "{id}");
        let sql = sql.replace("$1", &format!("'{id}'"));
        let output = Command::new("psql")
            .args([database, "-Atc", &sql])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&output.stdout).trim(),
            "UPDATE 1",
            "{sql}: {}",
            stderr(&output)
        );
        return;
    }
    block_on(async {
        let url = format!("sqlite://{database}");
        let mut db = sqlx::sqlite::SqliteConnection::connect(&url).await.unwrap();
        let done = sqlx::query(sql).bind(id).execute(&mut db).await.unwrap();
        assert_eq!(done.rows_affected(), 1, "{sql}");
    });
}

/// A decision signed with the service's key, but for another escalation or for another
/// request, is refused by the gate waiting for its own: the request is denied, and the gate
/// says why. (The service's database is tampered with: what a compromised or confused
/// service would send.)
#[test]
fn a_signed_decision_for_another_escalation_or_another_request_is_refused() {
    let review = Review::sqlite(&[]);
    let allow = json!({ "choice": "allow" });

    // The run's request under another id, allowed by bob: its signed decision is put on the
    // escalation the run waits for.
    let run = review.run(&["--wait", "60s"], "deploy");
    let waiting = first_open(&review.service, &review.reviewer);
    let id = waiting["id"].as_str().unwrap();
    let mut another = waiting["submission"].clone();
    another["id"] = json!("esc-another");
    let submit = format!("{}/v1/escalations", review.service.url);
    let (status, body) = call("POST", &submit, &review.gate, Some(another));
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        review
            .decide(&review.reviewer, "esc-another", allow.clone())
            .0,
        200
    );
    let copied = "UPDATE escalations SET status = 'allowed', reviewer = 'bob', \
        statement = (SELECT statement FROM escalations WHERE id = 'esc-another'), \
        signature = (SELECT signature FROM escalations WHERE id = 'esc-another') WHERE id = $1";
    tamper(&review.database, copied, id);
    let (code, steps, output) = finished(run);
    assert_eq!(steps, ["STEP deploy selected:reject"], "{output}");
    assert_eq!(code, Some(3), "denied and escalated\n{output}");
    let why = format!("answers another escalation (esc-another, not {id}): refused");
    assert!(output.contains(&why), "{output}");

    // The escalation's request changed before bob decides: the statement signed names
    // another request.
    let run = review.run(&["--wait", "60s"], "deploy");
    let id = review.escalated();
    let changed = format!(
        "UPDATE escalations SET fingerprint = '{}' WHERE id = $1",
        "b".repeat(64)
    );
    tamper(&review.database, &changed, &id);
    assert_eq!(review.decide(&review.reviewer, &id, allow).0, 200);
    let (code, steps, output) = finished(run);
    assert_eq!(steps, ["STEP deploy selected:reject"], "{output}");
    assert_eq!(code, Some(3), "denied and escalated\n{output}");
    assert!(output.contains("answers another request ("), "{output}");
}

/// `proxy` and `hook serve` ship their audit logs as `run` does: a proxy's records reach the
/// service by its end; `hook serve`'s while it runs, and what is left when it is stopped.
#[test]
fn a_proxy_and_hook_serve_ship_their_audit_records() {
    let review = Review::sqlite(&[]);
    let (url, key) = (&review.service.url, review.key.to_str().unwrap());
    let shipped = || {
        let summary = format!("{url}/v1/audit/summary");
        let total = call("GET", &summary, &review.reviewer, None).1["total"]["total"].clone();
        total.as_u64().unwrap() as usize
    };

    let audit = review.sandbox.root.join("proxy-audit.jsonl");
    let script = sdk_agent_script();
    let proxy = [
        "proxy",
        "--audit",
        audit.to_str().unwrap(),
        "--escalate-to",
        url,
        "--service-key",
        key,
        "--",
        "node",
        &script,
    ];
    let mut command = review.sandbox.command(&proxy);
    command.env("ACP_GATE_SERVICE_TOKEN", &review.gate);
    let mut editor = crate::proxy::Editor::spawn(&mut command);
    let session = editor.open_session(&review.sandbox.workspace);
    let prompt = editor.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]}),
    );
    editor.until_response(prompt);
    let (code, stderr) = editor.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let proxied = lines_of(&audit).len();
    assert!(proxied >= 4, "the SDK agent asks four things");
    assert_eq!(shipped(), proxied, "{stderr}");

    let log = review.sandbox.root.join("hook-audit.jsonl");
    let serve = ["hook", "serve", "--escalate-to", url, "--service-key", key];
    let mut command = review.sandbox.command(&serve);
    command
        .env("ACP_GATE_SERVICE_TOKEN", &review.gate)
        .env("ACP_GATE_AUDIT_LOG", &log);
    let mut server = crate::hooks::Server::spawn(command);
    let hook = |name: &str| {
        let payload = crate::hooks::fixture(&review.sandbox, "claude", name, false);
        let stream = std::net::TcpStream::connect(&server.at).unwrap();
        let (status, _) = crate::hooks::Server::post(stream, "/hook/claude", &payload, None);
        assert_eq!(status, 200);
    };
    hook("bash-cargo-test");
    hook("bash-rm-home");
    let recorded = lines_of(&log).len();
    assert!(recorded >= 2, "each call is recorded");
    let deadline = Instant::now() + Duration::from_secs(30);
    while shipped() < proxied + recorded {
        assert!(
            Instant::now() < deadline,
            "hook serve's records did not reach the service while it runs"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    hook("read-src");
    unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) };
    server.child.wait().unwrap();
    let last = lines_of(&log).len();
    assert!(last > recorded, "the last call is recorded");
    assert_eq!(
        shipped(),
        proxied + last,
        "what is left goes when it is stopped"
    );
}

/// `acp-gate audit ship LOG` to the service at `url` with gate `token`, decisions checked with
/// `key`.
fn audit_ship(
    sandbox: &Sandbox,
    log: &Path,
    url: &str,
    key: &Path,
    token: &str,
) -> std::process::Output {
    let (log, key) = (log.to_str().unwrap(), key.to_str().unwrap());
    sandbox
        .command(&[
            "audit",
            "ship",
            log,
            "--escalate-to",
            url,
            "--service-key",
            key,
        ])
        .env("ACP_GATE_SERVICE_TOKEN", token)
        .output()
        .unwrap()
}

/// The `csrf` value a signed-in page carries in its forms.
fn page_csrf(page: &str) -> String {
    let after = page
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .expect("a form with a CSRF token");
    after.split('"').next().unwrap().to_owned()
}

/// Closing the loop to policy: the rules reviewers proposed are listed with the requests that
/// led to them and export as a handlers.toml that loads and allows exactly what was allowed;
/// an admin replays the audit the gates shipped under it and sees what would change; a
/// reviewer may not replay, and a policy naming a plugin file is refused.
#[test]
fn proposed_rules_export_as_a_policy_and_an_admin_replays_the_audit_under_it() {
    let review = Review::sqlite(&[]);
    let url = review.service.url.clone();
    let admin = token(&review.sandbox, &review.database, "admin", "carol", None);
    for (id, subject) in [
        ("esc-1", "make deploy"),
        ("esc-2", "make deploy --env staging"),
        ("esc-3", "terraform plan"),
    ] {
        let (status, said) = call(
            "POST",
            &format!("{url}/v1/escalations"),
            &review.gate,
            Some(submission(id, subject)),
        );
        assert_eq!(status, 201, "{said}");
    }
    for (id, choice) in [
        ("esc-1", "allow_and_propose"),
        ("esc-2", "allow_and_propose"),
        ("esc-3", "allow"),
    ] {
        let (status, said) = review.decide(&review.reviewer, id, json!({ "choice": choice }));
        assert_eq!(status, 200, "{said}");
    }
    // Traffic a gate recorded and shipped.
    let sandbox = &review.sandbox;
    let log = sandbox.root.join("traffic.jsonl");
    let log = log.to_str().unwrap();
    for command in ["make deploy", "npm run build", "cargo test"] {
        let output = sandbox.run(&["check", "--audit", log, "--command", command], "");
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let shipped = audit_ship(sandbox, Path::new(log), &url, &review.key, &review.gate);
    assert!(shipped.status.success(), "{}", stderr(&shipped));

    let cookie = sign_in(&url, &review.reviewer);
    let get = |path: &str, cookie: &str| {
        browse("GET", &format!("{url}{path}"), &[("cookie", cookie)], &[])
    };
    let (status, _, page) = get("/policy", &cookie);
    assert_eq!(status, 200, "{page}");
    for shown in [
        "approved-make-deploy",
        "href=\"/escalations/esc-1\"",
        "href=\"/escalations/esc-2\"",
        "proposed 2 time(s)",
    ] {
        assert!(page.contains(shown), "no {shown} in:\n{page}");
    }
    assert!(
        !page.contains("esc-3"),
        "allowed without a proposal: {page}"
    );
    assert!(
        !page.contains("action=\"/policy/replay"),
        "a reviewer is offered no replay"
    );

    // The export loads and allows exactly the commands allowed.
    let (status, _, exported) = get("/policy/proposals.toml", &cookie);
    assert_eq!(status, 200, "{exported}");
    let file = sandbox.write("proposed.toml", &exported);
    let file = file.to_str().unwrap();
    let validated = sandbox.run(&["plugin", "validate", "--as", "org", file], "");
    assert!(
        validated.status.success(),
        "{}\n{exported}",
        stderr(&validated)
    );
    let decide = |command: &str| {
        let output = sandbox.run(
            &[
                "check",
                "--format",
                "json",
                "--handlers",
                file,
                "--command",
                command,
            ],
            "",
        );
        assert!(output.status.success(), "{}", stderr(&output));
        serde_json::from_slice::<Value>(&output.stdout).unwrap()["decision"].clone()
    };
    assert_eq!(decide("make deploy --env staging"), "allow");
    assert_eq!(decide("make deploy --env prod"), "ask");

    // Only an admin replays, through the page's own form.
    let replay = |cookie: &str, csrf: &str, handlers: &str| {
        let headers = [("cookie", cookie), ("origin", url.as_str())];
        browse(
            "POST",
            &format!("{url}/policy/replay"),
            &headers,
            &[("csrf", csrf), ("handlers", handlers), ("since", "1h")],
        )
    };
    let (status, _, said) = replay(&cookie, &page_csrf(&page), &exported);
    assert_eq!(status, 403, "{said}");
    let cookie = sign_in(&url, &admin);
    let (_, _, page) = get("/policy", &cookie);
    let csrf = page_csrf(&page);
    let (status, _, page) = replay(&cookie, &csrf, &exported);
    assert_eq!(status, 200, "{page}");
    for shown in [
        "3 request(s) decided again, 1 would change",
        "<span class=\"tag v-ask\">ask</span> → <span class=\"tag v-allow\">allow</span> 1×",
        "<code class=\"wrap\">make deploy</code>",
    ] {
        assert!(page.contains(shown), "no {shown} in:\n{page}");
    }
    let file_plugin = "[[handler]]\nname = \"mine\"\nplugin = \"/etc/passwd\"\n";
    let (status, _, said) = replay(&cookie, &csrf, file_plugin);
    assert_eq!(status, 422, "{said}");
    assert!(said.contains("built-in plugins only"), "{said}");
    let (status, _, said) = replay(&cookie, &csrf, "[[handler]\n");
    assert_eq!(status, 422, "{said}");
    assert!(said.contains("not TOML"), "{said}");
}

/// The ids of a list of escalations (the API's answer).
fn ids_of(list: &Value) -> Vec<String> {
    let list = list
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"));
    (list.iter())
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect()
}

/// A reviewer finds escalations among 230 (alice's and carol's, two agents): a word of one
/// command finds that one and no other, in any case; filters by developer, team, agent and
/// decision combine with each other and with the search; a time range keeps what was asked
/// in it; the queue and the history are paged by 50 (the fifth page holds 201 to 230, and the
/// pages together hold each escalation once), the page says where it stands and links to the
/// pages beside it, and the form keeps what was asked. Against `database`.
fn a_reviewer_finds_escalations_by_words_filters_time_and_pages(review: Review) {
    let url = &review.service.url;
    let carol = token(
        &review.sandbox,
        &review.database,
        "gate",
        "Carol@desk",
        Some("platform"),
    );
    for n in 1..=230 {
        let (gate, agent) = match n % 3 {
            0 => (&carol, "codex"),
            1 => (&review.gate, "codex"),
            _ => (&review.gate, "claude"),
        };
        let subject = match n {
            7 => "terraform apply -target=module.Vault".to_owned(),
            _ => format!("make target-{n}"),
        };
        let mut body = submission(&format!("esc-find-{n:03}"), &subject);
        body["agent"] = json!(agent);
        let (status, said) = call("POST", &format!("{url}/v1/escalations"), gate, Some(body));
        assert_eq!(status, 201, "{said}");
    }
    let list = |query: &str| {
        let (status, list) = call(
            "GET",
            &format!("{url}/v1/escalations?{query}"),
            &review.reviewer,
            None,
        );
        assert_eq!(status, 200, "{query}: {list}");
        ids_of(&list)
    };
    assert_eq!(list("q=vault"), ["esc-find-007"]);
    assert_eq!(list("q=TERRAFORM+module.vault"), ["esc-find-007"]);
    assert_eq!(list("q=terraform+nothing"), Vec::<String>::new());
    // A word is a word, not a pattern: `%` and `_` match themselves.
    assert_eq!(list("q=%25"), Vec::<String>::new());
    assert_eq!(list("q=target-_"), Vec::<String>::new());
    assert_eq!(list("q=target-23"), ["esc-find-230", "esc-find-023"]);
    let carols = list("developer=carol&page=2");
    assert_eq!(carols.len(), 26, "76 of carol's: 50, then 26");
    let both = list("developer=carol&agent=codex&team=platform&q=make");
    assert_eq!(both.len(), 50);
    assert!(
        both.iter()
            .all(|id| id[9..].parse::<u32>().unwrap() % 3 == 0)
    );
    assert_eq!(list("developer=carol&agent=claude"), Vec::<String>::new());
    assert_eq!(list("developer=ALICE&agent=claude&q=target-1").len(), 36);
    let today = chrono_day(0);
    assert_eq!(list(&format!("from={today}&page=5")).len(), 30);
    assert_eq!(
        list(&format!("to={}", chrono_day(-1))),
        Vec::<String>::new()
    );
    assert_eq!(
        list(&format!("from={}", chrono_day(1))),
        Vec::<String>::new()
    );
    let (status, said) = call(
        "GET",
        &format!("{url}/v1/escalations?from=last+tuesday"),
        &review.reviewer,
        None,
    );
    assert_eq!(status, 400, "{said}");
    assert!(said["error"].as_str().unwrap().contains("`from`"), "{said}");

    // Five pages of 50: every escalation once; the last holds 201 to 230, the oldest.
    let pages: Vec<Vec<String>> = (1..=6).map(|page| list(&format!("page={page}"))).collect();
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [50, 50, 50, 50, 30, 0]);
    let mut all: Vec<&String> = pages.iter().flatten().collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 230);
    assert_eq!(pages[4].last().unwrap(), "esc-find-001");
    let cookie = sign_in(url, &review.reviewer);
    let page = |path: &str| {
        let (status, _, body) = browse("GET", &format!("{url}{path}"), &[("cookie", &cookie)], &[]);
        assert_eq!(status, 200, "{path}: {body}");
        body
    };
    let fifth = page("/queue?page=5");
    assert!(fifth.contains("201–230 of 230"), "{fifth}");
    assert!(fifth.contains("esc-find-001") && !fifth.contains("esc-find-031\""));
    assert!(
        fifth.contains("rel=\"prev\" href=\"&#x2f;queue?page=4\""),
        "{fifth}"
    );
    assert!(!fifth.contains("rel=\"next\""));
    let searched = page("/queue?q=Vault&agent=codex");
    assert!(searched.contains("esc-find-007"), "{searched}");
    assert!(!searched.contains("esc-find-008"), "{searched}");
    assert!(searched.contains("1 found for"), "{searched}");
    assert!(
        searched.contains("value=\"Vault\""),
        "the form keeps the search"
    );
    assert!(
        searched.contains("<option value=\"codex\" selected>"),
        "the form keeps the filter: {searched}"
    );
    let none = page("/queue?q=kubectl");
    assert!(
        none.contains("No open escalation matches this search"),
        "{none}"
    );
    let bad = browse(
        "GET",
        &format!("{url}/queue?to=soon"),
        &[("cookie", &cookie)],
        &[],
    );
    assert_eq!(bad.0, 400, "{}", bad.2);
    assert!(bad.2.contains("is not a time"), "{}", bad.2);

    // The history: 60 decided (every fourth denied), by decision and developer, paged.
    for n in 1..=60 {
        let choice = if n % 4 == 0 { "deny" } else { "allow" };
        let id = format!("esc-find-{n:03}");
        let (status, said) = review.decide(&review.reviewer, &id, json!({ "choice": choice }));
        assert_eq!(status, 200, "{said}");
    }
    assert_eq!(list("decided=true&page=2").len(), 10);
    let denied = list("decided=true&decision=denied");
    assert_eq!(denied.len(), 15);
    let carols_denied = list("decided=true&decision=denied&developer=carol");
    assert_eq!(carols_denied.len(), 5, "{carols_denied:?}");
    assert_eq!(list("page=4").len(), 20, "170 still open");
    let second = page("/history?page=2");
    assert!(second.contains("51–60 of 60"), "{second}");
    let denied = page("/history?decision=denied&q=target-4");
    assert!(denied.contains("esc-find-044") && denied.contains("esc-find-040"));
    assert!(!denied.contains("esc-find-041"), "{denied}");
}

/// The UTC date `days` from today, as a filter takes it.
fn chrono_day(days: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::days(days))
        .format("%Y-%m-%d")
        .to_string()
}

#[test]
fn a_reviewer_finds_escalations_by_words_filters_time_and_pages_on_sqlite() {
    a_reviewer_finds_escalations_by_words_filters_time_and_pages(Review::sqlite(&[]));
}

#[test]
fn a_reviewer_finds_escalations_by_words_filters_time_and_pages_on_postgres() {
    let database = postgres_database("find");
    let review = Review::on(Sandbox::new(), database, &[]);
    a_reviewer_finds_escalations_by_words_filters_time_and_pages(review);
}

/// The audit over a time range: the counts of what happened and who decided cover the calls
/// made in it and no other, and add up; clicking a count lists exactly its calls of that range
/// (newest first, paged), each with its time, developer, agent, kind, subject, outcome and who
/// decided. Against `database`.
fn the_audit_counts_a_time_range_and_lists_the_calls_behind_each_count(review: Review) {
    let url = &review.service.url;
    let day = 86_400_000_i64;
    let start = 1_795_910_400_000_i64; // 2026-11-29T00:00:00Z
    // Three days of calls: the day before, the day (a reviewer's allow at noon), the day after.
    let calls = [
        ("allow", "allow-once", Some(true)),
        ("ask", "allow-once (reviewer: esc-1 by bob)", Some(true)),
        ("ask", "reject (user)", Some(false)),
        ("ask", "reject (escalated: nobody to ask)", Some(false)),
        ("ask", "cancelled", None),
        ("deny", "reject", Some(false)),
    ];
    let mut batch = audit_batch("log-range", &calls.repeat(3), "terraform apply");
    for (n, record) in (batch["records"].as_array_mut().unwrap())
        .iter_mut()
        .enumerate()
    {
        let at = start - day + (n as i64 / 6) * day + 12 * 3_600_000 + n as i64 * 1000;
        record["record"]["timestamp_ms"] = json!(at);
        record["record"]["subject"] = json!(format!("terraform apply #{}", n + 1));
    }
    let (status, said) = call(
        "POST",
        &format!("{url}/v1/audit"),
        &review.gate,
        Some(batch),
    );
    assert_eq!(status, 200, "{said}");
    let get = |path: &str| {
        let (status, body) = call("GET", &format!("{url}{path}"), &review.reviewer, None);
        assert_eq!(status, 200, "{path}: {body}");
        body
    };
    let range = "from=2026-11-29&to=2026-11-29";
    let summary = get(&format!("/v1/audit/summary?{range}"));
    let total = &summary["total"];
    let count = |t: &Value, key: &str| t[key].as_i64().unwrap();
    assert_eq!(count(total, "total"), 6, "{total}");
    let (outcomes, deciders) = (
        ["allowed", "denied", "neither"],
        ["chain", "person", "reviewer", "nobody"],
    );
    let sum = |t: &Value, keys: &[&str]| keys.iter().map(|k| count(t, k)).sum::<i64>();
    assert_eq!(sum(total, &outcomes), 6);
    assert_eq!(sum(total, &deciders), 6);
    assert_eq!(
        outcomes.map(|k| count(total, k)),
        [2, 3, 1],
        "allowed, denied, neither: {total}"
    );
    assert_eq!(deciders.map(|k| count(total, k)), [2, 1, 1, 2], "{total}");
    assert_eq!(count(&get("/v1/audit/summary")["total"], "total"), 18);
    let hours = get("/v1/audit/summary?from=2026-11-29T12:00:07&to=2026-11-29T12:00:09Z");
    assert_eq!(count(&hours["total"], "total"), 2, "{hours}");

    // What each count lists: the records of the range, and no other.
    let records = |query: &str| {
        let listed = get(&format!("/v1/audit/records?{range}&{query}"));
        let subjects: Vec<String> = (listed["rows"].as_array().unwrap().iter())
            .map(|r| r["subject"].as_str().unwrap().to_owned())
            .collect();
        (listed, subjects)
    };
    let (listed, subjects) = records("decision=allowed&by=reviewer");
    assert_eq!(subjects, ["terraform apply #8"], "{listed}");
    let row = &listed["rows"][0];
    assert_eq!(row["developer"], "alice");
    assert_eq!(row["agent"], "claude");
    assert_eq!(row["kind"], "execute");
    assert_eq!(row["outcome"], "allowed");
    assert_eq!(row["decided_by"], "reviewer");
    assert_eq!(row["answer"], "allow-once (reviewer: esc-1 by bob)");
    assert_eq!(listed["paged"]["total"], 1);
    let (_, subjects) = records("decision=denied");
    assert_eq!(
        subjects,
        [
            "terraform apply #12",
            "terraform apply #10",
            "terraform apply #9"
        ]
    );
    for by in deciders {
        let (listed, _) = records(&format!("by={by}"));
        assert_eq!(listed["paged"]["total"], total[by], "{by}");
    }
    let (_, subjects) = records("q=%2312");
    assert_eq!(subjects, ["terraform apply #12"]);
    let all = get("/v1/audit/records");
    assert_eq!(all["paged"]["total"], 18);
    assert_eq!(
        all["rows"][0]["subject"], "terraform apply #18",
        "newest first"
    );

    // The page: the counts of the range link to their calls; those pages list them.
    let cookie = sign_in(url, &review.reviewer);
    let page = |path: &str| {
        let (status, _, body) = browse("GET", &format!("{url}{path}"), &[("cookie", &cookie)], &[]);
        assert_eq!(status, 200, "{path}: {body}");
        body
    };
    let audit = page(&format!("/audit?{range}"));
    let link = "href=\"/audit/records?decision=allowed&amp;by=reviewer&amp;from=2026-11-29&amp;to=2026-11-29\">1</a>";
    assert!(audit.contains(link), "no {link} in:\n{audit}");
    assert!(
        audit.contains("Calls made from <strong>2026-11-29</strong>"),
        "{audit}"
    );
    let drilled = page(&format!("/audit/records?{range}&decision=denied"));
    for n in [9, 10, 12] {
        assert!(
            drilled.contains(&format!("terraform apply #{n}<")),
            "#{n}: {drilled}"
        );
    }
    for n in [3, 11, 15] {
        assert!(
            !drilled.contains(&format!("terraform apply #{n}<")),
            "#{n}: {drilled}"
        );
    }
    assert!(drilled.contains("1–3 of 3"), "{drilled}");
    assert!(
        drilled.contains("<time datetime=\"2026-11-29T12:00:11Z\" title=\"2026-11-29 12:00:11 UTC\">2026-11-29 12:00:11 UTC</time>"),
        "{drilled}"
    );
}

#[test]
fn the_audit_counts_a_time_range_and_lists_the_calls_behind_each_count_on_sqlite() {
    the_audit_counts_a_time_range_and_lists_the_calls_behind_each_count(Review::sqlite(&[]));
}

#[test]
fn the_audit_counts_a_time_range_and_lists_the_calls_behind_each_count_on_postgres() {
    let database = postgres_database("range");
    let review = Review::on(Sandbox::new(), database, &[]);
    the_audit_counts_a_time_range_and_lists_the_calls_behind_each_count(review);
}
