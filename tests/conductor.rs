//! `acp-gate proxy` as a component of an ACP proxy chain, under the real conductor from
//! crates.io (`agent-client-protocol-conductor`, installed by scripts/install-test-services.sh):
//! a pass-through proxy written with the Rust SDK (tests/proxies/logging_proxy.rs) sits before
//! acp-gate and another after it, in front of the TypeScript SDK agent; acpx, or a Rust test
//! client, plays the editor. Each logging proxy lists the requests it relayed, which tells
//! where it sat and what acp-gate let through.

use std::ffi::CStr;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::common::{BIN, Sandbox, repo, sdk_agent_script, v2_agent_script};
use crate::protocol::steps_in;
use crate::proxy::{
    Editor, acpx_commands, assert_bypass_refused_in_the_editor, assert_only_the_real_questions,
    assert_only_the_real_questions_reach, audit_answers,
};

/// The conductor's binary, where scripts/install-test-services.sh puts it.
fn conductor() -> PathBuf {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    let bin = cargo_home.join("bin/agent-client-protocol-conductor");
    assert!(
        bin.is_file(),
        "{} is missing: run scripts/install-test-services.sh (test.sh does)",
        bin.display()
    );
    bin
}

/// The SDK-built logging proxy, built (as an example of the host crate, beside the binary
/// under test) on first use.
fn logging_proxy() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let profile_dir = Path::new(BIN).parent().unwrap();
        let target = profile_dir.parent().unwrap();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .current_dir(repo())
            .args([
                "build",
                "--quiet",
                "-p",
                "acp-gate",
                "--example",
                "logging-proxy",
            ])
            .arg("--target-dir")
            .arg(target);
        if profile_dir.ends_with("release") {
            build.arg("--release");
        }
        let status = build
            .status()
            .expect("cargo must be on PATH to build the logging proxy");
        assert!(
            status.success(),
            "building the logging-proxy example failed"
        );
        profile_dir.join("examples/logging-proxy")
    })
}

/// A conductor's chain: a logging proxy, `acp-gate proxy`, a logging proxy, the agent.
struct Chain {
    /// The conductor's arguments: `agent`, then one command line per component.
    args: Vec<String>,
    audit: PathBuf,
    before: PathBuf,
    after: PathBuf,
}

impl Chain {
    /// The chain in front of `agent` (a command line), acp-gate given `options` too.
    fn new(sandbox: &Sandbox, options: &str, agent: &str) -> Chain {
        let audit = sandbox.root.join("audit.jsonl");
        let (before, after) = (
            sandbox.root.join("before.log"),
            sandbox.root.join("after.log"),
        );
        let proxy = logging_proxy().display().to_string();
        let args = vec![
            "agent".to_owned(),
            format!("{proxy} {}", before.display()),
            format!("{BIN} proxy --audit {} {options}", audit.display()),
            format!("{proxy} {}", after.display()),
            agent.to_owned(),
        ];
        Chain {
            args,
            audit,
            before,
            after,
        }
    }

    /// The chain as one command line, each component quoted.
    fn command_line(&self) -> String {
        let quoted: Vec<String> = self.args[1..].iter().map(|a| format!("'{a}'")).collect();
        format!("{} agent {}", conductor().display(), quoted.join(" "))
    }

    /// The conductor running the chain, with the sandbox's environment, as an editor's agent.
    fn editor(&self, sandbox: &Sandbox) -> Editor {
        Editor::spawn(sandbox.confine(Command::new(conductor()).args(&self.args)))
    }

    /// The requests a logging proxy relayed (`from-agent METHOD`, `from-client METHOD`).
    fn relayed(log: &Path) -> Vec<String> {
        std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// How many requests of `method` from the agent's side reached a logging proxy.
    fn from_agent(log: &Path, method: &str) -> usize {
        let line = format!("from-agent {method}");
        Chain::relayed(log).iter().filter(|l| **l == line).count()
    }
}

fn sdk_agent() -> String {
    format!("node {}", sdk_agent_script())
}

#[test]
fn acpx_through_a_conductor_chain_gets_only_the_real_questions() {
    let sandbox = Sandbox::new();
    let chain = Chain::new(&sandbox, "", &sdk_agent());
    let messages = acpx_commands(&sandbox, &chain.command_line());
    assert_only_the_real_questions(&sandbox, &messages, &chain.audit);

    // The proxy after acp-gate relayed everything the agent asked; the one before it, only
    // what acp-gate left to the editor.
    let asks = "session/request_permission";
    assert_eq!(Chain::from_agent(&chain.after, asks), 3);
    assert_eq!(Chain::from_agent(&chain.after, "fs/write_text_file"), 2);
    assert_eq!(Chain::from_agent(&chain.after, "fs/read_text_file"), 1);
    assert_eq!(Chain::from_agent(&chain.before, asks), 2);
    assert_eq!(Chain::from_agent(&chain.before, "fs/write_text_file"), 1);
    assert_eq!(Chain::from_agent(&chain.before, "fs/read_text_file"), 1);
    for log in [&chain.before, &chain.after] {
        assert!(
            Chain::relayed(log).contains(&"from-client session/prompt".to_owned()),
            "{log:?}"
        );
    }
}

/// The chain in front of the SDK agent, its session open and `prompt` sent: the editor, the
/// session and the prompt's request id.
fn prompted(sandbox: &Sandbox, chain: &Chain, prompt: &str) -> (Editor, String, u64) {
    let mut editor = chain.editor(sandbox);
    let session = editor.open_session(&sandbox.workspace);
    let id = editor.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": prompt}]}),
    );
    (editor, session, id)
}

#[test]
fn in_a_chain_the_editor_sees_every_update_in_order_and_only_the_real_questions() {
    let sandbox = Sandbox::new();
    let chain = Chain::new(&sandbox, "", &sdk_agent());
    let (editor, _, prompt) = prompted(&sandbox, &chain, "commands");
    assert_only_the_real_questions_reach(editor, &sandbox, prompt, &chain.audit);
    // The denied write passed the proxy after acp-gate, never the one before it.
    assert_eq!(Chain::from_agent(&chain.after, "fs/write_text_file"), 2);
    assert_eq!(Chain::from_agent(&chain.before, "fs/write_text_file"), 1);
}

#[test]
fn in_a_chain_cancels_and_mode_switches_are_gated_as_by_the_proxy_alone() {
    let sandbox = Sandbox::new();
    let chain = Chain::new(&sandbox, "", &sdk_agent());
    let (mut editor, session, prompt) = prompted(&sandbox, &chain, "deploy");
    let ask = loop {
        let message = editor.next();
        if message["method"] == "session/request_permission" {
            break message;
        }
    };
    editor.send(
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
    );
    // The editor answers the ask after its cancel: too late, the agent was answered.
    editor.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow-once"}}}));
    assert_eq!(
        steps_in(&editor.until_response(prompt)),
        [("deploy".to_owned(), "cancelled".to_owned())]
    );

    // Into a mode where the agent stops asking: acp-gate asks the editor, which rejects; the
    // switch never passes acp-gate. Into plan: let through.
    let set_mode = |mode: &str| json!({"sessionId": session, "modeId": mode});
    let id = editor.request("session/set_mode", set_mode("bypassPermissions"));
    assert_bypass_refused_in_the_editor(&editor.until_response(id));
    let id = editor.request("session/set_mode", set_mode("plan"));
    // The SDK agent has no modes: its error comes back, so the switch reached it.
    let answer = editor.until_response(id).pop().unwrap();
    assert!(answer.get("error").is_some(), "{answer}");
    let switches = |log: &Path| {
        Chain::relayed(log)
            .iter()
            .filter(|l| *l == "from-client session/set_mode")
            .count()
    };
    assert_eq!(switches(&chain.before), 2, "both reached acp-gate");
    assert_eq!(switches(&chain.after), 1, "only the allowed one passed it");

    assert_eq!(
        audit_answers(&chain.audit),
        [
            ("terraform apply".to_owned(), "cancelled".to_owned()),
            (
                "Switch to mode bypassPermissions".to_owned(),
                "denied (editor: rejected in the editor)".to_owned()
            ),
            ("Switch to mode plan".to_owned(), "allowed".to_owned()),
        ]
    );
}

/// The chain in front of the scripted agent (tests/agents/v2-agent.mjs), its session open,
/// `prompt` sent: the editor and the prompt's request id. The conductor (built without the
/// draft v2) initializes it in v1; its permission requests keep v2's shapes, which the gate
/// reads as well.
fn scripted_agent_prompted(sandbox: &Sandbox, chain: &Chain, prompt: &str) -> (Editor, u64) {
    let mut editor = chain.editor(sandbox);
    let id = editor.request(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    editor.until_response(id);
    let id = editor.request(
        "session/new",
        json!({"cwd": sandbox.workspace, "mcpServers": []}),
    );
    let session = editor.until_response(id).pop().unwrap()["result"]["sessionId"].clone();
    let id = editor.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": prompt}]}),
    );
    (editor, id)
}

fn scripted_agent() -> String {
    format!("node {}", v2_agent_script())
}

#[test]
fn in_a_chain_requests_the_gate_cannot_read_are_refused_and_recorded() {
    let sandbox = Sandbox::new();
    // Permission requests of every shape, one without the `cwd` its subject needs.
    let chain = Chain::new(&sandbox, "", &scripted_agent());
    let (mut editor, id) = scripted_agent_prompted(&sandbox, &chain, "go");
    let steps = steps_in(&editor.until_response(id));
    for (name, answer) in [
        ("edit", "selected:allow-once"),
        ("rm", "selected:reject"),
        ("broken", "selected:reject"),
    ] {
        assert!(
            steps.contains(&(name.to_owned(), answer.to_owned())),
            "{steps:?}"
        );
    }

    let records: Vec<Value> = std::fs::read_to_string(&chain.audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let unreadable: Vec<&Value> = records
        .iter()
        .filter(|r| {
            r["reasons"][0].as_str().is_some_and(|r| {
                r.contains("cannot read this `session/request_permission` request")
            })
        })
        .collect();
    assert_eq!(
        unreadable.len(),
        1,
        "the unreadable request is recorded: {records:?}"
    );
    assert_eq!(unreadable[0]["decision"], "deny", "{}", unreadable[0]);
    assert_eq!(unreadable[0]["answer"], "reject", "{}", unreadable[0]);
    assert_eq!(
        Chain::from_agent(&chain.before, "session/request_permission"),
        3,
        "only the asks (untitled, unknown, named) reach the editor's side"
    );
}

#[test]
fn in_a_chain_an_ask_the_agent_withdraws_is_withdrawn_from_the_editor() {
    let sandbox = Sandbox::new();
    let chain = Chain::new(&sandbox, "", &scripted_agent());
    // The agent asks about `terraform apply`, and withdraws the request 300 ms later.
    let (mut editor, prompt) = scripted_agent_prompted(&sandbox, &chain, "withdraw");
    let ask = editor.next();
    assert_eq!(ask["method"], "session/request_permission", "{ask}");
    let withdrawn = editor.next();
    assert_eq!(
        withdrawn,
        json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": ask["id"]}})
    );
    editor.send(
        json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"outcome": {"outcome": "cancelled"}}}),
    );
    assert_eq!(
        steps_in(&editor.until_response(prompt)),
        [("withdraw".to_owned(), "cancelled".to_owned())]
    );
    assert_eq!(
        audit_answers(&chain.audit),
        [(
            "terraform apply".to_owned(),
            "cancelled (editor)".to_owned()
        )]
    );
}

#[test]
fn the_sdks_older_spelling_of_the_proxy_methods_is_answered_in_kind() {
    let sandbox = Sandbox::new();
    // The test plays the conductor, as one written with the Rust SDK before 5.0 would.
    let audit = sandbox.root.join("audit.jsonl");
    let mut conductor =
        Editor::spawn(&mut sandbox.command(&["proxy", "--audit", audit.to_str().unwrap()]));
    conductor.send(json!({"jsonrpc": "2.0", "id": "init", "method": "_proxy/initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
    let forwarded = conductor.next();
    assert_eq!(
        forwarded,
        json!({"jsonrpc": "2.0", "id": "init", "method": "_proxy/successor", "params": {"method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}}})
    );
    // The successor's answer comes back bare, and goes on as the answer to `_proxy/initialize`.
    let answer = json!({"jsonrpc": "2.0", "id": "init", "result": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}});
    conductor.send(answer.clone());
    assert_eq!(conductor.next(), answer);

    // A request of the agent's, delivered wrapped: decided by the chain, answered bare.
    let rm = crate::common::claude_bash("rm -rf ~", "rm -rf ~");
    conductor.send(json!({"jsonrpc": "2.0", "id": "from-agent-1", "method": "_proxy/successor", "params": {"method": "session/request_permission", "params": rm}}));
    assert_eq!(
        conductor.next(),
        json!({"jsonrpc": "2.0", "id": "from-agent-1", "result": {"outcome": {"outcome": "selected", "optionId": "reject"}}})
    );
    // An envelope without a method is refused, never guessed at.
    conductor.send(json!({"jsonrpc": "2.0", "id": "from-agent-2", "method": "proxy/successor", "params": {"params": {}}}));
    let refused = conductor.next();
    assert_eq!(refused["id"], "from-agent-2");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let (code, stderr) = conductor.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("unreadable `proxy/successor` envelope"),
        "{stderr}"
    );
    assert_eq!(
        audit_answers(&audit),
        [("rm -rf ~".to_owned(), "reject".to_owned())]
    );
}

#[test]
fn the_proxy_without_an_agent_or_a_conductor_says_what_it_needs() {
    let sandbox = Sandbox::new();
    let audit = sandbox.root.join("audit.jsonl");
    let audit = audit.to_str().unwrap();

    // No agent command, and an editor's `initialize`: no conductor started it.
    let mut alone = Editor::spawn(&mut sandbox.command(&["proxy", "--audit", audit]));
    let id = alone.request("initialize", json!({"protocolVersion": 1}));
    let answer = alone.next();
    assert_eq!(answer["id"], id);
    let why = answer["error"]["data"].as_str().unwrap();
    assert!(
        why.contains("without an agent command")
            && why.contains("acp-gate proxy -- AGENT")
            && why.contains(r#"agent-client-protocol-conductor agent "acp-gate proxy" "AGENT""#),
        "{why}"
    );
    let (code, stderr) = alone.finish();
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("its client sent `initialize`"), "{stderr}");

    // An agent command, and a conductor's `proxy/initialize`: in a chain, it takes none.
    let agent = sdk_agent_script();
    let mut both =
        Editor::spawn(&mut sandbox.command(&["proxy", "--audit", audit, "--", "node", &agent]));
    let id = both.request("proxy/initialize", json!({"protocolVersion": 1}));
    let answer = both.next();
    assert_eq!(answer["id"], id);
    assert!(
        answer["error"]["data"]
            .as_str()
            .unwrap()
            .contains("started with an agent command"),
        "{answer}"
    );
    assert_eq!(both.wait(), Some(2));

    // No agent command, typed at a terminal: told at once.
    let (_terminal, its_input) = a_terminal();
    let output = sandbox
        .command(&["proxy", "--audit", audit])
        .stdin(its_input)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("acp-gate proxy needs the agent's command (acp-gate proxy -- AGENT [ARGS])"),
        "{said}"
    );
}

/// A new pseudo-terminal: its controlling end, and the terminal a process reads.
fn a_terminal() -> (File, File) {
    // SAFETY: a new pty's controlling end, owned by the File from here on.
    let terminal = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY) };
    assert!(
        terminal >= 0,
        "posix_openpt: {}",
        std::io::Error::last_os_error()
    );
    let terminal = unsafe { File::from_raw_fd(terminal) };
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: the descriptor is a pty's controlling end; `name` holds what ptsname_r writes.
    unsafe {
        assert_eq!(libc::grantpt(terminal.as_raw_fd()), 0);
        assert_eq!(libc::unlockpt(terminal.as_raw_fd()), 0);
        assert_eq!(
            libc::ptsname_r(terminal.as_raw_fd(), name.as_mut_ptr(), name.len()),
            0
        );
    }
    // SAFETY: ptsname_r wrote a NUL-terminated path.
    let name = unsafe { CStr::from_ptr(name.as_ptr()) };
    let input = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(name.to_str().unwrap())
        .unwrap();
    (terminal, input)
}
