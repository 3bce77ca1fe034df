//! What a hook answers, in each agent's own output shape and exit code (from the agents'
//! hook references and sources; docs/hooks.md has the table):
//!
//! - Claude Code, before a tool: `{"hookSpecificOutput": {"hookEventName": "PreToolUse",
//!   "permissionDecision": "allow"|"deny"|"ask", "permissionDecisionReason": ...}}`, exit 0;
//!   at its `PermissionRequest`: `{"hookSpecificOutput": {"hookEventName":
//!   "PermissionRequest", "decision": {"behavior": "allow"|"deny", "message": ...}}}`, and no
//!   decision (`{}`) to let it ask its user.
//! - Codex, before a tool: the same `PreToolUse` shape, deny only (Codex takes no `allow`
//!   without a rewritten input, and no `ask`): an allow is an empty answer, after which Codex
//!   applies its own approval policy; at its `PermissionRequest`, Claude Code's shape, and an
//!   empty answer to let it ask its user.
//! - Gemini CLI: `{"decision": "allow"|"deny", "reason": ...}`, exit 0.
//! - Copilot: `{"permissionDecision": "allow"|"deny"|"ask", "permissionDecisionReason": ...}`
//!   (its VS Code-compatible form: Claude Code's `hookSpecificOutput`), exit 0.
//!
//! A hook that cannot decide (unreadable input, an unreadable config, an audit log it cannot
//! write) blocks the call: exit code 2 with the reason on stderr, which Claude Code, Codex and
//! Gemini CLI read as a block; Copilot ignores exit codes, so it gets a deny on stdout instead,
//! as do the `PermissionRequest` events and an HTTP hook.

use serde_json::{Value, json};

use super::decide::Told;
use crate::exit;
use crate::request::hook::{Agent, HookEvent};

/// Where a hook's answer goes: its stdout, its stderr, its exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookReply {
    pub stdout: String,
    pub stderr: String,
    pub code: u8,
}

/// How an answer is shaped: the agent, its event, and for Copilot the payload's form.
#[derive(Debug, Clone, Copy)]
pub struct Shape<'a> {
    pub agent: Agent,
    pub event: HookEvent,
    /// The event as the agent named it (`hookEventName`).
    pub event_name: &'a str,
    /// Copilot's VS Code-compatible payload.
    pub snake_case: bool,
    /// Whether the agent reads the hook's exit code (a process); an HTTP hook has only its
    /// answer.
    pub exit_code: bool,
}

impl Shape<'_> {
    /// The shape of an agent's answer before a tool, for a payload that could not be read.
    pub fn before_tool(agent: Agent) -> Shape<'static> {
        let event_name = match agent {
            Agent::Claude | Agent::Codex => "PreToolUse",
            Agent::Gemini => "BeforeTool",
            Agent::Copilot => "preToolUse",
        };
        Shape {
            agent,
            event: HookEvent::BeforeTool,
            event_name,
            snake_case: agent != Agent::Copilot,
            exit_code: true,
        }
    }
}

/// The answer that tells the agent `told`.
pub fn answer(shape: Shape<'_>, told: &Told) -> HookReply {
    let (decision, reason) = match told {
        Told::Allow(reason) => ("allow", reason),
        Told::Deny(reason) => ("deny", reason),
        Told::Ask(reason) => ("ask", reason),
    };
    let out = |value: Option<Value>| HookReply {
        stdout: value.map(|v| format!("{v}\n")).unwrap_or_default(),
        stderr: String::new(),
        code: 0,
    };
    let claude_style = || {
        json!({ "hookSpecificOutput": {
            "hookEventName": shape.event_name,
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }})
    };
    match (shape.agent, shape.event) {
        (_, HookEvent::PermissionRequest) => out(match told {
            Told::Ask(_) if shape.agent == Agent::Codex => None,
            Told::Ask(_) => Some(json!({})),
            Told::Allow(_) => Some(behaviour(shape, json!({ "behavior": "allow" }))),
            Told::Deny(reason) => Some(behaviour(
                shape,
                json!({ "behavior": "deny", "message": reason }),
            )),
        }),
        (Agent::Claude, HookEvent::BeforeTool) => out(Some(claude_style())),
        (Agent::Codex, HookEvent::BeforeTool) => match told {
            Told::Deny(_) => out(Some(claude_style())),
            // Codex has neither: its own approval policy applies.
            Told::Allow(_) | Told::Ask(_) => out(None),
        },
        (Agent::Gemini, HookEvent::BeforeTool) => match told {
            Told::Deny(reason) => out(Some(json!({ "decision": "deny", "reason": reason }))),
            // Gemini CLI has no ask a hook can rely on (older versions run the tool): `decide`
            // never passes one on.
            Told::Allow(_) | Told::Ask(_) => out(Some(json!({ "decision": "allow" }))),
        },
        (Agent::Copilot, HookEvent::BeforeTool) if shape.snake_case => out(Some(claude_style())),
        (Agent::Copilot, HookEvent::BeforeTool) => out(Some(json!({
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }))),
    }
}

/// A `PermissionRequest` answer carrying `decision`.
fn behaviour(shape: Shape<'_>, decision: Value) -> Value {
    json!({ "hookSpecificOutput": {
        "hookEventName": shape.event_name,
        "decision": decision,
    }})
}

/// The answer of a hook that could not decide: the call is blocked, with `reason`.
pub fn block(shape: Shape<'_>, reason: &str) -> HookReply {
    let reason = format!("acp-gate refused this call: {reason}");
    match (shape.agent, shape.event) {
        _ if !shape.exit_code => answer(shape, &Told::Deny(reason)),
        (Agent::Copilot, _) | (_, HookEvent::PermissionRequest) => HookReply {
            stderr: format!("{reason}\n"),
            ..answer(shape, &Told::Deny(reason))
        },
        _ => HookReply {
            stdout: String::new(),
            stderr: format!("{reason}\n"),
            code: exit::HOOK_BLOCKED,
        },
    }
}
