//! The org policy's rules mean what they say, through the real binary: a prefix rule finds a
//! CLI's sub-command past its global options (in every spelling, behind wrappers, by an absolute
//! path), and a broken rule or a failing example is reported at its own line, in the regex
//! crate's own words, in `handlers.toml` or in the file a rule was imported from.

use std::path::Path;

use serde_json::Value;

use crate::common::{Sandbox, claude_bash, stderr, verdict_of};

/// A deny rule per CLI, and commands that reach its sub-command past global options.
const DENIED: &[(&str, &[&str])] = &[
    (
        r#"["kubectl", "delete"]"#,
        &[
            "kubectl -n prod delete pod x",
            "kubectl -nprod delete pod x",
            "kubectl --namespace prod delete pod x",
            "kubectl --namespace=prod delete pod x",
            "kubectl --context x delete pod y",
            "kubectl delete -n prod pod x",
            "/usr/local/bin/kubectl --kubeconfig ./k delete pod x",
            "sudo kubectl --bogus-option delete pod x",
            "env KUBECONFIG=k timeout 5 kubectl -n x delete pod y",
            "bash -c 'kubectl -n prod delete pod x'",
        ],
    ),
    (
        r#"["terraform", "apply"]"#,
        &[
            "terraform -chdir=infra apply",
            "terraform -chdir infra apply -auto-approve",
        ],
    ),
    (
        r#"["docker", "run"]"#,
        &[
            "docker -H tcp://h:2375 --context y run alpine",
            "docker --host=x run alpine",
        ],
    ),
    (
        r#"["helm", "uninstall"]"#,
        &["helm -n prod --kube-context c uninstall r"],
    ),
    (
        r#"["npm", "publish"]"#,
        &["npm --prefix web publish", "npm -w a publish"],
    ),
    (
        r#"["cargo", "publish"]"#,
        &[
            "cargo +nightly --locked publish",
            "cargo -Z unstable-options publish",
        ],
    ),
    (r#"["go", "install"]"#, &["go -C tools install x"]),
    (
        r#"["aws", "s3", "rm"]"#,
        &[
            "aws --profile p --region eu-west-1 s3 rm s3://b/k",
            "aws s3 --profile=p rm s3://b/k",
        ],
    ),
    (
        r#"["gcloud", "compute", "instances", "delete"]"#,
        &[
            "gcloud --project p compute instances delete vm",
            "gcloud compute --project=p instances delete vm",
        ],
    ),
    (
        r#"["az", "group", "delete"]"#,
        &["az --subscription s group delete -n g"],
    ),
    (
        r#"["gh", "pr", "merge"]"#,
        &[
            "gh -R owner/repo pr merge 1",
            "gh --repo=owner/repo pr merge",
        ],
    ),
    (
        r#"["git", "push"]"#,
        &["git -C . push", "git --no-pager -c x=y push origin main"],
    ),
    (r#"["podman", "rm"]"#, &["podman --log-level debug rm x"]),
    (r#"["pulumi", "destroy"]"#, &["pulumi --cwd infra destroy"]),
    (
        r#"["pip", "install"]"#,
        &["pip --disable-pip-version-check install x"],
    ),
    (
        r#"["make", "deploy"]"#,
        &["make -C infra -j 4 deploy", "make ENV=prod deploy"],
    ),
];

/// A handlers.toml with one org-policy handler named `team` and `rules` (TOML tables).
fn team(rules: &str) -> String {
    format!("[[handler]]\nname = \"team\"\nplugin = \"builtin:org-policy\"\n{rules}")
}

/// The `team` handler's verdict on each command, in order.
fn team_verdicts(sandbox: &Sandbox, handlers: &Path, commands: &[&str]) -> Vec<String> {
    let requests: Vec<Value> = commands.iter().map(|c| claude_bash("Bash", c)).collect();
    let (lines, output) = sandbox.check(Some(handlers), &requests);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        !stderr(&output).contains("failed to load"),
        "{}",
        stderr(&output)
    );
    lines
        .iter()
        .map(|l| {
            verdict_of(l, "team")["verdict"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[test]
fn prefix_rules_see_past_each_clis_global_options_in_every_spelling() {
    let sandbox = Sandbox::new();
    let mut rules = String::new();
    for (number, (prefix, commands)) in DENIED.iter().enumerate() {
        rules += &format!(
            "\n[[handler.config.rules]]\nname = \"r{number}\"\ndecision = \"deny\"\nreason = \"no\"\nprefix = {prefix}\nmatch = [{:?}]\n",
            commands[0]
        );
    }
    // The same reading holds in an inline test, which the load checks.
    rules += "\n[[handler.test]]\ncommand = \"sudo /usr/local/bin/kubectl --context prod -n x delete ns y\"\nexpect = \"deny\"\n";
    let handlers = sandbox.write("cfg/handlers.toml", &team(&rules));
    let commands: Vec<&str> = DENIED.iter().flat_map(|(_, c)| c.iter().copied()).collect();
    let got = team_verdicts(&sandbox, &handlers, &commands);
    let wrong: Vec<String> = commands
        .iter()
        .zip(&got)
        .filter(|(_, verdict)| *verdict != "deny")
        .map(|(command, verdict)| format!("{command}: {verdict}"))
        .collect();
    assert!(wrong.is_empty(), "not denied:\n{}", wrong.join("\n"));
    // Other sub-commands, and an option's value that looks like one, are not the rule's.
    let others = [
        "kubectl get pods",
        "kubectl -n delete get pods",
        "terraform -chdir=apply plan",
        "git log",
    ];
    assert!(
        team_verdicts(&sandbox, &handlers, &others)
            .iter()
            .all(|v| v == "abstain")
    );
}

#[test]
fn allow_rules_read_past_inert_options_only() {
    let sandbox = Sandbox::new();
    let handlers = sandbox.write(
        "cfg/handlers.toml",
        &team(
            r#"
[[handler.config.rules]]
name = "cluster-reads"
decision = "allow"
prefix = ["kubectl", ["get", "describe", "logs"]]
match = ["kubectl -n prod get pods", "kubectl get --context=dev pods"]
not_match = ["kubectl --kubeconfig ./other get pods", "kubectl --bogus get pods"]
"#,
        ),
    );
    let commands = [
        "kubectl -n prod get pods",
        "/usr/bin/kubectl --namespace=prod logs x",
        "kubectl --kubeconfig ./other get pods",
        "kubectl --bogus get pods",
        "kubectl -n \"$NS\" get pods",
        "sudo kubectl get pods",
    ];
    assert_eq!(
        team_verdicts(&sandbox, &handlers, &commands),
        ["allow", "allow", "abstain", "abstain", "abstain", "abstain"]
    );
}

/// What `check --handlers FILE` says about `handlers` (a handler that fails to load is reported
/// with its load error, and counts as its `on_error`). `plugin validate --resolve` reports the
/// same load error, from the same chain load.
fn load_error(sandbox: &Sandbox, handlers: &Path) -> String {
    let (_, check) = sandbox.check(Some(handlers), &[claude_bash("Bash", "ls")]);
    stderr(&check)
}

#[test]
fn an_invalid_regex_is_reported_at_its_line_in_the_regex_crates_words() {
    let sandbox = Sandbox::new();
    let handlers = sandbox.write(
        "cfg/handlers.toml",
        &team(
            r#"
[[handler.config.rules]]
name = "fine"
decision = "deny"
reason = "no"
prefix = ["rm"]

[[handler.config.rules]]
name = "forced-pushes"
decision = "deny"
reason = "history is kept"
regex = '^git push (-f|--force'
"#,
        ),
    );
    let file = handlers.display().to_string();
    let error = load_error(&sandbox, &handlers);
    assert!(
        error.contains(&format!(
            "{file}:15: rule `forced-pushes`: `regex`: invalid regex: regex parse error:"
        )) && error.contains("error: unclosed group"),
        "{error}"
    );
}

#[test]
fn a_failing_example_is_reported_at_its_own_line() {
    let sandbox = Sandbox::new();
    let handlers = sandbox.write(
        "cfg/handlers.toml",
        &team(
            r#"
[[handler.config.rules]]
name = "tests"
decision = "allow"
prefix = ["npm", "test"]
match = [
    "npm test",
    "npm run test",
]
"#,
        ),
    );
    let file = handlers.display().to_string();
    let error = load_error(&sandbox, &handlers);
    assert!(
        error.contains(&format!(
            "{file}:11: rule `tests`: `match` example \"npm run test\" fails: the rule does not match it"
        )),
        "{error}"
    );
}

#[test]
fn an_imported_rules_mistake_names_the_file_it_came_from() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "cfg/gemini/policy.toml",
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"git status\"\ndecision = \"allow\"\npriority = 10\n\n[[rule]]\ntoolName = \"run_shell_command\"\ncommandRegex = \"rm (-rf\"\ndecision = \"deny\"\npriority = 100\n",
    );
    let handlers = sandbox.write(
        "cfg/handlers.toml",
        &team(
            "[handler.config]\nimport = { format = \"gemini\", path = \"gemini/policy.toml\" }\n",
        ),
    );
    let gemini = sandbox
        .root
        .join("cfg/gemini/policy.toml")
        .display()
        .to_string();
    let error = load_error(&sandbox, &handlers);
    assert!(
        error.contains(&format!(
            "{gemini}:7: rule `gemini-regex-rm-rf`: `regex`: invalid regex"
        )) && error.contains("error: unclosed group"),
        "{error}"
    );
}
