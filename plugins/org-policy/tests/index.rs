//! The indexed policy judges as the linear reference: for any rules and any request,
//! `Policy::judge` gives `policy::judge`'s verdict, decision and reasons alike.

use acp_gate_plugin::{CommandLine, Request, Verdict};
use org_policy::Config;
use org_policy::config::tool_kind;
use org_policy::policy::{Facts, Policy, judge};
use org_policy::rules::Rule;
use org_policy::testing::{path_request, request};
use proptest::prelude::*;
use serde_json::{Value, json};

fn compile(rules: Vec<Value>) -> Vec<Rule> {
    serde_json::from_value::<Config>(json!({ "rules": rules }))
        .unwrap()
        .compile()
        .unwrap()
}

/// Both verdicts on `request`, the indexed one first.
fn both(rules: &[Rule], request: &Request) -> (String, String) {
    let facts = Facts::of_request(request, true);
    let indexed = Policy::new(rules.to_vec()).judge(&facts);
    (
        format!("{indexed:?}"),
        format!("{:?}", judge(rules, &facts)),
    )
}

const FIRST_WORDS: &[&str] = &[
    "git",
    "Git",
    "/usr/bin/git",
    "npm",
    "cargo",
    "curl",
    "rm",
    "ls",
    "sudo",
    "bash",
    "echo",
    "tool1",
    "$X",
    "kubectl",
    "/usr/local/bin/terraform",
    "make",
];
const WORDS: &[&str] = &[
    "push",
    "status",
    "origin",
    "main",
    "test",
    "install",
    "run",
    "-f",
    "-rf",
    "-C",
    "x",
    "delete",
    "apply",
    "-n",
    "--context=prod",
    "prod",
];
const REGEXES: &[&str] = &[
    "^git",
    "push",
    "^rm -rf",
    "(?i)CURL",
    "main$",
    "^n",
    "^(ls|echo)( |$)",
    "x",
];
const KINDS: &[&str] = &["execute", "edit", "read", "fetch", "delete", "other"];
const TOOLS: &[&str] = &["Bash", "Edit", "shell", "Ed*", "read_file", "mcp__*"];
const GLOBS: &[&str] = &[
    "src/**",
    "./SRC/*.rs",
    "./*",
    "~/.ssh/**",
    "~",
    "/etc/pass?d",
    "**/*.pem",
    "*/k.pem",
    "secrets-1/**",
    "Ä/**",
    "k.pem",
];
const TITLES: &[&str] = &["(?i)push", "^Fetch", "main"];
const DOMAINS: &[&str] = &[
    "example.com",
    "*.example.com",
    "docs.rs",
    "API.Example.com.",
    "*.api.example.com",
    "*.rs",
    "evil-example.com",
];

fn pick(pool: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop::sample::select(pool).prop_map(str::to_owned)
}

fn some(pool: &'static [&'static str], most: usize) -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(pick(pool), 1..=most)
}

/// One prefix token: a word, or alternatives.
fn token(pool: &'static [&'static str]) -> impl Strategy<Value = Value> {
    prop_oneof![
        pick(pool).prop_map(Value::from),
        some(pool, 3).prop_map(Value::from)
    ]
}

fn prefix() -> impl Strategy<Value = Value> {
    (
        token(FIRST_WORDS),
        prop::collection::vec(token(WORDS), 0..3),
    )
        .prop_map(|(first, rest)| {
            let mut tokens = vec![first];
            tokens.extend(rest);
            Value::from(tokens)
        })
}

/// A rule as written, without its name.
fn rule() -> impl Strategy<Value = Value> {
    let decision = prop::sample::select(&["allow", "ask", "deny"][..]);
    (
        (decision, -1i64..=1),
        prop::option::weighted(0.6, prefix()),
        prop::option::weighted(0.3, pick(REGEXES)),
        prop::option::weighted(0.3, some(KINDS, 2)),
        prop::option::weighted(0.15, some(TOOLS, 2)),
        prop::option::weighted(0.15, some(GLOBS, 2)),
        prop::option::weighted(0.1, pick(TITLES)),
        prop::option::weighted(0.1, some(DOMAINS, 2)),
    )
        .prop_map(
            |((decision, priority), prefix, regex, kinds, tools, paths, title, domains)| {
                let mut rule = json!({ "decision": decision, "priority": priority });
                if decision != "allow" {
                    rule["reason"] = json!(format!("{decision}s"));
                }
                let conditions = [
                    ("prefix", prefix),
                    ("regex", regex.map(Value::from)),
                    ("kinds", kinds.map(Value::from)),
                    ("tools", tools.map(Value::from)),
                    ("paths", paths.map(Value::from)),
                    ("title", title.map(Value::from)),
                    ("domains", domains.map(Value::from)),
                ];
                for (key, value) in conditions {
                    if let Some(value) = value {
                        rule[key] = value;
                    }
                }
                if rule.as_object().is_some_and(|r| r.len() <= 3) {
                    rule["kinds"] = json!(["execute"]);
                }
                rule
            },
        )
}

fn rules() -> impl Strategy<Value = Vec<Rule>> {
    prop::collection::vec(rule(), 0..40).prop_map(|specs| {
        let named = specs
            .into_iter()
            .enumerate()
            .map(|(i, mut rule)| {
                rule["name"] = json!(format!("r{i}"));
                rule
            })
            .collect();
        compile(named)
    })
}

/// Simple commands, some with dynamic or absolute first words, some that do not parse.
const SIMPLE: &[&str] = &[
    "git push origin main",
    "git status",
    "/usr/bin/git push -f",
    "GIT status",
    "git -C x push origin main",
    "git --no-pager -c a=b push origin main",
    "$GIT push origin main",
    "$(echo git) status",
    "git push $REMOTE main",
    "npm test",
    "npm install x",
    "cargo test > out.txt",
    "curl https://example.com",
    "rm -rf /",
    "sudo rm -rf build",
    "ls",
    "echo ok",
    "bash -c 'git push -f'",
    "X=1",
    "tool1 run",
    "x y",
    "n",
    "echo 'open",
    "echo $((1 + $(id)))",
    "kubectl -n prod delete x",
    "kubectl --context prod --bogus x delete",
    "sudo /usr/bin/kubectl $F apply",
    "terraform -chdir=x apply",
    "make -j 4 -C x test",
    "timeout 5 git -P push -- origin main",
];

fn shell() -> impl Strategy<Value = String> {
    let op = prop::sample::select(&["&&", "||", ";", "|", "&"][..]);
    (
        pick(SIMPLE),
        prop::collection::vec((op, pick(SIMPLE)), 0..3),
    )
        .prop_map(|(first, rest)| {
            rest.into_iter()
                .fold(first, |acc, (op, part)| format!("{acc} {op} {part}"))
        })
}

fn command() -> impl Strategy<Value = Option<CommandLine>> {
    let argv = prop::collection::vec(
        pick(&[
            "git",
            "/usr/bin/git",
            "push",
            "origin",
            "main",
            "-f",
            "$X",
            "bash",
            "-c",
            "rm -rf /",
            "npm",
            "test",
        ]),
        0..5,
    );
    prop_oneof![
        Just(None),
        shell().prop_map(|s| Some(CommandLine {
            argv: None,
            shell: Some(s)
        })),
        argv.prop_map(|a| Some(CommandLine {
            argv: Some(a),
            shell: None
        })),
    ]
}

/// Absolute paths, some in other cases than the globs.
const PATHS: &[&str] = &[
    "/work/project/src/a.rs",
    "/home/user/.ssh/id_rsa",
    "/home/user/.SSH/id_rsa",
    "/etc/passwd",
    "/work/project/k.pem",
    "/work/project/K.PEM",
    "/WORK/project/SRC/b.rs",
    "/work/project/secrets-1/key",
    "/work/project/ä/x",
    "/home/user",
];

/// Workspace roots and working directories: relative globs follow the first root, else the
/// working directory (none when it is empty).
const PLACES: &[(Option<&str>, &str)] = &[
    (Some("/work/project"), "/work/project"),
    (None, "/work/project"),
    (None, ""),
    (None, "."),
];

fn a_request() -> impl Strategy<Value = Request> {
    let paths = prop::collection::vec(prop::sample::select(PATHS), 0..3);
    let tool = prop::option::of(pick(&[
        "Bash",
        "Edit",
        "read_file",
        "mcp__github__x",
        "WebFetch",
    ]));
    let title = prop::option::of(pick(&["Fetch https://docs.rs/x", "git push main", "edit"]));
    let raw_json = pick(&[
        "{}",
        r#"{"rawInput":{"url":"https://api.example.com/x"}}"#,
        r#"{"rawInput":{"url":"docs.rs/serde"}}"#,
        r#"{"rawInput":{"url":"https://API.Example.COM./x"}}"#,
        r#"{"rawInput":{"url":"http://user@a.b.api.example.com:8080/"}}"#,
        r#"{"rawInput":{"url":"https://example.com","other":"https://evil-example.com"}}"#,
        r#"{"rawInput":{"urls":["https://docs.rs/a","https://crates.io/b"]}}"#,
        r#"{"rawInput":{"url":"https://[::1]:3000/x"}}"#,
    ]);
    let places = prop::sample::select(PLACES);
    (pick(KINDS), command(), paths, tool, title, raw_json, places).prop_map(
        |(kind, command, paths, tool, title, raw_json, (root, cwd))| {
            let mut r = path_request(tool_kind(&kind).unwrap(), &paths);
            r.workspace_roots = root.iter().map(|w| w.to_string()).collect();
            r.cwd = cwd.into();
            r.title = title.unwrap_or_else(|| {
                command
                    .as_ref()
                    .and_then(|c| c.shell.clone())
                    .unwrap_or_default()
            });
            r.command = command;
            r.tool_name = tool;
            r.raw_json = raw_json;
            r
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn the_index_judges_as_trying_every_rule(rules in rules(), request in a_request()) {
        let (indexed, linear) = both(&rules, &request);
        prop_assert_eq!(indexed, linear, "{:?}", request);
    }
}

#[test]
fn every_glob_meets_every_path_as_trying_every_rule() {
    for glob in GLOBS {
        for decision in ["allow", "ask", "deny"] {
            let rules = compile(vec![json!({
                "name": "glob", "decision": decision, "reason": "r", "paths": [glob],
            })]);
            for path in PATHS {
                for (root, cwd) in PLACES {
                    let mut r = path_request(acp_gate_plugin::ToolKind::Edit, &[path]);
                    r.workspace_roots = root.iter().map(|w| w.to_string()).collect();
                    r.cwd = cwd.to_string();
                    let (indexed, linear) = both(&rules, &r);
                    assert_eq!(
                        indexed, linear,
                        "{decision} {glob} on {path} in {root:?} {cwd:?}"
                    );
                }
            }
        }
    }
}

/// A rule for each of 1000 programs, and a few for any program.
fn a_thousand_programs() -> Vec<Rule> {
    let mut rules: Vec<Value> = (0..1000)
        .map(|i| {
            let decision = ["allow", "ask", "deny"][i % 3];
            json!({
                "name": format!("tool{i}"),
                "decision": decision,
                "reason": format!("tool {i}"),
                "prefix": [format!("tool{i}"), ["run", "test"]],
            })
        })
        .collect();
    rules.push(
        json!({ "name": "no-root", "decision": "deny", "reason": "root", "regex": "^rm -rf /$" }),
    );
    rules.push(json!({ "name": "edits", "decision": "ask", "reason": "edit", "kinds": ["edit"] }));
    compile(rules)
}

#[test]
fn a_thousand_rules_for_distinct_programs_judge_as_trying_every_rule() {
    let rules = a_thousand_programs();
    let cases = [
        ("tool502 run x", "Verdict::Ask(\"tool 502 [tool502]\")"),
        ("tool999 test && /usr/bin/TOOL3 run", "Verdict::Allow"),
        (
            "tool3 run; tool4 run | tool5 test",
            "Verdict::Deny(\"tool 5 [tool5]\")",
        ),
        ("tool3 build", "Verdict::Abstain"),
        ("tool3 run && rm -rf /", "Verdict::Deny(\"root [no-root]\")"),
        ("$TOOL run", "Verdict::Abstain"),
        (
            "tool3 run 'open",
            "Verdict::Ask(\"the command cannot be parsed",
        ),
    ];
    for (shell, expected) in cases {
        let (indexed, linear) = both(&rules, &request(shell));
        assert_eq!(indexed, linear, "{shell}");
        assert!(indexed.starts_with(expected), "{shell}: {indexed}");
    }
    let edit = path_request(acp_gate_plugin::ToolKind::Edit, &["/work/project/src/a.rs"]);
    let (indexed, linear) = both(&rules, &edit);
    assert_eq!(indexed, linear);
    assert_eq!(indexed, "Verdict::Ask(\"edit [edits]\")");
}

#[test]
fn within_a_command_reasons_keep_rule_order_across_index_lists() {
    let rules = compile(vec![
        json!({ "name": "push", "decision": "deny", "reason": "a", "prefix": ["git", "push"] }),
        json!({ "name": "rm", "decision": "deny", "reason": "b", "prefix": [["rm", "git"]] }),
        json!({ "name": "any", "decision": "deny", "reason": "c", "regex": "." }),
        json!({ "name": "curl", "decision": "deny", "reason": "d", "prefix": ["curl"] }),
    ]);
    let (indexed, linear) = both(&rules, &request("git push && curl x"));
    assert_eq!(indexed, linear);
    assert_eq!(
        indexed,
        "Verdict::Deny(\"a [push]; b [rm]; c [any]; d [curl]\")"
    );
}

#[test]
fn a_policy_can_live_in_a_static() {
    static POLICY: std::sync::OnceLock<Policy> = std::sync::OnceLock::new();
    let policy = POLICY.get_or_init(|| Policy::new(a_thousand_programs()));
    assert_eq!(policy.rules().len(), 1002);
    assert!(!policy.judges_urls());
    let facts = Facts::of_request(&request("tool7 test"), policy.judges_urls());
    assert!(matches!(policy.judge(&facts), Verdict::Ask(_)));
}
