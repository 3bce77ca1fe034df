//! No failure of the review service outlives a gate's `--wait`: a service that takes the
//! connection and never answers, one that answers every request slowly, and one that goes away
//! in the middle of the wait each end the escalation by its deadline, denied and named, in
//! `hook`, `hook serve`, `run` and `proxy`. An agent gives its hook only so long (the timeout
//! `hook install` writes), and some run the call once they have given up on it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Sandbox, pipe, sdk_agent_script, stderr};

/// How a fake review service misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failing {
    /// Takes every connection and never answers.
    Hung,
    /// Answers every request, each after a long pause: submissions taken, decisions open.
    Slow,
    /// Takes the submission, then goes away: the wait's connection is cut and nothing
    /// listens any more.
    Killed,
}

/// A fake review service on a loopback port, misbehaving as it is told, until dropped.
struct Service {
    url: String,
    stop: Arc<AtomicBool>,
}

impl Service {
    fn start(failing: Failing) -> Service {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming() {
                if stopped.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(stream) = stream else { continue };
                match failing {
                    Failing::Hung => held.push(stream),
                    Failing::Slow => {
                        std::thread::spawn(move || slowly(stream));
                    }
                    Failing::Killed => {
                        let submission =
                            request_path(&stream).is_some_and(|p| p.ends_with("/escalations"));
                        if submission {
                            answer(stream, &json!({ "id": "taken" }));
                            continue;
                        }
                        // The wait's connection is cut, and the service is gone.
                        drop(stream);
                        return;
                    }
                }
            }
        });
        Service { url, stop }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the accept loop.
        let _ = TcpStream::connect(self.url.trim_start_matches("http://"));
    }
}

/// Reads a request's head and body; its path.
fn request_path(stream: &TcpStream) -> Option<String> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut first = String::new();
    reader.read_line(&mut first).ok()?;
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        if line.trim().is_empty() {
            break;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    first.split_whitespace().nth(1).map(str::to_owned)
}

fn answer(mut stream: TcpStream, body: &Value) {
    let body = body.to_string();
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// Every request answered after a long pause: a submission taken, a decision still open.
fn slowly(stream: TcpStream) {
    let Some(path) = request_path(&stream) else {
        return;
    };
    std::thread::sleep(Duration::from_secs(20));
    match path.contains("/decision") {
        true => answer(stream, &json!({ "status": "open" })),
        false => answer(stream, &json!({ "id": "taken" })),
    }
}

/// A gate's wait for a reviewer, in every test.
const WAIT: Duration = Duration::from_secs(2);
/// The most an escalation may take beyond its wait here: the chain, the process, a loaded
/// machine; far below what a hung service used to cost (25-40 s).
const SLACK: Duration = Duration::from_secs(6);

/// The service's key, as a gate is given it: any key, since nothing is ever decided.
fn key(sandbox: &Sandbox) -> PathBuf {
    let database = format!("sqlite://{}", sandbox.root.join("keys.sqlite").display());
    let output = sandbox
        .command(&["serve", "key", "--database", &database])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    sandbox.write(
        "service-key.pem",
        &String::from_utf8(output.stdout).unwrap(),
    )
}

/// `--escalate-to URL --service-key KEY --wait 2s` and the token, on `command`.
fn escalating(command: &mut Command, url: &str, key: &std::path::Path) {
    command
        .args(["--escalate-to", url, "--service-key"])
        .arg(key)
        .args(["--wait", "2s"])
        .env("ACP_GATE_SERVICE_TOKEN", "gate-token");
}

fn assert_in_time(started: Instant, what: &str, said: &str) {
    let took = started.elapsed();
    assert!(
        took < WAIT + SLACK,
        "{what}: took {took:?}, past its wait of {WAIT:?}\n{said}"
    );
}

/// A Gemini CLI hook call that needs a person (a listener on a port): Gemini CLI has no ask of
/// its own before a tool, so it is escalated.
fn asked_payload(sandbox: &Sandbox) -> String {
    json!({
        "session_id": "s", "transcript_path": "/t", "cwd": sandbox.workspace,
        "hook_event_name": "BeforeTool", "timestamp": "2026-11-29T02:12:33.324Z",
        "tool_name": "run_shell_command", "tool_input": {"command": "nc -l 9 > out.txt"}
    })
    .to_string()
}

#[test]
fn a_failing_review_service_never_keeps_a_hook_past_its_wait() {
    for failing in [Failing::Hung, Failing::Slow, Failing::Killed] {
        let service = Service::start(failing);
        let sandbox = Sandbox::new();
        let key = key(&sandbox);
        let mut hook = sandbox.command(&["hook", "gemini"]);
        escalating(&mut hook, &service.url, &key);
        let started = Instant::now();
        let output = pipe(&mut hook, &asked_payload(&sandbox));
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            stderr(&output)
        );
        assert_in_time(started, &format!("hook, {failing:?} service"), &said);
        let answer: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
        assert_eq!(answer["decision"], "deny", "{failing:?}: {said}");
        assert!(
            answer["reason"]
                .as_str()
                .is_some_and(|r| r.contains(&service.url)),
            "{failing:?}: the reason names the service: {said}"
        );
    }
}

#[test]
fn a_hung_review_service_never_keeps_hook_serve_past_its_wait() {
    let service = Service::start(Failing::Hung);
    let sandbox = Sandbox::new();
    let key = key(&sandbox);
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let mut serve = sandbox.command(&["hook", "serve", "--listen", &listen]);
    escalating(&mut serve, &service.url, &key);
    let mut server = serve
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(&listen).is_err() {
        assert!(Instant::now() < deadline, "hook serve did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    let started = Instant::now();
    let answer = post(&listen, "/hook/gemini", &asked_payload(&sandbox));
    let _ = server.kill();
    let _ = server.wait();
    assert_in_time(started, "hook serve, hung service", &answer);
    assert!(answer.contains("\"deny\""), "{answer}");
}

#[test]
fn a_hung_review_service_never_keeps_run_or_proxy_past_its_wait() {
    let service = Service::start(Failing::Hung);
    let sandbox = Sandbox::new();
    let key = key(&sandbox);
    // run: the SDK agent's `deploy` asks about `terraform apply`, which nobody here can answer.
    let mut run = sandbox.command(&["run", "--non-interactive", "-p", "deploy"]);
    escalating(&mut run, &service.url, &key);
    run.args(["--", "node", &sdk_agent_script()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = run.spawn().unwrap();
    // The agent says how its request was answered as soon as it is: that is the wait.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    while stdout.read_line(&mut seen).unwrap_or(0) > 0 && !seen.contains("STEP deploy") {}
    assert_in_time(started, "run, hung service", &seen);
    assert!(seen.contains("STEP deploy selected:reject"), "{seen}");
    let _ = stdout.read_to_string(&mut seen);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(3), "{seen}{}", stderr(&output));

    // proxy: the editor cannot answer the ask (it answers with an error), so it goes to the
    // service.
    let mut proxy = sandbox.command(&["proxy"]);
    escalating(&mut proxy, &service.url, &key);
    proxy.args(["--", "node", &sdk_agent_script()]);
    let started = Instant::now();
    let (stop, said) = editor_that_cannot_answer(proxy, &sandbox);
    assert_in_time(started, "proxy, hung service", &said);
    assert_eq!(stop.as_deref(), Some("end_turn"), "{said}");
}

/// Drives `proxy` as an editor that answers every permission request with an error, for one
/// `deploy` prompt: the prompt's stop reason, and everything the editor saw.
fn editor_that_cannot_answer(mut proxy: Command, sandbox: &Sandbox) -> (Option<String>, String) {
    let mut child = proxy
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |message: Value| writeln!(input, "{message}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}}),
    );
    let mut seen = String::new();
    let mut stop = None;
    while let Some(Ok(line)) = lines.next() {
        seen.push_str(&line);
        seen.push('\n');
        let message: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if message["id"] == 1 {
            send(
                json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": sandbox.workspace, "mcpServers": []}}),
            );
        } else if message["id"] == 2 {
            let session = message["result"]["sessionId"].clone();
            send(
                json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": session, "prompt": [{"type": "text", "text": "deploy"}]}}),
            );
        } else if message["method"] == "session/request_permission" {
            send(
                json!({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32603, "message": "nobody at the editor"}}),
            );
        } else if message["id"] == 3 {
            stop = message["result"]["stopReason"].as_str().map(str::to_owned);
            break;
        }
    }
    drop(input);
    let _ = child.kill();
    let output = child.wait_with_output().unwrap();
    (stop, format!("{seen}{}", stderr(&output)))
}

/// POSTs `body` to `path` on `address` and reads the whole answer.
fn post(address: &str, path: &str, body: &str) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}
