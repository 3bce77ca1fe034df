//! `acp-gate proxy`: acp-gate between an editor and its agent. To the editor it is the agent,
//! to the agent it is the client. Newline-delimited JSON-RPC is relayed line by line, unchanged,
//! in both directions, except what the gate must see:
//!
//! - the agent's `session/request_permission`: the chain decides; allow and deny are answered
//!   here, an ask is forwarded to the editor with the handlers' reasons in the tool call's
//!   title, and the editor's answer relayed (an ask the editor cannot answer, answered with
//!   an error, goes to the review service when there is one: [`escalation`]);
//! - the agent's `fs/read_text_file`, `fs/write_text_file` and `terminal/create`: judged before
//!   they reach the editor; a denied one is answered with an error and never forwarded, an ask
//!   becomes a permission request of acp-gate's own to the editor;
//! - the editor's `session/set_mode` and `session/set_config_option`: judged as switches
//!   (`acp::switch`) before they reach the agent; a denied one is answered with an error and
//!   never forwarded, an ask becomes a permission request of acp-gate's own to the editor;
//! - the agent's reports of a switch it made by itself (and the mode a new session starts in):
//!   judged; one the chain does not allow is told to the editor in the session, and a denied
//!   one ends the turn (`session/cancel` to the agent);
//! - the editor's `session/cancel`: what acp-gate holds for that session is answered
//!   `cancelled`, then the cancel goes on to the agent.
//!
//! stdout carries protocol messages only; decisions are shown on stderr and recorded in the
//! audit log, including what the editor answered.
//!
//! Started without an agent, the proxy is a component of an ACP conductor's chain
//! ([`conductor`]): one stream, stdio, carries both sides, the successor's messages wrapped in
//! `proxy/successor` envelopes. Each line is unwrapped (or not) to the message of one side,
//! and then gated exactly as above; only how a message to or from the successor is framed
//! differs.

use std::collections::{HashMap, HashSet};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use agent_client_protocol::Error;
use anyhow::{Context, Result};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::runtime::Handle;
use tokio::sync::{oneshot, watch};

use super::conductor::{self, Spelling};
use super::escalation;
use super::gate::{self, Answer, Asked, Gate, Judged, Reply};
use super::own_hooks::{self, OwnHooks};
use super::session::{PROTOCOLS, speaks};
use super::stream::{Sink, relay_lines};
use crate::exit;
use crate::record::{ResolvedBy, subject};
use crate::request::{OptionKind, SessionContext};
use crate::service::escalator::Escalator;
use crate::verdict::Verdict;

/// How long the agent may take to exit once the editor has gone, before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(3);
/// The ids of acp-gate's own requests to the editor start with this; an agent request whose
/// id does too is refused, so that answers can never be confused.
const OWN_ID_PREFIX: &str = "acp-gate/";
/// A notification that withdraws a request, named by its id on one hop.
const CANCEL_REQUEST: &str = "$/cancel_request";
/// How to run acp-gate in a conductor's chain, for messages.
pub const IN_A_CHAIN: &str = r#"agent-client-protocol-conductor agent "acp-gate proxy" "AGENT""#;

/// Runs the proxy: spawns `agent`, relays between it and the editor on stdio, gates what it
/// asks, and returns the exit code. `workspace` is where requests of an unknown session run.
/// Without an agent, runs as a component of a conductor's chain (`serve_in_chain`).
///
/// Each direction is relayed by a thread of its own with blocking reads and writes (a read's
/// lines are written in one go); only the decisions run as tasks on the async runtime.
pub async fn serve(
    gate: Gate,
    escalator: Option<Escalator>,
    workspace: PathBuf,
    agent: &[String],
) -> Result<u8> {
    if agent.is_empty() {
        return serve_in_chain(gate, escalator, workspace).await;
    }
    super::session::check_command(agent).map_err(anyhow::Error::msg)?;
    // An adapter that decides some calls itself gets acp-gate as its hook for the session.
    let own_hooks = OwnHooks::listen(agent)?.map(Arc::new);
    let argv = own_hooks
        .as_ref()
        .map_or_else(|| agent.to_vec(), |own| own.argv(agent));
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .envs(own_hooks.as_ref().map(|own| own.env()).unwrap_or_default())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        // Its own process group, so that everything it started can be stopped with it.
        .process_group(0)
        .spawn()
        .with_context(|| format!("cannot start the agent `{}`", agent[0]))?;
    let group = child.id();
    let (Some(agent_in), Some(agent_out)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        anyhow::bail!("the agent's stdio could not be connected");
    };

    let editor = Arc::new(Sink::new(std::io::stdout()));
    let agent = Arc::new(Sink::new(agent_in));
    let successor = Successor::Process;
    let proxy = Proxy::new(gate, escalator, workspace, editor, agent, successor);
    if let Some(own) = &own_hooks {
        let _ = proxy.own_hooks.set(own.clone());
        if own.sees_every_mode() {
            proxy.gate.sees_every_call();
        }
        // Weakly: the proxy holds the hooks, which must not keep it alive.
        let proxy = Arc::downgrade(&proxy);
        own.serve(Arc::new(move |agent, input| {
            let proxy = proxy.clone();
            Box::pin(async move {
                let Some(proxy) = proxy.upgrade() else {
                    return crate::hook::reply::block(
                        crate::hook::reply::Shape::before_tool(agent),
                        "the session is over",
                    );
                };
                let gate = &proxy.gate;
                own_hooks::answer(gate, agent, &input, |asked| proxy.hooked(asked)).await
            })
        }));
    }
    let from_editor = tokio::task::spawn_blocking({
        let proxy = proxy.clone();
        move || proxy.relay_editor(std::io::stdin().lock())
    });
    let from_agent = tokio::task::spawn_blocking({
        let proxy = proxy.clone();
        move || proxy.relay_agent(agent_out)
    });

    // The agent's exit, watched apart from its stdout: what it left running may hold that open.
    let (exited_tx, mut exited) = watch::channel(None);
    tokio::task::spawn_blocking(move || {
        exited_tx.send_replace(Some(child.wait()));
    });

    let mut agent_exit = exited.clone();
    let code = tokio::select! {
        _ = from_editor => {
            // The editor is gone: the agent's stdin is closed (after what the editor sent
            // last), which asks it to exit.
            proxy.agent.close();
            if tokio::time::timeout(EXIT_GRACE, exited.wait_for(Option::is_some)).await.is_err() {
                proxy.gate.output.notice(&format!(
                    "the agent did not exit within {}s of the editor closing: stopping it",
                    EXIT_GRACE.as_secs()
                ));
            }
            exit::OK
        }
        status = agent_exit.wait_for(Option::is_some) => {
            let code = match status.as_deref() {
                Ok(Some(Ok(status))) if status.success() => exit::OK,
                Ok(Some(Ok(status))) => {
                    proxy.gate.output.error(&format!("the agent exited ({status})"));
                    exit::AGENT_FAILED
                }
                _ => {
                    proxy.gate.output.error("the agent could not be waited for");
                    exit::AGENT_FAILED
                }
            };
            drop(status);
            // What the agent wrote last still reaches the editor.
            stop_group(group, &mut exited).await;
            let _ = tokio::time::timeout(EXIT_GRACE, from_agent).await;
            proxy.editor.close();
            code
        }
        signal = exit::terminated() => signal,
    };
    stop_group(group, &mut exited).await;
    Ok(proxy.exit_code(code))
}

/// Runs the proxy as a component of a conductor's chain: the conductor is on stdio, and both
/// the editor's messages and the successor's come from it. Ends when the conductor closes
/// acp-gate's input (the chain is over) or acp-gate ends the chain (a session it cannot gate).
async fn serve_in_chain(
    gate: Gate,
    escalator: Option<Escalator>,
    workspace: PathBuf,
) -> Result<u8> {
    // One stream to the conductor carries what goes to the editor and to the successor.
    let conductor = Arc::new(Sink::new(std::io::stdout()));
    let successor = Successor::Conductor(Mutex::default());
    let editor = conductor.clone();
    let proxy = Proxy::new(gate, escalator, workspace, editor, conductor, successor);
    let relay = tokio::task::spawn_blocking({
        let proxy = proxy.clone();
        move || proxy.relay_conductor(std::io::stdin().lock())
    });
    let code = tokio::select! {
        _ = relay => exit::OK,
        signal = exit::terminated() => signal,
    };
    proxy.editor.close();
    Ok(proxy.exit_code(code))
}

/// A session the editor is opening (`session/new`) or reopening (`session/load`,
/// `session/resume`), until the agent answers.
struct Opening {
    method: String,
    cwd: PathBuf,
    /// The session reopened; a new one's id comes with the answer.
    session: Option<String>,
}

/// A request acp-gate holds while the editor decides.
struct Held {
    session_id: String,
    /// Who sent the request, and its id (raw JSON), which the answer must carry.
    origin: Side,
    agent_id: Box<RawValue>,
    judged: Judged,
    /// For a gated call asked about with a permission request of acp-gate's own: the call's
    /// line, forwarded to the editor if its user allows it.
    call_line: Option<String>,
}

struct Proxy {
    gate: Gate,
    /// The review service asks the editor cannot answer go to (`--escalate-to`).
    escalator: Option<Escalator>,
    /// The workspace of requests whose session is unknown (`--workspace`, else the directory
    /// the proxy started in).
    workspace: PathBuf,
    /// Each session's directory, from `session/new` and `session/load`.
    sessions: Mutex<HashMap<String, PathBuf>>,
    /// The editor's `session/new` requests not yet answered: id -> `cwd`.
    opening: Mutex<HashMap<String, Opening>>,
    /// Asks waiting for the editor, by the id the editor's answer will carry.
    held: Mutex<HashMap<String, Held>>,
    /// Ids whose answer from the editor must not reach the agent: acp-gate answered them
    /// already (a cancel), or they were acp-gate's own requests.
    answered: Mutex<HashSet<String>>,
    /// The ids (raw JSON) of the agent's gated requests not answered or forwarded yet.
    in_flight: Mutex<HashSet<String>>,
    /// Per session, how many `session/cancel`s the editor sent: a decision that finishes after
    /// one is answered `cancelled`.
    cancels: Mutex<HashMap<String, u64>>,
    /// The agent's requests it withdrew (`$/cancel_request`) while the chain decided them:
    /// answered `cancelled`.
    withdrawn: Mutex<HashSet<String>>,
    /// Told of every cancel and withdrawal, so that a wait for a reviewer can end.
    interrupted: tokio::sync::Notify,
    /// The id of the editor's `initialize` and the version it offered, until the agent answers.
    initialize: Mutex<Option<(String, u64)>>,
    /// The protocol version the editor and the agent agreed on (1 until they have).
    version: AtomicU64,
    /// Set when the agent answered `initialize` with a version acp-gate cannot gate: nothing
    /// more of the agent's reaches the editor.
    refused: AtomicBool,
    /// The exit code acp-gate ended the session with, when it did (0 until then).
    ended: AtomicU8,
    next_id: AtomicU64,
    /// The editor's input (acp-gate's stdout) and the agent's: its stdin, or, in a chain, the
    /// same stdout to the conductor.
    editor: Arc<Sink>,
    agent: Arc<Sink>,
    successor: Successor,
    /// In a chain: the ids of the requests sent to the successor, not answered yet. An answer
    /// comes back bare, on the one stream that carries the editor's answers too.
    to_successor: Mutex<HashSet<String>>,
    /// Where decisions run.
    runtime: Handle,
    /// The agent's own hooks for its sessions, when it has them (see [`own_hooks`]).
    own_hooks: OnceLock<Arc<OwnHooks>>,
    /// The hook calls decided as permission requests, waiting for their answer, by own id.
    hook_waiters: Mutex<HashMap<String, oneshot::Sender<Reply>>>,
}

/// Who is behind acp-gate: the agent it started, or the rest of a conductor's chain.
enum Successor {
    /// Messages go to the agent's stdin as they are.
    Process,
    /// Requests and notifications go to the conductor in `proxy/successor` envelopes, spelt
    /// as its `proxy/initialize` was; answers go bare.
    Conductor(Mutex<Spelling>),
}

impl Proxy {
    fn new(
        gate: Gate,
        escalator: Option<Escalator>,
        workspace: PathBuf,
        editor: Arc<Sink>,
        agent: Arc<Sink>,
        successor: Successor,
    ) -> Arc<Proxy> {
        Arc::new(Proxy {
            gate,
            escalator,
            workspace,
            sessions: Mutex::default(),
            opening: Mutex::default(),
            held: Mutex::default(),
            answered: Mutex::default(),
            in_flight: Mutex::default(),
            cancels: Mutex::default(),
            withdrawn: Mutex::default(),
            interrupted: tokio::sync::Notify::new(),
            initialize: Mutex::default(),
            version: AtomicU64::new(1),
            refused: AtomicBool::new(false),
            ended: AtomicU8::new(0),
            next_id: AtomicU64::new(1),
            editor,
            agent,
            successor,
            to_successor: Mutex::default(),
            runtime: Handle::current(),
            own_hooks: OnceLock::new(),
            hook_waiters: Mutex::default(),
        })
    }
}

/// Which end of the proxy a message came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Editor,
    Agent,
    /// One of the agent's own hooks (see [`own_hooks`]), asking as the agent would.
    Hook,
}

/// The parts of a JSON-RPC message the proxy routes by. Duplicate keys are an error (an
/// agent must not be able to show the gate one method and the editor another).
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
}

/// A line from the agent as one JSON-RPC message, strictly: one object, no key twice, a
/// method or an id.
fn agent_envelope(line: &str) -> Option<Envelope<'_>> {
    // A derived struct also reads from an array: a batch would pass for a response.
    if !line.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str::<Envelope<'_>>(line)
        .ok()
        .filter(|e| e.method.is_some() || e.id.is_some())
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

fn params_of(envelope: &Envelope<'_>) -> Value {
    envelope
        .params
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or(Value::Null)
}

impl Proxy {
    /// Editor -> agent, until the editor closes its end.
    fn relay_editor(self: &Arc<Self>, from: impl std::io::Read) {
        relay_lines(from, &self.agent, |line| {
            // The editor is trusted: what the proxy cannot read still goes to the agent.
            match std::str::from_utf8(line)
                .ok()
                .and_then(|text| Some((text, serde_json::from_str::<Envelope<'_>>(text).ok()?)))
            {
                Some((text, envelope)) => self.editor_to_agent(text, &envelope),
                None => true,
            }
        });
    }

    /// A message of the editor's: gated, or noted, and queued for the agent when it goes on.
    /// Always false: what the agent gets is queued here, framed for the successor.
    fn editor_to_agent(self: &Arc<Self>, text: &str, envelope: &Envelope<'_>) -> bool {
        if !self.from_editor(text, envelope) {
            return false;
        }
        let opens = matches!(
            envelope.method.as_deref(),
            Some("session/new" | "session/load" | "session/resume")
        );
        match self.own_hooks.get().filter(|_| opens) {
            // The session's Claude Code gets acp-gate as its hook.
            Some(own) => {
                let mut message: Value = serde_json::from_str(text).unwrap_or(Value::Null);
                if let Some(params) = message.get_mut("params") {
                    own.open_session(params);
                }
                let line = message.to_string();
                match serde_json::from_str::<Envelope<'_>>(&line) {
                    Ok(opened) => self.push_to_agent(&line, &opened),
                    Err(_) => self.push_to_agent(text, envelope),
                }
            }
            None => self.push_to_agent(text, envelope),
        }
        false
    }

    /// What the proxy does with a message of the editor's; true when it goes on to the agent.
    fn from_editor(self: &Arc<Self>, text: &str, envelope: &Envelope<'_>) -> bool {
        match (&envelope.method, envelope.id) {
            (Some(method), Some(id)) if method == "initialize" => {
                let offered = params_of(envelope)
                    .get("protocolVersion")
                    .and_then(Value::as_u64)
                    .unwrap_or(1);
                *lock(&self.initialize) = Some((id.get().to_owned(), offered));
            }
            (Some(method), Some(id)) if Spelling::of_initialize(method).is_some() => {
                // A conductor initializes its proxies so; this one has an agent of its own.
                self.misused(
                    id,
                    format!(
                        "acp-gate proxy was started with an agent command, and a conductor \
                         initialized it as a proxy of its chain (`{method}`): in a chain, start \
                         it without one ({IN_A_CHAIN})"
                    ),
                );
                return false;
            }
            (Some(method), Some(id))
                if method.starts_with("session/set_")
                    && let Some(asked) = self.gate.read_editor(method, &params_of(envelope)) =>
            {
                let gated = self.gated_as(Side::Editor, id, envelope, text, asked);
                let proxy = self.clone();
                self.runtime.spawn(async move { proxy.decide(gated).await });
                return false;
            }
            (Some(method), id)
                if matches!(
                    method.as_ref(),
                    "session/new" | "session/load" | "session/resume"
                ) =>
            {
                let params = params_of(envelope);
                let session = params.get("sessionId").and_then(Value::as_str);
                if let Some(cwd) = params.get("cwd").and_then(Value::as_str) {
                    if let Some(session) = session {
                        lock(&self.sessions).insert(session.to_owned(), cwd.into());
                    }
                    // The answer says the mode the session is in.
                    if let Some(id) = id {
                        let opening = Opening {
                            method: method.clone().into_owned(),
                            cwd: cwd.into(),
                            session: session.map(str::to_owned),
                        };
                        lock(&self.opening).insert(id.get().to_owned(), opening);
                    }
                }
            }
            (Some(method), None) if method == "session/cancel" => {
                if let Some(session) = params_of(envelope).get("sessionId").and_then(Value::as_str)
                {
                    self.cancel(session);
                }
            }
            (None, Some(id)) => {
                let key = id.get();
                let held = lock(&self.held).remove(key);
                if let Some(held) = held {
                    self.editor_answered(held, envelope.result);
                    return false;
                }
                if lock(&self.answered).remove(key) {
                    return false;
                }
            }
            _ => {}
        }
        true
    }

    /// Queues `line`, a message of the editor's or of acp-gate's (`envelope` is its reading),
    /// for the agent: as it is to an agent process; in a chain, a request or notification in
    /// a `proxy/successor` envelope. A cancellation names a request of this hop: it goes bare.
    fn push_to_agent(&self, line: &str, envelope: &Envelope<'_>) {
        let Successor::Conductor(spelling) = &self.successor else {
            return self.agent.push(line.as_bytes());
        };
        match envelope.method.as_deref() {
            Some(method) if method != CANCEL_REQUEST => {
                if let Some(id) = envelope.id {
                    lock(&self.to_successor).insert(id.get().to_owned());
                }
                let spelling = *lock(spelling);
                let wrapped = conductor::wrap(spelling, envelope.id, method, envelope.params);
                self.agent.push(wrapped.as_bytes());
            }
            _ => self.agent.push(line.as_bytes()),
        }
    }

    /// Sends `line`, a message of the editor's or of acp-gate's, to the agent now.
    fn send_to_agent(&self, line: &str) {
        match serde_json::from_str::<Envelope<'_>>(line) {
            Ok(envelope) => self.push_to_agent(line, &envelope),
            Err(_) => self.agent.push(line.as_bytes()),
        }
        let _ = self.agent.flush();
    }

    /// In a chain: conductor -> acp-gate, until the conductor closes its end. Each line is a
    /// message of the successor's (in an envelope, or the bare answer to a request acp-gate
    /// sent it) or of the editor's, and goes where that side's would.
    fn relay_conductor(self: &Arc<Self>, from: impl std::io::Read) {
        relay_lines(from, &self.editor, |line| {
            let Some((text, mut envelope)) = std::str::from_utf8(line)
                .ok()
                .and_then(|text| Some((text, agent_envelope(text)?)))
            else {
                // Whose it is cannot be told: it reaches neither side.
                let shown: String = String::from_utf8_lossy(line).chars().take(200).collect();
                self.gate.output.error(&format!(
                    "the conductor sent a line that is not one JSON-RPC message; not forwarded: {shown}"
                ));
                return false;
            };
            match (envelope.method.as_deref(), envelope.id) {
                (Some(method), id) if conductor::is_successor(method) => {
                    match conductor::unwrap(id, envelope.params) {
                        Ok(message) => {
                            if self.from_agent(message.as_bytes()) {
                                self.editor.push(message.as_bytes());
                            }
                        }
                        Err(why) => {
                            self.gate
                                .output
                                .error(&format!("the conductor sent {why}; not forwarded"));
                            if let Some(id) = id {
                                self.refuse(id, why);
                            }
                        }
                    }
                    false
                }
                (Some(method), Some(_)) if let Some(spelling) = Spelling::of_initialize(method) => {
                    if let Successor::Conductor(spelt) = &self.successor {
                        *lock(spelt) = spelling;
                    }
                    // To the successor, it is the editor's `initialize`.
                    envelope.method = Some("initialize".into());
                    self.editor_to_agent(text, &envelope)
                }
                (Some("initialize"), Some(id)) => {
                    self.misused(
                        id,
                        format!(
                            "acp-gate proxy was started without an agent command, so it runs as \
                             a proxy of an ACP conductor's chain, but its client sent `initialize`, \
                             not `proxy/initialize`: give the agent's command (acp-gate proxy -- \
                             AGENT [ARGS]), or run acp-gate in a conductor's chain ({IN_A_CHAIN})"
                        ),
                    );
                    false
                }
                // Cancellations on this hop name a request of either side's (the conductor
                // numbers both): the agent's are withdrawn, and any other goes on bare.
                (Some(CANCEL_REQUEST), None) => self.from_agent(line),
                (None, Some(id)) if lock(&self.to_successor).remove(id.get()) => {
                    self.from_agent(line)
                }
                _ => self.editor_to_agent(text, &envelope),
            }
        });
    }

    /// Refuses the editor's request `id` for a proxy started the wrong way: shows `why`, answers
    /// it with an error saying so, and ends with exit code 2.
    fn misused(&self, id: &RawValue, why: String) {
        self.gate.output.error(&why);
        self.end_with(id, Error::invalid_request().data(json!(why)), exit::USAGE);
    }

    /// Answers the editor's request `id` with `error` instead of relaying it, and ends the
    /// session with `code`: the agent's input is closed (in a chain, the conductor's).
    fn end_with(&self, id: &RawValue, error: Error, code: u8) {
        self.ended.store(code, Ordering::Relaxed);
        let _ = self
            .editor
            .send(&json!({ "jsonrpc": "2.0", "id": id, "error": error }).to_string());
        self.agent.close();
    }

    /// The exit code: the one acp-gate ended with, else `code` as the gate sees it.
    fn exit_code(&self, code: u8) -> u8 {
        match self.ended.load(Ordering::Relaxed) {
            0 => self.gate.exit_code(code),
            ended => ended,
        }
    }

    /// Agent -> editor, until the agent closes its end.
    fn relay_agent(self: &Arc<Self>, from: impl std::io::Read) {
        relay_lines(from, &self.editor, |line| self.from_agent(line));
    }

    /// What the proxy does with a line of the agent's; true when it goes on to the editor as
    /// it is.
    fn from_agent(self: &Arc<Self>, line: &[u8]) -> bool {
        let read = std::str::from_utf8(line)
            .ok()
            .and_then(|text| Some((text, agent_envelope(text)?)));
        if self.refused.load(Ordering::Relaxed) {
            return false;
        }
        let Some((text, envelope)) = read else {
            // What the gate cannot read could be a request it did not see: not forwarded.
            let shown: String = String::from_utf8_lossy(line).chars().take(200).collect();
            self.gate.output.error(&format!(
                "the agent sent a line that is not one JSON-RPC message; not forwarded: {shown}"
            ));
            return false;
        };
        match (&envelope.method, envelope.id) {
            (Some(method), None) if self.gate.read(method, Value::Null).is_some() => {
                // Without an id it cannot be answered, and an editor might still act on it.
                self.gate.output.error(&format!(
                    "the agent sent `{method}` without an id; not forwarded"
                ));
                return false;
            }
            (Some(method), None) if method == CANCEL_REQUEST => {
                return self.withdraw(&params_of(&envelope));
            }
            (Some(method), None) if method == "session/update" => {
                // Only tool calls and switches of mode are read; the rest is relayed
                // without a parse. (`\\u` too: a name spelt with escapes must not slip past.)
                let mentions = |what| envelope.params.is_some_and(|p| p.get().contains(what));
                let switch = mentions("current_mode_update") || mentions("config_option_update");
                if switch || mentions("tool_call") || mentions("\\u") {
                    let params = params_of(&envelope);
                    if let Some(update) = params.get("update") {
                        self.gate.observe(update);
                        let session = params.get("sessionId").and_then(Value::as_str);
                        if let Some(session) = session
                            && let Some(reported) = self.gate.reported(session, update)
                        {
                            self.forward_and_report(text, session, reported);
                            return false;
                        }
                    }
                }
            }
            (Some(method), Some(id)) => {
                if id.get().starts_with(&format!("\"{OWN_ID_PREFIX}")) {
                    self.refuse(
                        id,
                        format!(
                            "request ids starting with `{OWN_ID_PREFIX}` are reserved by acp-gate"
                        ),
                    );
                    return false;
                }
                if let Some(gated) = self.gated(method, id, &envelope, text) {
                    if !lock(&self.in_flight).insert(id.get().to_owned()) {
                        // Two answers on one id could be matched to either request: the
                        // second is refused and never decided; the first goes on.
                        self.gate.output.error(&format!(
                            "the agent sent `{method}` with id {}, which a request still in flight has; refused",
                            id.get()
                        ));
                        self.refuse(id, format!(
                            "request id {} is already in use by a request acp-gate has not answered",
                            id.get()
                        ));
                        return false;
                    }
                    let proxy = self.clone();
                    self.runtime.spawn(async move { proxy.decide(gated).await });
                    return false;
                }
            }
            (None, Some(id)) => {
                let initialize = lock(&self.initialize).take_if(|(init, _)| init == id.get());
                if let Some((_, offered)) = initialize {
                    return self.negotiated(id, &envelope, offered);
                }
                let opened = lock(&self.opening).remove(id.get());
                let result = || {
                    envelope
                        .result
                        .and_then(|r| serde_json::from_str::<Value>(r.get()).ok())
                };
                if let Some(opening) = opened
                    && let Some(result) = result()
                    && let Some(session) = opening
                        .session
                        .or_else(|| Some(result.get("sessionId")?.as_str()?.to_owned()))
                {
                    lock(&self.sessions).insert(session.clone(), opening.cwd);
                    if let Some(mode) = self.gate.opened(&session, &opening.method, &result) {
                        self.forward_and_report(text, &session, mode);
                        return false;
                    }
                }
            }
            _ => {}
        }
        true
    }

    /// The agent's answer to the editor's `initialize`, which offered version `offered`: the
    /// version they agreed on is noted (a newer one than offered, with a notice: the editor
    /// decides whether it goes on); one acp-gate cannot gate is refused to both sides (the
    /// editor gets an error instead of the answer, the agent's input is closed) and the proxy
    /// exits 4. True to forward it.
    fn negotiated(&self, id: &RawValue, envelope: &Envelope<'_>, offered: u64) -> bool {
        let result = envelope
            .result
            .and_then(|r| serde_json::from_str::<Value>(r.get()).ok());
        let Some(answered) = result.as_ref().and_then(|r| r.get("protocolVersion")) else {
            return true;
        };
        if let Some(version) = answered.as_u64().filter(|v| speaks(*v)) {
            if version > offered {
                self.gate.output.notice(&format!(
                    "the agent answered `initialize` with ACP protocol version {version} to the \
                     editor's offer of version {offered}; acp-gate gates the session in version \
                     {version} if the editor goes on"
                ));
            }
            self.version.store(version, Ordering::Relaxed);
            return true;
        }
        let message = format!(
            "the agent answered `initialize` with ACP protocol version {answered}; acp-gate \
             gates versions {} and {} and does not relay a session it cannot gate",
            PROTOCOLS.start(),
            PROTOCOLS.end()
        );
        self.gate.refuse_protocol(&message);
        self.refused.store(true, Ordering::Relaxed);
        let error = Error::internal_error().data(json!(message));
        self.end_with(id, error, exit::AGENT_FAILED);
        false
    }

    /// The agent withdraws a request (`$/cancel_request`): one the editor is asked about is
    /// withdrawn there too; one the chain is deciding is answered `cancelled` once decided.
    /// True to forward the notification as it is.
    fn withdraw(&self, params: &Value) -> bool {
        let Some(key) = params.get("requestId").map(Value::to_string) else {
            return true;
        };
        if lock(&self.held).contains_key(&key) {
            // Forwarded under the agent's own id: the editor answers it `cancelled`.
            return true;
        }
        let own = {
            let held = lock(&self.held);
            held.iter()
                .find(|(_, h)| h.origin == Side::Agent && h.agent_id.get() == key)
                .map(|(own, _)| own.clone())
        };
        if let Some(own) = own {
            let held = lock(&self.held).remove(&own);
            if let Some(held) = held {
                lock(&self.answered).insert(own.clone());
                let cancel = json!({"jsonrpc": "2.0", "method": CANCEL_REQUEST, "params": {"requestId": serde_json::from_str::<Value>(&own).unwrap_or_default()}});
                let _ = self.editor.send(&cancel.to_string());
                self.cancelled(held.origin, &held.agent_id, &held.judged);
            }
            return false;
        }
        if lock(&self.in_flight).contains(&key) {
            lock(&self.withdrawn).insert(key);
            self.interrupted.notify_waiters();
            return false;
        }
        true
    }

    /// A request of the agent's that the gate judges, read now (so that the tool calls
    /// announced before it are taken into account) and decided in a task of its own.
    fn gated(
        &self,
        method: &str,
        id: &RawValue,
        envelope: &Envelope<'_>,
        line: &str,
    ) -> Option<Gated> {
        let asked = self.gate.read(method, params_of(envelope))?;
        Some(self.gated_as(Side::Agent, id, envelope, line, asked))
    }

    /// A request from `origin` on its way to the chain.
    fn gated_as(
        &self,
        origin: Side,
        id: &RawValue,
        envelope: &Envelope<'_>,
        line: &str,
        asked: Asked,
    ) -> Gated {
        let params = params_of(envelope);
        let session_id = params
            .get("sessionId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        Gated {
            params,
            generation: self.generation(&session_id),
            ctx: self.ctx(&session_id),
            session_id,
            origin,
            id: id.to_owned(),
            asked,
            line: line.to_owned(),
        }
    }

    /// Forwards the agent's `line` that reports a switch, then judges the switch: the editor
    /// sees what the agent said before what acp-gate says of it.
    fn forward_and_report(self: &Arc<Self>, line: &str, session: &str, reported: Asked) {
        let _ = self.editor.send(line);
        self.report(session, reported);
    }

    /// A switch the agent reports making by itself (or the mode a session starts in), judged
    /// in a task: one the chain does not allow is told to the editor in the session, and a
    /// denied one ends the turn.
    fn report(self: &Arc<Self>, session: &str, reported: Asked) {
        let proxy = self.clone();
        let session = session.to_owned();
        self.runtime.spawn(async move {
            let judged = proxy.gate.judge(reported, &proxy.ctx(&session)).await;
            let outcome = judged.decision.outcome;
            let action = match outcome {
                Verdict::Allow => "went on",
                Verdict::Deny => "told the editor and ended the turn",
                _ => "told the editor",
            };
            tokio::task::block_in_place(|| {
                // Recorded first, as every decision is.
                proxy
                    .gate
                    .conclude(&judged, Answer::Reported(action.to_owned()), ResolvedBy::Chain);
                if outcome != Verdict::Allow {
                    let text = format!(
                        "acp-gate: the agent put itself in {}, which acp-gate does not let it \
                         switch to by itself ({}).",
                        judged.switched_to(),
                        judged.decision.reasons.join("; ")
                    );
                    proxy.gate.output.error(&text);
                    let chunk = json!({"jsonrpc": "2.0", "method": "session/update", "params": {
                        "sessionId": session,
                        "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": format!("\n\n⚠ {text}\n")}},
                    }});
                    let _ = proxy.editor.send(&chunk.to_string());
                }
                if outcome == Verdict::Deny {
                    proxy.cancel(&session);
                    let cancel = json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}});
                    proxy.send_to_agent(&cancel.to_string());
                }
            });
        });
    }

    /// Runs the chain on a gated request, then answers, forwards or asks. The answer is
    /// written from this task, which may block it: the runtime is told so.
    async fn decide(&self, gated: Gated) {
        // A tool call the agent's own hook brought already: the answer it got.
        if let Asked::Permission { params, .. } = &gated.asked
            && gated.origin == Side::Agent
            && let Some(allowed) = self.gate.hook_answer(params).await
        {
            let reply = Reply::Outcome(gate::outcome_by_kind(params, allowed));
            return tokio::task::block_in_place(|| self.answer(gated.origin, &gated.id, reply));
        }
        let judged = self.gate.judge(gated.asked.clone(), &gated.ctx).await;
        tokio::task::block_in_place(|| self.conclude(gated, judged));
    }

    /// A tool call the agent's own hook brought (see [`own_hooks`]): its permission request
    /// decided as the agent's would be (an ask goes to the editor, then a reviewer); whether it
    /// was let through, with the chain's verdict and reasons.
    async fn hooked(self: &Arc<Self>, mut asked: Asked) -> (bool, Verdict, Vec<String>) {
        let Asked::Permission { params, .. } = &mut asked else {
            unreachable!("a hook call is asked as a permission request")
        };
        // The agent's own id for its session may not be the one the editor knows: with one
        // session open, it is that one.
        let known = |id: &str| lock(&self.sessions).contains_key(id);
        let named = params["sessionId"].as_str().unwrap_or_default().to_owned();
        if !known(&named) {
            let sessions = lock(&self.sessions);
            if let [only] = sessions.keys().collect::<Vec<_>>()[..] {
                params["sessionId"] = only.clone().into();
            }
        }
        let params = &*params;
        let own_id = format!(
            "{OWN_ID_PREFIX}hook-{}",
            self.next_id.fetch_add(1, Ordering::Relaxed)
        );
        let message = json!({"jsonrpc": "2.0", "id": own_id, "method": "session/request_permission", "params": params});
        let line = message.to_string();
        let (sender, answered) = oneshot::channel();
        lock(&self.hook_waiters).insert(json!(own_id).to_string(), sender);
        let Ok(envelope) = serde_json::from_str::<Envelope<'_>>(&line) else {
            unreachable!("acp-gate's own message is one JSON-RPC message")
        };
        let Some(id) = envelope.id else {
            unreachable!("acp-gate's own request has an id")
        };
        let gated = self.gated_as(Side::Hook, id, &envelope, &line, asked.clone());
        let judged = self.gate.judge(asked, &gated.ctx).await;
        let (verdict, reasons) = (judged.decision.outcome, judged.decision.reasons.clone());
        tokio::task::block_in_place(|| self.conclude(gated, judged));
        let allowed = match answered.await {
            Ok(Reply::Outcome(outcome)) => own_hooks::allowed(&outcome),
            _ => false,
        };
        (allowed, verdict, reasons)
    }

    /// What a decision leads to, once made.
    fn conclude(&self, gated: Gated, judged: Judged) {
        let withdrawn = gated.origin == Side::Agent && lock(&self.withdrawn).remove(gated.id.get());
        if withdrawn || self.generation(&gated.session_id) != gated.generation {
            return self.cancelled(gated.origin, &gated.id, &judged);
        }
        let is_call = judged.asked.is_call();
        match (judged.decision.outcome, is_call) {
            (Verdict::Ask | Verdict::Abstain, false) => {
                let mut forwarded = gated.params.clone();
                annotate_title(&mut forwarded, &judged);
                let message = json!({"jsonrpc": "2.0", "id": gated.id, "method": "session/request_permission", "params": forwarded});
                self.hold(gated.id.get().to_owned(), &gated, judged, None, message);
            }
            (Verdict::Ask | Verdict::Abstain, true) => {
                let own_id = format!(
                    "{OWN_ID_PREFIX}{}",
                    self.next_id.fetch_add(1, Ordering::Relaxed)
                );
                let message = json!({"jsonrpc": "2.0", "id": own_id, "method": "session/request_permission", "params": own_ask(&own_id, &gated, &judged, self.version.load(Ordering::Relaxed))});
                let key = json!(own_id).to_string();
                let line = gated.line.clone();
                self.hold(key, &gated, judged, Some(line), message);
            }
            (_, false) => {
                let answer = Answer::by_chain(&judged.request, &judged.decision);
                let reply = self.gate.conclude(&judged, answer, ResolvedBy::Chain);
                self.answer(gated.origin, &gated.id, reply);
            }
            (verdict, true) => {
                let answer = match verdict {
                    Verdict::Allow => Answer::Allowed,
                    _ => Answer::Denied { message: None },
                };
                let reply = self.gate.conclude(&judged, answer, ResolvedBy::Chain);
                self.forward_or_answer(gated.origin, &gated.id, &gated.line, reply);
            }
        }
    }

    /// A call's reply: forwarded to the other side when it may go ahead (which answers it from
    /// then on), else answered.
    fn forward_or_answer(&self, origin: Side, id: &RawValue, line: &str, reply: Reply) {
        match (reply, origin) {
            (Reply::Proceed, Side::Agent) => {
                lock(&self.in_flight).remove(id.get());
                let _ = self.editor.send(line);
            }
            (Reply::Proceed, Side::Editor) => self.send_to_agent(line),
            (reply, origin) => self.answer(origin, id, reply),
        }
    }

    /// Keeps an ask until the editor answers `message` (or the session is cancelled).
    fn hold(
        &self,
        key: String,
        gated: &Gated,
        judged: Judged,
        call_line: Option<String>,
        message: Value,
    ) {
        self.gate.output.notice(&format!(
            "asking the editor: {} ({})",
            subject(&judged.request),
            judged.decision.reasons.join("; ")
        ));
        lock(&self.held).insert(
            key.clone(),
            Held {
                session_id: gated.session_id.clone(),
                origin: gated.origin,
                agent_id: gated.id.clone(),
                judged,
                call_line,
            },
        );
        // A cancel that came while the chain was deciding.
        if self.generation(&gated.session_id) != gated.generation {
            let held = lock(&self.held).remove(&key);
            if let Some(held) = held {
                self.cancelled(held.origin, &held.agent_id, &held.judged);
            }
            return;
        }
        let _ = self.editor.send(&message.to_string());
    }

    /// The editor answered an ask acp-gate forwarded or made; with an error (it cannot answer),
    /// a reviewer may, when there is a review service.
    fn editor_answered(self: &Arc<Self>, held: Held, result: Option<&RawValue>) {
        if result.is_none() && self.escalator.is_some() {
            let proxy = self.clone();
            // Cancels from now on end the wait.
            let generation = self.generation(&held.session_id);
            self.runtime
                .spawn(async move { proxy.escalate(held, generation).await });
            return;
        }
        let outcome = result
            .and_then(|r| serde_json::from_str::<Value>(r.get()).ok())
            .and_then(|r| r.get("outcome").cloned())
            .unwrap_or(Value::Null);
        let by = ResolvedBy::Editor;
        match &held.call_line {
            // The editor's answer goes to the agent as it is: its option ids are the agent's.
            None => {
                let reply = self
                    .gate
                    .conclude(&held.judged, Answer::Relayed(outcome), by);
                self.answer(held.origin, &held.agent_id, reply);
            }
            Some(line) => {
                let allowed = outcome.get("outcome").and_then(Value::as_str) == Some("selected")
                    && outcome.get("optionId").and_then(Value::as_str) == Some("allow");
                let answer = match allowed {
                    true => Answer::Allowed,
                    false => Answer::Denied {
                        message: Some("rejected in the editor".to_owned()),
                    },
                };
                let reply = self.gate.conclude(&held.judged, answer, by);
                self.forward_or_answer(held.origin, &held.agent_id, line, reply);
            }
        }
    }

    /// An ask the editor could not answer, sent to the review service (see [`escalation`]):
    /// the agent's request waits for the reviewer's decision (with `--wait`), and is denied
    /// when nobody decides or the service cannot be reached; a cancel of its session since
    /// `generation`, or the agent withdrawing it, ends the wait and answers it `cancelled`.
    async fn escalate(&self, held: Held, generation: u64) {
        let Some(escalator) = &self.escalator else {
            unreachable!("only called with a review service")
        };
        self.gate.output.notice(&format!(
            "the editor could not answer: {} goes to the review service {}",
            subject(&held.judged.request),
            escalator.client.url()
        ));
        let nobody = "the editor did not answer it (it offered no choice, or cannot ask anyone)";
        let review = escalation::review(&self.gate, escalator, &held.judged, nobody);
        tokio::pin!(review);
        let reviewed = loop {
            let interrupted = self.interrupted.notified();
            let withdrawn =
                held.origin == Side::Agent && lock(&self.withdrawn).remove(held.agent_id.get());
            if withdrawn || self.generation(&held.session_id) != generation {
                let origin = held.origin;
                return tokio::task::block_in_place(|| {
                    self.cancelled(origin, &held.agent_id, &held.judged)
                });
            }
            tokio::select! {
                reviewed = &mut review => break reviewed,
                () = interrupted => {}
            }
        };
        let permission = held.call_line.is_none().then_some(&held.judged.request);
        let (answer, by) = reviewed.answer(permission);
        tokio::task::block_in_place(|| {
            let reply = self.gate.conclude(&held.judged, answer, by);
            match &held.call_line {
                None => self.answer(held.origin, &held.agent_id, reply),
                Some(line) => self.forward_or_answer(held.origin, &held.agent_id, line, reply),
            }
        });
    }

    /// `session/cancel` from the editor: every ask held for the session is answered
    /// `cancelled`, and the decisions under way will be.
    fn cancel(&self, session: &str) {
        *lock(&self.cancels).entry(session.to_owned()).or_default() += 1;
        self.interrupted.notify_waiters();
        let cancelled: Vec<(String, Held)> = {
            let mut held = lock(&self.held);
            let keys: Vec<String> = held
                .iter()
                .filter(|(_, h)| h.session_id == session)
                .map(|(k, _)| k.clone())
                .collect();
            keys.into_iter()
                .filter_map(|k| held.remove(&k).map(|h| (k, h)))
                .collect()
        };
        for (key, held) in cancelled {
            // The editor may still answer the ask; that answer must not reach the agent.
            lock(&self.answered).insert(key);
            self.cancelled(held.origin, &held.agent_id, &held.judged);
        }
    }

    /// Answers `cancelled`: a permission request's outcome, or a call's error.
    fn cancelled(&self, origin: Side, id: &RawValue, judged: &Judged) {
        let reply = self
            .gate
            .conclude(judged, Answer::Cancelled, ResolvedBy::Cancelled);
        self.answer(origin, id, reply);
    }

    /// Answers a gated request of the agent's (which is then no longer in flight) or of the
    /// editor's.
    fn answer(&self, origin: Side, id: &RawValue, reply: Reply) {
        let message = match reply {
            Reply::Outcome(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Reply::Error(error) => json!({ "jsonrpc": "2.0", "id": id, "error": error }),
            Reply::Proceed => unreachable!("a call that proceeds is forwarded, not answered"),
        };
        let to = match origin {
            Side::Agent => {
                lock(&self.in_flight).remove(id.get());
                &self.agent
            }
            Side::Editor => &self.editor,
            Side::Hook => {
                if let Some(waiter) = lock(&self.hook_waiters).remove(id.get()) {
                    let _ = waiter.send(match message.get("result") {
                        Some(result) => Reply::Outcome(result.clone()),
                        None => Reply::Error(Error::request_cancelled()),
                    });
                }
                return;
            }
        };
        let _ = to.send(&message.to_string());
    }

    /// Refuses a request of the agent's that is not judged at all (its id is reserved or
    /// already in flight): an `invalid_request` error saying why.
    fn refuse(&self, id: &RawValue, why: String) {
        let error = Error::invalid_request().data(json!(why));
        let message = json!({ "jsonrpc": "2.0", "id": id, "error": error });
        let _ = self.agent.send(&message.to_string());
    }

    fn generation(&self, session: &str) -> u64 {
        lock(&self.cancels).get(session).copied().unwrap_or(0)
    }

    fn ctx(&self, session: &str) -> SessionContext {
        let workspace = lock(&self.sessions)
            .get(session)
            .cloned()
            .unwrap_or_else(|| self.workspace.clone());
        SessionContext::for_workspace(session, &workspace)
    }
}

/// A request of the agent's on its way through the chain.
struct Gated {
    session_id: String,
    /// Who sent it: the agent (a permission request, a gated call) or the editor (a switch).
    origin: Side,
    id: Box<RawValue>,
    /// What it asks (or why its params are unreadable).
    asked: Asked,
    params: Value,
    ctx: SessionContext,
    /// The session's cancel count when the request arrived.
    generation: u64,
    /// The request as the agent sent it.
    line: String,
}

/// The handlers' reasons, where the editor shows them: after the tool call's title.
fn annotate_title(params: &mut Value, judged: &Judged) {
    let (request, decision) = (&judged.request, &judged.decision);
    if decision.reasons.is_empty() {
        return;
    }
    let title = if request.title.is_empty() {
        "Permission"
    } else {
        &request.title
    };
    let annotated = format!("{title} — acp-gate: {}", decision.reasons.join("; "));
    // v1: the tool call's title; v2: the request's own (its subject, known or not, is kept).
    let holder = match params.get("toolCall") {
        Some(_) => params.get_mut("toolCall"),
        None => Some(params),
    };
    if let Some(holder) = holder.and_then(Value::as_object_mut) {
        holder.insert("title".into(), Value::String(annotated));
    }
}

/// acp-gate's own permission request for a gated call the chain asks about, in the protocol
/// `version` of the session.
fn own_ask(own_id: &str, gated: &Gated, judged: &Judged, version: u64) -> Value {
    let request = &judged.request;
    let mut tool_call = json!({
        "toolCallId": own_id,
        "title": request.title,
        "kind": request.kind.as_str(),
        "status": "pending",
        "rawInput": gated.params,
        "locations": request.paths.iter().map(|p| json!({ "path": p.absolute })).collect::<Vec<_>>(),
        "content": request.diffs.iter().map(|d| json!({ "type": "diff", "path": d.path, "oldText": d.old_text, "newText": d.new_text })).collect::<Vec<_>>(),
    });
    let options = json!([
        { "optionId": "allow", "name": "Allow", "kind": OptionKind::AllowOnce },
        { "optionId": "reject", "name": "Reject", "kind": OptionKind::RejectOnce },
    ]);
    let mut params = match version {
        1 => json!({
            "sessionId": gated.session_id,
            "toolCall": tool_call.take(),
            "options": options,
        }),
        _ => json!({
            "sessionId": gated.session_id,
            "title": request.title,
            "subject": { "type": "tool_call", "toolCall": tool_call.take() },
            "options": options,
        }),
    };
    annotate_title(&mut params, judged);
    params
}

/// Stops the agent's process group: the agent, if it still runs, and what it left running.
async fn stop_group(
    group: u32,
    exited: &mut watch::Receiver<Option<std::io::Result<std::process::ExitStatus>>>,
) {
    let group = -(group as i32);
    // SAFETY: kill(2) on the agent's own process group, created at spawn.
    unsafe { libc::kill(group, libc::SIGTERM) };
    let _ = tokio::time::timeout(EXIT_GRACE, exited.wait_for(Option::is_some)).await;
    // SAFETY: as above; for what ignored SIGTERM.
    unsafe { libc::kill(group, libc::SIGKILL) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_line_is_read_strictly() {
        let method = |line| agent_envelope(line).and_then(|e| e.method.map(|m| m.into_owned()));
        assert_eq!(
            method(r#"{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{}}"#)
                .as_deref(),
            Some("session/request_permission")
        );
        // Escapes are decoded as the editor would decode them.
        assert_eq!(
            method(r#"{"id":1,"method":"\u0066s/write_text_file"}"#).as_deref(),
            Some("fs/write_text_file")
        );
        // The gate and the editor must not read different methods out of one line.
        assert!(agent_envelope(r#"{"id":1,"method":"x","method":"fs/write_text_file"}"#).is_none());
        for not_one_message in [
            "",
            "hello",
            "[1]",
            r#"[{"id":1,"method":"fs/read_text_file"}]"#,
            "{}",
            r#"{"id":1,"method":7}"#,
        ] {
            assert!(
                agent_envelope(not_one_message).is_none(),
                "{not_one_message}"
            );
        }
    }
}
