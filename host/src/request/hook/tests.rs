use serde_json::{Value, json};

use super::*;
use crate::request::{Access, SessionContext, ToolKind, ToolRequest};

fn request(call: &HookCall) -> ToolRequest {
    let ctx = SessionContext::for_workspace("s", std::path::Path::new("/work"));
    ToolRequest::from_permission_request(&call.params, None, &ctx).unwrap()
}

#[test]
fn a_claude_call_is_the_twin_its_adapter_sends() {
    let payload = json!({
        "session_id": "abc", "transcript_path": "/t.jsonl", "cwd": "/work",
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "cargo test", "description": "Run tests"},
        "tool_use_id": "toolu_01"
    });
    let call = HookCall::read(Agent::Claude, &payload).unwrap();
    assert_eq!(call.event, HookEvent::BeforeTool);
    assert_eq!(call.mode, None, "the starting mode is no switch");
    assert_eq!(
        call.params,
        json!({"sessionId": "abc", "toolCall": {
            "toolCallId": "toolu_01", "title": "Bash", "name": "Bash", "kind": "execute",
            "rawInput": {"command": "cargo test", "description": "Run tests"}
        }})
    );
    let request = request(&call);
    assert_eq!(request.kind, ToolKind::Execute);
    assert_eq!(request.tool_call_id, "toolu_01");
    assert_eq!(request.session_id, "abc");
}

#[test]
fn an_mcp_tool_does_what_its_server_says_not_what_its_arguments_look_like() {
    for (agent, name) in [
        (Agent::Claude, "mcp__files__fetch_file"),
        (Agent::Codex, "mcp__files__fetch_file"),
        (Agent::Gemini, "mcp_files_fetch_file"),
    ] {
        let event = if agent == Agent::Gemini {
            "BeforeTool"
        } else {
            "PreToolUse"
        };
        let payload = json!({"session_id": "s", "hook_event_name": event, "tool_name": name,
            "tool_input": {"path": "/work/README.md"}});
        let request = request(&HookCall::read(agent, &payload).unwrap());
        assert_eq!(request.kind, ToolKind::Other, "{agent:?}");
        assert_eq!(request.paths[0].access, Access::Write, "{agent:?}");
    }
}

#[test]
fn a_codex_patch_names_every_file_it_writes_moves_or_deletes() {
    let patch = "*** Begin Patch\n*** Add File: src/new.rs\n+fn main() {}\n*** Update File: src/lib.rs\n*** Move to: src/core.rs\n@@\n-a\n+b\n*** Delete File: ~/.bashrc\n*** End Patch\n";
    let payload = json!({"session_id": "s", "turn_id": "t1", "hook_event_name": "PreToolUse",
        "permission_mode": "bypassPermissions", "tool_name": "apply_patch",
        "tool_input": {"command": patch}, "tool_use_id": "call_1"});
    let call = HookCall::read(Agent::Codex, &payload).unwrap();
    assert_eq!(
        call.mode, None,
        "Codex's `bypassPermissions` is its approval policy `never`, not a mode to judge"
    );
    let request = request(&call);
    assert_eq!(request.kind, ToolKind::Edit);
    assert!(request.command.is_none(), "a patch is no shell command");
    let paths: Vec<(String, Access)> = request
        .paths
        .iter()
        .map(|p| (p.absolute.display().to_string(), p.access))
        .collect();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/".into());
    for expected in [
        ("/work/src/new.rs".to_owned(), Access::Write),
        ("/work/src/lib.rs".to_owned(), Access::Delete),
        ("/work/src/core.rs".to_owned(), Access::Write),
        (format!("{home}/.bashrc"), Access::Delete),
    ] {
        assert!(paths.contains(&expected), "{expected:?} not in {paths:?}");
    }
    let headerless = json!({"session_id": "s", "hook_event_name": "PreToolUse",
        "tool_name": "apply_patch", "tool_input": {"command": "+rm -rf /"}});
    assert!(HookCall::read(Agent::Codex, &headerless).is_err());
}

#[test]
fn copilot_arguments_come_as_an_object_or_as_json_text() {
    let object = json!({"sessionId": "s", "timestamp": 1, "cwd": "/work", "toolName": "bash",
        "toolArgs": {"command": "ls -la"}});
    let text = json!({"sessionId": "s", "timestamp": 1, "cwd": "/work", "toolName": "bash",
        "toolArgs": "{\"command\":\"ls -la\"}"});
    let (a, b) = (
        HookCall::read(Agent::Copilot, &object).unwrap(),
        HookCall::read(Agent::Copilot, &text).unwrap(),
    );
    // The same call in each form, but for the id its payload's digest gives it.
    let without_id = |call: &HookCall| {
        let mut params = call.params.clone();
        params["toolCall"]["toolCallId"] = Value::Null;
        params
    };
    assert_eq!(without_id(&a), without_id(&b));
    assert!(!a.snake_case);
    let vscode = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/work",
        "tool_name": "bash", "tool_input": {"command": "ls -la"}});
    let c = HookCall::read(Agent::Copilot, &vscode).unwrap();
    assert!(c.snake_case);
    assert_eq!(without_id(&c), without_id(&a));
    let broken = json!({"sessionId": "s", "toolName": "bash", "toolArgs": "{not json"});
    assert!(HookCall::read(Agent::Copilot, &broken).is_err());
}

#[test]
fn a_gemini_command_runs_in_its_directory() {
    let payload = json!({"session_id": "s", "cwd": "/work", "hook_event_name": "BeforeTool",
        "timestamp": "2026-11-27T00:00:00Z", "tool_name": "run_shell_command",
        "tool_input": {"command": "ls", "dir_path": "sub"}});
    let request = request(&HookCall::read(Agent::Gemini, &payload).unwrap());
    assert_eq!(request.cwd, std::path::Path::new("/work/sub"));
}

#[test]
fn what_is_missing_or_of_another_event_is_an_error() {
    let cases = [
        (Agent::Claude, json!([])),
        (
            Agent::Claude,
            json!({"session_id": "s", "hook_event_name": "PreToolUse"}),
        ),
        (
            Agent::Claude,
            json!({"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Bash"}),
        ),
        (
            Agent::Claude,
            json!({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                "tool_input": "ls"}),
        ),
        (
            Agent::Claude,
            json!({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                "cwd": "relative"}),
        ),
        (
            Agent::Gemini,
            json!({"session_id": "s", "hook_event_name": "AfterTool", "tool_name": "x"}),
        ),
        (Agent::Copilot, json!({"sessionId": "s", "toolName": " "})),
    ];
    for (agent, payload) in cases {
        assert!(HookCall::read(agent, &payload).is_err(), "{payload}");
    }
}

#[test]
fn a_call_without_an_id_of_its_own_gets_one_from_its_payload() {
    let payload = |tool: &str| {
        json!({"session_id": "s", "transcript_path": "/t", "cwd": "/work",
            "hook_event_name": "BeforeTool", "timestamp": "2026-11-29T02:12:33.324Z",
            "tool_name": tool, "tool_input": {"file_path": "a.txt"}})
    };
    let first = HookCall::read(Agent::Gemini, &payload("read_file")).unwrap();
    let again = HookCall::read(Agent::Gemini, &payload("read_file")).unwrap();
    let other = HookCall::read(Agent::Gemini, &payload("write_file")).unwrap();
    assert!(
        first.tool_use_id.starts_with("gemini-"),
        "{}",
        first.tool_use_id
    );
    assert_eq!(first.tool_use_id.len(), "gemini-".len() + 16);
    assert_eq!(
        first.tool_use_id, again.tool_use_id,
        "the same payload is the same call"
    );
    assert_ne!(first.tool_use_id, other.tool_use_id);
    assert_eq!(
        first.params["toolCall"]["toolCallId"], first.tool_use_id,
        "the twin request carries it"
    );
}
