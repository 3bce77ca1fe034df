//! Codex's hook payload (openai/codex, `codex-rs/hooks/schema/generated/*.command.input.schema.json`):
//! `session_id`, `turn_id`, `transcript_path`, `cwd`, `model`, `permission_mode` (`default`,
//! or `bypassPermissions` when its approval policy is `never`: not read), `hook_event_name`
//! (`PreToolUse`, or `PermissionRequest` when Codex is about to ask its user), `tool_name`
//! (`Bash` for its shell tools, `apply_patch`, an MCP tool's name; `NetworkAccess` for a
//! network approval) and `tool_input` (`{"command": ...}` for the shell and for a patch, an
//! MCP tool's arguments), and `tool_use_id` before a tool.
//!
//! A patch arrives as its text. Codex's ACP adapter sends the files it changes (`changes`:
//! path to add, delete or update, an update possibly moving the file); the same is read here
//! from the patch's `*** Add File:` / `*** Delete File:` / `*** Update File:` / `*** Move to:`
//! lines, so that the path validator sees every file a patch writes.

use anyhow::{Result, bail};
use serde_json::{Map, Value, json};

use super::{Fields, HookEvent, is_mcp, required, text, tool_input};

pub(super) fn read(payload: &Map<String, Value>) -> Result<Fields> {
    let event_name = required(payload, "hook_event_name")?;
    let event = match event_name.as_str() {
        "PreToolUse" => HookEvent::BeforeTool,
        "PermissionRequest" => HookEvent::PermissionRequest,
        other => {
            bail!("acp-gate answers Codex's PreToolUse and PermissionRequest hooks, not `{other}`")
        }
    };
    let tool_name = required(payload, "tool_name")?;
    let mut input = tool_input(payload, "tool_input")?;
    if tool_name == "apply_patch" {
        input = patch_input(&input)?;
    }
    Ok(Fields {
        event,
        event_name,
        snake_case: true,
        session_id: required(payload, "session_id")?,
        // A permission request has no tool-use id; its turn's id stands in.
        tool_use_id: text(payload, "tool_use_id")
            .or_else(|| text(payload, "turn_id"))
            .unwrap_or_default(),
        cwd: text(payload, "cwd"),
        // Codex says `bypassPermissions` whenever its approval policy is `never`, which `codex
        // exec` always uses, sandboxed or not: it tells nothing about whether a call reaches
        // this hook (every call does, in every policy) or whether an ask could reach a person
        // (Codex has no ask before a tool in any of them). Not judged as a switch of mode.
        mode: None,
        tool_input: input,
        declared_kind: is_mcp(&tool_name).then_some("other"),
        tool_name,
    })
}

/// A patch's input as Codex's adapter sends it: the patch text and the files it changes.
fn patch_input(input: &Map<String, Value>) -> Result<Map<String, Value>> {
    let Some(patch) = ["command", "input", "patch"]
        .into_iter()
        .find_map(|key| input.get(key).and_then(Value::as_str))
    else {
        bail!("Codex's apply_patch input has no patch text");
    };
    let mut changes = Map::new();
    let mut updating: Option<String> = None;
    for line in patch.lines() {
        let header = |prefix: &str| line.strip_prefix(prefix).map(|p| p.trim().to_owned());
        if let Some(path) = header("*** Add File:") {
            changes.insert(path, json!({ "type": "add" }));
            updating = None;
        } else if let Some(path) = header("*** Delete File:") {
            changes.insert(path, json!({ "type": "delete" }));
            updating = None;
        } else if let Some(path) = header("*** Update File:") {
            changes.insert(path.clone(), json!({ "type": "update" }));
            updating = Some(path);
        } else if let (Some(destination), Some(path)) = (header("*** Move to:"), &updating) {
            changes.insert(
                path.clone(),
                json!({ "type": "update", "move_path": destination }),
            );
        }
    }
    if changes.is_empty() {
        bail!("Codex's apply_patch input changes no file that acp-gate can read");
    }
    let mut read = input.clone();
    read.remove("command");
    read.insert("patch".into(), patch.into());
    read.insert("changes".into(), Value::Object(changes));
    Ok(read)
}
