//! Twins (`tests/twins.toml`): a tool call as Claude Code, Gemini CLI or Codex sends it, and the
//! shell command that does the same thing, through the real default chain. The same action gets
//! the same decision whichever tool sends it: `LS ~/.ssh` is `ls ~/.ssh`, `Read` is `cat`, a
//! `file://` fetch is a read, an edit tool's write is a redirection's.
//!
//! Each twin: `tool` (the `session/request_permission` params), `command` (sent as Claude Code's
//! Bash sends it), `expect` (the decision both get), `why`, and optionally `setup_files` created
//! in the workspace first. `$WORKSPACE` and `$HOME` stand for the sandbox's directories.

use serde_json::Value;

use crate::common::{Sandbox, claude_bash, stderr};

fn twins() -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/twins.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let parsed: toml::Table =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match serde_json::to_value(&parsed["twin"]).unwrap() {
        Value::Array(twins) => twins,
        other => panic!(
            "{}: `twin` is not an array of tables: {other}",
            path.display()
        ),
    }
}

/// `value` with `$WORKSPACE` and `$HOME` made the sandbox's directories.
fn in_sandbox(value: &Value, sandbox: &Sandbox) -> Value {
    let text = value
        .to_string()
        .replace("$WORKSPACE", &sandbox.workspace.display().to_string())
        .replace("$HOME", &sandbox.home.display().to_string());
    serde_json::from_str(&text).unwrap()
}

/// Decides the numbered `twins` in one `check` run inside `sandbox`; returns the mismatches.
fn decide(twins: &[(usize, &Value)], sandbox: &Sandbox) -> Vec<String> {
    let requests: Vec<Value> = twins
        .iter()
        .flat_map(|(_, twin)| {
            let command = twin["command"].as_str().unwrap();
            [
                in_sandbox(&twin["tool"], sandbox),
                in_sandbox(&claude_bash(command, command), sandbox),
            ]
        })
        .collect();
    let (lines, output) = sandbox.check(None, &requests);
    assert_eq!(lines.len(), requests.len(), "{}", stderr(&output));
    twins
        .iter()
        .zip(lines.chunks(2))
        .filter_map(|((number, twin), pair)| {
            let expect = twin["expect"].as_str().unwrap();
            let (tool, command) = (&pair[0]["decision"], &pair[1]["decision"]);
            (tool != expect || command != expect).then(|| {
                format!(
                    "twin #{number} ({}): the tool call got {tool} {}, `{}` got {command} {}; expected {expect}",
                    twin["why"].as_str().unwrap_or(""),
                    pair[0]["reasons"],
                    twin["command"].as_str().unwrap(),
                    pair[1]["reasons"],
                )
            })
        })
        .collect()
}

#[test]
fn a_tool_call_and_the_command_that_does_the_same_get_the_same_decision() {
    let twins = twins();
    assert!(twins.len() >= 40, "only {} twins", twins.len());
    let numbered: Vec<(usize, &Value)> = twins.iter().enumerate().collect();
    let (plain, prepared): (Vec<_>, Vec<_>) = numbered
        .into_iter()
        .partition(|(_, twin)| twin.get("setup_files").is_none());
    let mut failures = decide(&plain, &Sandbox::new());
    for twin in prepared {
        let sandbox = Sandbox::new();
        for file in twin.1["setup_files"].as_array().unwrap() {
            sandbox.write(&format!("workspace/{}", file.as_str().unwrap()), "x");
        }
        failures.extend(decide(&[twin], &sandbox));
    }
    assert!(
        failures.is_empty(),
        "{} of {} twins disagree:\n{}",
        failures.len(),
        twins.len(),
        failures.join("\n")
    );
}
