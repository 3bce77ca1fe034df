//! One hook call: its payload read, the chain loaded for its workspace, the call judged,
//! recorded and answered ([`respond`], which `hook serve` shares with the hook process).
//! Whatever fails blocks the call, with the reason: never a silent allow.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
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
use crate::request::SessionContext;
use crate::request::hook::{Agent, HookCall, HookEvent};
use crate::service::escalator::{Escalator, Origin};
use crate::state::{self, Escalations, Sessions};

/// How a hook call came, which decides how a refusal is said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// A process per call: a refusal can be its exit code.
    Process,
    /// An HTTP hook (`hook serve`): only the answer.
    Http,
}

/// Answers the hook call `input` (the payload as the agent sent it) in a process of its own,
/// escalating as `escalation` and the org file's `[escalation]` say.
pub async fn once(
    agent: Agent,
    input: &[u8],
    policy: &PolicyArgs,
    escalation: &EscalationArgs,
) -> HookReply {
    let payload = serde_json::from_slice::<Value>(input)
        .context("the hook's input is not JSON")
        .map_err(|e| format!("{e:#}"));
    let call = match &payload {
        Ok(payload) => HookCall::read(agent, payload).map_err(|e| format!("{e:#}")),
        Err(why) => Err(why.clone()),
    };
    let shape = shape_of(agent, payload.as_ref().ok(), Transport::Process);
    let loaded = async {
        let options = load_options(agent, call.as_ref().ok(), policy)?;
        // Only what this call's requests need is loaded: this process decides them and exits.
        let requests = match &call {
            Ok(call) => decide::requests(call, &context(call, &options.workspace)),
            Err(_) => Vec::new(),
        };
        let chain = crate::load_chain_for(&options, &requests).await?;
        let escalator = escalator(agent.name(), escalation, &chain, &options.workspace)?;
        let audit = AuditLog::open(&AuditLog::default_path())?;
        Ok::<_, anyhow::Error>((options.workspace, chain, escalator, audit))
    };
    let (workspace, chain, escalator, audit) = match loaded.await {
        Ok(loaded) => loaded,
        Err(error) => return reply::block(shape, &format!("{error:#}")),
    };
    let gate = Gate::new(chain, audit, Output::on_stderr(OutputFormat::Text));
    let payload = payload.unwrap_or_else(|_| json!({ "input": String::from_utf8_lossy(input) }));
    let escalator = escalator.as_ref();
    let transport = Transport::Process;
    respond(
        &gate, escalator, agent, &payload, call, &workspace, transport,
    )
    .await
}

/// Where the hooks of `agent` (its name, for the reviewer) escalate: the review service of
/// `args` and of the org file's `[escalation]` (see [`Escalator::configure`]), or nowhere.
pub fn escalator(
    agent: &str,
    args: &EscalationArgs,
    chain: &crate::chain::Chain,
    workspace: &Path,
) -> Result<Option<Escalator>> {
    let origin = Origin::here(workspace, &[agent.to_owned()]);
    Escalator::configure(args, chain.escalation.as_ref(), origin)
}

/// Answers one hook call of `agent` with `gate` (asks nobody here can answer go to
/// `escalator`); `call` is the payload read, or why it could not be (it is then refused, and
/// recorded as a request acp-gate could not read).
pub async fn respond(
    gate: &Gate,
    escalator: Option<&Escalator>,
    agent: Agent,
    payload: &Value,
    call: Result<HookCall, String>,
    workspace: &Path,
    transport: Transport,
) -> HookReply {
    let call = match call {
        Ok(call) => call,
        Err(why) => {
            let shape = shape_of(agent, Some(payload), transport);
            // Recorded as what it stands for: a permission request, unreadable.
            let asked = Asked::Unreadable {
                method: "session/request_permission".to_owned(),
                params: payload.clone(),
                why: format!("{}'s hook input: {why}", agent.title()),
            };
            let ctx = SessionContext::for_workspace("", workspace);
            let judged = gate.judge(asked, &ctx).await;
            let denied = Answer::Denied { message: None };
            if gate.record(&judged, &denied, ResolvedBy::Chain).is_none() {
                return reply::block(shape, "its decision could not be recorded in the audit log");
            }
            return reply::block(shape, &why);
        }
    };
    let shape = Shape {
        agent,
        event: call.event,
        event_name: &call.event_name,
        snake_case: call.snake_case,
        exit_code: transport == Transport::Process,
    };
    let judgement = decide::judge(gate, &call, &context(&call, workspace), escalator).await;
    if judgement.escalates()
        && let Err(error) = gate.keep_escalations(|| orchestration(agent, workspace))
    {
        return reply::block(shape, &format!("{error:#}"));
    }
    reply::answer(shape, &decide::settle(gate, &call, judgement))
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
fn shape_of(agent: Agent, payload: Option<&Value>, transport: Transport) -> Shape<'static> {
    let permission_request = payload
        .and_then(|p| p.get("hook_event_name"))
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
fn load_options(agent: Agent, call: Option<&HookCall>, policy: &PolicyArgs) -> Result<LoadOptions> {
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
