//! The `hooks` section: `acp-gate hook claude` as the process an agent starts for every tool
//! call (a Bash call of Claude Code's, `cargo test`), handing it to its resident server (as it
//! does by default from the second call on) and deciding it in its own process
//! (`ACP_GATE_HOOK_RESIDENT=0`), beside a bash hook that only reads its input and prints a
//! fixed answer (the floor of any hook written as a script), a bash hook that reads its input
//! with `jq`, and `acp-gate check` of the same call's ACP twin, all started the same way and
//! in turn; then `acp-gate hook serve` answering the same call over HTTP, a connection per
//! call as an agent's HTTP hook makes one.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use serde_json::{Value, json};

use crate::{Comparison, Fixture, Report, Stats, Target, acp_gate};

/// Runs of each process, taken in turn.
const RUNS: usize = 40;
/// Calls to `hook serve`.
const SERVED: usize = 400;

/// A hook process: its command, started with the payload on stdin.
struct Hook {
    label: &'static str,
    program: PathBuf,
    args: Vec<String>,
    /// What it reads on stdin.
    input: Vec<u8>,
    /// Whether an acp-gate hook hands its call to a resident server.
    resident: bool,
}

impl Hook {
    /// Runs it once in the workspace: its wall time from start to exit, and its answer.
    fn run(&self, fixture: &Fixture) -> Result<(Duration, Value)> {
        let started = Instant::now();
        let mut child = in_workspace(fixture, &self.program)
            .args(&self.args)
            .env("ACP_GATE_CACHE_DIR", fixture.path("hook-cache"))
            .env("ACP_GATE_HOOK_IDLE", "300")
            .env(
                "ACP_GATE_HOOK_RESIDENT",
                if self.resident { "1" } else { "0" },
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("{}", self.program.display()))?;
        child
            .stdin
            .take()
            .context("stdin")?
            .write_all(&self.input)?;
        let output = child.wait_with_output()?;
        let elapsed = started.elapsed();
        ensure!(output.status.success(), "{} failed", self.label);
        let answer = serde_json::from_slice(&output.stdout)
            .with_context(|| format!("{} answered {:?}", self.label, output.stdout))?;
        Ok((elapsed, answer))
    }
}

/// The PreToolUse payload Claude Code sends for a Bash call of `cargo test` in `workspace`.
fn payload(workspace: &Path) -> Vec<u8> {
    json!({
        "session_id": "b0c1a6e4-7d2f-4c38-9a51-3e6f2d8c9b10",
        "transcript_path": "/dev/null",
        "cwd": workspace,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "cargo test", "description": "Run the tests"},
        "tool_use_id": "toolu_01NmF8GxXv1Q2",
    })
    .to_string()
    .into_bytes()
}

/// The decision in an answer: Claude Code's shape, or `check --format json`'s.
fn decision(answer: &Value) -> &str {
    answer["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .or(answer["decision"].as_str())
        .unwrap_or("none")
}

pub fn hooks(fixture: &Fixture, report: &mut Report) -> Result<()> {
    report.section(
        "a hook process per tool call: `acp-gate hook claude` (a Bash call) vs a bash hook that prints a fixed answer; `hook serve` per HTTP call",
    );
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/runtime");
    let input = payload(&fixture.workspace);
    let twin = fixture.path("hook-twin.json");
    std::fs::write(
        &twin,
        json!({"sessionId": "s", "toolCall": {"toolCallId": "t", "title": "Bash",
            "kind": "execute", "rawInput": {"command": "cargo test"}}})
        .to_string(),
    )?;
    let script = |label, name: &str| Hook {
        label,
        program: "bash".into(),
        args: vec![dir.join(name).display().to_string()],
        input: input.clone(),
        resident: false,
    };
    let hook = |label, resident| Hook {
        label,
        program: acp_gate().into(),
        args: vec!["hook".into(), "claude".into()],
        input: input.clone(),
        resident,
    };
    std::fs::create_dir_all(fixture.path("hook-run"))?;
    let check = Hook {
        label: "`acp-gate check` (the ACP twin)",
        program: acp_gate().into(),
        args: vec![
            "check".into(),
            "--format".into(),
            "json".into(),
            twin.display().to_string(),
        ],
        input: Vec::new(),
        resident: false,
    };
    let jq = Command::new("jq").arg("--version").output().is_ok();
    let mut hooks = vec![
        hook(
            "`acp-gate hook claude`, its resident server answering",
            true,
        ),
        script("bash hook, fixed answer", "hook-fixed.sh"),
        check,
        hook("`acp-gate hook claude` in its own process", false),
    ];
    if jq {
        hooks.push(script("bash hook reading with `jq`", "hook-jq.sh"));
    } else {
        report.skip("hooks/process-vs-bash-jq", "jq is not installed");
    }
    // Each once first (a cold page cache is not what a session's hundredth call meets; the
    // first resident call starts the server), and every one deciding as acp-gate does.
    for hook in &hooks {
        let (_, answer) = hook.run(fixture)?;
        ensure!(
            decision(&answer) == "allow",
            "{} answered {answer}",
            hook.label
        );
    }
    let mut times = vec![Vec::new(); hooks.len()];
    let timed = resident_server(fixture).and_then(|()| {
        for _ in 0..RUNS {
            for (hook, samples) in hooks.iter().zip(&mut times) {
                samples.push(hook.run(fixture)?.0);
            }
        }
        Ok(())
    });
    // Every timed resident call was the server's (none fell back to deciding in its process;
    // the untimed first one started it).
    let served = stop_resident(fixture)?;
    timed?;
    ensure!(
        served >= RUNS as u64,
        "the resident server served {served} of the {RUNS} timed calls"
    );
    let stats: Vec<Stats> = times.iter().map(|t| Stats::millis(t)).collect();
    let (ours, fixed) = ((hooks[0].label, stats[0]), (hooks[1].label, stats[1]));
    report.add(
        Comparison::new("hooks/process-vs-bash-fixed", "ms", ours, fixed).target(Target::AtMost(
            1.0,
            "≤ 1.0 (no slower than a bash hook that prints a fixed answer)",
        )),
    );
    report.add(Comparison::new(
        "hooks/own-process-vs-bash-fixed",
        "ms",
        (hooks[3].label, stats[3]),
        fixed,
    ));
    report.add(Comparison::new(
        "hooks/check-vs-bash-fixed",
        "ms",
        (hooks[2].label, stats[2]),
        fixed,
    ));
    if jq {
        report.add(Comparison::new(
            "hooks/process-vs-bash-jq",
            "ms",
            ours,
            (hooks[4].label, stats[4]),
        ));
    }
    serve(fixture, report, &input, stats[0])
}

/// `program` run as the agent runs its hooks: in the workspace, with the benchmark's home,
/// state and runtime directories.
fn in_workspace(fixture: &Fixture, program: &Path) -> Command {
    let mut command = Command::new(program);
    command
        .current_dir(&fixture.workspace)
        .env("HOME", fixture.scratch.path())
        .env("ACP_GATE_STATE_DIR", fixture.path("hook-state"))
        .env("XDG_RUNTIME_DIR", fixture.path("hook-run"));
    command
}

/// Waits for the resident server the first call started to listen.
fn resident_server(fixture: &Fixture) -> Result<()> {
    let dir = fixture.path("hook-run").join("acp-gate");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let listening = std::fs::read_dir(&dir)?
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".sock"))
            .any(|e| std::os::unix::net::UnixStream::connect(e.path()).is_ok());
        if listening {
            return Ok(());
        }
        ensure!(Instant::now() < deadline, "no resident hook server started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `acp-gate hook stop`: the calls the resident server served.
fn stop_resident(fixture: &Fixture) -> Result<u64> {
    let output = in_workspace(fixture, Path::new(acp_gate()))
        .args(["hook", "stop"])
        .output()?;
    let said = String::from_utf8_lossy(&output.stdout);
    ensure!(output.status.success(), "hook stop: {said}");
    let calls = said
        .split('(')
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .with_context(|| format!("hook stop said {said:?}"))?;
    Ok(calls)
}

/// `hook serve`: the same call POSTed again and again, a connection each, against the process.
fn serve(fixture: &Fixture, report: &mut Report, input: &[u8], process: Stats) -> Result<()> {
    let mut server = in_workspace(fixture, Path::new(acp_gate()))
        .args(["hook", "serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let result = (|| {
        let mut line = String::new();
        BufReader::new(server.stdout.take().context("stdout")?).read_line(&mut line)?;
        let at = line
            .split("listening on ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .with_context(|| format!("no address in {line:?}"))?
            .to_owned();
        let call = || -> Result<(Duration, Value)> {
            let started = Instant::now();
            let mut stream = std::net::TcpStream::connect(&at)?;
            write!(
                stream,
                "POST /hook/claude HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                input.len()
            )?;
            stream.write_all(input)?;
            let mut answer = String::new();
            stream.read_to_string(&mut answer)?;
            let elapsed = started.elapsed();
            let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
            Ok((elapsed, serde_json::from_str(body)?))
        };
        let (_, answer) = call()?;
        ensure!(decision(&answer) == "allow", "hook serve answered {answer}");
        let mut samples = Vec::with_capacity(SERVED);
        for _ in 0..SERVED {
            samples.push(call()?.0);
        }
        let mut sorted: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        sorted.sort_by(f64::total_cmp);
        let p99 = sorted[(sorted.len() - 1) * 99 / 100];
        report.add(
            Comparison::new(
                "hooks/serve-vs-process",
                "ms",
                ("`hook serve`, one HTTP call", Stats::millis(&samples)),
                ("`acp-gate hook claude`, one process", process),
            )
            .extra("serve_p99_ms", p99),
        );
        Ok(())
    })();
    let _ = server.kill();
    let _ = server.wait();
    result
}
