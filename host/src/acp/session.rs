//! The client side of one ACP session: spawn the agent, `initialize` (protocol v1 advertising
//! `fs` and `terminal`, or v2), `session/new` in the workspace (or `session/resume` /
//! `session/load` of an earlier session), then one prompt turn after another, with Ctrl-C as
//! `session/cancel`. Messages are built and read as JSON, so that one code path speaks both
//! protocol versions. Every way the agent can fail (exit at once, never answer, send
//! garbage, die mid-turn) ends the run with a clear message and an exit code, never a hang.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, FileSystemCapabilities, Implementation, InitializeRequest,
};
use agent_client_protocol::{
    AcpAgent, AcpAgentConfig, Agent, Client as ClientRole, ConnectionTo, Error, LineDirection,
    UntypedMessage,
};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use super::ask::LineInput;
use super::client::Client;
use super::own_hooks::{self, OwnHooks};
use crate::exit;

/// Where the prompts come from.
pub enum Prompts {
    /// One turn (`-p TEXT`, or all of stdin when it is not a terminal).
    Once(String),
    /// A prompt per line typed at the terminal, until end of input or `/quit`.
    Interactive(Arc<LineInput>),
}

pub struct SessionSpec {
    /// The agent's argv.
    pub agent: Vec<String>,
    pub workspace: PathBuf,
    pub prompts: Prompts,
    /// How long `initialize` and `session/new` may take.
    pub init_timeout: Duration,
    /// The ACP protocol version offered (1 or 2).
    pub protocol: u16,
    /// An earlier session to resume instead of starting one.
    pub resume: Option<String>,
}

/// Elicitations `run` can put to a person (or decline with nobody to ask): forms and URLs.
static ELICITATION: std::sync::LazyLock<Value> =
    std::sync::LazyLock::new(|| json!({ "form": {}, "url": {} }));

/// The protocol versions acp-gate speaks.
pub const PROTOCOLS: std::ops::RangeInclusive<u16> = 1..=2;

/// Whether acp-gate speaks protocol `version` (as an `initialize` answer gives it).
pub fn speaks(version: u64) -> bool {
    u16::try_from(version).is_ok_and(|v| PROTOCOLS.contains(&v))
}

/// Where the session is, to explain a connection that ends under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Initialize,
    NewSession,
    Idle,
    Turn,
    /// The session ended with this exit code; what the agent does afterwards does not matter.
    Done(u8),
}

impl Phase {
    fn describe(self) -> &'static str {
        match self {
            Phase::Initialize => "before answering `initialize`",
            Phase::NewSession => "before answering `session/new`",
            Phase::Idle => "between turns",
            Phase::Turn => "in the middle of a turn",
            Phase::Done(_) => "after the session",
        }
    }
}

/// Why the session stopped early.
enum Stop {
    /// The agent failed; the message says how. Exit code 4.
    Agent(String),
    /// The agent answered with a JSON-RPC error. Exit code 1.
    Refused(String),
    /// A second Ctrl-C.
    Interrupted,
}

/// Runs the session; returns the exit code (see [`crate::exit`]).
pub async fn run_session(client: Arc<Client>, spec: SessionSpec) -> u8 {
    if let Err(message) = check_command(&spec.agent) {
        client.gate.output.error(&message);
        return exit::ERROR;
    }
    let phase = Arc::new(Mutex::new(Phase::Initialize));
    let (broken_tx, broken_rx) = watch::channel(None::<String>);
    let broken_tx = Arc::new(broken_tx);

    // An adapter that decides some calls itself gets acp-gate as its hook for the session.
    let own_hooks = match OwnHooks::listen(&spec.agent) {
        Ok(own_hooks) => own_hooks.map(Arc::new),
        Err(error) => {
            client.gate.output.error(&format!("{error:#}"));
            return exit::ERROR;
        }
    };
    let argv = own_hooks
        .as_ref()
        .map_or_else(|| spec.agent.clone(), |own| own.argv(&spec.agent));
    let mut config = AcpAgentConfig::new(&argv[0]).args(argv[1..].iter().cloned());
    if let Some(own) = &own_hooks {
        config = config.envs(own.env());
        if own.sees_every_mode() {
            client.gate.sees_every_call();
        }
        let client = client.clone();
        own.serve(Arc::new(move |agent, input| {
            let client = client.clone();
            Box::pin(async move {
                let gate = &client.gate;
                own_hooks::answer(gate, agent, &input, |asked| client.hooked(asked)).await
            })
        }));
    }
    let agent = AcpAgent::new(config).with_debug({
        let client = client.clone();
        move |line, direction| match direction {
            LineDirection::Stderr => client.gate.output.agent_stderr(line),
            LineDirection::Stdout => {
                if let Some(problem) = malformed(line) {
                    broken_tx.send_if_modified(|slot| {
                        slot.is_none().then(|| *slot = Some(problem)).is_some()
                    });
                }
            }
            LineDirection::Stdin => {}
        }
    });

    // The raw builder: no protocol-version guard of the SDK's. acp-gate reads `initialize`
    // itself, so that it can speak v1 or v2 and say clearly what it cannot.
    let result = agent_client_protocol::Builder::new(ClientRole)
        .name("acp-gate")
        .on_receive_request(
            {
                let client = client.clone();
                async move |message: UntypedMessage, responder, cx: ConnectionTo<Agent>| {
                    client.on_request(message, responder, &cx)
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            {
                let client = client.clone();
                async move |message: UntypedMessage, cx: ConnectionTo<Agent>| {
                    client.on_notification(message, &cx).await;
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_with(agent, {
            let (client, phase) = (client.clone(), phase.clone());
            let own_hooks = own_hooks.clone();
            async move |cx: ConnectionTo<Agent>| {
                let code = match drive(&cx, &client, spec, own_hooks.as_deref(), &phase, broken_rx)
                    .await
                {
                    Ok(code) => code,
                    Err(Stop::Agent(message)) => {
                        client.gate.output.error(&message);
                        exit::AGENT_FAILED
                    }
                    Err(Stop::Refused(message)) => {
                        client.gate.output.error(&message);
                        exit::ERROR
                    }
                    Err(Stop::Interrupted) => {
                        client.gate.output.notice("interrupted");
                        exit::INTERRUPTED
                    }
                };
                *phase.lock().unwrap_or_else(|p| p.into_inner()) = Phase::Done(code);
                Ok(code)
            }
        })
        .await;
    client.shutdown();
    let phase = *phase.lock().unwrap_or_else(|p| p.into_inner());
    match (result, phase) {
        (Ok(code), _) => code,
        (Err(error), Phase::Done(code)) => {
            client.gate.output.notice(&format!(
                "the agent did not end cleanly: {}",
                describe(&error)
            ));
            code
        }
        (Err(error), phase) => {
            client.gate.output.error(&format!(
                "the agent exited {}: {}",
                phase.describe(),
                describe(&error)
            ));
            exit::AGENT_FAILED
        }
    }
}

async fn drive(
    cx: &ConnectionTo<Agent>,
    client: &Client,
    spec: SessionSpec,
    own_hooks: Option<&OwnHooks>,
    phase: &Mutex<Phase>,
    mut broken: watch::Receiver<Option<String>>,
) -> Result<u8, Stop> {
    let set_phase = |p| *phase.lock().unwrap_or_else(|e| e.into_inner()) = p;
    let mut interrupts = interrupts();
    let limit = spec.init_timeout;

    let offered = spec.protocol;
    let initialize = match offered {
        1 => {
            let capabilities = ClientCapabilities::new()
                .fs(FileSystemCapabilities::new()
                    .read_text_file(true)
                    .write_text_file(true))
                .terminal(true);
            let initialize = InitializeRequest::new(ProtocolVersion::V1)
                .client_capabilities(capabilities)
                .client_info(Implementation::new("acp-gate", env!("CARGO_PKG_VERSION")));
            let mut initialize = serde_json::to_value(initialize).unwrap_or_default();
            initialize["clientCapabilities"]["elicitation"] = ELICITATION.clone();
            initialize
        }
        // v2 has no client-side file or terminal methods: the agent asks permission for all.
        version => json!({
            "protocolVersion": version,
            "info": { "name": "acp-gate", "version": env!("CARGO_PKG_VERSION") },
            "capabilities": { "elicitation": *ELICITATION },
        }),
    };
    let agent = setup_step(
        Phase::Initialize,
        "initialize",
        limit,
        request(cx, "initialize", initialize),
        &mut broken,
        &mut interrupts,
    )
    .await?;
    // An agent that answers a newer version than offered speaks only that one: acp-gate goes
    // on in it when it can gate it (v2 has no client methods: everything is asked).
    let version = match agent.get("protocolVersion").and_then(Value::as_u64) {
        Some(version) if speaks(version) => {
            if version > u64::from(offered) {
                client.gate.output.notice(&format!(
                    "the agent answered `initialize` with ACP protocol version {version} to \
                     acp-gate's offer of version {offered}: going on in version {version} \
                     (--protocol {version} offers it from the start)"
                ));
            }
            version as u16
        }
        _ => {
            let answered = agent.get("protocolVersion").unwrap_or(&Value::Null);
            return Err(Stop::Agent(format!(
                "the agent answered `initialize` with ACP protocol version {answered}; acp-gate \
                 offered version {offered} (it speaks versions {} and {})",
                PROTOCOLS.start(),
                PROTOCOLS.end()
            )));
        }
    };

    set_phase(Phase::NewSession);
    let workspace = spec.workspace.display().to_string();
    let resume = match (&spec.resume, resume_method(version, &agent)) {
        (Some(session), Ok(method)) => Some((method, session)),
        (Some(session), Err(why)) => {
            client.gate.output.notice(&format!(
                "{why}: session {session} is not resumed, a new one is started"
            ));
            None
        }
        (None, _) => None,
    };
    let (method, mut params) = match resume {
        None => ("session/new", json!({ "cwd": workspace, "mcpServers": [] })),
        Some((method, session)) => (
            method,
            json!({ "sessionId": session, "cwd": workspace, "mcpServers": [] }),
        ),
    };
    if let Some(own_hooks) = own_hooks {
        own_hooks.open_session(&mut params);
    }
    let session = setup_step(
        Phase::NewSession,
        method,
        limit,
        request(cx, method, params),
        &mut broken,
        &mut interrupts,
    )
    .await?;
    let session_id = match (resume, session.get("sessionId").and_then(Value::as_str)) {
        (Some((_, resumed)), _) => resumed.clone(),
        (None, Some(id)) => id.to_owned(),
        (None, None) => {
            return Err(Stop::Agent(
                "the agent answered `session/new` without a `sessionId`".to_owned(),
            ));
        }
    };
    client.set_session_id(&session_id);
    if let Some(orchestration) = client.gate.orchestration()
        && let Err(error) = orchestration.opened(&session_id)
    {
        client.gate.output.error(&format!("{error:#}"));
    }
    // An agent configured to start in a mode where it does not ask gets no prompt.
    if let Some(mode) = client.gate.opened(&session_id, method, &session)
        && !client.report(mode, "sent no prompt").await
    {
        return Ok(exit::ESCALATED);
    }

    match spec.prompts {
        Prompts::Once(text) => {
            set_phase(Phase::Turn);
            let ended = turn(cx, client, &session_id, text, &mut broken, &mut interrupts).await?;
            // Only the user's Ctrl-C makes a cancelled turn an interrupted run: an agent that
            // cancels its own turn after a refusal (Codex's adapter does), or a turn acp-gate
            // ended, is a turn that ended.
            if ended.interrupted && ended.stop == "cancelled" {
                return Ok(exit::INTERRUPTED);
            }
        }
        Prompts::Interactive(input) => loop {
            set_phase(Phase::Idle);
            let style = client.gate.output.stderr_style();
            eprint!("{} ", style.bold("›"));
            let line = tokio::select! {
                line = input.read_line() => line,
                Some(()) = interrupts.recv() => return Err(Stop::Interrupted),
                problem = broken.wait_for(Option::is_some) => return Err(Stop::Agent(broken_message(problem))),
            };
            let Some(line) = line else { break };
            let line = line.trim();
            match line {
                "" => continue,
                "/quit" | "/exit" => break,
                "/help" => {
                    eprintln!(
                        "type a prompt for the agent, or: /rules (what \"always\" remembered), /forget N, /quit"
                    );
                    continue;
                }
                "/rules" => {
                    client.with_rules(|rules| {
                        if rules.list().is_empty() {
                            eprintln!("no session rules yet");
                        }
                        for (n, rule) in rules.list().iter().enumerate() {
                            eprintln!("  {}  {}", n + 1, rule.describe());
                        }
                    });
                    continue;
                }
                _ => {}
            }
            if let Some(n) = line.strip_prefix("/forget ") {
                let revoked = n
                    .trim()
                    .parse::<usize>()
                    .ok()
                    .and_then(|n| client.with_rules(|rules| rules.revoke(n.wrapping_sub(1))));
                match revoked {
                    Some(rule) => eprintln!("forgot {}", rule.describe()),
                    None => eprintln!("no rule {n} (see /rules)"),
                }
                continue;
            }
            set_phase(Phase::Turn);
            turn(
                cx,
                client,
                &session_id,
                line.to_owned(),
                &mut broken,
                &mut interrupts,
            )
            .await?;
        },
    }
    Ok(if client.gate.escalations() > 0 {
        exit::ESCALATED
    } else {
        exit::OK
    })
}

/// How a turn ended: the agent's stop reason, and whether the user interrupted it.
struct Ended {
    stop: String,
    interrupted: bool,
}

/// One prompt turn. The first Ctrl-C sends `session/cancel` (pending permission requests are
/// answered `cancelled`), the second ends the run.
async fn turn(
    cx: &ConnectionTo<Agent>,
    client: &Client,
    session_id: &str,
    text: String,
    broken: &mut watch::Receiver<Option<String>>,
    interrupts: &mut mpsc::UnboundedReceiver<()>,
) -> Result<Ended, Stop> {
    client.begin_turn();
    let prompt = json!({
        "sessionId": session_id,
        "prompt": [{ "type": "text", "text": text }],
    });
    let response = request(cx, "session/prompt", prompt);
    tokio::pin!(response);
    let mut cancelling = false;
    let result = loop {
        tokio::select! {
            result = &mut response => break result,
            Some(()) = interrupts.recv() => {
                if cancelling {
                    return Err(Stop::Interrupted);
                }
                cancelling = true;
                client.cancel_turn();
                let cancel = UntypedMessage::new("session/cancel", json!({ "sessionId": session_id }));
                if let Ok(cancel) = cancel {
                    let _ = cx.send_notification(cancel);
                }
                client.gate.output.notice("cancelling the turn (press Ctrl-C again to quit)");
            }
            problem = broken.wait_for(Option::is_some) => {
                return Err(Stop::Agent(broken_message(problem)));
            }
        }
    };
    match result {
        Ok(response) => {
            let stop = match response.get("stopReason") {
                Some(Value::String(stop)) => stop.clone(),
                other => other.map_or_else(|| "(none)".to_owned(), Value::to_string),
            };
            client.gate.output.stop(&stop);
            Ok(Ended {
                stop,
                interrupted: cancelling,
            })
        }
        Err(error) => Err(failure(Phase::Turn, "session/prompt", &error)),
    }
}

/// Sends a request built as JSON; its result as JSON.
async fn request(cx: &ConnectionTo<Agent>, method: &str, params: Value) -> Result<Value, Error> {
    cx.send_request(UntypedMessage::new(method, params)?)
        .block_task()
        .await
}

/// How an earlier session is reopened: v2's `session/resume`; in v1, `session/resume` where
/// the agent offers it (no replay), else `session/load` (the agent replays the session).
fn resume_method(version: u16, agent: &Value) -> Result<&'static str, String> {
    let capabilities = agent.get("agentCapabilities");
    let offers = |pointer: &str| {
        capabilities
            .and_then(|c| c.pointer(pointer))
            .is_some_and(|v| !v.is_null() && v != &Value::Bool(false))
    };
    match version {
        1 if offers("/sessionCapabilities/resume") => Ok("session/resume"),
        1 if offers("/loadSession") => Ok("session/load"),
        1 => Err(
            "the agent cannot resume a session: its `initialize` answer offers neither \
                  `sessionCapabilities.resume` nor `loadSession`"
                .to_owned(),
        ),
        _ => Ok("session/resume"),
    }
}

/// `initialize` or `session/new`: bounded in time, and given up on when the agent breaks the
/// protocol or the user presses Ctrl-C.
async fn setup_step<T>(
    phase: Phase,
    method: &str,
    limit: Duration,
    response: impl Future<Output = Result<T, Error>>,
    broken: &mut watch::Receiver<Option<String>>,
    interrupts: &mut mpsc::UnboundedReceiver<()>,
) -> Result<T, Stop> {
    tokio::select! {
        result = tokio::time::timeout(limit, response) => match result {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(failure(phase, method, &error)),
            Err(_) => Err(Stop::Agent(format!(
                "the agent did not answer `{method}` within {}s (--init-timeout)",
                limit.as_secs_f64()
            ))),
        },
        problem = broken.wait_for(Option::is_some) => Err(Stop::Agent(broken_message(problem))),
        Some(()) = interrupts.recv() => Err(Stop::Interrupted),
    }
}

/// Why `method`, sent in `phase`, got no answer. The agent's going away is worded as when its
/// exit is noticed first (in `run`), so that the message does not depend on which comes first.
fn failure(phase: Phase, method: &str, error: &Error) -> Stop {
    if agent_client_protocol::is_incoming_transport_closed(error)
        || agent_client_protocol::is_connection_terminated(error)
    {
        Stop::Agent(format!(
            "the agent exited (or closed the connection) {}: {}",
            phase.describe(),
            describe(error)
        ))
    } else {
        Stop::Refused(format!(
            "the agent answered `{method}` with an error: {}",
            describe(error)
        ))
    }
}

fn broken_message(
    problem: Result<watch::Ref<'_, Option<String>>, watch::error::RecvError>,
) -> String {
    match problem {
        Ok(problem) => problem.clone().unwrap_or_default(),
        Err(_) => "the agent broke the protocol".to_owned(),
    }
}

/// An error in one line: its message and, when there is one, its data.
fn describe(error: &Error) -> String {
    match &error.data {
        Some(Value::String(data)) => format!("{} ({})", error.message, data.trim()),
        Some(data) if !data.is_null() => format!("{} ({data})", error.message),
        _ => error.message.clone(),
    }
}

/// Why a line the agent wrote to stdout is not JSON-RPC, if it is not.
fn malformed(line: &str) -> Option<String> {
    let line = line.trim();
    if line.is_empty() {
        return None;
    }
    let shown: String = line.chars().take(200).collect();
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(message)) if message.get("jsonrpc") == Some(&Value::from("2.0")) => None,
        Ok(_) => Some(format!(
            "the agent broke the protocol: it sent a JSON value that is not a JSON-RPC 2.0 message: {shown}"
        )),
        Err(_) => Some(format!(
            "the agent broke the protocol: it wrote a line that is not JSON to stdout: {shown}"
        )),
    }
}

/// Ctrl-C presses, as a stream.
fn interrupts() -> mpsc::UnboundedReceiver<()> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if tx.send(()).is_err() {
                break;
            }
        }
    });
    rx
}

/// The agent's program must exist before anything is spawned: a clear error, not a broken pipe.
pub(super) fn check_command(agent: &[String]) -> Result<(), String> {
    let Some(program) = agent.first() else {
        return Err("no agent command given (acp-gate run [OPTIONS] -- AGENT [ARGS...])".into());
    };
    let found = if program.contains('/') {
        std::path::Path::new(program).is_file()
    } else {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
    };
    if found {
        Ok(())
    } else {
        Err(format!("cannot find the agent command `{program}`"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_that_are_not_json_rpc_are_named() {
        assert!(malformed(r#"{"jsonrpc":"2.0","method":"x"}"#).is_none());
        assert!(malformed("   ").is_none());
        assert!(malformed("Starting agent...").unwrap().contains("not JSON"));
        assert!(malformed("[1,2]").unwrap().contains("not a JSON-RPC"));
    }
}
