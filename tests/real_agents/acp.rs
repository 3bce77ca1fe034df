//! The three ACP adapters (Claude Code's, Codex's, Gemini CLI's `--acp`), each under
//! `acp-gate run --non-interactive` and under `acp-gate proxy` with a scripted editor, through
//! the scenario: what the adapter would do without asking its client still reaches the gate,
//! so the secret never reaches the model and nothing outside the workspace is touched;
//! ordinary work runs; the call that needs a person is refused (`run`: escalated, exit 3) or
//! put to the editor (`proxy`), which turns it down.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use super::editor::edit;
use super::{World, clis, finish, said, scenario};
use crate::common::BIN;

const LIMIT: Duration = Duration::from_secs(240);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Adapter {
    Claude,
    Codex,
    Gemini,
}

impl Adapter {
    /// The adapter's command, as a user configures it in an editor.
    fn argv(self) -> Vec<String> {
        let bin = clis();
        let program = |name: &str| bin.join(name).display().to_string();
        match self {
            Adapter::Claude => vec![program("claude-agent-acp")],
            // Codex's sandbox lets commands write in the workspace, as its `auto` mode does.
            Adapter::Codex => vec![
                program("codex-acp"),
                "-c".into(),
                "sandbox_mode=\"workspace-write\"".into(),
            ],
            Adapter::Gemini => vec![
                program("gemini"),
                "--acp".into(),
                "-m".into(),
                "gemini-2.5-flash".into(),
            ],
        }
    }

    fn prepare(self, world: &World) {
        match self {
            Adapter::Claude => {}
            Adapter::Codex => {
                world.configure(super::Cli::Codex);
                // Codex's adapter finds its sandbox (bubblewrap) on PATH: the one Codex ships.
                let bwrap = clis()
                    .join("../@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex-resources/bwrap");
                let dir = world.sandbox.root.join("bin");
                std::fs::create_dir_all(&dir).unwrap();
                std::os::unix::fs::symlink(bwrap, dir.join("bwrap")).unwrap();
            }
            Adapter::Gemini => world.configure(super::Cli::Gemini),
        }
    }
}

/// `acp-gate ARGS -- ADAPTER` in the world, with the world's own `bin` first on PATH.
fn command(world: &World, adapter: Adapter, args: &[&str]) -> Command {
    let mut command = world.command(BIN, false);
    // As on this project's machines: a marker that makes Claude Code's adapter, run as root,
    // fail to start unless acp-gate keeps it from the agent.
    command.env("IS_SANDBOX", "yes");
    let inherited: PathBuf = command
        .get_envs()
        .find(|(k, _)| *k == "PATH")
        .and_then(|(_, v)| v.map(PathBuf::from))
        .unwrap_or_default();
    let bin = world.sandbox.root.join("bin");
    command.env("PATH", format!("{}:{}", bin.display(), inherited.display()));
    command.args(args).arg("--").args(adapter.argv());
    command
}

/// The world after a gated run of the scenario, what acp-gate said, and its exit code.
fn run(adapter: Adapter) -> (World, String, Option<i32>) {
    let world = World::new(scenario());
    adapter.prepare(&world);
    let mut run = command(&world, adapter, &["run", "--non-interactive", "-p", "go"]);
    let output = finish(&mut run, LIMIT);
    let code = output.status.code();
    (world, said(&output), code)
}

fn assert_gated(world: &World, what: &str, said: &str) {
    assert!(
        world.model.turns() >= super::scenario().len(),
        "{what}: the agent did not go through the whole script ({} of {})\n{said}",
        world.model.turns(),
        super::scenario().len()
    );
    assert!(
        world.sandbox.workspace.join("allowed.txt").exists()
            && world.sandbox.workspace.join("notes.md").exists(),
        "{what}: ordinary work in the workspace did not run\n{said}"
    );
    world.assert_unharmed(what);
}

fn under_run(adapter: Adapter) {
    let what = format!("{adapter:?}'s adapter under run");
    let (world, said, code) = run(adapter);
    assert_gated(&world, &what, &said);
    assert_eq!(
        code,
        Some(3),
        "{what}: the ask was escalated: exit 3\n{said}"
    );
}

fn under_proxy(adapter: Adapter) {
    let what = format!("{adapter:?}'s adapter under proxy");
    let world = World::new(scenario());
    adapter.prepare(&world);
    let mut proxy = command(&world, adapter, &["proxy"]);
    let seen = edit(&mut proxy, &world.sandbox.workspace, LIMIT);
    let said = format!(
        "stop {:?}, exit {:?}\n{}",
        seen.stop, seen.code, seen.stderr
    );
    assert_gated(&world, &what, &said);
    assert!(
        seen.asked
            .iter()
            .any(|asked| asked.to_string().contains("nc -l 9")),
        "{what}: the call that needs a person was put to the editor: {:?}\n{said}",
        seen.asked
    );
    assert_eq!(seen.code, Some(0), "{what}\n{said}");
}

#[test]
fn claude_code_s_adapter_is_gated_completely() {
    under_run(Adapter::Claude);
    under_proxy(Adapter::Claude);
}

#[test]
fn codex_s_adapter_is_gated_completely() {
    under_run(Adapter::Codex);
    under_proxy(Adapter::Codex);
}

#[test]
fn gemini_cli_in_acp_mode_is_gated_completely() {
    under_run(Adapter::Gemini);
    under_proxy(Adapter::Gemini);
}
