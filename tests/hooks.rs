//! `acp-gate hook AGENT`: the agents' own hooks, end to end with the real binary and the
//! recorded payloads of `tests/fixtures/hooks/`. Each payload is decided as `check` decides its
//! ACP twin (same decision, same reasons) and answered in the agent's own shape and exit code;
//! what `run` records, the hook records; whatever fails blocks the call. `hook install` edits
//! settings files keeping everything else, and `hook serve` answers HTTP hooks.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::{Value, json};

use crate::common::{Sandbox, pipe, repo, stderr, test_plugin};

/// A recorded payload (or its twin) with the sandbox's workspace and home put in.
pub(crate) fn fixture(sandbox: &Sandbox, agent: &str, name: &str, twin: bool) -> String {
    let dir = repo().join("tests/fixtures/hooks").join(agent);
    let path = match twin {
        true => dir.join("twins").join(format!("{name}.json")),
        false => dir.join(format!("{name}.json")),
    };
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .replace("@WORKSPACE@", &sandbox.workspace.display().to_string())
        .replace("@HOME@", &sandbox.home.display().to_string())
}

/// `acp-gate hook AGENT ARGS` on `payload`.
fn hook(sandbox: &Sandbox, agent: &str, args: &[&str], payload: &str) -> Output {
    sandbox.run(&[&["hook", agent][..], args].concat(), payload)
}

/// The lines of a JSON Lines file in the state directory.
fn state_lines(sandbox: &Sandbox, name: &str) -> Vec<Value> {
    let path = sandbox.home.join(".local/state/acp-gate").join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The audit log's lines.
fn audit(sandbox: &Sandbox) -> Vec<Value> {
    state_lines(sandbox, "audit.jsonl")
}

/// The answer on stdout, parsed (`null` when empty).
fn answer(output: &Output) -> Value {
    let text = String::from_utf8_lossy(&output.stdout);
    match text.trim() {
        "" => Value::Null,
        text => serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}")),
    }
}

/// Every recorded payload, with the decision the default chain makes on it.
pub(crate) const PAYLOADS: &[(&str, &str, &str)] = &[
    ("claude", "bash-cargo-test", "allow"),
    ("claude", "bash-rm-home", "deny"),
    ("claude", "write-src", "allow"),
    ("claude", "edit-src", "allow"),
    ("claude", "write-ssh-keys", "deny"),
    ("claude", "read-src", "allow"),
    ("claude", "mcp-tool", "ask"),
    ("claude", "webfetch", "ask"),
    ("claude", "bypass-webfetch", "ask"),
    ("claude", "bypass-bash-cargo-test", "allow"),
    ("claude", "permission-request-bash", "allow"),
    ("codex", "bash-cargo-test", "allow"),
    ("codex", "bash-rm-home", "deny"),
    ("codex", "apply-patch-src", "allow"),
    ("codex", "apply-patch-bashrc", "deny"),
    ("codex", "mcp-tool", "ask"),
    ("codex", "permission-request-terraform", "ask"),
    ("codex", "full-access-cargo-test", "allow"),
    ("codex", "full-access-terraform", "ask"),
    ("gemini", "shell-cargo-test", "allow"),
    ("gemini", "shell-rm-home", "deny"),
    ("gemini", "write-src", "allow"),
    ("gemini", "replace-src", "allow"),
    ("gemini", "write-env", "deny"),
    ("gemini", "read-src", "allow"),
    ("gemini", "mcp-tool", "ask"),
    ("gemini", "web-fetch", "ask"),
    ("copilot", "bash-cargo-test", "allow"),
    ("copilot", "bash-rm-home-args-as-text", "deny"),
    ("copilot", "create-src", "allow"),
    ("copilot", "edit-ssh-config", "deny"),
    ("copilot", "view-src", "allow"),
    ("copilot", "web-fetch", "ask"),
    ("copilot", "vscode-bash-cargo-test", "allow"),
];

/// The audit line of the tool call (not of the mode it is in).
fn call_line(lines: &[Value]) -> &Value {
    lines
        .iter()
        .rev()
        .find(|l| l["source"] == "permission_request")
        .expect("an audit line for the call")
}

#[test]
fn every_recorded_payload_is_decided_as_check_decides_its_acp_twin() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.workspace.join("src")).unwrap();
    for (agent, name, expected) in PAYLOADS {
        let before = audit(&sandbox).len();
        let output = hook(&sandbox, agent, &[], &fixture(&sandbox, agent, name, false));
        assert!(
            output.status.code().is_some(),
            "{agent}/{name}: {}",
            stderr(&output)
        );
        let lines = audit(&sandbox);
        assert!(lines.len() > before, "{agent}/{name}: nothing recorded");
        let hooked = call_line(&lines[before..]);
        let twin: Value = serde_json::from_str(&fixture(&sandbox, agent, name, true)).unwrap();
        let (checked, output) = sandbox.check(None, &[twin]);
        assert!(output.status.success(), "{}", stderr(&output));
        let checked = &checked[0];
        assert_eq!(hooked["decision"], *expected, "{agent}/{name}: {hooked}");
        assert_eq!(
            (&hooked["decision"], &hooked["reasons"], &hooked["kind"]),
            (&checked["decision"], &checked["reasons"], &checked["kind"]),
            "{agent}/{name}: the hook decided\n{hooked}\ncheck decided its twin\n{checked}"
        );
    }
}

#[test]
fn each_agent_is_answered_in_its_own_shape_and_exit_code() {
    let sandbox = Sandbox::new();
    let run = |agent: &str, name: &str| {
        let output = hook(&sandbox, agent, &[], &fixture(&sandbox, agent, name, false));
        let code = output.status.code().unwrap();
        (answer(&output), code, stderr(&output))
    };
    let decision = |answer: &Value| answer["hookSpecificOutput"]["permissionDecision"].clone();
    let reason = |answer: &Value| {
        answer["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };

    // Claude Code: permissionDecision allow / deny / ask, with the chain's reasons.
    let (allowed, code, _) = run("claude", "bash-cargo-test");
    assert_eq!((decision(&allowed), code), (json!("allow"), 0), "{allowed}");
    assert_eq!(allowed["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    let (denied, code, _) = run("claude", "bash-rm-home");
    assert_eq!((decision(&denied), code), (json!("deny"), 0));
    assert!(
        reason(&denied).contains("builtin-commands: recursive delete of the home directory"),
        "{denied}"
    );
    // An ask is Claude Code's own prompt, with the reasons shown to its user.
    let (asked, code, _) = run("claude", "mcp-tool");
    assert_eq!((decision(&asked), code), (json!("ask"), 0));
    assert!(reason(&asked).starts_with("acp-gate asks you to confirm this"));
    // In bypassPermissions, Claude Code might not show an ask: refused and escalated.
    let (bypassed, code, _) = run("claude", "bypass-webfetch");
    assert_eq!((decision(&bypassed), code), (json!("deny"), 0));
    assert!(
        reason(&bypassed).contains("in permission mode `bypassPermissions`")
            && reason(&bypassed).contains("escalated as esc-"),
        "{bypassed}"
    );
    // Its PermissionRequest hook answers with a decision's behavior.
    let (permitted, code, _) = run("claude", "permission-request-bash");
    assert_eq!(
        (permitted, code),
        (
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}),
            0
        )
    );

    // Codex takes only a deny before a tool: an allow is no answer (its own policy goes on),
    // and an ask, which it has no way to show, is refused and escalated.
    let (allowed, code, _) = run("codex", "bash-cargo-test");
    assert_eq!((allowed, code), (Value::Null, 0));
    let (denied, code, _) = run("codex", "apply-patch-bashrc");
    assert_eq!((decision(&denied), code), (json!("deny"), 0));
    assert!(reason(&denied).contains(".bashrc"), "{denied}");
    let (escalated, _, _) = run("codex", "mcp-tool");
    assert_eq!(decision(&escalated), "deny");
    assert!(reason(&escalated).contains("Codex cannot ask anyone here"));
    // At its own approval prompt, an ask lets Codex ask its user: no answer.
    let (passed, code, _) = run("codex", "permission-request-terraform");
    assert_eq!((passed, code), (Value::Null, 0));
    let (full_access, _, _) = run("codex", "full-access-terraform");
    assert_eq!(decision(&full_access), "deny");

    // Gemini CLI: decision allow / deny with a reason; no ask it can rely on.
    let (allowed, code, _) = run("gemini", "shell-cargo-test");
    assert_eq!((allowed, code), (json!({"decision": "allow"}), 0));
    let (denied, code, _) = run("gemini", "write-env");
    assert_eq!((&denied["decision"], code), (&json!("deny"), 0));
    assert!(
        denied["reason"].as_str().unwrap().contains(".env"),
        "{denied}"
    );
    let (escalated, _, _) = run("gemini", "web-fetch");
    assert_eq!(escalated["decision"], "deny");
    assert!(
        escalated["reason"]
            .as_str()
            .unwrap()
            .contains("Gemini CLI cannot ask anyone here")
    );

    // Copilot: permissionDecision at the top level, ask included; its VS Code form in kind.
    let (asked, code, _) = run("copilot", "web-fetch");
    assert_eq!((&asked["permissionDecision"], code), (&json!("ask"), 0));
    assert_eq!(
        asked["permissionDecisionReason"],
        "acp-gate asks you to confirm this: no handler had an opinion; the policy default is ask"
    );
    let (denied, _, _) = run("copilot", "bash-rm-home-args-as-text");
    assert_eq!(denied["permissionDecision"], "deny");
    let (vscode, _, _) = run("copilot", "vscode-bash-cargo-test");
    assert_eq!(decision(&vscode), "allow");

    // Every escalation is kept for an orchestrator, as `run --non-interactive`'s are.
    let kept = state_lines(&sandbox, "escalations.jsonl");
    let tools: Vec<&str> = kept.iter().filter_map(|e| e["tool"].as_str()).collect();
    for tool in [
        "WebFetch",
        "mcp__github__create_issue",
        "web_fetch",
        "permission_mode",
    ] {
        assert!(tools.contains(&tool), "{tool} not in {tools:?}");
    }
}

#[test]
fn the_audit_line_carries_the_agents_session_and_tool_use_ids() {
    let sandbox = Sandbox::new();
    let payload = fixture(&sandbox, "claude", "bash-rm-home", false);
    hook(&sandbox, "claude", &[], &payload);
    let lines = audit(&sandbox);
    let line = call_line(&lines);
    assert_eq!(line["session_id"], "b0c1a6e4-7d2f-4c38-9a51-3e6f2d8c9b10");
    assert_eq!(line["tool_call_id"], "toolu_01RmHome7Qp3x");
    assert_eq!(line["tool_name"], "Bash");
    // The agent, as `run` names its agent's program (the review service counts by it).
    assert_eq!(line["agent"], "claude");
    assert_eq!(line["answer"], "denied");
    assert_eq!(line["allowed"], false);
    // An ask passed on to the agent's prompt says so; its outcome is the agent's.
    hook(
        &sandbox,
        "claude",
        &[],
        &fixture(&sandbox, "claude", "mcp-tool", false),
    );
    let line = call_line(&audit(&sandbox)).clone();
    assert_eq!(line["answer"], "ask (agent)");
    assert!(line.get("allowed").is_none(), "{line}");
    // The mode a session is in is judged as `run` judges one, and recorded.
    hook(
        &sandbox,
        "claude",
        &[],
        &fixture(&sandbox, "claude", "bypass-bash-cargo-test", false),
    );
    let lines = audit(&sandbox);
    let mode = lines
        .iter()
        .rev()
        .find(|l| l["source"] == "mode_switch")
        .unwrap();
    assert_eq!(mode["decision"], "ask");
    assert_eq!(mode["title"], "Switch to mode bypassPermissions");
    assert_eq!(call_line(&lines)["decision"], "allow");
}

#[test]
fn whatever_fails_blocks_the_call_with_its_reason() {
    let sandbox = Sandbox::new();
    // Malformed or empty input: Claude Code, Codex and Gemini CLI block on exit code 2 with
    // the reason on stderr; Copilot ignores exit codes, so it is told deny.
    for (agent, input) in [("claude", "{not json"), ("codex", ""), ("gemini", "[1, 2]")] {
        let output = hook(&sandbox, agent, &[], input);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{agent}: {}",
            stderr(&output)
        );
        assert!(output.stdout.is_empty());
        assert!(
            stderr(&output).contains("acp-gate refused this call"),
            "{}",
            stderr(&output)
        );
    }
    let output = hook(&sandbox, "copilot", &[], "{\"toolName\": 3}");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(answer(&output)["permissionDecision"], "deny");
    // Such a request is recorded as one acp-gate could not read.
    let unreadable = audit(&sandbox);
    assert!(unreadable.len() >= 4);
    assert!(unreadable.iter().all(|l| l["decision"] == "deny"));
    assert!(
        unreadable[0]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("Claude Code's hook input: the hook's input is not JSON")
    );

    // An unreadable handlers.toml: blocked, naming the file.
    let bad = sandbox.write("bad/handlers.toml", "[[handler]\nname = ");
    let bad_arg = bad.display().to_string();
    let payload = fixture(&sandbox, "claude", "bash-cargo-test", false);
    let output = hook(&sandbox, "claude", &["--handlers", &bad_arg], &payload);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains(&bad_arg), "{}", stderr(&output));

    // A plugin that traps counts as its on_error verdict: deny, never allow.
    let plugin = test_plugin("misbehaving");
    let trapping = sandbox.write(
        "trap/handlers.toml",
        &format!(
            "[[handler]]\nname = \"trapper\"\nplugin = \"{}\"\non_error = \"deny\"\nconfig = {{ behaviour = \"panic\" }}\n",
            plugin.display()
        ),
    );
    let trapping = trapping.display().to_string();
    let output = hook(&sandbox, "claude", &["--handlers", &trapping], &payload);
    let told = answer(&output);
    assert_eq!(
        told["hookSpecificOutput"]["permissionDecision"], "deny",
        "{told}"
    );
    assert!(
        told["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("trapper: handler failed"),
        "{told}"
    );

    // An audit log that cannot be written: no decision is made without its record.
    let output = sandbox
        .command(&["hook", "gemini"])
        .env(
            "ACP_GATE_AUDIT_LOG",
            "/proc/acp-gate-cannot-write/audit.jsonl",
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            let payload = fixture(&sandbox, "gemini", "shell-cargo-test", false);
            child.stdin.take().unwrap().write_all(payload.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("audit log"), "{}", stderr(&output));
}

#[test]
fn a_plugin_left_out_of_a_hook_call_is_one_that_declared_it_would_abstain() {
    // The built-in org policy as a plugin file (its preparation is then kept in the user's
    // cache): with rules for edits only, it declares no interest in commands.
    let sandbox = Sandbox::new();
    let component = repo().join("target/wasm-plugins/wasm32-wasip2/release/org_policy.wasm");
    let plugin = sandbox.root.join("org_policy.wasm");
    std::fs::copy(&component, &plugin).unwrap();
    let handlers = sandbox.write(
        "p/handlers.toml",
        &format!(
            r#"
[[handler]]
name = "team"
plugin = "{}"
on_error = "deny"

[[handler.config.rules]]
name = "secrets"
decision = "deny"
reason = "touches secrets"
kinds = ["edit"]
paths = ["config/secrets/**"]
"#,
            plugin.display()
        ),
    );
    let handlers = handlers.display().to_string();
    let cache = sandbox.root.join("cache");
    let run = |name: &str| {
        let mut command = sandbox.command(&["hook", "claude", "--handlers", &handlers]);
        command.env("ACP_GATE_CACHE_DIR", &cache);
        answer(&pipe(
            &mut command,
            &fixture(&sandbox, "claude", name, false),
        ))
    };
    let decision = |answer: Value| answer["hookSpecificOutput"]["permissionDecision"].clone();
    // The first call loads it and keeps what it declared; the second leaves it out.
    assert_eq!(decision(run("bash-cargo-test")), "allow");
    assert!(
        std::fs::read_dir(&cache)
            .unwrap()
            .any(|e| { e.unwrap().file_name().to_string_lossy().ends_with(".json") })
    );
    assert_eq!(decision(run("bash-cargo-test")), "allow");
    // Left out, it still is what it declared: an edit of its interest is judged by it.
    let secret = fixture(&sandbox, "claude", "write-src", false)
        .replace("src/lib.rs", "config/secrets/prod.env");
    let mut command = sandbox.command(&["hook", "claude", "--handlers", &handlers]);
    command.env("ACP_GATE_CACHE_DIR", &cache);
    let told = answer(&pipe(&mut command, &secret));
    assert_eq!(decision(told.clone()), "deny", "{told}");
    // A plugin that would no longer load is not left out on the strength of what it said:
    // the file changed, so its on_error counts.
    std::fs::write(&plugin, b"\0asm\x0d\0\x01\0garbage").unwrap();
    let told = run("bash-cargo-test");
    assert_eq!(decision(told.clone()), "deny", "{told}");
}

/// A scratch home holding settings files, and `hook ARGS` run against it (never against the
/// settings directories the agents' variables name outside it).
fn install(sandbox: &Sandbox, args: &[&str]) -> Output {
    let mut command = sandbox.command(&[&["hook"][..], args].concat());
    for var in ["CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME"] {
        command.env_remove(var);
    }
    pipe(&mut command, "")
}

#[test]
fn an_empty_settings_directory_variable_means_the_agents_default() {
    let sandbox = Sandbox::new();
    for (agent, var, file) in [
        ("claude", "CLAUDE_CONFIG_DIR", ".claude/settings.json"),
        ("codex", "CODEX_HOME", ".codex/config.toml"),
        ("copilot", "COPILOT_HOME", ".copilot/hooks/acp-gate.json"),
    ] {
        let output = sandbox
            .command(&["hook", "install", agent])
            .env(var, "")
            .output()
            .unwrap();
        assert!(output.status.success(), "{agent}: {}", stderr(&output));
        assert!(sandbox.home.join(file).is_file(), "{agent}: no {file}");
    }
    // Nothing written where the command ran.
    assert!(
        std::fs::read_dir(&sandbox.workspace)
            .unwrap()
            .next()
            .is_none()
    );
}

#[test]
fn install_keeps_every_other_setting_and_hook_and_uninstall_takes_out_exactly_its_own() {
    let sandbox = Sandbox::new();
    let settings = sandbox.home.join(".claude/settings.json");
    let original = r#"{
  "model": "opus",
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [{"type": "command", "command": "npx prettier --write $FILE"}]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]
      }
    ]
  },
  "permissions": {"deny": ["Read(./.env)"], "defaultMode": "acceptEdits"},
  "someFutureKey": {"nested": [1, 2, 3]}
}
"#;
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, original).unwrap();

    // --dry-run shows the change and writes nothing.
    let output = install(&sandbox, &["install", "claude", "--dry-run"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(
        shown.contains("+            \"onFailure\": \"block\""),
        "{shown}"
    );
    assert!(shown.contains("nothing was written"));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);

    let output = install(&sandbox, &["install", "claude"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let installed = std::fs::read_to_string(&settings).unwrap();
    let value: Value = serde_json::from_str(&installed).unwrap();
    let pre = value["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2, "{installed}");
    assert_eq!(pre[0]["hooks"][0]["command"], "./guard.sh");
    assert_eq!(pre[1]["matcher"], "*");
    let ours = &pre[1]["hooks"][0];
    assert!(
        ours["command"]
            .as_str()
            .unwrap()
            .ends_with("acp-gate hook claude")
    );
    assert_eq!(ours["onFailure"], "block");
    // What the edit did not go into is as it was written.
    for kept in [
        r#""hooks": [{"type": "command", "command": "npx prettier --write $FILE"}]"#,
        r#""permissions": {"deny": ["Read(./.env)"], "defaultMode": "acceptEdits"},"#,
        r#""someFutureKey": {"nested": [1, 2, 3]}"#,
    ] {
        assert!(installed.contains(kept), "{kept} not in {installed}");
    }

    // Twice is once.
    let output = install(&sandbox, &["install", "claude"]);
    assert!(String::from_utf8_lossy(&output.stdout).contains("already"));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), installed);

    // Uninstall gives back the file as it was, byte for byte.
    let output = install(&sandbox, &["uninstall", "claude"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);
    let output = install(&sandbox, &["uninstall", "claude"]);
    assert!(String::from_utf8_lossy(&output.stdout).contains("nothing to take out"));
}

/// Every file and directory of the agents' settings as it is under `home` (acp-gate's own
/// state left out), with its text.
fn settings_tree(home: &std::path::Path) -> Vec<(String, Option<String>)> {
    let mut found = Vec::new();
    let mut dirs = vec![home.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let shown = path.strip_prefix(home).unwrap().display().to_string();
            if shown.starts_with(".local/state") || shown == ".local" {
                continue;
            }
            if path.is_dir() {
                found.push((shown, None));
                dirs.push(path);
            } else {
                found.push((shown, Some(std::fs::read_to_string(&path).unwrap())));
            }
        }
    }
    found.sort();
    found
}

#[test]
fn install_then_uninstall_leaves_every_agent_s_settings_as_they_were_absent_files_absent() {
    for agent in ["claude", "codex", "gemini", "copilot"] {
        // Nothing there before; then settings of the user's own beside which it goes.
        for before in [None, Some(agent)] {
            let sandbox = Sandbox::new();
            if before.is_some() {
                let (file, text) = match agent {
                    "claude" => (".claude/settings.json", "{\n  \"model\": \"opus\"\n}\n"),
                    "codex" => (".codex/config.toml", "model = \"gpt-5.5\" # mine\n"),
                    "gemini" => (".gemini/settings.json", "{\"ui\": {\"theme\": \"x\"}}\n"),
                    _ => (".copilot/config.json", "{}\n"),
                };
                sandbox.write(&format!("home/{file}"), text);
            }
            let original = settings_tree(&sandbox.home);
            let output = install(&sandbox, &["install", agent]);
            assert!(output.status.success(), "{agent}: {}", stderr(&output));
            assert_ne!(
                settings_tree(&sandbox.home),
                original,
                "{agent}: nothing installed"
            );
            let output = install(&sandbox, &["uninstall", agent]);
            assert!(output.status.success(), "{agent}: {}", stderr(&output));
            assert_eq!(
                settings_tree(&sandbox.home),
                original,
                "{agent}: uninstall did not leave the settings as they were"
            );
        }
    }
}

#[test]
fn codex_config_keeps_its_comments_and_other_hooks() {
    let sandbox = Sandbox::new();
    let config = sandbox.home.join(".codex/config.toml");
    let original = r#"# My Codex settings
model = "gpt-5-codex"   # the model I use
approval_policy = "on-request"

[hooks.state."/home/u/.codex/config.toml:pre_tool_use:0:0"]
trusted_hash = "sha256:0123"

# my own guard
[[hooks.PreToolUse]]
matcher = "^Bash$"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "python3 ~/guard.py"
"#;
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, original).unwrap();
    let output = install(&sandbox, &["install", "codex"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("trust"));
    let installed = std::fs::read_to_string(&config).unwrap();
    assert!(installed.starts_with(original), "{installed}");
    let parsed: toml::Table = toml::from_str(&installed).unwrap();
    for event in ["PreToolUse", "PermissionRequest"] {
        let groups = parsed["hooks"][event].as_array().unwrap();
        let last = groups.last().unwrap()["hooks"][0]["command"]
            .as_str()
            .unwrap();
        assert!(last.ends_with("acp-gate hook codex"), "{installed}");
    }
    install(&sandbox, &["install", "codex"]);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), installed);
    install(&sandbox, &["uninstall", "codex"]);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);
}

#[test]
fn a_project_install_is_refused_and_a_managed_one_goes_where_the_agent_reads_it() {
    let sandbox = Sandbox::new();
    for (agent, says) in [
        ("claude", "disableAllHooks"),
        ("codex", ".codex/config.toml"),
        ("gemini", "hooksConfig.disabled"),
        ("copilot", ".github/hooks"),
    ] {
        let output = install(&sandbox, &["install", agent, "--project"]);
        assert_eq!(output.status.code(), Some(1), "{agent}");
        assert!(
            stderr(&output).contains(says),
            "{agent}: {}",
            stderr(&output)
        );
        assert!(
            std::fs::read_dir(&sandbox.workspace)
                .unwrap()
                .next()
                .is_none()
        );
    }
    // Gemini CLI's system settings (its own variable points at them).
    let system = sandbox.root.join("etc/gemini-cli/settings.json");
    std::fs::create_dir_all(system.parent().unwrap()).unwrap();
    std::fs::write(&system, "{\n  \"hooksConfig\": {\"enabled\": true}\n}\n").unwrap();
    let output = sandbox
        .command(&["hook", "install", "gemini", "--managed"])
        .env("GEMINI_CLI_SYSTEM_SETTINGS_PATH", &system)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let installed: Value =
        serde_json::from_str(&std::fs::read_to_string(&system).unwrap()).unwrap();
    assert_eq!(installed["hooksConfig"]["enabled"], true);
    assert_eq!(
        installed["hooks"]["BeforeTool"][0]["hooks"][0]["name"],
        "acp-gate"
    );
    // Copilot has no machine-wide hooks: its own file in the user's hooks directory.
    let output = install(&sandbox, &["install", "copilot", "--managed"]);
    assert_eq!(output.status.code(), Some(1));
    install(&sandbox, &["install", "copilot"]);
    let own: Value = serde_json::from_str(
        &std::fs::read_to_string(sandbox.home.join(".copilot/hooks/acp-gate.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(own["version"], 1);
    assert!(
        own["hooks"]["preToolUse"][0]["bash"]
            .as_str()
            .unwrap()
            .ends_with("hook copilot")
    );
}

/// `acp-gate hook serve` running in the sandbox, stopped when dropped.
pub(crate) struct Server {
    pub(crate) child: std::process::Child,
    pub(crate) at: String,
}

impl Server {
    fn start(sandbox: &Sandbox, args: &[&str]) -> Server {
        Server::spawn(sandbox.command(&[&["hook", "serve"][..], args].concat()))
    }

    /// `command` (an `acp-gate hook serve`) started, once it listens.
    pub(crate) fn spawn(mut command: std::process::Command) -> Server {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let at = line
            .split("listening on ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_owned();
        Server { child, at }
    }

    /// POSTs `body` to `path` over `stream`; the status code and the body of the answer.
    pub(crate) fn post(
        mut stream: impl Read + Write,
        path: &str,
        body: &str,
        token: Option<&str>,
    ) -> (u16, String) {
        let auth = token
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default();
        write!(
            stream,
            "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let status = answer.split(' ').nth(1).unwrap().parse().unwrap();
        let body = answer
            .split("\r\n\r\n")
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        (status, body)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn hook_serve_answers_http_hooks_from_a_resident_chain() {
    let sandbox = Sandbox::new();
    let server = Server::start(&sandbox, &["--token", "s3cret"]);
    let connect = || std::net::TcpStream::connect(&server.at).unwrap();
    let payload = fixture(&sandbox, "claude", "bash-rm-home", false);
    let (status, body) = Server::post(connect(), "/hook/claude", &payload, Some("s3cret"));
    assert_eq!(status, 200);
    let told: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        told["hookSpecificOutput"]["permissionDecision"], "deny",
        "{told}"
    );
    // An HTTP hook has no exit code: what a process would block on is a deny.
    let (_, body) = Server::post(connect(), "/hook/claude", "{oops", Some("s3cret"));
    let told: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(told["hookSpecificOutput"]["permissionDecision"], "deny");
    // Without the token, nothing is decided.
    let (status, _) = Server::post(connect(), "/hook/claude", &payload, None);
    assert_eq!(status, 401);
    let (status, _) = Server::post(connect(), "/hook/cursor", &payload, Some("s3cret"));
    assert_eq!(status, 404);
    // Each call is recorded like a hook process's.
    let lines = audit(&sandbox);
    let line = lines
        .iter()
        .find(|l| l["tool_call_id"] == "toolu_01RmHome7Qp3x");
    assert_eq!(line.unwrap()["decision"], "deny");
    drop(server);

    // On a Unix socket.
    let socket: PathBuf = sandbox.root.join("hook.sock");
    let socket_arg = socket.display().to_string();
    let server = Server::start(&sandbox, &["--socket", &socket_arg]);
    assert_eq!(Path::new(&server.at), socket);
    let stream = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    let payload = fixture(&sandbox, "gemini", "shell-cargo-test", false);
    let (status, body) = Server::post(stream, "/hook/gemini", &payload, None);
    assert_eq!((status, body.trim()), (200, r#"{"decision":"allow"}"#));
}
