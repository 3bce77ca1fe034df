//! `acp-gate run` driving a real agent written with the official ACP TypeScript SDK
//! (tests/agents/sdk-agent.mjs): what the agent is answered, what reaches the disk, and what
//! the audit log holds.

use crate::common::{Sandbox, sdk_agent_script, stderr};

#[test]
fn a_typescript_sdk_agent_is_gated_end_to_end() {
    let script = sdk_agent_script();
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.workspace.join("src")).unwrap();
    std::fs::write(sandbox.workspace.join("src/lib.rs"), "old\n").unwrap();
    std::fs::write(sandbox.home.join(".bashrc"), "# mine\n").unwrap();
    let audit = sandbox.root.join("audit.jsonl");
    let output = sandbox
        .command(&[
            "run",
            "--non-interactive",
            "--audit",
            audit.to_str().unwrap(),
            "-p",
            "do your thing",
            "--",
            "node",
            &script,
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "exit {:?}\nstdout:\n{stdout}\nstderr:\n{}",
        output.status,
        stderr(&output)
    );

    let step = |name: &str| {
        stdout
            .lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix(&format!("STEP {name} "))
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| panic!("no STEP {name} in:\n{stdout}"))
    };
    assert_eq!(
        step("edit"),
        "selected:allow-once",
        "an edit inside the workspace is allowed, by kind"
    );
    assert_eq!(
        step("rm"),
        "selected:reject",
        "rm -rf ~ is rejected, by kind"
    );
    assert_eq!(step("write-inside"), "written");
    assert!(
        step("write-bashrc").starts_with("refused:"),
        "{}",
        step("write-bashrc")
    );

    assert_eq!(
        std::fs::read_to_string(sandbox.workspace.join("notes.txt")).unwrap(),
        "hello\n"
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.home.join(".bashrc")).unwrap(),
        "# mine\n",
        "the denied write never reached the disk"
    );

    let log = std::fs::read_to_string(&audit).unwrap();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let decisions: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| {
            (
                l["source"].as_str().unwrap(),
                l["decision"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        decisions,
        [
            ("permission_request", "allow"),
            ("permission_request", "deny"),
            ("fs_write", "allow"),
            ("fs_write", "deny")
        ],
        "{log}"
    );
    assert_eq!(lines[0]["answer"], "allow-once");
    assert_eq!(lines[1]["answer"], "reject");
}

/// An agent that cancels its own turn when acp-gate refuses it something (Codex's adapter does)
/// ended a turn: the run exits as a turn that ended does (0, as nothing was escalated), not as
/// one the user interrupted (130).
#[test]
fn a_turn_the_agent_cancels_after_a_refusal_is_not_an_interrupt() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .command(&[
            "run",
            "--non-interactive",
            "-p",
            "give up when refused",
            "--",
            "node",
            &sdk_agent_script(),
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("STEP rm selected:reject"), "{stdout}");
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{}",
        stderr(&output)
    );
}
