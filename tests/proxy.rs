//! `acp-gate proxy` between an editor and the TypeScript SDK agent (tests/agents/sdk-agent.mjs):
//! driven by acpx, an ACP client nobody here wrote, and by a Rust test client playing the
//! editor, which sees every line the proxy writes.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{BIN, Sandbox, sdk_agent_script, stderr, test_agents};

const PATIENCE: Duration = Duration::from_secs(30);

pub(crate) fn audit_answers(audit: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(audit)
        .unwrap()
        .lines()
        .map(|l| {
            let record: Value = serde_json::from_str(l).unwrap();
            (
                record["title"].as_str().unwrap().to_owned(),
                record["answer"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn acpx_through_the_proxy_gets_only_the_real_questions() {
    let sandbox = Sandbox::new();
    let audit = sandbox.root.join("audit.jsonl");
    let agent = format!(
        "{} proxy --audit {} -- node {}",
        crate::common::BIN,
        audit.display(),
        sdk_agent_script()
    );
    let messages = acpx_commands(&sandbox, &agent);
    assert_only_the_real_questions(&sandbox, &messages, &audit);
}

/// acpx, approving everything, runs the SDK agent's `commands` prompt with `agent` as its
/// agent command (acp-gate in front of the SDK agent, alone or in a conductor's chain): the
/// messages it printed. `~/.bashrc` is written first, so that its overwrite would show.
pub(crate) fn acpx_commands(sandbox: &Sandbox, agent: &str) -> Vec<Value> {
    let agents = test_agents();
    std::fs::write(sandbox.home.join(".bashrc"), "# mine\n").unwrap();
    let bin = agents.join("node_modules/.bin");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = sandbox
        .confine(&mut Command::new(bin.join("acpx")))
        .env("PATH", path)
        .args([
            "--approve-all",
            "--format",
            "json",
            "--cwd",
            sandbox.workspace.to_str().unwrap(),
            "--agent",
            agent,
            "exec",
            "commands",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "acpx failed: {:?}\n{stdout}\n{}",
        output.status,
        stderr(&output)
    );
    // acpx --format json prints the session's messages, one per line.
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// What acpx (approving everything) and the agent saw of the `commands` prompt through the
/// gate: the chain's decisions, and only the asks put to acpx; `audit` records its answers.
pub(crate) fn assert_only_the_real_questions(sandbox: &Sandbox, messages: &[Value], audit: &Path) {
    let step = |name: &str| {
        let prefix = format!("STEP {name} ");
        messages
            .iter()
            .filter_map(text_of)
            .find_map(|t| t.strip_prefix(&prefix).map(str::to_owned))
            .unwrap_or_else(|| panic!("no STEP {name} in acpx's output:\n{messages:?}"))
    };
    assert_eq!(
        step("rm"),
        "selected:reject",
        "`rm -rf ~` is refused by the chain although acpx approves everything"
    );
    assert_eq!(
        step("test"),
        "selected:allow-once",
        "a safe command proceeds"
    );
    assert_eq!(
        step("deploy"),
        "selected:allow-once",
        "the ask reached acpx, which approved it"
    );
    assert_eq!(step("write-inside"), "written");
    assert!(step("write-bashrc").starts_with("refused:denied by acp-gate"));
    assert_eq!(
        std::fs::read_to_string(sandbox.workspace.join("notes.txt")).unwrap(),
        "hello\n",
        "acpx carried out the allowed write"
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.home.join(".bashrc")).unwrap(),
        "# mine\n"
    );
    // acpx approved acp-gate's ask about the read, so the read reached it (acpx's own file
    // layer then refuses paths outside its cwd, which is acpx's business).
    assert!(
        messages
            .iter()
            .any(|m| m["method"] == "fs/read_text_file" && m["params"]["path"] == "/etc/hosts"),
        "the read allowed in acpx was forwarded to it"
    );
    // acpx saw a permission request for the asks only: the agent's for `terraform apply`, with the
    // handlers' reason in its title, and acp-gate's own for the read outside the workspace.
    let asked: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "session/request_permission")
        .map(|m| &m["params"]["toolCall"])
        .collect();
    assert_eq!(asked.len(), 2, "only the asks reach acpx: {asked:?}");
    let title = asked[0]["title"].as_str().unwrap();
    assert!(
        title == "terraform apply — acp-gate: no handler had an opinion; the policy default is ask",
        "{title}"
    );
    assert!(
        asked[1]["title"]
            .as_str()
            .unwrap()
            .starts_with("Read /etc/hosts — acp-gate: "),
        "{}",
        asked[1]
    );
    let answers = audit_answers(audit);
    assert!(
        answers.contains(&("terraform apply".into(), "allow-once (editor)".into()))
            && answers.contains(&("Read /etc/hosts".into(), "allowed (editor)".into())),
        "the audit log records what the editor answered: {answers:?}"
    );
}

/// The editor side of a proxy: what the proxy writes to stdout, line by line.
pub(crate) struct Editor {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    next_id: u64,
}

impl Editor {
    pub(crate) fn start(sandbox: &Sandbox, audit: &Path, agent: &[&str]) -> Editor {
        Editor::start_with(sandbox, audit, &[], agent)
    }

    /// The proxy with `options` of its own.
    pub(crate) fn start_with(
        sandbox: &Sandbox,
        audit: &Path,
        options: &[&str],
        agent: &[&str],
    ) -> Editor {
        let mut args = vec!["proxy", "--audit", audit.to_str().unwrap()];
        args.extend(options);
        args.push("--");
        args.extend(agent);
        Editor::spawn(&mut sandbox.command(&args))
    }

    /// The editor side of `command` (acp-gate, or a conductor running it).
    pub(crate) fn spawn(command: &mut Command) -> Editor {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Editor {
            stdin: child.stdin.take(),
            child,
            lines,
            next_id: 1,
        }
    }

    pub(crate) fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    pub(crate) fn request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The next message the proxy sends, as JSON.
    pub(crate) fn next(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(PATIENCE)
            .expect("the proxy sent nothing more");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"))
    }

    /// Messages up to and including the response to request `id`. Requests on the way are
    /// answered: asks rejected, calls carried out (answered, that is).
    pub(crate) fn until_response(&mut self, id: u64) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let message = self.next();
            let result = match message["method"].as_str() {
                Some("session/request_permission") => {
                    let options = message["params"]["options"].as_array().unwrap();
                    let reject = options.iter().find(|o| o["kind"] == "reject_once").unwrap();
                    Some(
                        json!({"outcome": {"outcome": "selected", "optionId": reject["optionId"]}}),
                    )
                }
                Some("fs/write_text_file") => Some(json!({})),
                Some("fs/read_text_file") => Some(json!({"content": ""})),
                _ => None,
            };
            if let Some(result) = result {
                self.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": result}));
            }
            let done = message.get("method").is_none() && message["id"] == id;
            seen.push(message);
            if done {
                return seen;
            }
        }
    }

    pub(crate) fn open_session(&mut self, cwd: &Path) -> String {
        let id = self.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": true}}),
        );
        let answer = self.until_response(id);
        assert_eq!(answer.last().unwrap()["result"]["protocolVersion"], 1);
        let id = self.request("session/new", json!({"cwd": cwd, "mcpServers": []}));
        let answer = self.until_response(id);
        answer.last().unwrap()["result"]["sessionId"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Waits for the first permission request to reach the editor, then cancels `session`'s
    /// turn (`session/cancel`): the request, unanswered.
    pub(crate) fn cancel_at_the_first_ask(&mut self, session: &str) -> Value {
        let ask = loop {
            let message = self.next();
            if message["method"] == "session/request_permission" {
                break message;
            }
        };
        self.send(
            json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
        );
        ask
    }

    /// Closes the editor's end, waits for the proxy to exit: its exit code, and what it wrote
    /// to stderr.
    pub(crate) fn finish(&mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let code = self.wait();
        let mut stderr = String::new();
        let _ = std::io::Read::read_to_string(self.child.stderr.as_mut().unwrap(), &mut stderr);
        (code, stderr)
    }

    /// Waits for the proxy to exit; its exit code.
    pub(crate) fn wait(&mut self) -> Option<i32> {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(
                started.elapsed() < PATIENCE,
                "the proxy did not exit in {PATIENCE:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn text_of(update: &Value) -> Option<&str> {
    update
        .pointer("/params/update/content/text")
        .and_then(Value::as_str)
        .map(str::trim_end)
}

/// Where the proxies of these tests write their audit log.
fn audit_of(sandbox: &Sandbox) -> PathBuf {
    sandbox.root.join("audit.jsonl")
}

/// The proxy in front of the SDK agent with a session open and the prompt `commands` sent:
/// the editor, the session id and the prompt's request id.
fn commands_prompted(sandbox: &Sandbox) -> (Editor, String, u64) {
    let mut editor = Editor::start(sandbox, &audit_of(sandbox), &["node", &sdk_agent_script()]);
    let session = editor.open_session(&sandbox.workspace);
    let prompt = editor.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "commands"}]}),
    );
    (editor, session, prompt)
}

#[test]
fn the_editor_sees_every_update_in_order_and_only_the_real_questions() {
    let sandbox = Sandbox::new();
    let (editor, _, prompt) = commands_prompted(&sandbox);
    assert_only_the_real_questions_reach(editor, &sandbox, prompt, &audit_of(&sandbox));
}

/// Through the gate (the proxy alone, or in a conductor's chain), `editor` sent the SDK agent's
/// `commands` prompt (request `prompt`): it must see every update in order, and only the
/// asks; it answers them and carries out the calls that reach it; `audit` records all. Then
/// the editor closes, and the proxy (or its conductor) ends cleanly.
pub(crate) fn assert_only_the_real_questions_reach(
    mut editor: Editor,
    sandbox: &Sandbox,
    prompt: u64,
    audit: &Path,
) {
    let mut texts = Vec::new();
    let mut tool_calls = Vec::new();
    let mut asks = 0;
    let mut writes = Vec::new();
    loop {
        let message = editor.next();
        match message["method"].as_str() {
            Some("session/update") => match message["params"]["update"]["sessionUpdate"].as_str() {
                Some("agent_message_chunk") => texts.push(text_of(&message).unwrap().to_owned()),
                Some("tool_call") => tool_calls.push(
                    message["params"]["update"]["toolCallId"]
                        .as_str()
                        .unwrap()
                        .to_owned(),
                ),
                other => panic!("unexpected update {other:?}"),
            },
            Some("session/request_permission") => {
                asks += 1;
                let tool_call = &message["params"]["toolCall"];
                let title = tool_call["title"].as_str().unwrap();
                assert!(
                    title.contains(" — acp-gate: builtin-")
                        || title.ends_with(
                            " — acp-gate: no handler had an opinion; the policy default is ask"
                        ),
                    "the reasons are in the title: {tool_call}"
                );
                let answer = match tool_call["toolCallId"].as_str().unwrap() {
                    // The agent's ask: the editor's answer reaches the agent as it is.
                    "bash-deploy" => "reject",
                    // acp-gate's own ask about the agent's read outside the workspace.
                    id if id.starts_with("acp-gate/") => {
                        assert_eq!(tool_call["kind"], "read");
                        assert_eq!(tool_call["locations"][0]["path"], "/etc/hosts");
                        "allow"
                    }
                    other => panic!("only asks are forwarded, not {other}"),
                };
                editor.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": {"outcome": "selected", "optionId": answer}}}));
            }
            Some("fs/read_text_file") => {
                assert_eq!(
                    message["params"]["path"], "/etc/hosts",
                    "allowed in the editor, then forwarded"
                );
                editor.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": {"content": "127.0.0.1 localhost\n"}}));
            }
            Some("fs/write_text_file") => {
                writes.push(message["params"]["path"].as_str().unwrap().to_owned());
                editor.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": {}}));
            }
            Some(other) => panic!("unexpected request {other}"),
            None => {
                assert_eq!(message["id"], prompt);
                assert_eq!(message["result"]["stopReason"], "end_turn");
                break;
            }
        }
    }
    let chunks: Vec<String> = (0..200).map(|n| format!("CHUNK {n}")).collect();
    assert_eq!(texts[..200], chunks[..], "every update, in order");
    assert_eq!(tool_calls, ["bash-rm", "bash-test", "bash-deploy"]);
    assert_eq!(asks, 2);
    assert_eq!(
        texts[200..204].to_vec(),
        [
            "STEP rm selected:reject",
            "STEP test selected:allow-once",
            "STEP deploy selected:reject",
            "STEP write-inside written",
        ]
    );
    assert!(
        texts[204].starts_with("STEP write-bashrc refused:denied by acp-gate: builtin-paths"),
        "{}",
        texts[204]
    );
    assert_eq!(texts[205], "STEP read-outside read:20");
    assert_eq!(
        writes,
        [sandbox.workspace.join("notes.txt").display().to_string()],
        "the denied write of ~/.bashrc never reached the editor"
    );
    let written = |path: PathBuf| format!("Write {}", path.display());
    assert_eq!(
        audit_answers(audit),
        [
            ("rm -rf ~".to_owned(), "reject".to_owned()),
            ("cargo test".to_owned(), "allow-once".to_owned()),
            ("terraform apply".to_owned(), "reject (editor)".to_owned()),
            (
                written(sandbox.workspace.join("notes.txt")),
                "allowed".to_owned()
            ),
            (written(sandbox.home.join(".bashrc")), "denied".to_owned()),
            ("Read /etc/hosts".to_owned(), "allowed (editor)".to_owned()),
        ]
    );

    // The editor closes: the proxy ends cleanly.
    let (code, stderr) = editor.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_cancel_during_a_pending_ask_answers_cancelled_and_reaches_the_agent() {
    let sandbox = Sandbox::new();
    let audit = audit_of(&sandbox);
    let (mut editor, session, prompt) = commands_prompted(&sandbox);
    let ask = editor.cancel_at_the_first_ask(&session);
    let step = loop {
        let message = editor.next();
        if let Some(text) = text_of(&message).filter(|t| t.starts_with("STEP deploy")) {
            break text.to_owned();
        }
    };
    assert_eq!(step, "STEP deploy cancelled");
    // The editor answers the ask late: the agent, already answered, must not see it twice.
    editor.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow-once"}}}));
    let rest = editor.until_response(prompt);
    assert!(
        rest.iter()
            .filter_map(text_of)
            .any(|t| t.starts_with("STEP write-bashrc refused")),
        "the agent went on after the cancel: {rest:?}"
    );
    let answers = audit_answers(&audit);
    assert!(answers.contains(&("terraform apply".into(), "cancelled".into())));
    assert!(
        !answers
            .iter()
            .any(|(title, a)| title.starts_with("terraform") && a.contains("(editor)")),
        "the late answer is not taken: {answers:?}"
    );
}

/// Whether process `pid` runs (a zombie that nobody reaped yet does not).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, after_name) = stat.rsplit_once(')')?;
            after_name.trim_start().chars().next()
        })
        .is_some_and(|state| state != 'Z')
}

fn pid_in(path: &Path) -> i32 {
    let started = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "{} never written",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A proxy with an open session whose agent left a process of its own running in the
/// background: the editor, the agent's pid and the background process's pid.
fn with_a_background_process(sandbox: &Sandbox) -> (Editor, i32, i32) {
    let script = format!(
        "sleep 300 & echo $! > {root}/sleeper.pid; echo $$ > {root}/agent.pid; exec node {agent}",
        root = sandbox.root.display(),
        agent = sdk_agent_script()
    );
    let mut editor = Editor::start(sandbox, &audit_of(sandbox), &["sh", "-c", &script]);
    editor.open_session(&sandbox.workspace);
    let agent_pid = pid_in(&sandbox.root.join("agent.pid"));
    let sleeper = pid_in(&sandbox.root.join("sleeper.pid"));
    (editor, agent_pid, sleeper)
}

#[test]
fn closing_the_editor_side_stops_the_agent_and_what_it_started() {
    let sandbox = Sandbox::new();
    let (mut editor, agent_pid, sleeper) = with_a_background_process(&sandbox);
    assert!(alive(agent_pid) && alive(sleeper));
    drop(editor.stdin.take());
    assert_eq!(editor.wait(), Some(0));
    assert!(!alive(agent_pid), "the agent is gone");
    assert!(!alive(sleeper), "what the agent started is gone");
}

#[test]
fn killing_the_agent_ends_the_proxy() {
    let sandbox = Sandbox::new();
    let (mut editor, agent_pid, sleeper) = with_a_background_process(&sandbox);
    // SAFETY: the agent is this test's own grandchild.
    unsafe { libc::kill(agent_pid, libc::SIGKILL) };
    assert_eq!(editor.wait(), Some(4), "exit code 4: the agent died");
    assert!(!alive(sleeper), "what the agent started is gone");
    let mut err = String::new();
    std::io::Read::read_to_string(editor.child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(err.contains("the agent exited"), "{err}");
}

#[test]
fn agent_lines_the_gate_cannot_read_never_reach_the_editor() {
    // Bytes that are not text, a batch, plain words and a gated call without an id are each
    // refused on their own; the relay goes on with the next line.
    let sandbox = Sandbox::new();
    let script = r#"printf '\377\376 not text\n[{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file"}]\nhello\n{"jsonrpc":"2.0","method":"fs/write_text_file","params":{}}\n{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"after"}}}}\n'; exec cat >/dev/null"#;
    let mut editor = Editor::start(&sandbox, &audit_of(&sandbox), &["sh", "-c", script]);
    let first = editor.next();
    assert_eq!(text_of(&first), Some("after"), "{first}");
    drop(editor.stdin.take());
    assert_eq!(editor.wait(), Some(0));
    let mut err = String::new();
    std::io::Read::read_to_string(editor.child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(
        err.matches("not one JSON-RPC message; not forwarded")
            .count(),
        3,
        "{err}"
    );
    assert!(
        err.contains("`fs/write_text_file` without an id; not forwarded"),
        "{err}"
    );
}

#[test]
fn a_thousand_requests_at_once_through_the_proxy_are_each_decided_as_alone() {
    let sandbox = Sandbox::new();
    let audit = audit_of(&sandbox);
    let agent = [BIN, "demo-agent", "--script", "flood:1000"];
    let mut editor = Editor::start(&sandbox, &audit, &agent);
    // A thousand decisions shown on stderr fill a pipe nobody reads.
    let mut shown = editor.child.stderr.take().unwrap();
    std::thread::spawn(move || std::io::copy(&mut shown, &mut std::io::sink()));
    let session = editor.open_session(&sandbox.workspace);
    let id = editor.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
    );
    let seen = editor.until_response(id);
    assert!(
        seen.iter()
            .filter_map(text_of)
            .any(|text| text.contains("flood: 1000 of 1000 decided as alone")),
        "{:?}",
        seen.iter().filter_map(text_of).collect::<Vec<_>>()
    );
    // None of them needed the editor.
    assert!(
        !seen
            .iter()
            .any(|m| m["method"] == "session/request_permission"),
        "an ask reached the editor"
    );
    assert_eq!(audit_answers(&audit).len(), 1000);
}

#[test]
fn a_request_reusing_an_id_in_flight_is_refused_and_the_first_is_answered() {
    // The agent asks about `terraform apply` (an ask: it goes to the editor) and, while that is
    // pending, sends another request on the same id.
    let sandbox = Sandbox::new();
    let ask = |command: &str| {
        json!({"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": {
            "sessionId": "s", "toolCall": {"toolCallId": command, "title": command, "rawInput": {"command": command}},
            "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}, {"optionId": "no", "name": "Reject", "kind": "reject_once"}]}})
    };
    let replies = sandbox.root.join("replies.jsonl");
    let script = format!(
        "printf '%s\\n' '{}'; sleep 1; printf '%s\\n' '{}'; exec cat > {}",
        ask("terraform apply"),
        ask("cargo test"),
        replies.display()
    );
    let mut editor = Editor::start(&sandbox, &audit_of(&sandbox), &["sh", "-c", &script]);
    let forwarded = editor.next();
    assert_eq!(
        forwarded["method"], "session/request_permission",
        "{forwarded}"
    );
    assert_eq!(forwarded["id"], 7);
    // The second request is refused at once; only then does the editor answer the first.
    eventually("the reused id was not refused", || {
        std::fs::read_to_string(&replies).is_ok_and(|r| r.contains("already in use"))
    });
    editor.send(json!({"jsonrpc": "2.0", "id": 7, "result": {"outcome": {"outcome": "selected", "optionId": "ok"}}}));
    eventually("the first request was not answered", || {
        std::fs::read_to_string(&replies).unwrap().lines().count() >= 2
    });
    let replies: Vec<Value> = std::fs::read_to_string(&replies)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 2, "{replies:?}");
    assert!(
        replies[0]["error"]["data"]
            .as_str()
            .unwrap()
            .contains("already in use")
    );
    assert_eq!(
        replies[1]["result"]["outcome"]["optionId"], "ok",
        "{replies:?}"
    );
    // Only the first was decided.
    let answers = audit_answers(&audit_of(&sandbox));
    assert_eq!(
        answers,
        [("terraform apply".to_owned(), "ok (editor)".to_owned())]
    );
}

/// The proxy (with `options`) in front of an agent that only records what reaches it
/// (`cat`): the editor, and the file of what the agent received.
fn recording_agent(sandbox: &Sandbox, options: &[&str]) -> (Editor, PathBuf) {
    let received = sandbox.root.join("received.jsonl");
    let script = format!("exec cat > {}", received.display());
    let agent = ["sh", "-c", &script];
    let editor = Editor::start_with(sandbox, &audit_of(sandbox), options, &agent);
    (editor, received)
}

/// Waits until `done` holds; fails saying `what` did not happen after PATIENCE.
fn eventually(what: &str, done: impl Fn() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < PATIENCE, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn received(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// What the editor saw of its switch into `bypassPermissions` (`seen`, up to the answer),
/// rejecting acp-gate's ask about it: the ask, then an error.
pub(crate) fn assert_bypass_refused_in_the_editor(seen: &[Value]) {
    let ask = &seen[0];
    assert_eq!(ask["method"], "session/request_permission", "{seen:?}");
    assert_eq!(ask["params"]["toolCall"]["kind"], "switch_mode");
    let title = ask["params"]["toolCall"]["title"].as_str().unwrap();
    assert!(
        title.contains("bypassPermissions") && title.contains("stops asking"),
        "{title}"
    );
    let refused = seen.last().unwrap();
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("denied by acp-gate"),
        "{refused}"
    );
}

#[test]
fn a_switch_to_a_bypass_mode_reaches_the_agent_only_when_allowed() {
    let sandbox = Sandbox::new();
    let (mut editor, agent_got) = recording_agent(&sandbox, &[]);
    let set_mode = |mode: &str| json!({"sessionId": "s", "modeId": mode});

    // Into bypassPermissions: the chain asks; acp-gate asks the editor, which rejects.
    let id = editor.request("session/set_mode", set_mode("bypassPermissions"));
    assert_bypass_refused_in_the_editor(&editor.until_response(id));

    // Into plan: let through at once, as the editor sent it.
    let id = editor.request("session/set_mode", set_mode("plan"));
    eventually("the switch to plan never reached the agent", || {
        received(&agent_got).contains("\"plan\"")
    });
    assert!(received(&agent_got).contains(&format!("\"id\":{id}")));

    // A setting of the mode option, allowed by the person in the editor: forwarded.
    let id = editor.request(
        "session/set_config_option",
        json!({"sessionId": "s", "configId": "mode", "value": "yolo"}),
    );
    let ask = editor.next();
    assert_eq!(ask["method"], "session/request_permission", "{ask}");
    editor.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow"}}}));
    eventually("the allowed switch never reached the agent", || {
        received(&agent_got).contains("yolo")
    });
    assert!(received(&agent_got).contains(&format!("\"id\":{id}")));
    let got = received(&agent_got);
    assert!(!got.contains("bypassPermissions"), "{got}");

    let answers: Vec<(String, String)> = audit_answers(&audit_of(&sandbox));
    assert_eq!(
        answers,
        [
            (
                "Switch to mode bypassPermissions".to_owned(),
                "denied (editor: rejected in the editor)".to_owned()
            ),
            ("Switch to mode plan".to_owned(), "allowed".to_owned()),
            (
                "Switch to mode yolo".to_owned(),
                "allowed (editor)".to_owned()
            ),
        ]
    );
}

#[test]
fn an_org_handler_that_denies_switches_keeps_them_from_the_agent() {
    let sandbox = Sandbox::new();
    let org = sandbox.write(
        "etc/handlers.toml",
        r#"
[[handler]]
name = "fixed-modes"
plugin = "builtin:org-policy"
applies_to = ["switch_mode"]

[[handler.config.rules]]
name = "no-switches"
decision = "deny"
reason = "modes are set by IT"
kinds = ["switch_mode"]
"#,
    );
    let (mut editor, agent_got) =
        recording_agent(&sandbox, &["--org-handlers", org.to_str().unwrap()]);
    let id = editor.request(
        "session/set_mode",
        json!({"sessionId": "s", "modeId": "plan"}),
    );
    let seen = editor.until_response(id);
    assert_eq!(seen.len(), 1, "nothing is asked: {seen:?}");
    let message = seen[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("modes are set by IT"), "{message}");
    // The agent got nothing; then a message that is not a switch reaches it.
    editor.request("session/prompt", json!({"sessionId": "s", "prompt": []}));
    eventually("the prompt never reached the agent", || {
        received(&agent_got).contains("session/prompt")
    });
    assert!(!received(&agent_got).contains("set_mode"));
    assert_eq!(
        audit_answers(&audit_of(&sandbox)),
        [("Switch to mode plan".to_owned(), "denied".to_owned())]
    );
}

#[test]
fn an_agent_that_switches_itself_into_bypass_mode_is_reported_to_the_editor() {
    let sandbox = Sandbox::new();
    let update = |mode: &str| {
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s",
            "update": {"sessionUpdate": "current_mode_update", "currentModeId": mode}}})
    };
    let script = format!(
        "printf '%s\\n' '{}' '{}'; exec cat > /dev/null",
        update("default"),
        update("yolo")
    );
    let mut editor = Editor::start(&sandbox, &audit_of(&sandbox), &["sh", "-c", &script]);
    // Both updates reach the editor as they are, then acp-gate's warning in the session.
    let mut seen = Vec::new();
    while !seen
        .iter()
        .any(|m: &Value| text_of(m).is_some_and(|t| t.contains("acp-gate")))
    {
        seen.push(editor.next());
    }
    let modes: Vec<&str> = seen
        .iter()
        .filter_map(|m| m.pointer("/params/update/currentModeId")?.as_str())
        .collect();
    assert_eq!(modes, ["default", "yolo"]);
    let warning = text_of(seen.last().unwrap()).unwrap();
    assert!(
        warning.contains("mode `yolo`") && warning.contains("stops asking"),
        "{warning}"
    );
    // Judged concurrently: recorded in the order they were decided.
    eventually("both switches were not recorded", || {
        audit_answers(&audit_of(&sandbox)).len() == 2
    });
    let mut answers = audit_answers(&audit_of(&sandbox));
    answers.sort();
    assert_eq!(
        answers,
        [
            (
                "Switch to mode default".to_owned(),
                "reported: went on".to_owned()
            ),
            (
                "Switch to mode yolo".to_owned(),
                "reported: told the editor".to_owned()
            ),
        ]
    );
}

#[test]
fn a_request_on_an_id_reserved_for_acp_gate_is_refused() {
    // acp-gate's own asks to the editor use ids `acp-gate/N`: an agent request on such an id
    // could have the editor's answer to acp-gate's ask taken as its own.
    let sandbox = Sandbox::new();
    let replies = sandbox.root.join("replies.jsonl");
    let request = json!({"jsonrpc": "2.0", "id": "acp-gate/1", "method": "fs/read_text_file",
        "params": {"sessionId": "s", "path": "README.md"}});
    let script = format!(
        "printf '%s\\n' '{request}'; exec cat > {}",
        replies.display()
    );
    let editor = Editor::start(&sandbox, &audit_of(&sandbox), &["sh", "-c", &script]);
    eventually("the reserved id was not refused", || {
        std::fs::read_to_string(&replies).is_ok_and(|r| r.contains("reserved"))
    });
    let reply: Value =
        serde_json::from_str(std::fs::read_to_string(&replies).unwrap().trim()).unwrap();
    assert_eq!(reply["id"], "acp-gate/1");
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    drop(editor);
    // Refused, never decided.
    assert!(!audit_of(&sandbox).exists() || audit_answers(&audit_of(&sandbox)).is_empty());
}

#[test]
fn a_session_reopened_in_a_bypass_mode_is_reported_to_the_editor() {
    // `session/load` (and `session/resume`) answer with the mode the session is in.
    let sandbox = Sandbox::new();
    let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"modes": {"currentModeId": "bypassPermissions", "availableModes": []}}});
    let script = format!("read line; printf '%s\\n' '{answer}'; exec cat > /dev/null");
    let mut editor = Editor::start(&sandbox, &audit_of(&sandbox), &["sh", "-c", &script]);
    let cwd = sandbox.workspace.to_str().unwrap();
    let id = editor.request(
        "session/load",
        json!({"sessionId": "old", "cwd": cwd, "mcpServers": []}),
    );
    let loaded = editor.until_response(id);
    assert_eq!(
        loaded.last().unwrap()["result"]["modes"]["currentModeId"],
        "bypassPermissions"
    );
    let warning = editor.next();
    assert_eq!(warning["params"]["sessionId"], "old", "{warning}");
    let text = text_of(&warning).unwrap();
    assert!(text.contains("mode `bypassPermissions`"), "{text}");
    eventually("the session's mode was not recorded", || {
        audit_of(&sandbox).exists() && !audit_answers(&audit_of(&sandbox)).is_empty()
    });
    assert_eq!(
        audit_answers(&audit_of(&sandbox)),
        [(
            "Switch to mode bypassPermissions".to_owned(),
            "reported: told the editor".to_owned()
        )]
    );
}
