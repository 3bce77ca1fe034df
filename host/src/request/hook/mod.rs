//! The agents' own hooks: what Claude Code, Codex, Gemini CLI and GitHub Copilot CLI send a
//! hook before a tool runs, read into the `session/request_permission` an ACP adapter of the
//! same agent would send for the same call (its twin), so that one action is one request
//! whatever sends it.
//!
//! A hook's tool input is the agent's own tool arguments: the same object its ACP adapter
//! sends as `rawInput`, which [`super::tool_call`] reads. Each agent's file reads only what
//! differs: where the fields are, what its events are called, and the shapes its adapter
//! would have changed on the way (Codex's patches, Gemini CLI's command directory, Copilot's
//! arguments as a JSON string).
//!
//! - [`claude`]: Claude Code's `PreToolUse` and `PermissionRequest`;
//! - [`codex`]: Codex's `PreToolUse` and `PermissionRequest`;
//! - [`gemini`]: Gemini CLI's `BeforeTool`;
//! - [`copilot`]: GitHub Copilot CLI's `preToolUse` (and its VS Code-compatible `PreToolUse`).

mod claude;
mod codex;
mod copilot;
mod gemini;

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};

/// An agent whose hooks acp-gate answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    Claude,
    Codex,
    Gemini,
    Copilot,
}

impl Agent {
    pub const ALL: [Agent; 4] = [Agent::Claude, Agent::Codex, Agent::Gemini, Agent::Copilot];

    /// Its name on acp-gate's command line (`acp-gate hook claude`).
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Copilot => "copilot",
        }
    }

    /// Its name for people.
    pub fn title(self) -> &'static str {
        match self {
            Agent::Claude => "Claude Code",
            Agent::Codex => "Codex",
            Agent::Gemini => "Gemini CLI",
            Agent::Copilot => "GitHub Copilot CLI",
        }
    }

    /// The agent called `name` on acp-gate's command line.
    pub fn named(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|agent| agent.name() == name)
    }
}

/// The permission mode Claude Code's and Codex's sessions start in, where they ask as
/// configured: a hook call in it has no mode to judge.
const STARTING_MODE: &str = "default";

/// Where in the agent's flow a hook was called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    /// Before every tool call (Claude Code's and Codex's `PreToolUse`, Gemini CLI's
    /// `BeforeTool`, Copilot's `preToolUse`): the hook may allow, deny, or (where the agent
    /// has one) ask.
    BeforeTool,
    /// The agent is about to ask its user (Claude Code's and Codex's `PermissionRequest`):
    /// the hook may allow or deny; no decision lets the agent ask.
    PermissionRequest,
}

/// One hook call, read.
#[derive(Debug, Clone)]
pub struct HookCall {
    pub agent: Agent,
    pub event: HookEvent,
    /// The event as the agent named it, which some answers repeat (`hookEventName`).
    pub event_name: String,
    /// Copilot's VS Code-compatible payload (snake_case, `PreToolUse`): answered in the same
    /// form.
    pub snake_case: bool,
    pub session_id: String,
    /// The agent's id of the tool call; for an agent that sends none, `AGENT-` and 16
    /// hexadecimal digits of the payload's digest.
    pub tool_use_id: String,
    pub tool_name: String,
    /// Where the session runs, absolute, when the agent says.
    pub cwd: Option<PathBuf>,
    /// The permission mode the agent says it is in, when it is not the one it starts in
    /// (Claude Code's `permission_mode`).
    pub mode: Option<String>,
    /// The `session/request_permission` params of the same call: its twin.
    pub params: Value,
}

impl HookCall {
    /// Reads `agent`'s hook payload. An error says what is missing or malformed: the hook
    /// then refuses the call.
    pub fn read(agent: Agent, payload: &Value) -> Result<HookCall> {
        let Some(payload) = payload.as_object() else {
            bail!("the hook's input is not a JSON object");
        };
        let read = match agent {
            Agent::Claude => claude::read(payload)?,
            Agent::Codex => codex::read(payload)?,
            Agent::Gemini => gemini::read(payload)?,
            Agent::Copilot => copilot::read(payload)?,
        };
        if read.tool_name.trim().is_empty() {
            bail!("the hook's input names no tool");
        }
        let cwd = read.cwd.map(PathBuf::from);
        if let Some(cwd) = cwd.as_ref().filter(|cwd| !cwd.is_absolute()) {
            bail!("the hook's `cwd` must be absolute, not `{}`", cwd.display());
        }
        // Gemini CLI and Copilot send no id of their own: the payload's digest stands in, so
        // that the audit line can be told from the call before and after it (the same payload
        // sent again is the same call).
        let tool_use_id = match read.tool_use_id {
            id if id.is_empty() => {
                let digest = crate::digest::sha256_hex(
                    Value::Object(payload.clone()).to_string().as_bytes(),
                );
                format!("{}-{}", agent.name(), &digest[..16])
            }
            id => id,
        };
        let params = twin(
            &read.session_id,
            &tool_use_id,
            &read.tool_name,
            read.tool_input,
            read.declared_kind,
        );
        Ok(HookCall {
            agent,
            event: read.event,
            event_name: read.event_name,
            snake_case: read.snake_case,
            session_id: read.session_id,
            tool_use_id,
            tool_name: read.tool_name,
            cwd,
            mode: read.mode.filter(|mode| mode != STARTING_MODE),
            params,
        })
    }
}

/// What an agent's file reads out of its payload.
struct Fields {
    event: HookEvent,
    event_name: String,
    snake_case: bool,
    session_id: String,
    tool_use_id: String,
    tool_name: String,
    cwd: Option<String>,
    mode: Option<String>,
    /// The tool's arguments, as the agent's ACP adapter sends them in `rawInput`.
    tool_input: Map<String, Value>,
    /// The kind the agent's ACP adapter declares, where the tool-name map does not know it.
    declared_kind: Option<&'static str>,
}

/// The `session/request_permission` params an ACP adapter sends for the same tool call: its
/// id, the agent's own tool name (as `name` and the title), the kind the tool-name map gives
/// the tool (an MCP tool's is `other`: it does what its server says), and the input as
/// `rawInput`. No options: a hook is answered in the agent's own words.
fn twin(
    session_id: &str,
    tool_use_id: &str,
    tool_name: &str,
    tool_input: Map<String, Value>,
    declared_kind: Option<&'static str>,
) -> Value {
    let kind = declared_kind.or_else(|| {
        crate::policy::tools::find(tool_name).and_then(|tool| tool.kinds.first().copied())
    });
    let mut call = json!({
        "toolCallId": tool_use_id,
        "title": tool_name,
        "name": tool_name,
        "rawInput": tool_input,
    });
    if let Some(kind) = kind {
        call["kind"] = kind.into();
    }
    json!({ "sessionId": session_id, "toolCall": call })
}

/// `key` as a string, if it is one.
fn text(payload: &Map<String, Value>, key: &str) -> Option<String> {
    payload.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// `key`, which the agent always sends, as a string.
fn required(payload: &Map<String, Value>, key: &str) -> Result<String> {
    match payload.get(key) {
        Some(Value::String(value)) => Ok(value.clone()),
        Some(other) => bail!("the hook's `{key}` is not a string: {other}"),
        None => bail!("the hook's input has no `{key}`"),
    }
}

/// The tool's arguments under `key`: an object, or a JSON string holding one (Copilot's
/// `toolArgs`); none at all reads as no arguments.
fn tool_input(payload: &Map<String, Value>, key: &str) -> Result<Map<String, Value>> {
    match payload.get(key) {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(input)) => Ok(input.clone()),
        Some(Value::String(json)) => match serde_json::from_str::<Value>(json)
            .with_context(|| format!("the hook's `{key}` is a string that is not JSON"))?
        {
            Value::Object(input) => Ok(input),
            other => bail!("the hook's `{key}` is not an object: {other}"),
        },
        Some(other) => bail!("the hook's `{key}` is not an object: {other}"),
    }
}

/// Whether the agent's name for a tool is an MCP tool's: Claude Code's and Codex's
/// `mcp__SERVER__TOOL`, Gemini CLI's `mcp_SERVER_TOOL`.
fn is_mcp(tool_name: &str) -> bool {
    tool_name.starts_with("mcp_")
}

#[cfg(test)]
mod tests;
