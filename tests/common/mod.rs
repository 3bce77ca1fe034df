//! What every end-to-end test needs: the real binary, a sandboxed home and workspace, and the
//! misbehaving test plugins built from `tests/plugins/`.

#![allow(dead_code)] // each test module uses its own part

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_acp-gate");

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A scratch home and workspace; acp-gate run inside sees only them (and the shared compile
/// cache, so that tests do not each compile the built-in plugins).
pub struct Sandbox {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub workspace: PathBuf,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (home, workspace) = (root.join("home"), root.join("workspace"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&workspace).unwrap();
        Sandbox {
            _dir: dir,
            root,
            home,
            workspace,
        }
    }

    /// `acp-gate ARGS` with HOME, the XDG dirs and the audit log inside the sandbox.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(BIN);
        command.args(args);
        self.confine(&mut command);
        command
    }

    /// Gives `command` the sandbox's environment: HOME, the XDG dirs, the workspace as its
    /// directory, no inherited acp-gate settings.
    pub fn confine<'a>(&self, command: &'a mut Command) -> &'a mut Command {
        command
            .current_dir(&self.workspace)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .env(
                "ACP_GATE_CACHE_DIR",
                repo().join("target/test-compile-cache"),
            )
            .env("NO_COLOR", "1")
            // Each call in its own process: a test of the resident hook servers says so.
            .env("ACP_GATE_HOOK_RESIDENT", "0")
            .env_remove("ACP_GATE_ORG_HANDLERS")
            .env_remove("ACP_GATE_USER_HANDLERS")
            .env_remove("ACP_GATE_AUDIT_LOG")
            .env_remove("ACP_GATE_STATE_DIR")
    }

    /// Runs `acp-gate ARGS` with `stdin` as standard input.
    pub fn run(&self, args: &[&str], stdin: &str) -> Output {
        pipe(&mut self.command(args), stdin)
    }

    /// Writes `text` to `relative` under the sandbox root; returns the path.
    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// `acp-gate check --format json --handlers FILE -` over `requests` (one JSON per line):
    /// the parsed output lines, and the process output.
    pub fn check(&self, handlers: Option<&Path>, requests: &[Value]) -> (Vec<Value>, Output) {
        let mut args = vec!["check", "--format", "json"];
        let handlers = handlers.map(|h| h.display().to_string());
        if let Some(handlers) = &handlers {
            args.extend(["--handlers", handlers]);
        }
        args.push("-");
        let stdin: String = requests.iter().map(|r| format!("{r}\n")).collect();
        let output = self.run(&args, &stdin);
        let lines = String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect();
        (lines, output)
    }
}

impl Sandbox {
    /// `acp-gate check --format json ARGS -` over `requests`, with `cache` as the user's cache;
    /// asserts that it succeeded. The parsed output lines, and the process output.
    pub fn check_cached(
        &self,
        cache: &Path,
        args: &[&str],
        requests: &[Value],
    ) -> (Vec<Value>, Output) {
        let mut command =
            self.command(&[&["check", "--format", "json"][..], args, &["-"]].concat());
        command.env("ACP_GATE_CACHE_DIR", cache);
        let stdin: String = requests.iter().map(|r| format!("{r}\n")).collect();
        let output = pipe(&mut command, &stdin);
        assert!(output.status.success(), "{}", stderr(&output));
        let lines = String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (lines, output)
    }
}

/// Runs `command` with `stdin` as standard input; its output.
pub fn pipe(command: &mut Command, stdin: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let written = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    // A command that stops before reading its input (a refused handlers.toml) closes the pipe.
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

/// tests/agents/, where `npm ci` (run by test.sh) installed the TypeScript SDK and acpx.
pub fn test_agents() -> PathBuf {
    let dir = repo().join("tests/agents");
    assert!(
        dir.join("node_modules/@agentclientprotocol/sdk").is_dir(),
        "tests/agents has no node_modules: run ./test.sh (it runs `npm ci` there)"
    );
    dir
}

/// The agent written with the official ACP TypeScript SDK (tests/agents/sdk-agent.mjs).
pub fn sdk_agent_script() -> String {
    test_agents().join("sdk-agent.mjs").display().to_string()
}

/// The scripted agent that speaks ACP protocol v2 as raw JSON lines (tests/agents/v2-agent.mjs).
pub fn v2_agent_script() -> String {
    repo()
        .join("tests/agents/v2-agent.mjs")
        .display()
        .to_string()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A `session/request_permission` params object shaped like Claude Code's adapter.
pub fn claude_bash(title: &str, command: &str) -> Value {
    serde_json::json!({
        "sessionId": "s",
        "toolCall": { "toolCallId": "t", "title": title, "rawInput": { "command": command } },
        "options": [
            { "optionId": "allow", "name": "Allow", "kind": "allow_once" },
            { "optionId": "always", "name": "Always Allow", "kind": "allow_always" },
            { "optionId": "reject", "name": "Reject", "kind": "reject_once" }
        ]
    })
}

/// The path of a test plugin from `tests/plugins/`, built for wasm32-wasip2 on first use.
/// A permission request with only a title (no kind, no input), offering allow and reject: what
/// the test plugin reads its behaviour from.
pub fn titled(title: &str) -> Value {
    json!({
        "sessionId": "s",
        "toolCall": { "toolCallId": "t", "title": title },
        "options": [
            { "optionId": "yes", "name": "Allow", "kind": "allow_once" },
            { "optionId": "no", "name": "Reject", "kind": "reject_once" }
        ]
    })
}

/// The sha256 of a file, in hexadecimal: the pin `handlers.toml` takes.
pub fn sha256_of(path: &Path) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(std::fs::read(path).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub fn test_plugin(name: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let target = BUILT.get_or_init(|| {
        let target = repo().join("target/test-plugins");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .current_dir(repo().join("tests/plugins"))
            .args([
                "build",
                "--quiet",
                "--release",
                "--target",
                "wasm32-wasip2",
                "--target-dir",
            ])
            .arg(&target)
            .status()
            .expect("cargo must be on PATH to build the test plugins");
        assert!(
            status.success(),
            "building tests/plugins for wasm32-wasip2 failed"
        );
        target
    });
    target
        .join("wasm32-wasip2/release")
        .join(format!("{}.wasm", name.replace('-', "_")))
}

/// The verdicts of each handler in one `check --format json` line, by handler name.
pub fn verdict_of<'a>(line: &'a Value, handler: &str) -> &'a Value {
    line["handlers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == handler)
        .unwrap_or_else(|| panic!("no handler {handler} in {line}"))
}
