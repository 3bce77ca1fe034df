//! A policy author's loop: `plugin validate --resolve` and `check` load a policy exactly as a
//! session does and fail (exit 1) when a handler would not load, naming it; the inline tests of
//! a handler that did not load fail first, with the load error; what ran is counted; an org
//! file's own requirements apply when a file is checked as one. A newcomer's: `check` decides
//! a request written on the command line, `chain` shows and explains the chain that applies,
//! and the demo and the docs name the same agent package.

use serde_json::Value;

use crate::common::{Sandbox, stderr, test_plugin};

/// An org-policy handler whose rule has a regex that does not compile, with two tests that
/// expect what a broken handler would give anyway (deny), before a handler that loads.
const BROKEN_REGEX: &str = r#"
[[handler]]
name = "company-rules"
plugin = "builtin:org-policy"

[[handler.config.rules]]
name = "no-prod"
decision = "deny"
reason = "production is off limits"
regex = 'kubectl (delete'

[[handler.test]]
command = "kubectl delete pod x"
expect = "deny"

[[handler.test]]
command = "kubectl get pods"
expect = "deny"
"#;

const WORKING: &str = r#"
[[handler]]
name = "no-push"
plugin = "builtin:org-policy"

[[handler.config.rules]]
name = "push"
decision = "deny"
reason = "pushes go through CI"
prefix = ["git", "push"]

[[handler.test]]
command = "git push origin main"
expect = "deny"

[[handler.test]]
command = "git status"
expect = "abstain"
"#;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `BROKEN_REGEX` without its tests: a handler that fails to load, nothing else wrong.
fn broken_without_tests() -> String {
    BROKEN_REGEX
        .split("[[handler.test]]")
        .next()
        .unwrap()
        .to_owned()
}

#[test]
fn validate_and_check_fail_on_an_org_handler_whose_regex_does_not_compile() {
    let sandbox = Sandbox::new();
    let org = sandbox.write("etc/handlers.toml", &broken_without_tests());
    let org = org.to_str().unwrap();

    let output = sandbox.run(&["plugin", "validate", "--resolve", org], "");
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stdout));
    let stdout = text(&output.stdout);
    // The rule named at its line in the file, with the regex crate's own message.
    assert!(
        stdout.contains("FAILED company-rules  plugin `builtin:org-policy` of handler `company-rules`: refuses its config: "),
        "{stdout}"
    );
    assert!(
        stdout.contains("etc/handlers.toml:10: rule `no-prod`: `regex`: invalid regex"),
        "{stdout}"
    );
    assert!(stderr(&output).contains("1 handler(s) would not load"));

    let output = sandbox.run(
        &["plugin", "validate", "--resolve", "--format", "json", org],
        "",
    );
    assert_eq!(output.status.code(), Some(1));
    let line: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(line["handler"], "company-rules");
    assert_eq!(line["ok"], false);
    assert!(
        line["error"].as_str().unwrap().contains("rule `no-prod`"),
        "{line}"
    );

    // `check` decides (the broken handler denies everything, as in a session) and fails.
    let output = sandbox.run(&["check", "--org-handlers", org, "--command", "ls"], "");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        text(&output.stdout).contains("DENY"),
        "{}",
        text(&output.stdout)
    );
    let errors = stderr(&output);
    assert!(
        errors.contains("handler `company-rules` (") && errors.contains("failed to load"),
        "{errors}"
    );
    assert!(errors.contains("1 handler(s) failed to load"), "{errors}");
}

#[test]
fn tests_of_a_handler_that_did_not_load_fail_first_whatever_they_expected() {
    let sandbox = Sandbox::new();
    // The working handler first, with a failing test of its own: the broken handler's tests
    // are still reported before it.
    let failing = WORKING.replace("expect = \"abstain\"", "expect = \"allow\"");
    let file = sandbox.write("p/handlers.toml", &format!("{failing}{BROKEN_REGEX}"));
    let file = file.to_str().unwrap();

    let output = sandbox.run(&["check", "--handlers", file, "--command", "ls"], "");
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stdout).is_empty(), "a session would not start");
    let errors = stderr(&output);
    let summary = errors
        .find("1 of 4 tests of 2 handlers passed; 3 failed")
        .unwrap_or_else(|| panic!("{errors}"));
    let unloaded = errors
        .find("handler `company-rules` did not load, so its 2 tests fail (lines 30, 34): plugin `builtin:org-policy`")
        .unwrap_or_else(|| panic!("{errors}"));
    let own = errors
        .find("handler `no-push` test[1]: expected allow, got abstain")
        .unwrap_or_else(|| panic!("{errors}"));
    assert!(summary < unloaded && unloaded < own, "{errors}");
    assert!(!errors.contains("expected deny, got deny"), "{errors}");

    // validate says the same, and which handler each failure belongs to.
    let output = sandbox.run(
        &[
            "plugin", "validate", "--as", "user", "--format", "json", file,
        ],
        "",
    );
    assert_eq!(output.status.code(), Some(1));
    let lines: Vec<Value> = text(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["handler"], "no-push");
    assert_eq!(lines[0]["tests"]["passed"], 1);
    assert_eq!(lines[1]["handler"], "company-rules");
    assert_eq!(lines[1]["tests"]["passed"], 0);
    assert_eq!(lines[1]["tests"]["failed"].as_array().unwrap().len(), 1);
}

#[test]
fn what_ran_is_counted_when_every_test_passes() {
    let sandbox = Sandbox::new();
    let second = WORKING.replace("no-push", "no-push-2");
    let file = sandbox.write("p/handlers.toml", &format!("{WORKING}{second}"));
    let file = file.to_str().unwrap();

    let output = sandbox.run(&["check", "--handlers", file, "--command", "git push"], "");
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("inline tests: 4 tests of 2 handlers passed"),
        "{}",
        stderr(&output)
    );
    let output = sandbox.run(&["plugin", "validate", "--as", "user", file], "");
    assert!(output.status.success(), "{}", text(&output.stdout));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("ok no-push  built in"), "{stdout}");
    assert!(
        stdout.ends_with("4 tests of 2 handlers passed\n"),
        "{stdout}"
    );
}

#[test]
fn an_org_file_must_pin_its_plugin_files_and_the_error_says_how() {
    let sandbox = Sandbox::new();
    let plugin = test_plugin("misbehaving");
    let file = sandbox.write(
        "team/handlers.toml",
        &format!(
            "[[handler]]\nname = \"guard\"\nplugin = \"{}\"\nconfig = {{ behaviour = \"allow-unless-rm\" }}\n",
            plugin.display()
        ),
    );
    let file = file.to_str().unwrap();
    for args in [
        &["plugin", "validate", "--as", "org", file][..],
        &["plugin", "validate", "--resolve", file],
        &["check", "--org-handlers", file, "--command", "ls"],
    ] {
        let output = sandbox.run(args, "");
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let errors = stderr(&output);
        assert!(
            errors.contains("handlers.toml:3: handler[0].sha256: an org file must pin every plugin file by sha256")
                && errors.contains(&format!("`acp-gate plugin hash {}` prints", plugin.display())),
            "{args:?}: {errors}"
        );
    }
    // The same file as a user's or a project's needs no pin.
    for layer in ["user", "project"] {
        let output = sandbox.run(&["plugin", "validate", "--as", layer, file], "");
        assert!(output.status.success(), "{layer}: {}", stderr(&output));
        assert!(text(&output.stdout).starts_with("ok guard  "), "{layer}");
    }
}

#[test]
fn check_decides_a_request_written_on_the_command_line() {
    let sandbox = Sandbox::new();
    let check = |args: &[&str]| {
        let output = sandbox.run(&[&["check"], args].concat(), "");
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        text(&output.stdout)
    };
    let json = |args: &[&str]| -> Value {
        serde_json::from_str(&check(&[&["--format", "json"], args].concat())).unwrap()
    };

    let out = check(&["--command", "git push --force origin main"]);
    assert!(
        out.starts_with("command line  DENY  execute git push --force origin main\n"),
        "{out}"
    );
    assert!(out.contains("builtin-commands  deny"), "{out}");
    let line = json(&["--command", "git push --force origin main"]);
    assert_eq!(
        (&line["source"], &line["kind"], &line["decision"]),
        (&"command line".into(), &"execute".into(), &"deny".into())
    );

    let line = json(&[
        "--kind",
        "edit",
        "--path",
        "src/x.rs",
        "--content",
        "fn main() {}",
    ]);
    assert_eq!(
        (&line["kind"], &line["decision"]),
        (&"edit".into(), &"allow".into())
    );
    assert_eq!(line["subject"], "src/x.rs");

    let line = json(&["--path", "~/.ssh/id_rsa"]);
    assert_eq!(
        (&line["kind"], &line["decision"]),
        (&"read".into(), &"deny".into())
    );

    let out = check(&["--url", "https://example.com/install.sh"]);
    assert!(
        out.starts_with("command line  ASK  fetch https://example.com/install.sh\n"),
        "{out}"
    );

    // `--argv` takes the rest of the line, options included.
    let line = json(&["--argv", "rm", "-rf", "/"]);
    assert_eq!(line["decision"], "deny");
    assert_eq!(line["subject"], "rm -rf /");

    let output = sandbox.run(&["check", "--kind", "bogus", "--path", "x"], "");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("kinds: read, edit"),
        "{}",
        stderr(&output)
    );
    let output = sandbox.run(&["check"], "");
    assert_eq!(output.status.code(), Some(2));
}

/// `check` shows what a request does beside the verdicts: the paths and what each undergoes,
/// every program a command runs (with the variables set for it, its redirections and where it
/// runs) and what the reading could not see through; `--format json` carries the same.
#[test]
fn check_shows_the_effects_it_read_beside_the_verdicts() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.root.join("workspace").display().to_string();
    let command = "FOO=1 cat src/a.rs | grep x > out.txt && (cd build && make) ; eval \"$X\"";
    let output = sandbox.run(&["check", "--command", command], "");
    let out = text(&output.stdout);
    for shown in [
        "what it does:".to_owned(),
        "run      FOO=1 cat src/a.rs".to_owned(),
        format!("run      grep x > {workspace}/out.txt"),
        format!("run      make  (in {workspace}/build)"),
        "unseen ".to_owned(),
    ] {
        assert!(out.contains(&shown), "no {shown} in:\n{out}");
    }
    let output = sandbox.run(&["check", "--format", "json", "--command", command], "");
    let line: Value = serde_json::from_str(&text(&output.stdout)).unwrap();
    let runs = line["effects"]["runs"].as_array().unwrap();
    let argv: Vec<&Value> = runs.iter().map(|r| &r["argv"][0]).collect();
    assert_eq!(argv, ["cat", "grep", "cd", "make", "eval"], "{line}");
    assert_eq!(runs[0]["env"], serde_json::json!(["FOO=1"]));
    assert_eq!(
        runs[1]["writes"],
        serde_json::json!([format!("{workspace}/out.txt")])
    );
    assert!(
        !line["effects"]["unseen"].as_array().unwrap().is_empty(),
        "{line}"
    );

    let line: Value = {
        let args = [
            "check",
            "--format",
            "json",
            "--kind",
            "delete",
            "--path",
            "old/x.txt",
        ];
        serde_json::from_str(&text(&sandbox.run(&args, "").stdout)).unwrap()
    };
    assert_eq!(
        line["effects"]["paths"],
        serde_json::json!([{"does": "delete", "path": format!("{workspace}/old/x.txt")}])
    );
    assert_eq!(line["effects"]["runs"], serde_json::json!([]));
}

#[test]
fn chain_explains_the_default_chain_and_the_readme_says_the_same() {
    let sandbox = Sandbox::new();
    let output = sandbox.run(&["chain"], "");
    assert!(output.status.success(), "{}", stderr(&output));
    let stdout = text(&output.stdout);
    for layer in ["org      none (", "project  none (", "user     none ("] {
        assert!(stdout.contains(layer), "{layer}: {stdout}");
    }
    assert!(
        stdout.contains("builtin  the built-in default chain\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  builtin-policy  builtin:org-policy\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "      required · on error deny · applies to execute · grants log, paths, wasi-cli\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("default  ask when every handler abstains"),
        "{stdout}"
    );

    let output = sandbox.run(&["chain", "--format", "json"], "");
    let chain: Value = serde_json::from_slice(&output.stdout).unwrap();
    let handlers = chain["handlers"].as_array().unwrap();
    let names: Vec<&str> = handlers
        .iter()
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "builtin-paths",
            "builtin-commands",
            "builtin-modes",
            "builtin-policy"
        ]
    );
    let readme = std::fs::read_to_string(crate::common::repo().join("README.md")).unwrap();
    for handler in handlers {
        let purpose = handler["purpose"].as_str().unwrap();
        assert!(stdout.contains(purpose), "{purpose}: {stdout}");
        // The README's table of the built-in handlers carries the same sentence.
        let row = format!(
            "| `{}` | `{}` | {} |",
            handler["name"].as_str().unwrap(),
            handler["plugin"].as_str().unwrap(),
            purpose.replace('|', "\\|")
        );
        assert!(readme.contains(&row), "README.md lacks the row {row}");
    }
    assert_eq!(
        handlers[0]["grants"],
        serde_json::json!(["log", "paths", "wasi-cli"])
    );
    assert_eq!(handlers[1]["applies_to"], serde_json::json!(["execute"]));
}

#[test]
fn chain_shows_every_layer_file_with_its_handlers_and_fails_on_one_that_does_not_load() {
    let sandbox = Sandbox::new();
    let org = sandbox.write("etc/handlers.toml", WORKING);
    sandbox.write(
        "workspace/.acp-gate/handlers.toml",
        &WORKING.replace("no-push", "project-push").replace(
            "[[handler.config.rules]]",
            "applies_to = [\"execute\"]\n\n[[handler.config.rules]]",
        ),
    );
    let user = sandbox.write(
        "home/.config/acp-gate/handlers.toml",
        &broken_without_tests().replace("company-rules", "my-rules"),
    );
    let output = sandbox.run(&["chain", "--org-handlers", org.to_str().unwrap()], "");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let stdout = text(&output.stdout);
    let at = |needle: &str| {
        stdout
            .find(needle)
            .unwrap_or_else(|| panic!("no `{needle}` in\n{stdout}"))
    };
    let order = [
        at(&format!(
            "org      {}\n  no-push  builtin:org-policy\n",
            org.display()
        )),
        at(&format!(
            "project  {}\n  project-push  builtin:org-policy\n      required · on error deny · applies to execute · grants log, wasi-cli · 2 inline tests\n",
            sandbox.workspace.join(".acp-gate/handlers.toml").display()
        )),
        at(&format!(
            "user     {}\n  my-rules  builtin:org-policy\n",
            user.display()
        )),
        at("      FAILED to load: plugin `builtin:org-policy` of handler `my-rules`"),
        at("builtin  the built-in default chain\n"),
        at("tests    4 tests of 2 handlers passed"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{stdout}");
}

#[test]
fn the_demo_suggests_the_agent_package_the_docs_name() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .command(&["demo"])
        .env("TMPDIR", &sandbox.root)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    let suggested = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("gate a real agent:"))
        .unwrap_or_else(|| panic!("{stdout}"))
        .trim();
    assert_eq!(
        suggested,
        "acp-gate run -- npx -y @zed-industries/claude-agent-acp"
    );
    let repo = crate::common::repo();
    for doc in ["README.md", "docs/editors.md"] {
        let text = std::fs::read_to_string(repo.join(doc)).unwrap();
        assert!(text.contains("@zed-industries/claude-agent-acp"), "{doc}");
        assert!(
            !text.contains("claude-code-acp"),
            "{doc} names the old package"
        );
    }
}
