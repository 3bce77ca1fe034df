//! `acp-gate check` on requests exactly as Claude Code's adapter, Gemini CLI and Codex send
//! them (tests/fixtures/requests): the default chain's decisions, the option chosen by kind,
//! and the handler that decided.

use crate::common::{Sandbox, stderr, verdict_of};

/// fixture, decision, option id (chosen by kind from that agent's own ids), deciding handler.
const EXPECTED: &[(&str, &str, &str, &str)] = &[
    ("claude-bash-rm-home", "deny", "reject", "builtin-commands"),
    (
        "claude-bash-cargo-test",
        "allow",
        "allow",
        "builtin-commands",
    ),
    ("claude-edit-src", "allow", "allow", "builtin-paths"),
    ("claude-write-ssh-keys", "deny", "reject", "builtin-paths"),
    ("gemini-shell-curl-sh", "deny", "cancel", "builtin-commands"),
    ("gemini-write-env", "deny", "cancel", "builtin-paths"),
    ("codex-exec-force-push", "deny", "abort", "builtin-commands"),
    ("codex-exec-ls", "allow", "approved", "builtin-commands"),
];

#[test]
fn real_agent_wire_shapes_get_the_decisions_the_handlers_give() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.workspace.join("src")).unwrap();
    std::fs::write(sandbox.workspace.join("src/lib.rs"), "fn old() {}\n").unwrap();
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/requests");
    let mut args = vec!["check".to_owned(), "--format".to_owned(), "json".to_owned()];
    args.extend(
        EXPECTED
            .iter()
            .map(|(name, ..)| fixtures.join(format!("{name}.json")).display().to_string()),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = sandbox.run(&args, "");
    assert!(output.status.success(), "{}", stderr(&output));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), EXPECTED.len());
    for (line, (name, decision, option, handler)) in lines.iter().zip(EXPECTED) {
        assert_eq!(line["decision"], *decision, "{name}: {line}");
        assert_eq!(line["option_id"], *option, "{name}: {line}");
        assert_eq!(
            verdict_of(line, handler)["verdict"],
            *decision,
            "{name}: {handler} decided: {line}"
        );
        if *decision == "deny" {
            assert!(
                !line["reasons"][0].as_str().unwrap().is_empty(),
                "{name}: a deny has a reason"
            );
        }
    }
}
