//! Gemini CLI's hook payload (google-gemini/gemini-cli, `docs/hooks/reference.md`,
//! `packages/core/src/hooks/hookEventHandler.ts`): `session_id`, `transcript_path`, `cwd`,
//! `hook_event_name` (`BeforeTool`), `timestamp`, `tool_name` (`run_shell_command`,
//! `write_file`, `replace`, `read_file`, `web_fetch`, an MCP tool's `mcp_SERVER_TOOL`, ...),
//! `tool_input` (the tool's arguments), and `mcp_context` for an MCP tool. No permission mode:
//! Gemini CLI does not tell its hooks whether it is in `yolo` (see docs/hooks.md).
//!
//! A shell command runs in `dir_path` (older versions: `directory`), relative to the
//! workspace: it is the command's working directory, as Codex's `cwd` is.

use anyhow::{Result, bail};
use serde_json::{Map, Value};

use super::{Fields, HookEvent, is_mcp, required, text, tool_input};

pub(super) fn read(payload: &Map<String, Value>) -> Result<Fields> {
    let event_name = required(payload, "hook_event_name")?;
    if event_name != "BeforeTool" {
        bail!("acp-gate answers Gemini CLI's BeforeTool hook, not `{event_name}`");
    }
    let tool_name = required(payload, "tool_name")?;
    let mut input = tool_input(payload, "tool_input")?;
    if !input.contains_key("cwd")
        && let Some(dir) = ["dir_path", "directory"]
            .into_iter()
            .find_map(|key| input.get(key).and_then(Value::as_str).map(str::to_owned))
            .filter(|_| input.contains_key("command"))
    {
        input.insert("cwd".into(), dir.into());
    }
    let mcp = is_mcp(&tool_name) || payload.get("mcp_context").is_some_and(Value::is_object);
    Ok(Fields {
        event: HookEvent::BeforeTool,
        event_name,
        snake_case: true,
        session_id: required(payload, "session_id")?,
        tool_use_id: String::new(),
        cwd: text(payload, "cwd"),
        mode: None,
        tool_input: input,
        declared_kind: mcp.then_some("other"),
        tool_name,
    })
}
