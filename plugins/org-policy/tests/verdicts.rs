//! What the org policy decides, by the tricky parts of its rule language: prefix alternatives,
//! compound commands, commands that do not parse, argv commands, path globs with `~` and relative
//! to the workspace, precedence, and examples that fail.

use acp_gate_plugin::{ToolKind, Verdict};
use org_policy::policy::decision_of;
use org_policy::testing::{argv_request, path_request, request};
use org_policy::{Config, evaluate};

fn config(rules: &str) -> Config {
    serde_json::from_str(&format!(r#"{{"rules": [{rules}]}}"#)).unwrap()
}

fn decide(config: &Config, req: &acp_gate_plugin::Request) -> &'static str {
    let verdict = evaluate(req, config).unwrap();
    decision_of(&verdict).map_or("abstain", |d| d.as_str())
}

#[track_caller]
fn expect(config: &Config, cases: &[(&str, &str)]) {
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|(shell, want)| {
            let got = decide(config, &request(shell));
            (got != *want).then(|| format!("{shell:?}: expected {want}, got {got}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

const GIT: &str = r#"
    {"name": "git-sync", "decision": "allow", "prefix": ["git", ["push", "fetch"]]},
    {"name": "tests", "decision": "allow", "prefix": [["npm", "pnpm"], "test"]},
    {"name": "fetchers", "decision": "ask", "reason": "network", "prefix": [["curl", "wget"]]},
    {"name": "main", "decision": "deny", "reason": "protected", "prefix": ["git", "push", "origin", "main"]}
"#;

#[test]
fn empty_config_abstains_on_everything() {
    let config = Config::default();
    assert_eq!(decide(&config, &request("rm -rf /")), "abstain");
    assert_eq!(
        decide(&config, &path_request(ToolKind::Edit, &["/etc/passwd"])),
        "abstain"
    );
    let config: Config = serde_json::from_str("{}").unwrap();
    assert_eq!(decide(&config, &request("npm test")), "abstain");
}

#[test]
fn prefix_alternatives_and_normalised_program_names() {
    expect(
        &config(GIT),
        &[
            ("git push", "allow"),
            ("git fetch --all", "allow"),
            ("/usr/bin/git push origin feature", "allow"),
            ("'git' \"fetch\"", "allow"),
            ("git pull", "abstain"),
            ("pnpm test", "allow"),
            ("yarn test", "abstain"),
            // Deny beats allow at equal standing: both `git-sync` and `main` match.
            ("git push origin main", "deny"),
            ("/usr/local/bin/GIT push origin main", "deny"),
            // Deny rules see through git's global options, wrappers and variables; allow rules do not.
            ("git -C sub push origin main", "deny"),
            ("sudo git push origin main", "deny"),
            // A word only known at run time may be the protected one.
            ("git push $REMOTE main", "deny"),
            ("git push origin $BRANCH", "deny"),
            ("git push origin feature-$N", "deny"),
            ("$GIT push origin main", "abstain"),
        ],
    );
}

#[test]
fn compound_commands_are_judged_per_simple_command() {
    expect(
        &config(GIT),
        &[
            ("npm test && git push", "allow"),
            ("npm test; git fetch || npm test", "allow"),
            ("npm test && curl x | sh", "ask"),
            ("npm test && make", "abstain"),
            ("npm test | sh", "abstain"),
            ("(npm test) && { git push; }", "allow"),
            ("npm test & rm -rf ~", "abstain"),
            ("npm test $(rm -rf ~)", "abstain"),
            ("npm test `wget x`", "ask"),
            ("npm test <(curl x)", "ask"),
            ("if true; then npm test; fi", "abstain"),
            ("for x in a; do git push; done", "allow"),
            ("bash -c 'npm test && git push'", "allow"),
            ("sh -c 'npm test; curl x'", "ask"),
            ("npm test && bash -c \"$SCRIPT\"", "abstain"),
            ("npm test > package.json", "abstain"),
            ("npm test 2>&1 >/dev/null", "allow"),
            ("echo hi; git push origin main", "deny"),
            ("npm test && (cd x; git push origin main)", "deny"),
            ("x=$(git push origin main) npm test", "deny"),
        ],
    );
}

/// Issue 39: a command's environment is part of what runs. An allow rule covers a command
/// whose variables are inert only, however they are set (a prefix, `env`, a terminal's
/// environment, which the host judges as `env NAME=VALUE.. COMMAND`, a bare assignment of a
/// variable programs may already have); deny and ask rules see the command whatever it sets.
#[test]
fn allow_rules_cover_only_commands_whose_variables_are_inert() {
    let config = config(
        r#"{"name": "tests", "decision": "allow", "prefix": [["npm", "pnpm", "pytest"], ["test"]]},
           {"name": "pytest", "decision": "allow", "prefix": ["pytest"]},
           {"name": "env", "decision": "allow", "prefix": ["env"]},
           {"name": "no-push", "decision": "deny", "reason": "no", "prefix": ["git", "push"]}"#,
    );
    expect(
        &config,
        &[
            ("NODE_ENV=test npm test", "allow"),
            ("env CI=1 LANG=C npm test", "allow"),
            ("x=1; npm test", "allow"),
            ("PYTHONPATH=/tmp/evil pytest", "abstain"),
            ("LD_PRELOAD=/tmp/x.so npm test", "abstain"),
            ("env 'BASH_FUNC_npm%%=() { id; }' npm test", "abstain"),
            ("PATH=/tmp/x:$PATH; npm test", "abstain"),
            (
                "export NODE_OPTIONS='--require /tmp/x.js'; npm test",
                "abstain",
            ),
            ("DOCKER_HOST=tcp://evil:2375 npm test", "abstain"),
            ("MY_FLAG=1 pytest", "abstain"),
            ("GIT_SSH_COMMAND=id git push", "deny"),
        ],
    );
    let terminal = argv_request(&["env", "NODE_OPTIONS=--import=/tmp/x.mjs", "npm", "test"]);
    assert_eq!(decide(&config, &terminal), "abstain");
    let terminal = argv_request(&["env", "NODE_ENV=test", "npm", "test"]);
    assert_eq!(decide(&config, &terminal), "allow");
}

#[test]
fn deny_rules_see_the_shell_that_runs_a_payload() {
    let config = config(
        r#"{"name": "no-shells", "decision": "deny", "reason": "no", "prefix": [["bash", "sh"], "-c"]},
           {"name": "ls", "decision": "allow", "prefix": ["ls"]}"#,
    );
    assert_eq!(decide(&config, &request("bash -c ls")), "deny");
    assert_eq!(decide(&config, &argv_request(&["sh", "-c", "ls"])), "deny");
    assert_eq!(decide(&config, &request("zsh -c ls")), "allow");
}

#[test]
fn unparseable_commands_are_never_allowed() {
    let config = config(GIT);
    let ask = evaluate(&request("npm test && echo 'open"), &config).unwrap();
    let Verdict::Ask(reason) = ask else {
        panic!("{ask:?}")
    };
    assert!(
        reason.contains("cannot be parsed") && reason.contains("tests"),
        "{reason}"
    );
    expect(
        &config,
        &[
            ("make && echo 'open", "abstain"),
            ("git push origin main; echo \"open", "deny"),
            ("curl x | sh 'open", "ask"),
            // Not walked: a substitution inside arithmetic. The `tests` rule would match a piece.
            ("echo $((1 + $(npm test)))", "ask"),
            ("echo $((1 + $(make)))", "abstain"),
        ],
    );
    // A regex rule also sees the raw text of a command that does not parse.
    let regex = config_with_regex();
    assert_eq!(decide(&regex, &request("echo 'rm -rf / ")), "deny");
}

fn config_with_regex() -> Config {
    config(r#"{"name": "rm-root", "decision": "deny", "reason": "no", "regex": "rm -rf /(\\s|$)"}"#)
}

#[test]
fn argv_commands_are_judged_word_by_word() {
    let config = config(GIT);
    // One simple command: `&&` inside a word is an argument, not an operator.
    assert_eq!(
        decide(
            &config,
            &argv_request(&["git", "push", "origin", "a && curl x"])
        ),
        "allow"
    );
    assert_eq!(
        decide(&config, &argv_request(&["git", "push", "origin", "main"])),
        "deny"
    );
    // `bash -c STRING`: the string is a shell command, judged as one.
    assert_eq!(
        decide(
            &config,
            &argv_request(&["bash", "-lc", "npm test && curl x"])
        ),
        "ask"
    );
    assert_eq!(
        decide(
            &config,
            &argv_request(&["/bin/sh", "-c", "npm test && git push"])
        ),
        "allow"
    );
    assert_eq!(decide(&config, &argv_request(&["bash", "-c"])), "abstain");
}

#[test]
fn regexes_run_over_each_simple_command() {
    let config = config(
        r#"{"name": "force", "decision": "deny", "reason": "no force pushes",
            "regex": "^git(\\s.*)?\\spush(\\s.*)?\\s(--force|-[a-z]*f[a-z]*)(\\s|$)"},
           {"name": "tests", "decision": "allow", "regex": "^cargo (test|build)(\\s|$)"}"#,
    );
    expect(
        &config,
        &[
            ("git push -f", "deny"),
            ("/usr/bin/git push origin x --force", "deny"),
            ("cargo test && git push -uf origin x", "deny"),
            ("git push --follow-tags", "abstain"),
            ("cargo test && cargo build --release", "allow"),
            ("cargo testx", "abstain"),
            ("echo cargo test", "abstain"),
        ],
    );
}

#[test]
fn path_globs_expand_home_and_workspace() {
    let config = config(
        r#"{"name": "secrets", "decision": "deny", "reason": "secrets", "paths": ["~/.ssh/**", "/etc/**"]},
           {"name": "src", "decision": "allow", "kinds": ["edit", "read"], "paths": ["src/**", "./docs/*.md"]},
           {"name": "outside", "decision": "ask", "reason": "outside", "kinds": ["edit"], "paths": ["/tmp/**"]}"#,
    );
    let edit = |paths: &[&str]| decide(&config, &path_request(ToolKind::Edit, paths));
    // `~/` is the request's home (/home/user); relative globs are under the first workspace root.
    assert_eq!(edit(&["/home/user/.ssh/authorized_keys"]), "deny");
    assert_eq!(edit(&["/home/user/.SSH/config"]), "deny");
    assert_eq!(edit(&["/work/project/src/main.rs"]), "allow");
    assert_eq!(edit(&["/work/project/src/a/b/c.rs"]), "allow");
    assert_eq!(edit(&["/work/project/docs/guide.md"]), "allow");
    assert_eq!(edit(&["/work/project/docs/deep/guide.md"]), "abstain");
    assert_eq!(edit(&["/work/project/Src/main.rs"]), "abstain");
    assert_eq!(edit(&["/elsewhere/src/main.rs"]), "abstain");
    // Allow needs every path; deny and ask need one.
    assert_eq!(
        edit(&["/work/project/src/a.rs", "/work/project/build.rs"]),
        "abstain"
    );
    assert_eq!(edit(&["/work/project/src/a.rs", "/etc/hosts"]), "deny");
    assert_eq!(edit(&["/tmp/x", "/work/project/src/a.rs"]), "ask");
    assert_eq!(edit(&[]), "abstain");
    // A kind condition: a delete of src is not covered by the `src` rule.
    assert_eq!(
        decide(
            &config,
            &path_request(ToolKind::Delete, &["/work/project/src/a.rs"])
        ),
        "abstain"
    );
}

#[test]
fn tools_kinds_and_titles() {
    let config = config(
        r#"{"name": "web", "decision": "ask", "reason": "network", "kinds": ["fetch"]},
           {"name": "read-tool", "decision": "allow", "tools": ["Read"], "title": "^Read "},
           {"name": "modes", "decision": "deny", "reason": "no", "kinds": ["switch_mode"]}"#,
    );
    let mut fetch = path_request(ToolKind::Fetch, &[]);
    fetch.title = "Fetch https://example.com".into();
    assert_eq!(decide(&config, &fetch), "ask");
    let mut read = path_request(ToolKind::Read, &["/x"]);
    read.tool_name = Some("read".into());
    read.title = "Read /x".into();
    assert_eq!(decide(&config, &read), "allow");
    read.title = "Grep /x".into();
    assert_eq!(decide(&config, &read), "abstain");
    read.tool_name = None;
    read.title = "Read /x".into();
    assert_eq!(decide(&config, &read), "abstain");
    assert_eq!(
        decide(&config, &path_request(ToolKind::SwitchMode, &[])),
        "deny"
    );
}

#[test]
fn failing_examples_are_errors_naming_the_rule_and_example() {
    let config = |rule: &str| config(rule);
    let err = evaluate(
        &request("ls"),
        &config(
            r#"{"name": "tests", "decision": "allow", "prefix": ["npm", "test"],
                "match": ["npm test", "npm run test"]}"#,
        ),
    )
    .unwrap_err();
    assert!(
        err.starts_with("/rules/0/match/1: rule `tests`: ")
            && err.contains("`match` example \"npm run test\""),
        "{err}"
    );
    // An allow rule never allows a compound command it does not cover.
    let err = evaluate(
        &request("ls"),
        &config(
            r#"{"name": "tests", "decision": "allow", "prefix": ["npm", "test"],
                "match": ["npm test && curl x | sh"]}"#,
        ),
    )
    .unwrap_err();
    assert!(err.contains("does not match it"), "{err}");
    let err = evaluate(
        &request("ls"),
        &config(
            r#"{"name": "no-push", "decision": "deny", "reason": "r", "prefix": ["git", "push"],
                "not_match": [{"command": "cd x && git push"}]}"#,
        ),
    )
    .unwrap_err();
    assert!(
        err.starts_with("/rules/0/not_match/0: rule `no-push`: ")
            && err.contains("`not_match` example { command = \"cd x && git push\" }"),
        "{err}"
    );
    let err = evaluate(
        &request("ls"),
        &config(
            r#"{"name": "p", "decision": "deny", "reason": "r", "paths": ["~/.aws/**"],
                "match": [{"path": "~/.aws/credentials", "kind": "reed"}]}"#,
        ),
    )
    .unwrap_err();
    assert!(err.contains("rule `p`") && err.contains("reed"), "{err}");
    // Examples with paths resolve `~` and relative paths like the globs do.
    assert!(
        evaluate(
            &request("ls"),
            &config(
                r#"{"name": "p", "decision": "deny", "reason": "r", "paths": ["~/.aws/**", "secrets/**"],
                    "match": [{"path": "~/.aws/credentials"}, {"path": "secrets/../secrets/k", "kind": "edit"}],
                    "not_match": [{"path": "src/secrets/k"}, "cat ~/.aws/credentials"]}"#,
            ),
        )
        .is_ok()
    );
}

#[test]
fn a_bad_policy_is_an_error_for_every_request() {
    let bad = config(r#"{"name": "x", "decision": "allow", "prefix": ["ls"], "match": ["cat"]}"#);
    assert!(evaluate(&request("ls"), &bad).is_err());
    let bad = config(r#"{"name": "x", "decision": "maybe", "prefix": ["ls"]}"#);
    let err = evaluate(&request("ls"), &bad).unwrap_err();
    assert!(err.contains("rule `x`") && err.contains("maybe"), "{err}");
}

#[test]
fn priority_keeps_only_the_highest_matching_rules_per_simple_command() {
    let config = config(
        r#"
        {"name": "ask-shell", "decision": "ask", "reason": "shell", "kinds": ["execute"], "priority": 1},
        {"name": "status", "decision": "allow", "prefix": ["git", "status"], "priority": 100},
        {"name": "rm", "decision": "deny", "reason": "no rm", "prefix": ["rm"], "priority": 200}
    "#,
    );
    expect(
        &config,
        &[
            // The specific allow outranks the broad ask.
            ("git status", "allow"),
            ("git status --short", "allow"),
            // Each simple command is judged on its own: the second one only meets the ask.
            ("git status && make", "ask"),
            ("git status; rm -rf build", "deny"),
            ("make", "ask"),
        ],
    );
    // Without priorities, every matching rule counts: the broad ask wins over the allow.
    let flat = self::config(
        r#"
        {"name": "ask-shell", "decision": "ask", "reason": "shell", "kinds": ["execute"]},
        {"name": "status", "decision": "allow", "prefix": ["git", "status"]}
    "#,
    );
    expect(&flat, &[("git status", "ask")]);
}

#[test]
fn tool_names_match_every_agents_name_for_the_tool() {
    let config = config(
        r#"
        {"name": "no-search", "decision": "deny", "reason": "no web search", "tools": ["WebSearch"]},
        {"name": "mcp", "decision": "ask", "reason": "github", "tools": ["mcp__github__*"]}
    "#,
    );
    let named = |tool: &str, kind: ToolKind| {
        let mut req = path_request(kind, &[]);
        req.tool_name = (!tool.is_empty()).then(|| tool.to_owned());
        decide(&config, &req)
    };
    assert_eq!(named("WebSearch", ToolKind::Fetch), "deny");
    assert_eq!(named("google_web_search", ToolKind::Fetch), "deny");
    assert_eq!(named("web_search", ToolKind::Fetch), "deny");
    assert_eq!(named("WebFetch", ToolKind::Fetch), "abstain");
    // No tool name: a deny rule takes a request of the tool's kind.
    assert_eq!(named("", ToolKind::Fetch), "deny");
    assert_eq!(named("mcp__github__create_issue", ToolKind::Other), "ask");
    assert_eq!(
        named("mcp__gitlab__create_issue", ToolKind::Other),
        "abstain"
    );
}

#[test]
fn domains_match_the_hosts_a_request_fetches() {
    let config = config(
        r#"
        {"name": "docs", "decision": "allow", "kinds": ["fetch"], "domains": ["docs.rs", "*.github.io"]},
        {"name": "evil", "decision": "deny", "reason": "exfiltration", "domains": ["evil.example"]}
    "#,
    );
    let fetch = |url: &str| {
        let mut req = path_request(ToolKind::Fetch, &[]);
        req.title = format!("Fetch {url}");
        req.raw_json = serde_json::json!({"toolCall": {"rawInput": {"url": url}}}).to_string();
        decide(&config, &req)
    };
    assert_eq!(fetch("https://docs.rs/serde"), "allow");
    assert_eq!(fetch("https://DOCS.RS./serde"), "allow");
    assert_eq!(fetch("https://user@docs.rs:443/x"), "allow");
    assert_eq!(fetch("https://tokio.github.io/x"), "allow");
    assert_eq!(fetch("https://github.io/x"), "abstain");
    assert_eq!(fetch("https://docs.rs.evil.example/x"), "abstain");
    assert_eq!(fetch("https://evil.example/?q=1"), "deny");
    // A fetch naming two hosts is allowed only when both are.
    let mut two = path_request(ToolKind::Fetch, &[]);
    two.raw_json = serde_json::json!({"toolCall": {"rawInput": {
        "prompt": "compare https://docs.rs/a with https://other.example/b"}}})
    .to_string();
    assert_eq!(decide(&config, &two), "abstain");
}
