//! ACP as agents speak it now and next: protocol v2 permission requests (both subject types,
//! none, an unknown one, open-enum options), version negotiation, unreadable requests, session
//! resume, `$/cancel_request`, elicitation and trace context, through `run` and `proxy`, against
//! a scripted v2 agent (tests/agents/v2-agent.mjs).

use serde_json::{Value, json};

use crate::common::{Sandbox, stderr, v2_agent_script};
use crate::proxy::{Editor, text_of};

/// Org rules: the agent's tool name `Deploy` is refused; a title of `cargo test` is allowed.
fn deploy_rule(sandbox: &Sandbox) -> String {
    sandbox
        .write(
            "policy/handlers.toml",
            r#"
[[handler]]
name = "team"
plugin = "builtin:org-policy"

[[handler.config.rules]]
name = "no-deploys"
decision = "deny"
tools = ["Deploy"]
reason = "deploys go through the release pipeline"

# A careless rule: it would allow anything titled like `cargo test`.
[[handler.config.rules]]
name = "titled-tests"
decision = "allow"
title = "^cargo test$"
"#,
        )
        .display()
        .to_string()
}

/// `acp-gate run --non-interactive ARGS -p PROMPT -- node v2-agent.mjs AGENT_ARGS`.
fn run(sandbox: &Sandbox, args: &[&str], prompt: &str, agent: &[&str]) -> std::process::Output {
    let audit = sandbox.root.join("audit.jsonl");
    let script = v2_agent_script();
    let mut all = vec![
        "run",
        "--non-interactive",
        "--audit",
        audit.to_str().unwrap(),
    ];
    all.extend(args);
    all.extend(["-p", prompt, "--", "node", &script]);
    all.extend(agent);
    sandbox
        .command(&all)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// The agent's `STEP name answer` lines.
fn steps(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("STEP "))
        .filter_map(|l| l.split_once(' '))
        .map(|(name, answer)| (name.to_owned(), answer.to_owned()))
        .collect()
}

fn audit_records(sandbox: &Sandbox) -> Vec<Value> {
    std::fs::read_to_string(sandbox.root.join("audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// What every v2 request of the agent's `go` prompt must be answered, `run` and `proxy` alike.
const V2_ANSWERS: &[(&str, &str)] = &[
    ("edit", "selected:allow-once"),
    ("rm", "selected:reject"),
    ("cargo", "selected:allow-once"),
    // No subject, and a subject of an unknown type titled like an allowed command: asked
    // about (here nobody can answer: rejected), never allowed.
    ("untitled", "selected:reject"),
    ("unknown", "selected:reject"),
    // Allowed, but the only allow option is of an implementation-specific kind.
    ("openenum", "cancelled"),
    // Unreadable: rejected without the chain.
    ("broken", "selected:reject"),
    // The tool call's `name` is what the org's tool rule matches.
    ("named", "selected:reject"),
];

fn expect_v2_answers(got: &[(String, String)]) {
    let got: Vec<(&str, &str)> = got.iter().map(|(n, a)| (n.as_str(), a.as_str())).collect();
    assert_eq!(got, V2_ANSWERS);
}

#[test]
fn run_gates_a_v2_agent_and_fails_the_run_on_what_it_cannot_read() {
    let sandbox = Sandbox::new();
    let handlers = deploy_rule(&sandbox);
    let output = run(
        &sandbox,
        &["--protocol", "2", "--handlers", &handlers],
        "go",
        &[],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    expect_v2_answers(&steps(&stdout));
    assert_eq!(
        output.status.code(),
        Some(4),
        "an unreadable permission request fails the run\n{}",
        stderr(&output)
    );
    assert!(
        stderr(&output).contains("a `command` subject needs a `command` and a `cwd`"),
        "{}",
        stderr(&output)
    );

    let records = audit_records(&sandbox);
    assert_eq!(records.len(), V2_ANSWERS.len(), "every request is recorded");
    let broken = &records[6];
    assert_eq!(broken["decision"], "deny");
    assert!(
        broken["reasons"][0]
            .as_str()
            .unwrap()
            .contains("cannot read this `session/request_permission` request"),
        "{broken}"
    );
    let unknown = &records[4];
    assert_eq!(
        unknown["decision"], "ask",
        "an unknown subject is never allowed, whatever its title: {unknown}"
    );
    assert_eq!(unknown["handlers"][0]["verdict"], "allow", "{unknown}");
    assert!(
        unknown["reasons"][0]
            .as_str()
            .unwrap()
            .contains("_vendor_sandboxed_job")
    );
    assert_eq!(
        records[7]["reasons"][0],
        "team: deploys go through the release pipeline [no-deploys]"
    );
    assert_eq!(
        records[0]["trace"],
        json!({"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "acme=1"}),
        "the request's trace context is in its audit record"
    );
    assert_eq!(records[1]["kind"], "execute");
    assert_eq!(records[1]["tool_call_id"], "call-rm");
}

#[test]
fn an_agent_answering_a_version_acp_gate_cannot_speak_ends_the_run_with_exit_4() {
    let sandbox = Sandbox::new();
    for offered in ["1", "2"] {
        let output = run(
            &sandbox,
            &["--protocol", offered],
            "hello",
            &["--answer-version", "7"],
        );
        assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
        let message = stderr(&output);
        assert!(
            message.contains("ACP protocol version 7")
                && message.contains(&format!("offered version {offered}")),
            "{message}"
        );
    }
}

#[test]
fn run_offered_v1_goes_on_in_v2_when_the_agent_answers_v2_and_gates_it() {
    let sandbox = Sandbox::new();
    let handlers = deploy_rule(&sandbox);
    let output = run(
        &sandbox,
        &["--handlers", &handlers],
        "go",
        &["--answer-version", "2"],
    );
    let message = stderr(&output);
    assert!(
        message.contains(
            "the agent answered `initialize` with ACP protocol version 2 to acp-gate's offer of \
             version 1: going on in version 2"
        ),
        "a notice says so: {message}"
    );
    // Every v2 request gated as when v2 is offered (and the unreadable one fails the run, as
    // there).
    expect_v2_answers(&steps(&String::from_utf8_lossy(&output.stdout)));
    assert_eq!(output.status.code(), Some(4), "{message}");
    assert!(
        message.contains("a `command` subject needs a `command` and a `cwd`"),
        "{message}"
    );
    assert_eq!(audit_records(&sandbox).len(), V2_ANSWERS.len());
}

#[test]
fn run_resumes_a_session_and_declines_questions_with_nobody_to_answer() {
    let sandbox = Sandbox::new();
    let output = run(
        &sandbox,
        &["--protocol", "2", "--resume", "earlier-7"],
        "elicit",
        &[],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout.contains("RESUMED session/resume earlier-7"),
        "{stdout}"
    );
    assert_eq!(
        steps(&stdout),
        [("elicit".to_owned(), "decline".to_owned())]
    );

    // A v1 agent that offers neither `session/resume` nor `session/load`: a new session, and
    // a notice saying so.
    let output = run(
        &sandbox,
        &["--resume", "earlier-7"],
        "hello",
        &["--answer-version", "1"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("cannot resume a session")
            && stderr(&output).contains("session earlier-7 is not resumed, a new one is started"),
        "{}",
        stderr(&output)
    );
    assert!(!String::from_utf8_lossy(&output.stdout).contains("RESUMED"));
}

/// The proxy in front of the v2 agent, `initialize`d with `version` by the test's editor.
fn v2_proxy(sandbox: &Sandbox, handlers: Option<&str>, agent: &[&str]) -> Editor {
    let script = v2_agent_script();
    let audit = sandbox.root.join("audit.jsonl");
    let mut command = vec!["node", script.as_str()];
    command.extend(agent);
    let options: Vec<&str> = handlers.map(|h| vec!["--handlers", h]).unwrap_or_default();
    Editor::start_with(sandbox, &audit, &options, &command)
}

fn initialize_v2(editor: &mut Editor) -> Value {
    let id = editor.request(
        "initialize",
        json!({"protocolVersion": 2, "info": {"name": "editor", "version": "1"}, "capabilities": {}}),
    );
    editor.until_response(id).pop().unwrap()
}

/// The prompt's messages to the editor, up to its answer; permission requests rejected.
fn prompt(editor: &mut Editor, session: &str, text: &str) -> Vec<Value> {
    let id = editor.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
    );
    editor.until_response(id)
}

pub(crate) fn steps_in(messages: &[Value]) -> Vec<(String, String)> {
    let text: String = messages
        .iter()
        .filter_map(text_of)
        .map(|t| format!("{t}\n"))
        .collect();
    steps(&text)
}

#[test]
fn the_proxy_gates_a_v2_session_and_forwards_unknown_subjects_unchanged() {
    let sandbox = Sandbox::new();
    let handlers = deploy_rule(&sandbox);
    let mut editor = v2_proxy(&sandbox, Some(&handlers), &[]);
    assert_eq!(initialize_v2(&mut editor)["result"]["protocolVersion"], 2);
    let id = editor.request("session/new", json!({"cwd": sandbox.workspace}));
    let session = editor.until_response(id).pop().unwrap()["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let messages = prompt(&mut editor, &session, "go");
    expect_v2_answers(&steps_in(&messages));

    // Only the two asks reached the editor, in v2's shape; the unknown subject as it was.
    let asks: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "session/request_permission")
        .collect();
    assert_eq!(asks.len(), 2, "{asks:?}");
    assert!(asks[0]["params"].get("subject").is_none());
    assert!(
        asks[0]["params"]["title"]
            .as_str()
            .unwrap()
            .starts_with("Tidy up the repository — acp-gate:")
    );
    assert_eq!(
        asks[1]["params"]["subject"],
        json!({"type": "_vendor_sandboxed_job", "job": {"image": "x"}})
    );
    drop(editor);
    assert_eq!(audit_records(&sandbox).len(), V2_ANSWERS.len());
}

#[test]
fn the_proxy_gates_in_v2_when_the_agent_answers_v2_to_an_editor_that_offered_v1() {
    let sandbox = Sandbox::new();
    let handlers = deploy_rule(&sandbox);
    let mut editor = v2_proxy(&sandbox, Some(&handlers), &["--answer-version", "2"]);
    let id = editor.request(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    let answer = editor.until_response(id).pop().unwrap();
    assert_eq!(
        answer["result"]["protocolVersion"], 2,
        "the agent's answer reaches the editor, which decides: {answer}"
    );
    let id = editor.request("session/new", json!({"cwd": sandbox.workspace}));
    let session = editor.until_response(id).pop().unwrap()["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    expect_v2_answers(&steps_in(&prompt(&mut editor, &session, "go")));
    let (_, stderr) = editor.finish();
    assert!(
        stderr.contains(
            "the agent answered `initialize` with ACP protocol version 2 to the editor's offer \
             of version 1; acp-gate gates the session in version 2"
        ),
        "{stderr}"
    );
}

#[test]
fn the_proxy_refuses_a_version_it_cannot_gate_to_both_sides() {
    let sandbox = Sandbox::new();
    let mut editor = v2_proxy(&sandbox, None, &["--answer-version", "7"]);
    let answer = initialize_v2(&mut editor);
    let message = answer["error"]["data"].as_str().unwrap_or_default();
    assert!(message.contains("ACP protocol version 7"), "{answer}");
    assert!(
        answer.get("result").is_none(),
        "the agent's answer is not relayed: {answer}"
    );
    assert_eq!(
        editor.wait(),
        Some(4),
        "the proxy stops the agent and exits 4"
    );
}

#[test]
fn the_proxy_tracks_a_resumed_sessions_directory_and_relays_withdrawals_and_questions() {
    let sandbox = Sandbox::new();
    let elsewhere = sandbox.root.join("elsewhere");
    std::fs::create_dir_all(elsewhere.join("src")).unwrap();
    let mut editor = v2_proxy(&sandbox, None, &[]);
    initialize_v2(&mut editor);
    let id = editor.request(
        "session/resume",
        json!({"sessionId": "earlier-3", "cwd": elsewhere, "replayFrom": {"type": "start"}}),
    );
    editor.until_response(id);

    // The edit is inside the resumed session's directory (not the proxy's): allowed.
    let messages = prompt(&mut editor, "earlier-3", "go");
    assert_eq!(
        steps_in(&messages)[0],
        ("edit".to_owned(), "selected:allow-once".to_owned())
    );

    // A question for the user goes to the editor untouched.
    let id = editor.request(
        "session/prompt",
        json!({"sessionId": "earlier-3", "prompt": [{"type": "text", "text": "elicit"}]}),
    );
    let question = editor.next();
    assert_eq!(question["method"], "elicitation/create", "{question}");
    assert_eq!(
        question["params"]["message"],
        "Which branch should I push to?"
    );
    editor.send(json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"branch": "topic"}}}));
    assert_eq!(
        steps_in(&editor.until_response(id)),
        [("elicit".to_owned(), "accept".to_owned())]
    );

    // The agent withdraws an ask the editor has not answered: the editor hears of it, and its
    // answer `cancelled` reaches the agent.
    let id = editor.request(
        "session/prompt",
        json!({"sessionId": "earlier-3", "prompt": [{"type": "text", "text": "withdraw"}]}),
    );
    let ask = editor.next();
    assert_eq!(ask["method"], "session/request_permission", "{ask}");
    let cancel = editor.next();
    assert_eq!(cancel["method"], "$/cancel_request", "{cancel}");
    assert_eq!(cancel["params"]["requestId"], ask["id"]);
    editor.send(
        json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"outcome": {"outcome": "cancelled"}}}),
    );
    assert_eq!(
        steps_in(&editor.until_response(id)),
        [("withdraw".to_owned(), "cancelled".to_owned())]
    );
}

/// A handler that takes its whole deadline: the agent withdraws its request meanwhile.
fn slow_policy(sandbox: &Sandbox) -> std::path::PathBuf {
    sandbox.write(
        "policy/handlers.toml",
        &format!(
            "[[handler]]\nname = \"slow\"\nplugin = \"{}\"\ntimeout_ms = 1500\non_error = \"ask\"\nconfig = {{ behaviour = \"loop\" }}\n",
            crate::common::test_plugin("misbehaving").display()
        ),
    )
}

#[test]
fn run_answers_a_request_the_agent_withdraws_as_cancelled_and_records_it() {
    let sandbox = Sandbox::new();
    let handlers = slow_policy(&sandbox);
    let output = run(
        &sandbox,
        &["--protocol", "2", "--handlers", handlers.to_str().unwrap()],
        "withdraw",
        &[],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        steps(&stdout),
        [("withdraw".to_owned(), "cancelled".to_owned())],
        "{}",
        stderr(&output)
    );
    let records = audit_records(&sandbox);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["answer"], "cancelled");
}

#[test]
fn the_proxy_answers_a_request_withdrawn_while_the_chain_decides_as_cancelled() {
    let sandbox = Sandbox::new();
    let handlers = slow_policy(&sandbox);
    let mut editor = v2_proxy(&sandbox, Some(handlers.to_str().unwrap()), &[]);
    initialize_v2(&mut editor);
    let id = editor.request("session/new", json!({"cwd": sandbox.workspace}));
    let session = editor.until_response(id).pop().unwrap()["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let messages = prompt(&mut editor, &session, "withdraw");
    assert_eq!(
        steps_in(&messages),
        [("withdraw".to_owned(), "cancelled".to_owned())]
    );
    assert!(
        messages
            .iter()
            .all(|m| m["method"] != "session/request_permission"),
        "the editor is never asked: {messages:?}"
    );
    drop(editor);
    assert_eq!(audit_records(&sandbox)[0]["answer"], "cancelled");
}
