//! Claude Code's hook payload (code.claude.com/docs/en/hooks): `session_id`,
//! `transcript_path`, `cwd`, `permission_mode`, `hook_event_name` (`PreToolUse` or
//! `PermissionRequest`), `tool_name` (`Bash`, `Edit`, `mcp__SERVER__TOOL`, ...), `tool_input`
//! (the tool's arguments, file paths absolute) and `tool_use_id`. The same JSON arrives on
//! stdin (a `command` hook) or as the body of a POST (an `http` hook).

use anyhow::{Result, bail};
use serde_json::{Map, Value};

use super::{Fields, HookEvent, is_mcp, required, text, tool_input};

pub(super) fn read(payload: &Map<String, Value>) -> Result<Fields> {
    let event_name = required(payload, "hook_event_name")?;
    let event = match event_name.as_str() {
        "PreToolUse" => HookEvent::BeforeTool,
        "PermissionRequest" => HookEvent::PermissionRequest,
        other => bail!(
            "acp-gate answers Claude Code's PreToolUse and PermissionRequest hooks, not `{other}`"
        ),
    };
    let tool_name = required(payload, "tool_name")?;
    Ok(Fields {
        event,
        event_name,
        snake_case: true,
        session_id: required(payload, "session_id")?,
        tool_use_id: text(payload, "tool_use_id").unwrap_or_default(),
        cwd: text(payload, "cwd"),
        mode: text(payload, "permission_mode"),
        tool_input: tool_input(payload, "tool_input")?,
        // The adapter's own tools (`mcp__acp__Read`, ...) are Claude Code's: their input says.
        declared_kind: (is_mcp(&tool_name) && !tool_name.starts_with("mcp__acp__"))
            .then_some("other"),
        tool_name,
    })
}
