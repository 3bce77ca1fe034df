//! Resident hook servers (`host/src/hook/resident.rs`): the first `acp-gate hook AGENT` call
//! decides in its own process and starts a server; the calls after it are handed to that
//! server and answered exactly as their own processes would answer them; a changed policy is
//! seen at the next call; without a server that answers, a call is decided in its process.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{Sandbox, pipe, stderr};
use crate::hooks::{PAYLOADS, fixture};

/// A sandbox whose hook calls go to resident servers, in a runtime directory of its own.
struct Resident {
    sandbox: Sandbox,
    runtime: PathBuf,
}

impl Resident {
    fn new() -> Resident {
        Resident::of(Sandbox::new())
    }

    fn of(sandbox: Sandbox) -> Resident {
        let runtime = sandbox.root.join("run");
        std::fs::create_dir_all(&runtime).unwrap();
        Resident { sandbox, runtime }
    }

    /// `acp-gate ARGS`, handing hook calls to a resident server when `resident`. Its
    /// temporary directory is the sandbox's, so that the servers of a runtime directory too
    /// deep fall back to a place of their own, and `hook stop` sees no other test's.
    fn command(&self, args: &[&str], resident: bool) -> Command {
        let mut command = self.sandbox.command(args);
        command
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .env("TMPDIR", &self.sandbox.root)
            .env("ACP_GATE_HOOK_IDLE", "120")
            .env("ACP_GATE_HOOK_RESIDENT", if resident { "1" } else { "0" });
        command
    }

    fn hook(&self, agent: &str, payload: &str, resident: bool) -> Output {
        pipe(&mut self.command(&["hook", agent], resident), payload)
    }

    /// The sockets of the servers running (or left behind).
    fn sockets(&self) -> Vec<PathBuf> {
        match std::fs::read_dir(self.runtime.join("acp-gate")) {
            Ok(entries) => entries
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "sock"))
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Waits for a server to listen; returns its socket.
    fn server(&self) -> PathBuf {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let listening = self
                .sockets()
                .into_iter()
                .find(|s| std::os::unix::net::UnixStream::connect(s).is_ok());
            if let Some(socket) = listening {
                return socket;
            }
            assert!(Instant::now() < deadline, "no resident server started");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `acp-gate hook stop`: what it said.
    fn stop(&self) -> String {
        let output = self.command(&["hook", "stop"], true).output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }
}

impl Drop for Resident {
    fn drop(&mut self) {
        let _ = self.command(&["hook", "stop"], true).output();
    }
}

/// The answer on stdout, parsed.
fn answer(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or(Value::Null)
}

fn decision(output: &Output) -> Value {
    answer(output)["hookSpecificOutput"]["permissionDecision"].clone()
}

#[test]
fn calls_after_the_first_are_answered_by_a_resident_server_as_their_processes_would() {
    let resident = Resident::new();
    let first = fixture(&resident.sandbox, "claude", "bash-cargo-test", false);
    let output = resident.hook("claude", &first, true);
    assert_eq!(decision(&output), "allow", "{}", stderr(&output));
    resident.server();
    for (agent, name, _) in PAYLOADS {
        let payload = fixture(&resident.sandbox, agent, name, false);
        let own = resident.hook(agent, &payload, false);
        let served = resident.hook(agent, &payload, true);
        assert_eq!(
            (answer(&served), served.status.code()),
            (answer(&own), own.status.code()),
            "{agent}/{name}: the server answered otherwise than the process\n{}",
            stderr(&served)
        );
        assert_eq!(stderr(&served), stderr(&own), "{agent}/{name}");
    }
    // Every call after the first was the server's, each recorded as a process records it.
    let said = resident.stop();
    let served = format!("({} calls served)", PAYLOADS.len());
    assert!(
        said.starts_with("stopped 1 resident hook server") && said.ends_with(&served),
        "{said}"
    );
    assert!(resident.sockets().is_empty());
    // Nothing of it is left behind.
    let left = std::fs::read_dir(resident.runtime.join("acp-gate"))
        .unwrap()
        .count();
    assert_eq!(left, 0);
    let audit = std::fs::read_to_string(
        resident
            .sandbox
            .home
            .join(".local/state/acp-gate/audit.jsonl"),
    )
    .unwrap();
    let calls = audit
        .lines()
        .filter(|l| l.contains("\"permission_request\""))
        .count();
    assert_eq!(calls, 1 + 2 * PAYLOADS.len());
}

#[test]
fn a_resident_server_decides_with_the_policy_as_it_is_at_each_call() {
    let resident = Resident::new();
    let payload = fixture(&resident.sandbox, "claude", "bash-cargo-test", false);
    assert_eq!(decision(&resident.hook("claude", &payload, true)), "allow");
    resident.server();
    // Its chain loaded long enough ago for the files' times to be trusted.
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(decision(&resident.hook("claude", &payload, true)), "allow");
    // The user's policy appears: the next call is decided by it.
    let user = resident.sandbox.home.join(".config/acp-gate/handlers.toml");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    let rule = |decision: &str| {
        format!(
            r#"
[[handler]]
name = "team"
plugin = "builtin:org-policy"

[[handler.config.rules]]
name = "no-tests-now"
decision = "{decision}"
reason = "the test farm is down"
prefix = ["cargo", "test"]
"#
        )
    };
    std::fs::write(&user, rule("deny")).unwrap();
    let output = resident.hook("claude", &payload, true);
    assert_eq!(decision(&output), "deny", "{}", stderr(&output));
    let reason = answer(&output)["hookSpecificOutput"]["permissionDecisionReason"].clone();
    assert!(
        reason.to_string().contains("the test farm is down"),
        "{reason}"
    );
    // Edited, once settled: still seen.
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(decision(&resident.hook("claude", &payload, true)), "deny");
    std::fs::write(&user, rule("ask")).unwrap();
    assert_eq!(decision(&resident.hook("claude", &payload, true)), "ask");
    // Broken: the call is refused with the file's error, as its own process refuses it.
    std::fs::write(&user, "[[handler]\n").unwrap();
    let served = resident.hook("claude", &payload, true);
    let own = resident.hook("claude", &payload, false);
    assert_eq!(served.status.code(), Some(2), "{}", stderr(&served));
    assert!(stderr(&served).contains(&user.display().to_string()));
    assert_eq!(
        (answer(&served), stderr(&served)),
        (answer(&own), stderr(&own))
    );
    // Taken away: the default chain again.
    std::fs::remove_file(&user).unwrap();
    assert_eq!(decision(&resident.hook("claude", &payload, true)), "allow");
    assert_eq!(
        resident.stop(),
        "stopped 1 resident hook server (6 calls served)"
    );
}

#[test]
fn without_a_server_that_answers_a_call_is_decided_in_its_own_process() {
    let resident = Resident::new();
    let payload = fixture(&resident.sandbox, "claude", "bash-rm-home", false);
    // Switched off: decided here, and no server started.
    let output = resident.hook("claude", &payload, false);
    assert_eq!(decision(&output), "deny");
    std::thread::sleep(Duration::from_millis(300));
    assert!(resident.sockets().is_empty());
    // A socket left by a server that was killed: nobody answers, the call is decided here and
    // a server started in its place.
    assert_eq!(decision(&resident.hook("claude", &payload, true)), "deny");
    let socket = resident.server();
    assert!(resident.stop().starts_with("stopped 1"));
    let left = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    drop(left);
    assert_eq!(decision(&resident.hook("claude", &payload, true)), "deny");
    resident.server();
    assert!(resident.stop().starts_with("stopped 1"));
    // A program of the user's that took the socket and answers "allow" to everything: not
    // the server the call would have started, so the call is decided here.
    let impostor = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let answering = std::thread::spawn(move || {
        let allow =
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}"#;
        let wire = serde_json::json!({"code": 0, "stdout": allow, "stderr": ""});
        let (mut stream, _) = impostor.accept().unwrap();
        let _ = std::io::Write::write_all(&mut stream, format!("taken\n{wire}").as_bytes());
    });
    let output = resident.hook("claude", &payload, true);
    assert_eq!(decision(&output), "deny", "{}", stderr(&output));
    answering.join().unwrap();
    std::fs::remove_file(&socket).unwrap();
    // A socket whose server never takes the call (hung): after two seconds, decided here.
    let hung = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let output = resident.hook("claude", &payload, true);
    assert_eq!(decision(&output), "deny", "{}", stderr(&output));
    drop(hung);
}

/// With a review service configured, a resident server ships the audit log as `hook serve`
/// does: the lines of the calls it answers and of the first call (decided in its process) while
/// it runs, and what is left when it is stopped.
#[test]
fn a_resident_server_ships_the_audit_log_to_the_review_service() {
    let crate::serve::Review {
        sandbox,
        service,
        gate,
        reviewer,
        key,
        ..
    } = crate::serve::Review::sqlite(&[]);
    let resident = Resident::of(sandbox);
    let log = resident.sandbox.root.join("hook-audit.jsonl");
    let hook = |name: &str| {
        let payload = fixture(&resident.sandbox, "claude", name, false);
        let args = [
            "hook",
            "claude",
            "--escalate-to",
            &service.url,
            "--service-key",
            key.to_str().unwrap(),
        ];
        let mut command = resident.command(&args, true);
        command
            .env("ACP_GATE_SERVICE_TOKEN", &gate)
            .env("ACP_GATE_AUDIT_LOG", &log);
        let output = pipe(&mut command, &payload);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    };
    let shipped = || {
        let summary = format!("{}/v1/audit/summary", service.url);
        let (_, said) = crate::serve::call("GET", &summary, &reviewer, None);
        said["total"]["total"].as_u64().unwrap() as usize
    };
    let recorded = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .count()
    };

    hook("bash-cargo-test");
    resident.server();
    hook("bash-rm-home");
    hook("read-src");
    assert!(recorded() >= 3, "each call is recorded");
    let deadline = Instant::now() + Duration::from_secs(30);
    while shipped() < recorded() {
        assert!(
            Instant::now() < deadline,
            "the server shipped {} of {} records while it ran",
            shipped(),
            recorded()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    hook("bash-cargo-test");
    let said = resident.stop();
    assert!(said.contains("(3 calls served)"), "{said}");
    assert_eq!(shipped(), recorded(), "what is left goes when it stops");
}

/// A runtime directory too deep for a socket's path (a `sockaddr_un` holds 107 bytes): the
/// servers listen in `/tmp/acp-gate-UID` instead, and calls still reach them.
#[test]
fn a_runtime_directory_too_deep_for_a_socket_falls_back_to_a_short_private_one() {
    let sandbox = Sandbox::new();
    let deep = sandbox.root.join("run").join("d".repeat(120));
    std::fs::create_dir_all(&deep).unwrap();
    let resident = Resident {
        sandbox,
        runtime: deep,
    };
    let payload = fixture(&resident.sandbox, "claude", "bash-cargo-test", false);
    let first = resident.hook("claude", &payload, true);
    assert!(first.status.success(), "{}", stderr(&first));
    // SAFETY: getuid(2) cannot fail.
    let own = format!("acp-gate-{}", unsafe { libc::getuid() });
    let short = resident.sandbox.root.join(own);
    let deadline = Instant::now() + Duration::from_secs(60);
    let served = loop {
        let output = resident.hook("claude", &payload, true);
        assert_eq!(decision(&output), "allow", "{}", stderr(&output));
        if resident
            .stop()
            .starts_with("stopped 1 resident hook server")
        {
            break true;
        }
        if Instant::now() > deadline {
            break false;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(served, "no resident server listened in {}", short.display());
    assert!(short.is_dir(), "the fallback is the temporary directory's");
    assert!(
        resident.sockets().is_empty(),
        "nothing in the deep directory"
    );
}
