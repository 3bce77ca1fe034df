//! Plugins that misbehave are contained: every failure becomes the handler's `on_error`
//! verdict (never allow), and the next request is decided normally.

use serde_json::{Value, json};

use crate::common::{
    BIN, Sandbox, claude_bash, pipe, sha256_of, stderr, test_plugin, titled, verdict_of,
};

/// A policy with one `misbehaving` handler whose behaviour is the request's title.
fn policy(sandbox: &Sandbox, extra: &str) -> std::path::PathBuf {
    let plugin = test_plugin("misbehaving");
    sandbox.write(
        "policy/handlers.toml",
        &format!(
            r#"
[[handler]]
name = "wild"
plugin = "{}"
timeout_ms = 100
memory_mb = 16
config = {{ behaviour = "by-title" }}
{extra}
"#,
            plugin.display()
        ),
    )
}

#[test]
fn every_failure_is_denied_and_the_next_request_is_decided_normally() {
    let sandbox = Sandbox::new();
    let handlers = policy(&sandbox, "");
    let titles = [
        "loop", "allow", "alloc", "allow", "panic", "allow", "error", "allow",
    ];
    let requests: Vec<Value> = titles.iter().map(|t| titled(t)).collect();
    let (lines, output) = sandbox.check(Some(&handlers), &requests);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(lines.len(), titles.len());
    let expected_error = [
        "CPU deadline of 100 ms",
        "",
        "memory limit of 16 MiB",
        "",
        "trapped",
        "",
        "plugin error: cannot judge this",
        "",
    ];
    for ((line, title), error) in lines.iter().zip(titles).zip(expected_error) {
        let wild = verdict_of(line, "wild");
        if title == "allow" {
            assert_eq!(line["decision"], "allow", "{line}");
            assert_eq!(line["option_id"], "yes");
            assert!(wild.get("error").is_none());
        } else {
            assert_eq!(line["decision"], "deny", "{title}: {line}");
            assert_eq!(line["option_id"], "no");
            assert_eq!(wild["verdict"], "deny");
            let message = wild["error"].as_str().unwrap();
            assert!(message.contains(error), "{title}: {message}");
        }
    }
}

#[test]
fn nothing_survives_from_one_request_to_the_next() {
    // Instances come from a pool whose slots are reused, some made ahead as spares, some with
    // their pages kept resident and restored by copying: each must start wiped.
    let sandbox = Sandbox::new();
    let handlers = policy(&sandbox, "");
    let requests: Vec<Value> = (0..20).map(|_| titled("count")).collect();
    let (lines, output) = sandbox.check(Some(&handlers), &requests);
    assert!(output.status.success(), "{}", stderr(&output));
    for line in &lines {
        assert_eq!(verdict_of(line, "wild")["reason"], "call 1", "{line}");
    }
}

#[test]
fn on_error_ask_and_optional_abstain_are_honoured() {
    let sandbox = Sandbox::new();
    let handlers = policy(&sandbox, "on_error = \"ask\"");
    let (lines, _) = sandbox.check(Some(&handlers), &[titled("panic")]);
    assert_eq!(lines[0]["decision"], "ask");

    let handlers = policy(&sandbox, "control = \"optional\"\non_error = \"abstain\"");
    let (lines, _) = sandbox.check(Some(&handlers), &[titled("panic")]);
    assert_eq!(verdict_of(&lines[0], "wild")["verdict"], "abstain");
    assert_eq!(
        lines[0]["decision"], "ask",
        "all abstain: the default decides"
    );
    assert_eq!(lines[0]["by_default"], true);

    let handlers = policy(&sandbox, "on_error = \"abstain\"");
    let (_, output) = sandbox.check(Some(&handlers), &[titled("allow")]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("handler[0].on_error: `abstain` is only for optional handlers"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn reasons_are_bounded_and_cannot_drive_the_terminal() {
    let sandbox = Sandbox::new();
    let handlers = policy(&sandbox, "");
    let (lines, _) = sandbox.check(
        Some(&handlers),
        &[
            titled("huge-reason"),
            titled("escapes"),
            titled("empty-deny"),
        ],
    );
    let huge = verdict_of(&lines[0], "wild")["reason"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(lines[0]["decision"], "deny");
    assert!(huge.chars().count() <= 2001, "{} chars", huge.len());
    let escapes = verdict_of(&lines[1], "wild")["reason"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(lines[1]["decision"], "ask");
    assert!(
        !escapes.contains('\x1b') && !escapes.contains('\x07') && !escapes.contains('\u{202e}'),
        "{escapes:?}"
    );
    assert_eq!(lines[2]["decision"], "deny");
    assert_eq!(verdict_of(&lines[2], "wild")["reason"], "denied");
}

#[test]
fn a_plugin_importing_the_filesystem_is_refused_unless_granted_and_then_sees_no_files() {
    let sandbox = Sandbox::new();
    let plugin = test_plugin("fs-reader");
    let entry = |imports: &str| {
        format!(
            "[[handler]]\nname = \"reader\"\nplugin = \"{}\"\n{imports}\n",
            plugin.display()
        )
    };
    let handlers = sandbox.write("a/handlers.toml", &entry(""));
    let (lines, output) = sandbox.check(Some(&handlers), &[titled("anything")]);
    assert_eq!(lines[0]["decision"], "deny");
    let error = verdict_of(&lines[0], "reader")["error"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        error.contains("imports what its handler does not grant: "),
        "{error}"
    );
    assert!(
        error.contains("`wasi:filesystem/types@0.2.6` (needs the `wasi-filesystem` grant)"),
        "{error}"
    );
    assert!(
        stderr(&output).contains("failed to load"),
        "{}",
        stderr(&output)
    );

    // Granted, it loads, but the sandbox has no preopened directory: /etc/passwd is not there.
    let handlers = sandbox.write(
        "b/handlers.toml",
        &entry("imports = [\"log\", \"wasi-cli\", \"wasi-clocks\", \"wasi-filesystem\"]"),
    );
    let (lines, _) = sandbox.check(Some(&handlers), &[titled("anything")]);
    assert_eq!(
        verdict_of(&lines[0], "reader")["verdict"],
        "allow",
        "{}",
        lines[0]
    );
}

#[test]
fn a_sha256_pin_that_does_not_match_is_refused() {
    let sandbox = Sandbox::new();
    let plugin = test_plugin("misbehaving");
    let wrong = "0".repeat(64);
    let handlers = sandbox.write(
        "p/handlers.toml",
        &format!("[[handler]]\nname = \"pinned\"\nplugin = \"{}\"\nsha256 = \"{wrong}\"\nconfig = {{ behaviour = \"allow\" }}\n", plugin.display()),
    );
    let (lines, _) = sandbox.check(Some(&handlers), &[titled("x")]);
    assert_eq!(lines[0]["decision"], "deny");
    let error = verdict_of(&lines[0], "pinned")["error"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(error.contains("sha256 mismatch"), "{error}");

    let digest = sha256_of(&plugin);
    let handlers = sandbox.write(
        "q/handlers.toml",
        &format!("[[handler]]\nname = \"pinned\"\nplugin = \"{}\"\nsha256 = \"{digest}\"\nconfig = {{ behaviour = \"allow\" }}\n", plugin.display()),
    );
    let (lines, _) = sandbox.check(Some(&handlers), &[titled("x")]);
    assert_eq!(lines[0]["decision"], "allow", "{}", lines[0]);
}

#[test]
fn a_core_module_or_junk_is_not_a_component() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.root.join("core.wasm"), b"\0asm\x01\0\0\0").unwrap();
    std::fs::write(sandbox.root.join("junk.wasm"), b"#!/bin/sh\necho hi\n").unwrap();
    let handlers = sandbox.write(
        "handlers.toml",
        "[[handler]]\nname = \"core\"\nplugin = \"core.wasm\"\n[[handler]]\nname = \"junk\"\nplugin = \"junk.wasm\"\n",
    );
    let (lines, _) = sandbox.check(Some(&handlers), &[titled("x")]);
    assert_eq!(lines[0]["decision"], "deny");
    assert!(
        verdict_of(&lines[0], "core")["error"]
            .as_str()
            .unwrap()
            .contains("core WebAssembly module, not a component")
    );
    assert!(
        verdict_of(&lines[0], "junk")["error"]
            .as_str()
            .unwrap()
            .contains("not a WebAssembly component")
    );
}

#[test]
fn plugin_logs_reach_the_trace() {
    let sandbox = Sandbox::new();
    let handlers = policy(&sandbox, "");
    let (lines, _) = sandbox.check(Some(&handlers), &[titled("log")]);
    assert_eq!(
        verdict_of(&lines[0], "wild")["logs"],
        json!(["info: hello from the plugin"])
    );
}

#[test]
fn with_little_address_space_instances_are_made_one_by_one_and_still_contained() {
    // The instance pool reserves ~1 TiB of address space; under `ulimit -v` it cannot, and
    // acp-gate must still decide (and still wipe every instance), saying why it is slower.
    let sandbox = Sandbox::new();
    let handlers = policy(&sandbox, "");
    let mut command = std::process::Command::new("sh");
    command.args(["-c", "ulimit -v 2000000 && exec \"$0\" \"$@\"", BIN]);
    command.args(["check", "--format", "json", "--handlers"]);
    command.arg(&handlers).arg("-");
    sandbox.confine(&mut command);
    let requests: Vec<Value> = (0..3).map(|_| titled("count")).collect();
    let mut requests: String = requests.iter().map(|r| format!("{r}\n")).collect();
    requests.push_str(&format!("{}\n", claude_bash("Bash", "rm -rf ~")));
    let output = pipe(&mut command, &requests);
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    assert!(err.contains("instance pool could not be set up"), "{err}");
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4, "{err}");
    for line in &lines[..3] {
        assert_eq!(verdict_of(line, "wild")["reason"], "call 1", "{line}");
    }
    assert_eq!(lines[3]["decision"], "deny", "{}", lines[3]);
}
