//! An org policy is prepared once per load (rules compiled and indexed, examples checked) and
//! every request's fresh instance starts from that snapshot: the decisions are the rules',
//! a policy without rules is not run at all (nor the path validator on a request without
//! paths), a failing example stops the handler at load naming the rule, the snapshot is
//! compiled once into the user's cache, and a managed install's org handlers never take it
//! from there.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{Sandbox, claude_bash, stderr, verdict_of};

const RULES: &str = r#"
[[handler]]
name = "team"
plugin = "builtin:org-policy"

[[handler.config.rules]]
name = "tests"
decision = "allow"
prefix = [["cargo", "npm"], "test"]
match = ["cargo test --all", "npm test"]
not_match = ["cargo publish"]

[[handler.config.rules]]
name = "force-push"
decision = "deny"
reason = "rewrites shared history"
prefix = ["git", "push", ["--force", "-f"]]
match = ["git push --force origin main"]

[[handler.config.rules]]
name = "secrets"
decision = "ask"
reason = "touches secrets"
kinds = ["edit", "read"]
paths = ["config/secrets/**"]
match = [{ kind = "edit", path = "config/secrets/prod.env" }]
"#;

fn edit(path: &str) -> Value {
    json!({
        "sessionId": "s",
        "toolCall": {
            "toolCallId": "e", "title": format!("Edit {path}"), "kind": "edit",
            "rawInput": {"file_path": path, "old_string": "a", "new_string": "b"}
        },
        "options": [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"}
        ]
    })
}

/// What `team` says of each request, in order.
fn team_verdicts(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .map(|line| {
            verdict_of(line, "team")["verdict"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

fn entries(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| d.count())
}

#[test]
fn a_prepared_policy_decides_by_its_rules_and_its_snapshot_is_compiled_once() {
    let sandbox = Sandbox::new();
    let handlers = sandbox.write("p/handlers.toml", RULES);
    let handlers = handlers.display().to_string();
    let cache = sandbox.root.join("cache");
    let requests = [
        claude_bash("cargo test", "cargo test --all && npm test"),
        claude_bash("push", "git fetch && git push -f origin main"),
        claude_bash("publish", "cargo publish"),
        edit("config/secrets/dev.env"),
        edit("src/main.rs"),
    ];
    let expected = ["allow", "deny", "abstain", "ask", "abstain"];
    let (lines, _) = sandbox.check_cached(&cache, &["--handlers", &handlers], &requests);
    assert_eq!(team_verdicts(&lines), expected, "{lines:?}");
    assert_eq!(
        verdict_of(&lines[1], "team")["reason"],
        "rewrites shared history [force-push]"
    );
    // The default chain's org-policy has no rules: it said so at load and is not run; nor is
    // the path validator on a command without paths. It does run on an edit.
    for skipped in ["builtin-policy", "builtin-paths"] {
        let trace = verdict_of(&lines[0], skipped);
        assert_eq!(
            (&trace["verdict"], &trace["elapsed_us"]),
            (&json!("abstain"), &json!(0))
        );
    }
    let paths = verdict_of(&lines[3], "builtin-paths");
    assert!(paths["elapsed_us"].as_u64().unwrap() > 0, "{paths}");
    assert_eq!(paths["verdict"], "deny", "{paths}");
    // The instrumented plugin and the snapshot for this config and these places.
    let compiled = entries(&cache);
    assert!(compiled >= 1, "nothing compiled into {}", cache.display());

    let (lines, _) = sandbox.check_cached(&cache, &["--handlers", &handlers], &requests);
    assert_eq!(team_verdicts(&lines), expected, "{lines:?}");
    assert_eq!(entries(&cache), compiled, "the second load compiled again");

    // Another config is another snapshot, deciding by its own rules.
    let stricter = sandbox.write(
        "p/stricter.toml",
        &RULES.replace(
            "decision = \"allow\"",
            "decision = \"ask\"\nreason = \"CI runs the tests\"",
        ),
    );
    let stricter = stricter.display().to_string();
    let (lines, _) = sandbox.check_cached(&cache, &["--handlers", &stricter], &requests[..1]);
    assert_eq!(team_verdicts(&lines), ["ask"], "{lines:?}");
    assert_eq!(
        verdict_of(&lines[0], "team")["reason"],
        "CI runs the tests [tests]"
    );
    assert!(entries(&cache) > compiled);
}

#[test]
fn a_failing_example_stops_the_handler_at_load_naming_the_rule() {
    let sandbox = Sandbox::new();
    let broken = RULES.replace(
        r#"match = ["cargo test --all", "npm test"]"#,
        r#"match = ["cargo build"]"#,
    );
    let handlers = sandbox.write("p/handlers.toml", &broken);
    let (lines, output) =
        sandbox.check(Some(&handlers), &[claude_bash("cargo test", "cargo test")]);
    // The decision is made (the handler counts as its on_error), and `check` fails.
    assert_eq!(output.status.code(), Some(1));
    let error = stderr(&output);
    assert!(
        error.contains("handler `team`")
            && error.contains("failed to load")
            && error.contains("rule `tests`")
            && error.contains("cargo build"),
        "{error}"
    );
    let team = verdict_of(&lines[0], "team");
    assert_ne!(team["verdict"], "allow", "{team}");
    assert_ne!(lines[0]["decision"], "allow", "{}", lines[0]);
}

#[test]
fn a_managed_install_prepares_its_org_policy_without_the_users_cache() {
    let sandbox = Sandbox::new();
    let managed = sandbox.root.join("managed");
    std::fs::create_dir_all(&managed).unwrap();
    let org = sandbox.write(
        "etc/handlers.toml",
        &format!("[settings]\ncache_dir = \"{}\"\n{RULES}", managed.display()),
    );
    let user_cache = sandbox.root.join("user-cache");
    let requests = [
        claude_bash("cargo test", "cargo test"),
        claude_bash("push", "git push --force"),
    ];
    for _ in 0..2 {
        let (lines, _) = sandbox.check_cached(
            &user_cache,
            &["--org-handlers", &org.display().to_string()],
            &requests,
        );
        assert_eq!(team_verdicts(&lines), ["allow", "deny"], "{lines:?}");
        assert_eq!(
            entries(&user_cache),
            0,
            "the org's snapshot went to the user's cache"
        );
        assert_eq!(entries(&managed), 0, "the managed cache is only read");
    }
}
