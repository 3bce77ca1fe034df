//! GitHub Copilot CLI's hook payload (docs.github.com, "GitHub Copilot CLI hooks reference"),
//! in either of its forms, chosen by the event name in the hook's configuration:
//!
//! - `preToolUse` (camelCase): `sessionId`, `timestamp`, `cwd`, `toolName` (`bash`, `edit`,
//!   `create`, `view`, `glob`, `grep`, `web_fetch`, ...) and `toolArgs`, which older versions
//!   send as a JSON string;
//! - `PreToolUse` (VS Code-compatible): `hook_event_name`, `session_id`, `timestamp`, `cwd`,
//!   `tool_name` and `tool_input`.
//!
//! No permission mode and no tool-call id.

use anyhow::{Result, bail};
use serde_json::{Map, Value};

use super::{Fields, HookEvent, required, text, tool_input};

pub(super) fn read(payload: &Map<String, Value>) -> Result<Fields> {
    let snake_case = payload.contains_key("hook_event_name");
    let event_name = match text(payload, "hook_event_name") {
        Some(name) if name == "PreToolUse" => name,
        Some(other) => bail!("acp-gate answers Copilot's preToolUse hook, not `{other}`"),
        None => "preToolUse".to_owned(),
    };
    let key = |camel: &'static str, snake: &'static str| if snake_case { snake } else { camel };
    Ok(Fields {
        event: HookEvent::BeforeTool,
        event_name,
        snake_case,
        session_id: text(payload, key("sessionId", "session_id")).unwrap_or_default(),
        tool_use_id: String::new(),
        cwd: text(payload, "cwd"),
        mode: None,
        tool_input: tool_input(payload, key("toolArgs", "tool_input"))?,
        declared_kind: None,
        tool_name: required(payload, key("toolName", "tool_name"))?,
    })
}
