//! The three ACP adapters (Claude Code's, Codex's, Gemini CLI's `--acp`), each under
//! `acp-gate run --non-interactive` and under `acp-gate proxy` with a scripted editor, through
//! the scenario: what the adapter would do without asking its client still reaches the gate,
//! so the secret never reaches the model and nothing outside the workspace is touched;
//! ordinary work runs; the call that needs a person is refused (`run`: escalated, exit 3) or
//! put to the editor (`proxy`), which turns it down.

use std::os::unix::process::CommandExt;
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
fn command_of(world: &World, adapter: Adapter, args: &[&str]) -> Command {
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
    let mut run = command_of(&world, adapter, &["run", "--non-interactive", "-p", "go"]);
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

/// One audit line per tool call: for Claude Code's and Codex's adapters, whose calls come
/// through their hooks. (Gemini CLI's write of a file is its permission request and the
/// `fs/*` calls acp-gate then carries out for it, each recorded as what acp-gate did.)
fn assert_one_line_per_call(world: &World, what: &str, said: &str) {
    let calls: Vec<String> = world
        .audit()
        .iter()
        .filter_map(|line| line["tool_call_id"].as_str().map(str::to_owned))
        .filter(|id| !id.is_empty())
        .collect();
    let distinct: std::collections::HashSet<&String> = calls.iter().collect();
    assert!(
        calls.len() == scenario().len() && distinct.len() == calls.len(),
        "{what}: one audit line per call: {calls:?}\n{said}"
    );
}

fn under_run(adapter: Adapter) {
    let what = format!("{adapter:?}'s adapter under run");
    let (world, said, code) = run(adapter);
    assert_gated(&world, &what, &said);
    if adapter != Adapter::Gemini {
        assert_one_line_per_call(&world, &what, &said);
    }
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
    let mut proxy = command_of(&world, adapter, &["proxy"]);
    let seen = edit(&mut proxy, &world.sandbox.workspace, LIMIT);
    let said = format!(
        "stop {:?}, exit {:?}\n{}",
        seen.stop, seen.code, seen.stderr
    );
    assert_gated(&world, &what, &said);
    if adapter != Adapter::Gemini {
        assert_one_line_per_call(&world, &what, &said);
    }
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

/// The session's hooks go beside the user's own, which still run: the user's acp-gate hook
/// (trusted by `hook install`) hands its calls to the session's gate too, one line per call.
#[test]
fn the_user_s_own_codex_hooks_still_run_in_a_gated_session() {
    let world = World::new(scenario());
    Adapter::Codex.prepare(&world);
    let log = world.sandbox.root.join("user-hook.log");
    let wrapper = world.sandbox.write(
        "wrap/acp-gate",
        &format!(
            "#!/bin/sh\necho called >> '{}'\nexec '{BIN}' \"$@\"\n",
            log.display()
        ),
    );
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let command = format!("{} hook codex", wrapper.display());
    let output = world
        .command(BIN, false)
        .args(["hook", "install", "codex", "--command", &command])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", said(&output));
    let mut run = command_of(
        &world,
        Adapter::Codex,
        &["run", "--non-interactive", "-p", "go"],
    );
    let output = finish(&mut run, LIMIT);
    let said = said(&output);
    assert_gated(&world, "Codex's adapter with the user's own hook", &said);
    let calls = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .count();
    assert!(
        calls >= scenario().len(),
        "the user's hook ran {calls} times\n{said}"
    );
    assert_one_line_per_call(&world, "Codex's adapter with the user's own hook", &said);
}

#[test]
fn gemini_cli_in_acp_mode_is_gated_completely() {
    under_run(Adapter::Gemini);
    under_proxy(Adapter::Gemini);
}

/// `acp-gate run -- claude-agent-acp` typed in a terminal (here `script`'s pseudo-terminal):
/// the adapter starts (as root, with this machine's `IS_SANDBOX` set), the prompt typed at
/// acp-gate's `›` is gated, and `/quit` ends the run.
#[test]
fn claude_code_s_adapter_starts_from_a_terminal() {
    let world = World::new(vec![super::model::Step::Shell("touch typed.txt".into())]);
    let run = command_of(&world, Adapter::Claude, &["run"]);
    let line = std::iter::once(run.get_program().to_string_lossy().into_owned())
        .chain(
            run.get_args()
                .map(|a| super::shell_word(&a.to_string_lossy())),
        )
        .collect::<Vec<_>>()
        .join(" ");
    let mut terminal = std::process::Command::new("script");
    terminal.args(["-qec", &line, "/dev/null"]);
    for (name, value) in run.get_envs() {
        match value {
            Some(value) => terminal.env(name, value),
            None => terminal.env_remove(name),
        };
    }
    terminal
        .current_dir(&world.sandbox.workspace)
        .process_group(0);
    let mut child = terminal
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut typing = child.stdin.take().unwrap();
    let typed = world.sandbox.workspace.join("typed.txt");
    let deadline = std::time::Instant::now() + LIMIT;
    // The prompt is typed once the session is open, then again until the agent has run it.
    while !typed.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_secs(2));
        let _ = std::io::Write::write_all(&mut typing, b"go\n");
    }
    let _ = std::io::Write::write_all(&mut typing, b"/quit\n");
    drop(typing);
    let output = super::finish_child(child, Duration::from_secs(30));
    assert!(
        typed.exists(),
        "the adapter did not run the typed prompt's command\n{}",
        said(&output)
    );
    assert!(!world.model.was_sent(super::SECRET));
}
