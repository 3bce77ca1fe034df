//! The orchestrator's loop through `acp-gate run`: a run with nobody to ask escalates, the
//! orchestrator reads the escalation and resumes the same session with it granted; grants are
//! narrow (once, never over a deny); acpx's permission policy is one more layer; and the audit
//! log, read back, suggests the rules that would have allowed what people approved.

use serde_json::{Value, json};

use crate::common::{Sandbox, pipe, sdk_agent_script, stderr};
use crate::proxy::Editor;

/// `acp-gate run --non-interactive --format json ARGS -p PROMPT [-- node sdk-agent.mjs]`: its
/// exit code, its JSON lines, and its stderr.
fn run(
    sandbox: &Sandbox,
    args: &[&str],
    prompt: &str,
    agent: bool,
) -> (Option<i32>, Vec<Value>, String) {
    let audit = sandbox.root.join("audit.jsonl");
    let script = sdk_agent_script();
    let mut all = vec![
        "run",
        "--non-interactive",
        "--format",
        "json",
        "--audit",
        audit.to_str().unwrap(),
    ];
    all.extend(args);
    all.extend(["-p", prompt]);
    if agent {
        all.extend(["--", "node", &script]);
    }
    let output = sandbox
        .command(&all)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let lines = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (output.status.code(), lines, stderr(&output))
}

/// The agent's message lines (`STEP deploy ...`, `HISTORY n`).
pub fn said(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| {
            l["text"]
                .as_str()
                .or_else(|| l.pointer("/update/content/text")?.as_str())
        })
        .flat_map(|t| t.lines().map(str::to_owned).collect::<Vec<_>>())
        .filter(|t| t.starts_with("STEP ") || t.starts_with("HISTORY "))
        .collect()
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

#[test]
fn an_escalation_is_granted_on_a_resume_of_the_same_session_once() {
    let sandbox = Sandbox::new();
    let (code, lines, err) = run(&sandbox, &["--session", "nightly"], "deploy", true);
    assert_eq!(code, Some(3), "{err}");
    assert_eq!(
        said(&lines),
        ["STEP deploy selected:reject", "HISTORY 0"],
        "{lines:?}"
    );
    let escalation = of_type(&lines, "escalation")[0].clone();
    let id = escalation["id"].as_str().unwrap().to_owned();
    assert_eq!(escalation["session_name"], "nightly");
    let resume = escalation["resume"].as_str().unwrap();
    assert!(
        resume.contains(&format!("--resume nightly --grant {id}")),
        "{resume}"
    );
    let session_id = escalation["session_id"].as_str().unwrap().to_owned();

    // The orchestrator's view: the session, and the escalation still open.
    let listed = sandbox
        .command(&["escalations", "--format", "json"])
        .output()
        .unwrap();
    let open: Vec<Value> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0]["id"], id.as_str());
    let sessions = sandbox
        .command(&["sessions", "--format", "json"])
        .output()
        .unwrap();
    let session: Value = serde_json::from_slice(&sessions.stdout).unwrap();
    assert_eq!(
        (&session["name"], &session["session_id"]),
        (&"nightly".into(), &session_id.as_str().into())
    );

    // Resumed without the grant: the same request escalates again, with the same id.
    let (code, lines, err) = run(&sandbox, &["--resume", "nightly"], "deploy", false);
    assert_eq!(code, Some(3), "{err}");
    assert_eq!(said(&lines), ["STEP deploy selected:reject", "HISTORY 1"]);
    assert_eq!(of_type(&lines, "escalation")[0]["id"], id.as_str());

    // Resumed with it: the same session (its history goes on), the request allowed, the
    // grant and who gave it in the audit log.
    let (code, lines, err) = run(
        &sandbox,
        &[
            "--resume",
            "nightly",
            "--grant",
            &id,
            "--granted-by",
            "ci-bot",
        ],
        "deploy",
        false,
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        said(&lines),
        ["STEP deploy selected:allow-once", "HISTORY 2"]
    );
    let audit = std::fs::read_to_string(sandbox.root.join("audit.jsonl")).unwrap();
    let last: Value = serde_json::from_str(audit.lines().last().unwrap()).unwrap();
    assert_eq!(last["session_id"], session_id.as_str());
    assert_eq!(
        last["decision"], "ask",
        "the chain still asks: the grant answered"
    );
    assert_eq!(
        last["answer"],
        format!("allow-once (granted: {id} by ci-bot)")
    );

    // A grant is used once.
    let (code, _, err) = run(
        &sandbox,
        &["--resume", "nightly", "--grant", &id],
        "deploy",
        false,
    );
    assert_eq!(code, Some(1));
    assert!(err.contains("granted already"), "{err}");
}

#[test]
fn a_grant_never_turns_a_deny_into_an_allow() {
    let sandbox = Sandbox::new();
    let (code, lines, err) = run(&sandbox, &["--session", "job"], "deploy", true);
    assert_eq!(code, Some(3), "{err}");
    let id = of_type(&lines, "escalation")[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // Since then the policy denies it: the grant stands aside.
    let deny = r#"{"autoDeny": ["terraform"]}"#;
    let (code, lines, err) = run(
        &sandbox,
        &[
            "--resume",
            "job",
            "--grant",
            &id,
            "--permission-policy",
            deny,
        ],
        "deploy",
        false,
    );
    assert_eq!(said(&lines)[0], "STEP deploy selected:reject", "{err}");
    assert!(err.contains(&format!("grant {id} not used")), "{err}");
    assert_eq!(code, Some(0));

    // A grant of another session's escalation is refused before anything runs.
    let (code, _, err) = run(&sandbox, &["--session", "other"], "hello", true);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = run(
        &sandbox,
        &["--resume", "other", "--grant", &id],
        "deploy",
        false,
    );
    assert_eq!(code, Some(1));
    assert!(err.contains("not of the session resumed"), "{err}");
}

#[test]
fn acpx_policies_decide_as_acpx_decides_with_the_built_in_chain_beneath() {
    let sandbox = Sandbox::new();
    let policy = sandbox.write(
        "acpx-policy.json",
        r#"{"autoApprove": ["terraform", "execute"], "autoDeny": ["fetch"], "escalate": ["terraform"], "defaultAction": "escalate"}"#,
    );
    let request = |title: &str, kind: &str, command: Option<&str>| {
        let mut call = serde_json::json!({"toolCallId": "t", "title": title, "kind": kind});
        if let Some(command) = command {
            call["rawInput"] = serde_json::json!({ "command": command });
        }
        serde_json::json!({"sessionId": "s", "toolCall": call, "options": []})
    };
    let requests = [
        // autoApprove beats escalate, as in acpx.
        request("terraform apply", "execute", Some("terraform apply")),
        request("Fetch https://example.com", "fetch", None),
        // defaultAction.
        request("Think it over", "think", None),
        // The policy approves `execute`; the built-in chain still denies this one.
        request("rm -rf ~", "execute", Some("rm -rf ~")),
    ];
    let stdin: String = requests.iter().map(|r| format!("{r}\n")).collect();
    let output = sandbox.run(
        &[
            "check",
            "--format",
            "json",
            "--policy",
            policy.to_str().unwrap(),
            "-",
        ],
        &stdin,
    );
    let decisions: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["decision"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        decisions,
        ["allow", "deny", "ask", "deny"],
        "{}",
        stderr(&output)
    );

    let output = sandbox.run(
        &[
            "check",
            "--permission-policy",
            r#"{"defaultAction": "allow"}"#,
            "-",
        ],
        &stdin,
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("defaultAction must be one of approve, deny, escalate"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn audit_suggest_turns_what_people_approved_into_rules_that_check_accepts() {
    let sandbox = Sandbox::new();
    let audit = sandbox.root.join("audit.jsonl");
    // An editor whose user approves `terraform apply` each time the agent asks.
    let mut editor = Editor::start(&sandbox, &audit, &["node", &sdk_agent_script()]);
    let session = editor.open_session(&sandbox.workspace);
    for _ in 0..2 {
        let id = editor.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "deploy"}]}),
        );
        let ask = std::iter::repeat_with(|| editor.next())
            .find(|m| m["method"] == "session/request_permission")
            .unwrap();
        editor.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow-once"}}}));
        editor.until_response(id);
    }
    drop(editor);

    let summary = sandbox.run(&["audit", audit.to_str().unwrap(), "--format", "json"], "");
    let summary: Value = serde_json::from_slice(&summary.stdout).unwrap();
    assert_eq!(summary["decisions"]["approved"], 2, "{summary}");
    assert_eq!(summary["most_asked"][0], json!(["terraform apply", 2]));

    let suggested = sandbox.run(&["audit", "suggest", audit.to_str().unwrap()], "");
    assert!(suggested.status.success(), "{}", stderr(&suggested));
    let rules = sandbox.write(
        "suggested.toml",
        &String::from_utf8_lossy(&suggested.stdout),
    );
    let decide = |command: &str| {
        let request = json!({"sessionId": "s", "toolCall": {"toolCallId": "t", "title": command, "kind": "execute", "rawInput": {"command": command}}, "options": []});
        let output = sandbox.run(
            &[
                "check",
                "--format",
                "json",
                "--handlers",
                rules.to_str().unwrap(),
                "-",
            ],
            &format!("{request}\n"),
        );
        assert!(output.status.success(), "{}", stderr(&output));
        serde_json::from_slice::<Value>(&output.stdout).unwrap()["decision"].clone()
    };
    assert_eq!(decide("terraform apply"), "allow");
    assert_eq!(
        decide("terraform apply -auto-approve"),
        "ask",
        "as narrow as what was approved"
    );
}

#[test]
fn audit_replay_shows_what_a_new_policy_would_change_on_recorded_traffic() {
    let sandbox = Sandbox::new();
    let audit = sandbox.root.join("audit.jsonl");
    let log = audit.to_str().unwrap();
    // Traffic in two shapes: ACP permission requests (`check --audit`) and Claude Code's hook.
    for command in ["npm run build", "cargo test", "git status"] {
        let output = sandbox.run(&["check", "--audit", log, "--command", command], "");
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let edit = sandbox.run(
        &[
            "check",
            "--audit",
            log,
            "--kind",
            "edit",
            "--path",
            "src/main.rs",
            "--content",
            "fn main() {}",
        ],
        "",
    );
    assert!(edit.status.success(), "{}", stderr(&edit));
    for command in ["make deploy", "make deploy --env prod"] {
        let payload = json!({
            "session_id": "s1", "transcript_path": "/dev/null", "cwd": sandbox.workspace,
            "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command},
        });
        let output = pipe(
            sandbox
                .command(&["hook", "claude"])
                .env("ACP_GATE_AUDIT_LOG", &audit),
            &payload.to_string(),
        );
        assert!(output.status.success(), "{}", stderr(&output));
    }
    // A line from before audit lines carried their request is left out, and said so.
    let mut text = std::fs::read_to_string(&audit).unwrap();
    text.insert_str(
        0,
        &format!(
            "{}\n",
            json!({"timestamp_ms": 1, "kind": "execute", "subject": "old", "decision": "ask"})
        ),
    );
    std::fs::write(&audit, text).unwrap();

    // The same policy decides every recorded request as it was decided.
    let same = sandbox.run(&["audit", "replay", log, "--format", "json"], "");
    let report: Value =
        serde_json::from_slice(&same.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&same)));
    assert_eq!(same.status.code(), Some(0), "{report}");
    assert_eq!(
        (
            report["decided"].as_u64(),
            report["changed"].as_u64(),
            report["skipped"].as_u64()
        ),
        (Some(6), Some(0), Some(1)),
        "{report}"
    );

    let new = sandbox.write(
        "new.toml",
        r#"
[[handler]]
name = "team"
plugin = "builtin:org-policy"
control = "required"
on_error = "deny"
[handler.config]
rules = [
  { name = "deploys", decision = "allow", prefix = ["make", "deploy"], match = ["make deploy"] },
  { name = "no-npm-run", decision = "deny", reason = "npm scripts go through CI", prefix = ["npm", "run"], match = ["npm run build"] },
]
"#,
    );
    let new = new.to_str().unwrap();
    let changed = sandbox.run(
        &[
            "audit",
            "replay",
            log,
            "--handlers",
            new,
            "--format",
            "json",
        ],
        "",
    );
    assert_eq!(changed.status.code(), Some(6), "{}", stderr(&changed));
    let report: Value = serde_json::from_slice(&changed.stdout).unwrap();
    assert_eq!(report["changed"], 3, "{report}");
    let groups = report["groups"].as_array().unwrap();
    let group = |was: &str, now: &str| {
        groups
            .iter()
            .find(|g| g["was"] == was && g["now"] == now)
            .unwrap_or_else(|| panic!("no {was} -> {now} group in {report}"))
    };
    let deploys = group("ask", "allow");
    assert_eq!(deploys["count"], 2, "both hook calls: {report}");
    assert_eq!(deploys["rule"], "allowed by team");
    assert_eq!(deploys["examples"][1]["subject"], "make deploy --env prod");
    let npm = group("allow", "deny");
    assert_eq!(npm["count"], 1);
    assert!(
        npm["rule"].as_str().unwrap().contains("no-npm-run"),
        "{npm}"
    );
    assert_eq!(npm["examples"][0]["subject"], "npm run build");

    // A time range: nothing was recorded before 2020; all of it in the last hour.
    let before = sandbox.run(
        &[
            "audit",
            "replay",
            log,
            "--handlers",
            new,
            "--until",
            "2020-01-01",
            "--format",
            "json",
        ],
        "",
    );
    let report: Value = serde_json::from_slice(&before.stdout).unwrap();
    assert_eq!(
        (report["decided"].as_u64(), before.status.code()),
        (Some(0), Some(0)),
        "{report}"
    );
    let recent = sandbox.run(
        &["audit", "replay", log, "--handlers", new, "--since", "1h"],
        "",
    );
    let text = String::from_utf8_lossy(&recent.stdout);
    assert!(
        text.contains("6 request(s) decided again, 3 would change"),
        "{text}"
    );
    assert!(text.contains("ASK -> ALLOW  2×  allowed by team"), "{text}");
    let wrong = sandbox.run(&["audit", "replay", log, "--since", "yesterday"], "");
    assert_eq!(wrong.status.code(), Some(1), "{}", stderr(&wrong));
    assert!(
        stderr(&wrong).contains("`yesterday` is not a time"),
        "{}",
        stderr(&wrong)
    );
}
