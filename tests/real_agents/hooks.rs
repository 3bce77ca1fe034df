//! The four agents' CLIs with `acp-gate hook install AGENT`, each driven through the scenario
//! by the scripted model server, with resident hook servers on and off: ordinary work runs,
//! what must not run never does, the secret never reaches the model, what needs a person is
//! refused with nobody to ask, and each tool call is one line of the audit log. Then the
//! gate failing: each agent does what docs/hooks.md says it does.

use std::process::{Command, Output};
use std::time::Duration;

use super::model::{DONE, Step};
use super::{Cli, World, finish, said, scenario};
use crate::common::BIN;

/// The longest an agent's whole run may take here.
const LIMIT: Duration = Duration::from_secs(240);

/// `acp-gate hook install AGENT` (or `--command COMMAND`) in the world.
fn install(world: &World, cli: Cli, command: Option<&str>) {
    let mut install = world.command(BIN, false);
    install.args(["hook", "install", cli.name()]);
    if let Some(command) = command {
        install.args(["--command", command]);
    }
    let output = install.output().unwrap();
    assert!(output.status.success(), "{}", said(&output));
}

/// The agent's own non-interactive command for one prompt, as a CI job would run it.
fn agent(world: &World, cli: Cli, resident: bool) -> Command {
    let mut command = world.command(cli.name(), resident);
    match cli {
        Cli::Claude => command.args(["-p", "go", "--output-format", "json"]),
        Cli::Codex => command.args(["exec", "--sandbox", "workspace-write", "go"]),
        Cli::Gemini => command.args(["-m", "gemini-2.5-flash", "--yolo", "-p", "go"]),
        Cli::Copilot => command.args(["-p", "go", "--allow-all-tools"]),
    };
    command
}

/// Runs `cli` through the scenario with acp-gate as its installed hook.
fn gated_run(cli: Cli, resident: bool) -> (World, Output) {
    let world = World::new(scenario());
    world.configure(cli);
    install(&world, cli, None);
    let output = finish(&mut agent(&world, cli, resident), LIMIT);
    if resident {
        let _ = world.command(BIN, true).args(["hook", "stop"]).output();
    }
    (world, output)
}

fn gated(cli: Cli, resident: bool) {
    let what = format!(
        "{} (resident servers {})",
        cli.name(),
        if resident { "on" } else { "off" }
    );
    let (world, output) = gated_run(cli, resident);
    let said = said(&output);
    let steps = scenario().len();
    assert_eq!(
        world.model.turns(),
        steps,
        "{what}: the agent did not go through the whole script\n{said}"
    );
    assert!(
        world.sandbox.workspace.join("allowed.txt").exists()
            && world.sandbox.workspace.join("notes.md").exists(),
        "{what}: ordinary work in the workspace did not run\n{said}"
    );
    world.assert_unharmed(&what);
    let audit = world.audit();
    // Gemini CLI refuses to read `.env` itself (its own ignore rules), before any hook.
    let reached = steps - usize::from(cli == Cli::Gemini);
    let ids: std::collections::HashSet<&str> = audit
        .iter()
        .filter_map(|line| line["tool_call_id"].as_str())
        .collect();
    assert!(
        audit.len() == reached && ids.len() == reached,
        "{what}: one audit line per tool call, {reached} calls\n{}\n{said}",
        audit
            .iter()
            .map(|l| l.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    for line in &audit {
        assert_eq!(line["agent"], cli.name(), "{what}: {line}");
        assert!(
            line["tool_call_id"]
                .as_str()
                .is_some_and(|id| !id.is_empty()),
            "{what}: {line}"
        );
    }
    let asked = audit.last().unwrap();
    assert_eq!(
        asked["decision"], "ask",
        "{what}: the last call needs a person: {asked}"
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).contains(DONE)
            || matches!(cli, Cli::Codex | Cli::Gemini),
        "{what}: the agent did not finish\n{said}"
    );
}

#[test]
fn claude_code_is_gated_by_its_hook() {
    gated(Cli::Claude, false);
    gated(Cli::Claude, true);
}

#[test]
fn codex_is_gated_by_its_hook() {
    gated(Cli::Codex, false);
    gated(Cli::Codex, true);
}

#[test]
fn gemini_cli_is_gated_by_its_hook() {
    gated(Cli::Gemini, false);
    gated(Cli::Gemini, true);
}

#[test]
fn copilot_cli_is_gated_by_its_hook() {
    gated(Cli::Copilot, false);
    gated(Cli::Copilot, true);
}

/// acp-gate that cannot decide (its user's handlers.toml is broken) blocks every call in every
/// agent; acp-gate missing altogether blocks where the agent blocks a failing hook (docs/
/// hooks.md's table), and Codex lets the call through.
#[test]
fn a_gate_that_cannot_decide_blocks_and_a_missing_one_does_what_each_agent_does() {
    for cli in Cli::ALL {
        let world = World::new(vec![Step::Shell("touch ran.txt".into())]);
        world.configure(cli);
        install(&world, cli, None);
        world
            .sandbox
            .write("home/.config/acp-gate/handlers.toml", "[[handler]\nname = ");
        let output = finish(&mut agent(&world, cli, false), LIMIT);
        assert!(
            !world.sandbox.workspace.join("ran.txt").exists(),
            "{}: ran with a broken handlers.toml\n{}",
            cli.name(),
            said(&output)
        );

        let world = World::new(vec![Step::Shell("touch ran.txt".into())]);
        world.configure(cli);
        let missing = world.sandbox.root.join("gone/acp-gate");
        install(
            &world,
            cli,
            Some(&format!("{} hook {}", missing.display(), cli.name())),
        );
        let output = finish(&mut agent(&world, cli, false), LIMIT);
        let ran = world.sandbox.workspace.join("ran.txt").exists();
        assert_eq!(
            ran,
            cli == Cli::Codex,
            "{}: with acp-gate missing the call {}\n{}",
            cli.name(),
            if ran { "ran" } else { "was blocked" },
            said(&output)
        );
    }
}
