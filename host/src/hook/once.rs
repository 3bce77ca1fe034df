//! One hook call: its payload read ([`Received`]), the chain loaded for its workspace
//! ([`Decider`]), the call judged, recorded and answered ([`Decider::respond`], which the
//! resident servers share with the hook process).
//! Whatever fails blocks the call, with the reason: never a silent allow.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde_json::{Value, json};

use super::decide;
use super::reply::{self, HookReply, Shape};
use crate::LoadOptions;
use crate::acp::gate::{Answer, Asked, Gate};
use crate::acp::orchestrate::Orchestration;
use crate::acp::output::Output;
use crate::args::{EscalationArgs, OutputFormat, PolicyArgs};
use crate::audit::AuditLog;
use crate::record::ResolvedBy;
use crate::request::hook::{Agent, HookCall, HookEvent};
use crate::request::{SessionContext, ToolRequest};
use crate::service::escalator::Escalator;
use crate::service::origin::Origin;
use crate::state::{self, Escalations, Sessions};

/// The most of a hook payload read: a tool call's input, file contents included.
pub const MAX_PAYLOAD: u64 = 64 << 20;

/// How a hook call came, which decides how a refusal is said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// A process per call: a refusal can be its exit code.
    Process,
    /// An HTTP hook (`hook serve`): only the answer.
    Http,
}

/// A hook call as the agent sent it: its payload (the JSON, or the text that was not JSON),
/// and the call read from it, or why it could not be.
pub struct Received {
    pub payload: Value,
    pub call: Result<HookCall, String>,
}

impl Received {
    /// Reads `input`, a hook call of `agent`'s.
    pub fn read(agent: Agent, input: &[u8]) -> Received {
        match serde_json::from_slice::<Value>(input) {
            Ok(payload) => {
                let call = HookCall::read(agent, &payload).map_err(|e| format!("{e:#}"));
                Received { payload, call }
            }
            Err(error) => Received {
                payload: json!({ "input": String::from_utf8_lossy(input) }),
                call: Err(format!("the hook's input is not JSON: {error}")),
            },
        }
    }
}

/// What answers hook calls: the gate (the chain, the audit log), the review service it
/// escalates to, and the workspace the chain was loaded for.
pub struct Decider {
    pub gate: Gate,
    pub escalator: Option<Escalator>,
    pub workspace: PathBuf,
}

impl Decider {
    /// Loads the chain of `options` (for `requests` only, when given: a process that decides
    /// them and exits), escalating as `escalation` and the org file's `[escalation]` say, for
    /// the hooks of `agent` (named on every audit line and escalation, as `run` names its
    /// agent's program; `None`: `hook serve`, for every agent).
    pub async fn load(
        agent: Option<Agent>,
        options: &LoadOptions,
        requests: Option<&[ToolRequest]>,
        escalation: &EscalationArgs,
    ) -> Result<Decider> {
        let chain = match requests {
            Some(requests) => crate::load_chain_for(options, requests).await?,
            None => crate::load_chain(options).await?,
        };
        let program = agent.map_or("hook serve", Agent::name);
        let origin = Origin::here(&options.workspace, &[program.to_owned()]);
        let escalator = Escalator::configure(escalation, chain.escalation.as_ref(), origin)?;
        let audit = AuditLog::open(&AuditLog::default_path())?
            .with_agent(agent.map(|agent| agent.name().to_owned()));
        Ok(Decider {
            gate: Gate::new(chain, audit, Output::on_stderr(OutputFormat::Text)),
            escalator,
            workspace: options.workspace.clone(),
        })
    }

    /// Answers one hook call of `agent` (asks nobody here can answer go to the review
    /// service); a call that could not be read is refused, and recorded as a request
    /// acp-gate could not read.
    pub async fn respond(
        &self,
        agent: Agent,
        received: Received,
        transport: Transport,
    ) -> HookReply {
        let Decider {
            gate,
            escalator,
            workspace,
        } = self;
        let call = match received.call {
            Ok(call) => call,
            Err(_) => {
                return refuse_unreadable(gate, agent, transport, received, workspace).await;
            }
        };
        let shape = Shape {
            agent,
            event: call.event,
            event_name: &call.event_name,
            snake_case: call.snake_case,
            exit_code: transport == Transport::Process,
        };
        let ctx = context(&call, workspace);
        let judgement = decide::judge(gate, &call, &ctx, escalator.as_ref()).await;
        if judgement.escalates()
            && let Err(error) = gate.keep_escalations(|| orchestration(agent, workspace))
        {
            return reply::block(shape, &format!("{error:#}"));
        }
        reply::answer(shape, &decide::settle(gate, &call, judgement))
    }
}

/// Refuses a hook call of `agent`'s that could not be read, and records it as what it stands
/// for: a permission request, unreadable.
pub async fn refuse_unreadable(
    gate: &Gate,
    agent: Agent,
    transport: Transport,
    received: Received,
    workspace: &Path,
) -> HookReply {
    let shape = shape_of(agent, &received.payload, transport);
    let why = received.call.err().unwrap_or_default();
    let asked = Asked::Unreadable {
        method: "session/request_permission".to_owned(),
        params: received.payload,
        why: format!("{}'s hook input: {why}", agent.title()),
    };
    let ctx = SessionContext::for_workspace("", workspace);
    let judged = gate.judge(asked, &ctx).await;
    let denied = Answer::Denied { message: None };
    if gate.record(&judged, &denied, ResolvedBy::Chain).is_none() {
        return reply::block(shape, "its decision could not be recorded in the audit log");
    }
    reply::block(shape, &why)
}

/// Answers the hook call `input` (the payload as the agent sent it) in a process of its own,
/// escalating as `escalation` and the org file's `[escalation]` say.
pub async fn once(
    agent: Agent,
    input: &[u8],
    policy: &PolicyArgs,
    escalation: &EscalationArgs,
) -> HookReply {
    let received = Received::read(agent, input);
    let loaded = async {
        let options = load_options(agent, received.call.as_ref().ok(), policy)?;
        // Only what this call's requests need is loaded: this process decides them and exits.
        let requests = match &received.call {
            Ok(call) => decide::requests(call, &context(call, &options.workspace)),
            Err(_) => Vec::new(),
        };
        Decider::load(Some(agent), &options, Some(&requests), escalation).await
    };
    match loaded.await {
        Ok(decider) => decider.respond(agent, received, Transport::Process).await,
        Err(error) => refuse(agent, &received, Transport::Process, &error),
    }
}

/// The refusal of `received` for `error`, in the shape of its agent's answer.
pub fn refuse(
    agent: Agent,
    received: &Received,
    transport: Transport,
    error: &anyhow::Error,
) -> HookReply {
    reply::block(
        shape_of(agent, &received.payload, transport),
        &format!("{error:#}"),
    )
}

/// Where `call` runs: its session, its `cwd` (else the workspace's root), the workspace.
fn context(call: &HookCall, workspace: &Path) -> SessionContext {
    SessionContext {
        cwd: call.cwd.clone().unwrap_or_else(|| workspace.to_path_buf()),
        ..SessionContext::for_workspace(&call.session_id, workspace)
    }
}

/// The shape of the answer to `payload`, read as far as it can be: a `PermissionRequest`'s
/// when it says it is one, else the one before a tool.
fn shape_of(agent: Agent, payload: &Value, transport: Transport) -> Shape<'static> {
    let permission_request = payload
        .get("hook_event_name")
        .is_some_and(|name| name == "PermissionRequest");
    let shape = Shape {
        exit_code: transport == Transport::Process,
        ..Shape::before_tool(agent)
    };
    match (agent, permission_request) {
        (Agent::Claude | Agent::Codex, true) => Shape {
            event: HookEvent::PermissionRequest,
            event_name: "PermissionRequest",
            ..shape
        },
        _ => shape,
    }
}

/// Where the policy comes from for a hook call: the command line's, with the workspace it
/// names, else the project directory the agent gives its hooks (`$CLAUDE_PROJECT_DIR`,
/// `$GEMINI_PROJECT_DIR`), else the call's `cwd`, else the current directory.
pub fn load_options(
    agent: Agent,
    call: Option<&HookCall>,
    policy: &PolicyArgs,
) -> Result<LoadOptions> {
    let project_dir = match agent {
        Agent::Claude => std::env::var_os("CLAUDE_PROJECT_DIR"),
        Agent::Gemini => std::env::var_os("GEMINI_PROJECT_DIR"),
        Agent::Codex | Agent::Copilot => None,
    };
    let workspace = policy
        .workspace
        .clone()
        .or(project_dir.map(PathBuf::from))
        .or_else(|| call.and_then(|call| call.cwd.clone()));
    let policy = PolicyArgs {
        workspace,
        ..policy.clone()
    };
    LoadOptions::from_args(&policy)
}

/// Where a hook's escalations are kept: the state directory's `escalations.jsonl`, as `run`'s.
fn orchestration(agent: Agent, workspace: &Path) -> Result<Orchestration> {
    let dir = state::dir();
    Ok(Orchestration::new(
        None,
        vec![agent.name().to_owned()],
        workspace.to_path_buf(),
        0,
        Sessions::open(&dir)?,
        Escalations::open(&dir)?,
    ))
}
