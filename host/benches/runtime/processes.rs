//! The sections that run the `acp-gate` binary: `startup`, `proxy` and `memory`.

use std::io::{BufRead, BufReader, Lines, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};

use crate::agent;
use crate::{
    AGENT, Comparison, Fixture, LATENCY_FILE, PEAK_RSS, RELAY, RSS_FILE, Report, Stats, Target,
    acp_gate, unix_ns,
};

/// Start-ups per figure.
const STARTS: usize = 15;

/// Runs `command` to its end with no input and its output discarded (stderr kept in the
/// scratch directory for the error message); its wall time.
fn run_timed(fixture: &Fixture, command: &mut Command) -> Result<Duration> {
    let stderr = fixture.path("stderr");
    let started = Instant::now();
    let status = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr)?)
        .status()
        .with_context(|| format!("{command:?}"))?;
    let elapsed = started.elapsed();
    ensure!(
        status.success(),
        "{command:?} failed ({status}): {}",
        std::fs::read_to_string(&stderr)?
    );
    Ok(elapsed)
}

/// Runs `command` (its program, arguments, environment and directory) like [`run_timed`], from
/// this binary in its `peak-rss` role; its wall time and peak resident memory in KiB.
///
/// Not from this process: a child spawned here shares the benchmark's pages until its `exec`,
/// and the kernel counts them in its peak. The `peak-rss` process is small (a few MiB, the
/// least this measures).
fn run_peak_rss(fixture: &Fixture, command: &Command) -> Result<(Duration, u64)> {
    let rss_file = fixture.path("peak-rss");
    let mut wrapper = Command::new(std::env::current_exe()?);
    wrapper
        .arg(PEAK_RSS)
        .arg(&rss_file)
        .arg(command.get_program())
        .args(command.get_args());
    if let Some(dir) = command.get_current_dir() {
        wrapper.current_dir(dir);
    }
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => wrapper.env(key, value),
            None => wrapper.env_remove(key),
        };
    }
    let elapsed = run_timed(fixture, &mut wrapper)?;
    Ok((elapsed, std::fs::read_to_string(&rss_file)?.trim().parse()?))
}

/// The `peak-rss` role, `--peak-rss FILE PROGRAM [ARGS...]`: runs the command and exits with
/// its code, after writing its peak RSS (KiB, from wait4(2)) to FILE.
pub fn peak_rss_role() -> Result<()> {
    let mut args = std::env::args_os().skip(2);
    let file = args.next().context("no file to write the peak RSS to")?;
    let program = args.next().context("no command to measure")?;
    let child = Command::new(program).args(args).spawn()?;
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, which nothing else waits for (the `Child` is dropped
    // without `wait`), with pointers to live locals.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    ensure!(pid > 0, "wait4: {}", std::io::Error::last_os_error());
    std::fs::write(file, usage.ru_maxrss.to_string())?;
    std::process::exit(ExitStatus::from_raw(status).code().unwrap_or(1));
}

/// The `relay` role, `--relay PROGRAM [ARGS...]`: a process in the middle that does nothing
/// but copy bytes both ways between its stdio and the command's (the floor of any proxy: one
/// more process and pipe on the way, nothing read). Exits when the command's stdout closes.
pub fn relay_role() -> Result<()> {
    let mut args = std::env::args_os().skip(2);
    let program = args.next().context("no command to relay to")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let (mut to, mut from) = (
        child.stdin.take().context("stdin")?,
        child.stdout.take().context("stdout")?,
    );
    std::thread::spawn(move || std::io::copy(&mut std::io::stdin().lock(), &mut to));
    std::io::copy(&mut from, &mut std::io::stdout().lock())?;
    std::process::exit(child.wait()?.code().unwrap_or(1));
}

/// `acp-gate check --format json` of one request in the workspace, with the compile cache in
/// `cache`.
fn check(fixture: &Fixture, cache: &Path) -> Result<Command> {
    let request = fixture.path("request.json");
    if !request.exists() {
        std::fs::write(
            &request,
            r#"{"toolCall": {"toolCallId": "1", "rawInput": {"command": "cargo test"}}}"#,
        )?;
    }
    let mut command = Command::new(acp_gate());
    command
        .args(["check", "--format", "json"])
        .arg(request)
        .current_dir(&fixture.workspace)
        .env("HOME", fixture.scratch.path())
        .env("ACP_GATE_CACHE_DIR", cache);
    Ok(command)
}

/// `startup`: `acp-gate check` on one request (the built-ins' native code is in the binary:
/// nothing compiles at start) against starting `true`.
pub fn startup(fixture: &Fixture, report: &mut Report) -> Result<()> {
    report.section(
        "start-up: `acp-gate check` on one request (the default chain, compiled into the binary) vs starting `true`",
    );
    let cache = fixture.path("startup-cache");
    run_timed(fixture, &mut check(fixture, &cache)?)?;
    let (mut ours, mut floor) = (Vec::new(), Vec::new());
    for _ in 0..STARTS {
        ours.push(run_timed(fixture, &mut check(fixture, &cache)?)?);
        floor.push(run_timed(fixture, &mut Command::new("true"))?);
    }
    report.add(Comparison::new(
        "startup/check-vs-true",
        "ms",
        ("`acp-gate check`", Stats::millis(&ours)),
        ("`true`", Stats::millis(&floor)),
    ));
    Ok(())
}

/// The editor side of an ACP connection: an agent (or the proxy in front of one) on pipes.
struct Editor {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl Editor {
    /// Starts `command` (this binary as the agent, or the proxy in front of it), then
    /// `initialize` and `session/new`.
    fn open(mut command: Command, workspace: &Path) -> Result<Editor> {
        let mut child = command
            .env(AGENT, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("{command:?}"))?;
        let stdin = child.stdin.take().context("stdin")?;
        let lines = BufReader::new(child.stdout.take().context("stdout")?).lines();
        let mut editor = Editor {
            child,
            stdin,
            lines,
            next_id: 0,
        };
        editor.call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
            |_| {},
        )?;
        editor.call(
            "session/new",
            json!({"cwd": workspace, "mcpServers": []}),
            |_| {},
        )?;
        Ok(editor)
    }

    /// Sends a request and reads until its answer; `on_message` sees every message before it.
    fn call(
        &mut self,
        method: &str,
        params: Value,
        mut on_message: impl FnMut(&Value),
    ) -> Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        writeln!(
            self.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )?;
        self.stdin.flush()?;
        loop {
            let line = self
                .lines
                .next()
                .with_context(|| format!("no answer to {method}"))??;
            let message: Value = serde_json::from_str(&line)?;
            if message["id"] == id && message.get("method").is_none() {
                if let Some(error) = message.get("error") {
                    bail!("{method}: {error}");
                }
                return Ok(message["result"].clone());
            }
            on_message(&message);
        }
    }

    /// Sends the prompt `script` (see agent.rs); the turn's wall time and each
    /// `session/update`'s latency from the agent's write to this side's read, in µs.
    fn turn(&mut self, script: &str) -> Result<(Duration, Vec<f64>)> {
        let mut latencies = Vec::new();
        let started = Instant::now();
        self.call(
            "session/prompt",
            json!({"sessionId": "bench", "prompt": [{"type": "text", "text": script}]}),
            |message| {
                if let Some(sent) = message["params"]["_meta"]["sentNs"]
                    .as_str()
                    .and_then(|s| s.parse::<u128>().ok())
                {
                    latencies.push(unix_ns().saturating_sub(sent) as f64 / 1e3);
                }
            },
        )?;
        Ok((started.elapsed(), latencies))
    }

    /// Closes the agent's stdin (the editor is gone) and waits for the end.
    fn close(mut self) -> Result<()> {
        drop(self.stdin);
        let status = self.child.wait()?;
        ensure!(status.success(), "the agent side exited with {status}");
        Ok(())
    }
}

/// Streamed notifications per flood, floods per figure, and the paced stream for latency.
const UPDATES: usize = 10_000;
const FLOODS: usize = 5;
const PACED: &str = "updates 2000 250";

/// `proxy`: `session/update` notifications agent -> editor through `acp-gate proxy` against a
/// direct pipe: messages per second in a flood, and latency per message in a paced stream.
pub fn proxy(fixture: &Fixture, report: &mut Report) -> Result<()> {
    report.section(
        "proxy: session/update notifications agent -> editor through `acp-gate proxy` vs a direct pipe",
    );
    let available = Command::new(acp_gate())
        .args(["proxy", "--help"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !available {
        report.skip(
            "proxy",
            "proxy not available (`acp-gate proxy --help` fails)",
        );
        return Ok(());
    }
    let agent = std::env::current_exe()?;
    let direct = || Command::new(&agent);
    let proxied = || {
        let mut command = Command::new(acp_gate());
        command
            .arg("proxy")
            .arg("--audit")
            .arg(fixture.path("proxy-audit.jsonl"))
            .arg("--workspace")
            .arg(&fixture.workspace)
            .arg("--")
            .arg(&agent)
            .stderr(Stdio::null());
        command
    };
    let relayed = || {
        let mut command = Command::new(&agent);
        command.arg(RELAY).arg(&agent);
        command
    };
    let turn = |command: Command, script: &str| -> Result<(Duration, Vec<f64>)> {
        let mut editor = Editor::open(command, &fixture.workspace)?;
        let result = editor.turn(script)?;
        editor.close()?;
        Ok(result)
    };
    let flood = format!("updates {UPDATES}");
    let (mut ours, mut baseline, mut relay) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..FLOODS {
        for (rates, command) in [
            (&mut baseline, direct()),
            (&mut ours, proxied()),
            (&mut relay, relayed()),
        ] {
            let (elapsed, latencies) = turn(command, &flood)?;
            ensure!(
                latencies.len() == UPDATES,
                "{} updates arrived",
                latencies.len()
            );
            rates.push(UPDATES as f64 / elapsed.as_secs_f64());
        }
    }
    let ours = Stats::of(ours);
    let what = format!("{UPDATES} updates through the proxy ({FLOODS} floods)");
    report.add(
        Comparison::new(
            "proxy/rate",
            "msg/s",
            (what.clone(), ours),
            ("direct pipe", Stats::of(baseline)),
        )
        .target(Target::AtLeast(0.9, "≥ 90% of the direct pipe's rate")),
    );
    report.add(
        Comparison::new(
            "proxy/rate-vs-relay",
            "msg/s",
            (what, ours),
            ("a process copying bytes", Stats::of(relay)),
        )
        .target(Target::AtLeast(
            0.95,
            "≥ 95% of a byte-copying process's rate",
        )),
    );

    // Latency: the proxy's added latency per message against the direct pipe, beside what a
    // process that only copies bytes adds in the same run (the floor of any process between).
    let (mut ours, mut baseline, mut relay) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        baseline.extend(turn(direct(), PACED)?.1);
        ours.extend(turn(proxied(), PACED)?.1);
        relay.extend(turn(relayed(), PACED)?.1);
    }
    let (ours, baseline, relay) = (Stats::of(ours), Stats::of(baseline), Stats::of(relay));
    let what = format!("`{PACED}` µs through the proxy");
    report.add(
        Comparison::new(
            "proxy/latency",
            "µs",
            (what.clone(), ours),
            ("direct pipe", baseline),
        )
        .extra("added", ours.median - baseline.median)
        .extra("relay_added", relay.median - baseline.median),
    );
    report.add(Comparison::new(
        "proxy/latency-vs-relay",
        "µs",
        (what, ours),
        ("a process copying bytes", relay),
    ));
    Ok(())
}

/// Permission requests sent at once in `load`, and one at a time for its baseline.
const BURST: usize = 1000;
const ALONE: usize = 200;

/// `load`: `BURST` permission requests sent at once through `acp-gate run` and through
/// `acp-gate proxy`, each one's latency against the same requests one at a time; every one must
/// be answered as it is alone.
pub fn load(fixture: &Fixture, report: &mut Report) -> Result<()> {
    report.section(
        "load: 1,000 permission requests sent at once through `acp-gate run` and `acp-gate proxy`: latency per request vs the same requests one at a time",
    );
    let agent = std::env::current_exe()?;
    let file = fixture.path("latency.json");
    let measure = |front: &str, script: String| -> Result<Vec<f64>> {
        let _ = std::fs::remove_file(&file);
        let mut command = Command::new(acp_gate());
        command
            .arg(front)
            .arg("--audit")
            .arg(fixture.path("load-audit.jsonl"))
            .arg("--workspace")
            .arg(&fixture.workspace)
            .env(AGENT, "1")
            .env(LATENCY_FILE, &file)
            .env("HOME", fixture.scratch.path())
            .stderr(Stdio::null());
        if front == "run" {
            command
                .args(["--non-interactive", "--format", "json", "-p", &script, "--"])
                .arg(&agent)
                .stdout(Stdio::null());
            let status = command.status()?;
            ensure!(status.success(), "`acp-gate run` exited with {status}");
        } else {
            command.arg("--").arg(&agent);
            let mut editor = Editor::open(command, &fixture.workspace)?;
            editor.turn(&script)?;
            editor.close()?;
        }
        let result: Value = serde_json::from_str(&std::fs::read_to_string(&file)?)?;
        ensure!(
            result["wrong"] == 0,
            "{front}: {} of `{script}` answered otherwise than alone",
            result["wrong"]
        );
        let latencies: Vec<f64> = result["latencies_us"]
            .as_array()
            .context("no latencies")?
            .iter()
            .filter_map(Value::as_f64)
            .collect();
        Ok(latencies)
    };
    for front in ["run", "proxy"] {
        let alone = measure(front, format!("alone {ALONE}"))?;
        let burst = measure(front, format!("burst {BURST}"))?;
        ensure!(
            burst.len() == BURST,
            "{front}: {} of {BURST} answered",
            burst.len()
        );
        let name = if front == "run" {
            "load/run"
        } else {
            "load/proxy"
        };
        report.add(
            Comparison::new(
                name,
                "µs",
                (
                    format!("`acp-gate {front}`, {BURST} at once"),
                    Stats::of(burst.clone()),
                ),
                ("one at a time", Stats::of(alone.clone())),
            )
            .extra("p99", quantile(burst, 0.99))
            .extra("baseline_p99", quantile(alone, 0.99)),
        );
    }
    Ok(())
}

/// The `q` quantile of `samples`.
fn quantile(mut samples: Vec<f64>, q: f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[((samples.len() - 1) as f64 * q).round() as usize]
}

/// Permission requests in the `run` session whose memory is watched.
const PERMISSIONS: usize = 20_000;

/// The requests over which its growth is measured: the last ones. Before them, the instance
/// pool's slots warm up (each slot a handler was ever given keeps the pages it wrote, and the
/// number of slots grows to the most instances ever live at once): that growth is reported
/// apart, as `warm_up_growth_percent` (from request 1,000 to the window's start).
const WINDOW: usize = 10_000;

/// `memory`: peak RSS of `acp-gate check` (vs the binary doing nothing), and the growth of
/// `acp-gate run`'s RSS over the last 10,000 of 20,000 requests of one session.
pub fn memory(fixture: &Fixture, report: &mut Report) -> Result<()> {
    report.section(
        "memory: peak RSS of `acp-gate check` (default chain, warm cache) vs `acp-gate --version`; `acp-gate run`'s RSS after 20,000 permission requests vs after 10,000",
    );
    let cache = fixture.path("warm-cache");
    run_timed(fixture, &mut check(fixture, &cache)?)?;
    let (mut ours, mut floor) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        ours.push(run_peak_rss(fixture, &check(fixture, &cache)?)?.1 as f64);
        let mut version = Command::new(acp_gate());
        version.arg("--version");
        floor.push(run_peak_rss(fixture, &version)?.1 as f64);
    }
    report.add(Comparison::new(
        "memory/check-peak-rss",
        "KiB",
        ("acp-gate check", Stats::of(ours)),
        ("acp-gate --version", Stats::of(floor)),
    ));

    let readings = fixture.path("rss.json");
    let mut run = Command::new(acp_gate());
    run.args(["run", "--non-interactive", "--format", "json", "-p"])
        .arg(format!("permissions {PERMISSIONS}"))
        .arg("--audit")
        .arg(fixture.path("run-audit.jsonl"))
        .arg("--workspace")
        .arg(&fixture.workspace)
        .arg("--")
        .arg(std::env::current_exe()?)
        .env(AGENT, "1")
        .env(RSS_FILE, &readings)
        .env("HOME", fixture.scratch.path())
        .env("ACP_GATE_CACHE_DIR", &cache);
    let (elapsed, peak) = run_peak_rss(fixture, &run)?;
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&readings)?)?;
    let answers = &result["answers"];
    ensure!(
        answers["allow"] == PERMISSIONS / 2 && answers["reject"] == PERMISSIONS / 2,
        "unexpected answers: {answers}"
    );
    let rss = |requests: usize| {
        result["readings"]
            .as_array()
            .and_then(|all| all.iter().find(|r| r["requests"] == requests))
            .and_then(|r| r["rss_kib"].as_f64())
            .with_context(|| format!("no RSS reading after {requests} requests"))
    };
    let (warm, first, last) = (
        rss(agent::RSS_EVERY)?,
        rss(PERMISSIONS - WINDOW)?,
        rss(PERMISSIONS)?,
    );
    report.add(
        Comparison::new(
            "memory/run-rss",
            "KiB",
            (
                format!("`acp-gate run` after {PERMISSIONS} requests"),
                Stats::one(last),
            ),
            (format!("after {}", PERMISSIONS - WINDOW), Stats::one(first)),
        )
        .target(Target::AtMost(1.05, "growth < 5%: ratio ≤ 1.05"))
        .extra("growth_percent", (last / first - 1.0) * 100.0)
        .extra("warm_up_growth_percent", (first / warm - 1.0) * 100.0)
        .extra("peak_kib", peak as f64)
        .extra(
            "requests_per_second",
            PERMISSIONS as f64 / elapsed.as_secs_f64(),
        ),
    );
    Ok(())
}
