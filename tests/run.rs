//! `acp-gate run` and `acp-gate demo` against the bundled demo agent (`acp-gate demo-agent`,
//! examples/demo-agent) and against agents that misbehave: what the agent is answered, what
//! the audit log holds, the escalation record and the exit codes. Prompts that need a person
//! run under a real pseudo-terminal (`script`).

use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{BIN, Sandbox, stderr};

/// The lines an agent reported about its steps: `→ STEP: ANSWER`.
fn answers(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("→ "))
        .filter_map(|rest| rest.split_once(": "))
        .map(|(step, answer)| (step.to_owned(), answer.to_owned()))
        .collect()
}

fn answer_of(text: &str, step: &str) -> String {
    answers(text)
        .into_iter()
        .find(|(s, _)| s == step)
        .map(|(_, a)| a)
        .unwrap_or_else(|| panic!("no answer for `{step}` in:\n{text}"))
}

/// Each audit line's `field`, decision and answer.
fn audit_triples(path: &std::path::Path, field: &str) -> Vec<[String; 3]> {
    audit_lines(path)
        .iter()
        .map(|l| [field, "decision", "answer"].map(|key| l[key].as_str().unwrap().to_owned()))
        .collect()
}

fn audit_lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `acp-gate run ARGS -- acp-gate demo-agent --script SCRIPT`, stdin closed.
fn run_demo_agent(sandbox: &Sandbox, args: &[&str], script: &str) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--", BIN, "demo-agent", "--script", script]);
    sandbox.command(&all).stdin(Stdio::null()).output().unwrap()
}

fn code(output: &Output) -> i32 {
    output.status.code().unwrap_or(-1)
}

fn describe(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        stderr(output)
    )
}

#[test]
fn the_demo_allows_the_safe_requests_and_rejects_the_dangerous_ones() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .command(&["demo"])
        .env("TMPDIR", &sandbox.root)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(code(&output), 0, "{}", describe(&output));

    for step in ["read", "edit", "cargo-test"] {
        assert_eq!(answer_of(&stdout, step), "selected allow", "{step}");
    }
    for step in ["ssh-key", "curl-sh", "rm-home"] {
        assert_eq!(answer_of(&stdout, step), "selected reject", "{step}");
    }
    assert_eq!(
        answer_of(&stdout, "fetch"),
        "selected reject",
        "a fetch is asked; nobody is at a terminal, so it is rejected"
    );
    assert!(answer_of(&stdout, "fs-read").starts_with("read "));
    assert_eq!(answer_of(&stdout, "fs-write"), "written");
    assert!(answer_of(&stdout, "fs-write-hook").starts_with("refused: denied by acp-gate"));
    assert!(answer_of(&stdout, "terminal").starts_with("exit 0"));
    assert!(stdout.contains("1 escalated"), "{stdout}");
    assert!(
        !sandbox.home.join(".ssh/authorized_keys").exists(),
        "the denied write never happened"
    );

    let audit = sandbox.home.join(".local/state/acp-gate/audit.jsonl");
    let lines = audit_lines(&audit);
    let decided = audit_triples(&audit, "source");
    assert_eq!(
        decided,
        [
            ["permission_request", "allow", "allow"],
            ["permission_request", "allow", "allow"],
            ["permission_request", "allow", "allow"],
            ["permission_request", "deny", "reject"],
            ["permission_request", "deny", "reject"],
            ["permission_request", "deny", "reject"],
            ["permission_request", "ask", "reject (escalated)"],
            ["fs_read", "allow", "allowed"],
            ["fs_write", "allow", "allowed"],
            ["fs_write", "deny", "denied"],
            ["terminal_create", "allow", "allowed"],
        ],
        "{lines:#?}"
    );
    let rm_reasons = lines[5]["reasons"].to_string();
    assert!(rm_reasons.contains("builtin-commands"), "{rm_reasons}");
    assert_eq!(
        lines[1]["kind"], "edit",
        "the kind came from the earlier tool_call update"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&sandbox.root)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("acp-gate-demo-")
        })
        .collect();
    assert!(leftovers.is_empty(), "the scratch workspace is removed");
}

#[test]
fn non_interactive_asks_are_rejected_escalated_and_exit_3() {
    let sandbox = Sandbox::new();
    let audit = sandbox.root.join("audit.jsonl");
    let output = run_demo_agent(
        &sandbox,
        &[
            "run",
            "--non-interactive",
            "--format",
            "json",
            "--audit",
            audit.to_str().unwrap(),
            "-p",
            "go",
        ],
        "ask",
    );
    assert_eq!(code(&output), 3, "{}", describe(&output));
    let events: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let escalation = events
        .iter()
        .find(|e| e["type"] == "escalation")
        .unwrap_or_else(|| panic!("no escalation record in {events:#?}"));
    assert_eq!(escalation["kind"], "fetch");
    assert_eq!(escalation["tool"], "WebFetch");
    assert_eq!(escalation["session_id"], "demo-session-1");
    assert_eq!(escalation["tool_call_id"], "toolu_demo_01_fetch");
    assert_eq!(
        escalation["input"]["url"],
        "https://docs.rs/similar/latest/similar/"
    );
    assert_eq!(escalation["answer"], "reject");
    let handlers = escalation["handlers"].as_array().unwrap();
    assert!(!handlers.is_empty());
    assert!(
        handlers
            .iter()
            .all(|h| h["name"].is_string() && h["verdict"].is_string())
    );

    let said: String = events
        .iter()
        .filter(|e| e["type"] == "agent_message_chunk")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert_eq!(answer_of(&said, "fetch"), "selected reject");
    assert_eq!(events.last().unwrap()["type"], "end");
    assert_eq!(events.last().unwrap()["exit_code"], 3);

    let lines = audit_lines(&audit);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["decision"], "ask");
    assert_eq!(lines[0]["answer"], "reject (escalated)");
}

#[test]
fn text_mode_escalations_are_a_readable_block_on_stderr() {
    let sandbox = Sandbox::new();
    let audit = sandbox.root.join("audit.jsonl");
    let output = run_demo_agent(
        &sandbox,
        &["run", "--audit", audit.to_str().unwrap(), "-p", "go"],
        "ask",
    );
    assert_eq!(code(&output), 3, "{}", describe(&output));
    let err = stderr(&output);
    assert!(err.contains("ESCALATED fetch"), "{err}");
    assert!(
        err.contains("\"url\":\"https://docs.rs/similar/latest/similar/\""),
        "{err}"
    );
}

#[test]
fn a_terminal_environment_that_injects_code_is_judged_with_the_command() {
    let sandbox = Sandbox::new();
    let audit = sandbox.root.join("audit.jsonl");
    let output = run_demo_agent(
        &sandbox,
        &["run", "--audit", audit.to_str().unwrap(), "-p", "go"],
        "inject",
    );
    assert_eq!(code(&output), 0, "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let answer = answer_of(&stdout, "terminal-env");
    assert!(
        answer.starts_with("refused:") && answer.contains("LD_PRELOAD"),
        "{answer}"
    );
    let lines = audit_lines(&audit);
    assert_eq!(lines[0]["source"], "terminal_create");
    assert_eq!(lines[0]["title"], "env LD_PRELOAD=/tmp/evil.so ls");
    assert_eq!(lines[0]["decision"], "deny");
}

#[test]
fn an_agent_that_exits_at_once_is_a_clear_error() {
    let sandbox = Sandbox::new();
    let started = Instant::now();
    let output = sandbox
        .command(&[
            "run",
            "-p",
            "hi",
            "--",
            "sh",
            "-c",
            "echo 'no API key' >&2; exit 1",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&output), 4, "{}", describe(&output));
    let err = stderr(&output);
    assert!(err.contains("`initialize`"), "{err}");
    assert!(
        err.contains("no API key"),
        "the agent's own words are shown: {err}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_missing_agent_command_is_an_error_before_anything_starts() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .command(&["run", "-p", "hi", "--", "no-such-agent-xyz"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&output), 1, "{}", describe(&output));
    assert!(stderr(&output).contains("cannot find the agent command `no-such-agent-xyz`"));
}

#[test]
fn an_agent_that_never_answers_initialize_times_out() {
    let sandbox = Sandbox::new();
    let started = Instant::now();
    let output = sandbox
        .command(&[
            "run",
            "--init-timeout",
            "1",
            "-p",
            "hi",
            "--",
            "sleep",
            "60",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&output), 4, "{}", describe(&output));
    assert!(
        stderr(&output).contains("did not answer `initialize` within 1s"),
        "{}",
        describe(&output)
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn malformed_json_rpc_from_the_agent_is_a_clear_error() {
    let sandbox = Sandbox::new();
    let started = Instant::now();
    let output = sandbox
        .command(&[
            "run",
            "-p",
            "hi",
            "--",
            "sh",
            "-c",
            "echo 'Loading model...'; sleep 60",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&output), 4, "{}", describe(&output));
    let err = stderr(&output);
    assert!(
        err.contains("broke the protocol") && err.contains("Loading model..."),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn an_agent_dying_mid_turn_exits_4_with_a_clear_message() {
    let sandbox = Sandbox::new();
    let output = run_demo_agent(&sandbox, &["run", "-p", "go"], "die");
    assert_eq!(code(&output), 4, "{}", describe(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("Working on it..."));
    assert!(
        stderr(&output).contains("in the middle of a turn"),
        "{}",
        describe(&output)
    );
}

#[test]
fn many_permission_requests_in_one_session_are_all_answered() {
    let sandbox = Sandbox::new();
    let audit = sandbox.root.join("audit.jsonl");
    let count = 500;
    let output = run_demo_agent(
        &sandbox,
        &[
            "run",
            "--format",
            "json",
            "--audit",
            audit.to_str().unwrap(),
            "-p",
            "go",
        ],
        &format!("soak:{count}"),
    );
    assert_eq!(code(&output), 0, "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!("soak: {count} of {count} allowed")),
        "{stdout}"
    );
    assert_eq!(audit_lines(&audit).len(), count);
}

#[test]
fn a_thousand_requests_at_once_are_each_decided_as_alone() {
    // More requests at once than the plugin instance pool has slots: waiting for one must
    // not count against a handler's deadline (it used to turn `cargo test` into a timeout deny).
    let sandbox = Sandbox::new();
    let audit = sandbox.root.join("audit.jsonl");
    let count = 1000;
    let output = run_demo_agent(
        &sandbox,
        &["run", "--audit", audit.to_str().unwrap(), "-p", "go"],
        &format!("flood:{count}"),
    );
    assert_eq!(code(&output), 0, "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!("flood: {count} of {count} decided as alone")),
        "{stdout}"
    );
    assert_eq!(audit_lines(&audit).len(), count);
}

#[test]
fn a_run_whose_decisions_cannot_be_recorded_exits_5() {
    // /dev/full: the audit log opens, every write fails (a full disk).
    let sandbox = Sandbox::new();
    let output = run_demo_agent(
        &sandbox,
        &["run", "--audit", "/dev/full", "-p", "go"],
        "soak:3",
    );
    assert_eq!(code(&output), 5, "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("soak: 0 of 3 allowed"),
        "{}",
        describe(&output)
    );
    assert!(
        stderr(&output).contains("could not be written to the audit log"),
        "{}",
        describe(&output)
    );
}

// --- A real terminal -------------------------------------------------------------------------

/// `acp-gate ARGS` under a pseudo-terminal (util-linux `script`), with the sandbox's
/// environment; `None` when `script` is not installed.
fn in_terminal(sandbox: &Sandbox, args: &[&str]) -> Terminal {
    let line = std::iter::once(BIN)
        .chain(args.iter().copied())
        .map(|word| format!("'{}'", word.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ");
    let mut child = sandbox
        .confine(&mut Command::new("script"))
        .args(["-qefc", &line, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux `script` (Debian's bsdutils) runs acp-gate in a pseudo-terminal");
    let screen = Arc::new(Mutex::new(String::new()));
    let mut stdout = child.stdout.take().unwrap();
    let sink = screen.clone();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        while let Ok(n @ 1..) = stdout.read(&mut buffer) {
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buffer[..n]));
        }
    });
    Terminal { child, screen }
}

struct Terminal {
    child: std::process::Child,
    screen: Arc<Mutex<String>>,
}

impl Terminal {
    fn screen(&self) -> String {
        self.screen.lock().unwrap().replace('\r', "")
    }

    /// Waits until the screen shows `text` `times` times.
    fn wait_for(&self, text: &str, times: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.screen().matches(text).count() < times {
            assert!(
                Instant::now() < deadline,
                "no `{text}` on the screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn type_keys(&mut self, keys: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(keys.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// Waits for the end; returns the exit code and the whole screen.
    fn finish(mut self) -> (i32, String) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                std::thread::sleep(Duration::from_millis(100));
                return (status.code().unwrap_or(-1), self.screen());
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("still running:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn ctrl_c_while_a_prompt_is_pending_answers_cancelled() {
    let sandbox = Sandbox::new();
    let audit = sandbox.root.join("audit.jsonl");
    let mut terminal = in_terminal(
        &sandbox,
        &[
            "run",
            "--audit",
            audit.to_str().unwrap(),
            "-p",
            "go",
            "--",
            BIN,
            "demo-agent",
            "--script",
            "ask",
        ],
    );
    terminal.wait_for("choose 1-3 or m:", 1);
    terminal.type_keys("\x03");
    let (code, screen) = terminal.finish();
    assert_eq!(answer_of(&screen, "fetch"), "cancelled", "{screen}");
    assert!(screen.contains("end of turn: cancelled"), "{screen}");
    assert_eq!(code, 130, "{screen}");
    let lines = audit_lines(&audit);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["answer"], "cancelled");
}

#[test]
fn always_at_the_prompt_is_remembered_for_the_identical_command() {
    let sandbox = Sandbox::new();
    let audit = sandbox.root.join("audit.jsonl");
    let mut terminal = in_terminal(
        &sandbox,
        &[
            "run",
            "--audit",
            audit.to_str().unwrap(),
            "-p",
            "go",
            "--",
            BIN,
            "demo-agent",
            "--script",
            "repeat",
        ],
    );
    terminal.wait_for("choose 1-3 or m:", 1);
    let screen = terminal.screen();
    assert!(screen.contains("$ make deploy"), "{screen}");
    assert!(
        screen.contains("acp-gate remembers execute `make deploy`"),
        "{screen}"
    );
    // The agent offers "Always Allow" first: choosing it by its number.
    terminal.type_keys("1\n");
    let (code, screen) = terminal.finish();
    assert_eq!(code, 0, "{screen}");
    assert_eq!(
        screen.matches("choose 1-3 or m:").count(),
        1,
        "asked only once:\n{screen}"
    );
    assert_eq!(
        answer_of(&screen, "deploy-1"),
        "selected allow",
        "the agent is told once, so it keeps asking"
    );
    assert_eq!(answer_of(&screen, "deploy-2"), "selected allow");
    let answers: Vec<Value> = audit_lines(&audit)
        .iter()
        .map(|l| l["answer"].clone())
        .collect();
    assert_eq!(answers, ["allow (user)", "allow (session-rule)"]);
}

#[test]
fn deny_with_a_message_rejects_and_records_the_message() {
    let sandbox = Sandbox::new();
    let audit = sandbox.root.join("audit.jsonl");
    let mut terminal = in_terminal(
        &sandbox,
        &[
            "run",
            "--audit",
            audit.to_str().unwrap(),
            "-p",
            "go",
            "--",
            BIN,
            "demo-agent",
            "--script",
            "ask",
        ],
    );
    terminal.wait_for("choose 1-3 or m:", 1);
    terminal.type_keys("m\n");
    terminal.wait_for("message for the agent:", 1);
    terminal.type_keys("use the local docs\n");
    let (code, screen) = terminal.finish();
    assert_eq!(code, 0, "{screen}");
    assert_eq!(answer_of(&screen, "fetch"), "selected reject");
    assert_eq!(
        audit_lines(&audit)[0]["answer"],
        "reject (user: use the local docs)"
    );
}

/// `acp-gate run --non-interactive -p go` with the demo agent's `script`, and its audit log.
fn run_once(sandbox: &Sandbox, script: &str) -> (Output, std::path::PathBuf) {
    let audit = sandbox.root.join("audit.jsonl");
    let args = [
        "run",
        "--non-interactive",
        "--audit",
        audit.to_str().unwrap(),
        "-p",
        "go",
    ];
    (run_demo_agent(sandbox, &args, script), audit)
}

#[test]
fn an_agent_that_switches_itself_into_bypass_mode_has_its_turn_ended_and_exits_3() {
    let sandbox = Sandbox::new();
    let (output, audit) = run_once(&sandbox, "switch-itself");
    assert_eq!(code(&output), 3, "{}", describe(&output));
    let said = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        answer_of(&said, "cancelled"),
        "true",
        "{}",
        describe(&output)
    );
    let err = stderr(&output);
    assert!(
        err.contains("the agent put itself in mode `bypassPermissions`"),
        "{err}"
    );
    // The mode the session started in (default) went on; the switch was judged and reported.
    let lines = audit_lines(&audit);
    let switches = audit_triples(&audit, "kind");
    assert_eq!(
        switches,
        [
            ["switch_mode", "allow", "reported: went on"],
            ["switch_mode", "ask", "reported: ended the turn (escalated)"],
        ]
    );
    assert!(
        lines[1]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("stops asking")
    );
}

#[test]
fn an_agent_that_starts_in_bypass_mode_is_sent_no_prompt() {
    let sandbox = Sandbox::new();
    let (output, audit) = run_once(&sandbox, "start-bypassed");
    assert_eq!(code(&output), 3, "{}", describe(&output));
    // The agent never ran its turn.
    assert!(answers(&String::from_utf8_lossy(&output.stdout)).is_empty());
    let lines = audit_lines(&audit);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["answer"], "reported: sent no prompt (escalated)");
}
