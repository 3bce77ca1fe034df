//! The sections that evaluate in this process: `instances`, `decision` (with the hooks it is
//! compared with) and `heavy`.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};

use acp_gate::chain::Chain;
use acp_gate::config::PluginRef;
use acp_gate::request::ToolRequest;
use acp_gate::runtime::{Grant, Limits, LoadedPlugin, Runtime};
use acp_gate::{LoadOptions, builtin, load_chain};

use crate::native::{self, NativeChain, to_plugin_request};
use crate::policy;
use crate::{
    Comparison, Fixture, Report, Stats, Target, acp_gate, on_worker, permission_params, repo,
    same_decision,
};

/// Evaluations per in-process figure.
const EVALUATIONS: usize = 2000;
/// The time between two decisions of the `decision` section: closer than an agent's permission
/// requests ever are (each is a JSON-RPC round trip after a model's turn), so that the spare
/// instances made in the background are ready, as they are in a session. `back_to_back` is
/// the same chain with no pause, when every instance is made on the request's path.
const PACE: Duration = Duration::from_micros(500);

/// Times a fresh instance per evaluation (what the chain does) and one reused instance,
/// alternately so that load from elsewhere on the machine hits both alike, `n` times each.
async fn fresh_vs_reused(
    runtime: &Arc<Runtime>,
    plugin: &LoadedPlugin,
    request: &ToolRequest,
    config: &str,
    n: usize,
) -> Result<(Vec<Duration>, Vec<Duration>)> {
    let limits = Limits::default();
    let mut instance = runtime
        .instantiate(plugin, limits)
        .await
        .map_err(anyhow::Error::msg)?;
    let (mut fresh, mut reused) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let started = Instant::now();
        let evaluation = runtime.evaluate(plugin, request, config, limits).await;
        fresh.push(started.elapsed());
        evaluation.outcome.map_err(anyhow::Error::msg)?;
        let started = Instant::now();
        let outcome = instance.evaluate(request, config).await;
        reused.push(started.elapsed());
        outcome.map_err(anyhow::Error::msg)?;
    }
    Ok((fresh, reused))
}

/// Where a fresh instance's time goes: instantiation (a store, a pool slot, the component's
/// instances), the first call on it (fresh memory: page faults, the guest's lazy set-up) and
/// dropping it (the slot's reset); and the page faults of the whole, per instance.
struct FreshParts {
    instantiate: Vec<Duration>,
    first_call: Vec<Duration>,
    drop: Vec<Duration>,
    page_faults: f64,
}

async fn fresh_parts(
    runtime: &Runtime,
    plugin: &LoadedPlugin,
    request: &ToolRequest,
) -> Result<FreshParts> {
    let n = EVALUATIONS / 2;
    let mut parts = FreshParts {
        instantiate: Vec::with_capacity(n),
        first_call: Vec::with_capacity(n),
        drop: Vec::with_capacity(n),
        page_faults: 0.0,
    };
    let faults_before = minor_page_faults();
    for _ in 0..n {
        let started = Instant::now();
        let mut instance = runtime
            .instantiate(plugin, Limits::default())
            .await
            .map_err(anyhow::Error::msg)?;
        parts.instantiate.push(started.elapsed());
        let started = Instant::now();
        let outcome = instance.evaluate(request, "{}").await;
        parts.first_call.push(started.elapsed());
        outcome.map_err(anyhow::Error::msg)?;
        let started = Instant::now();
        drop(instance);
        parts.drop.push(started.elapsed());
    }
    parts.page_faults = (minor_page_faults() - faults_before) as f64 / n as f64;
    Ok(parts)
}

/// This process's minor page faults so far (getrusage(2)).
fn minor_page_faults() -> i64 {
    // SAFETY: rusage is plain data; getrusage fills it in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a pointer to a live local.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    usage.ru_minflt
}

/// `instances`: each built-in plugin on the command request, fresh instance vs reused, and
/// its code natively; then org-policy prepared for the team policy (instances of its snapshot).
pub async fn instances(fixture: &Fixture, report: &mut Report) -> Result<()> {
    report.section(
        "one handler evaluation: a fresh instance per request (what the chain does) vs one reused instance",
    );
    let (_, what, request) = fixture.requests()?.remove(0);
    println!("request: {what}");
    for name in builtin::names() {
        let bytes = builtin::bytes(name).context("a built-in without bytes")?;
        let plugin = fixture
            .runtime
            .load(name, bytes, None, &native::builtin_grants(name)?)?;
        instance_row(fixture, report, name, &plugin, name, "{}", &request).await?;
    }
    let config = json!({ "rules": policy::team_policy_rules()? }).to_string();
    let plugin = policy::prepared(fixture, &config).await?;
    let row = "org-policy-team-prepared";
    instance_row(
        fixture,
        report,
        row,
        &plugin,
        "org-policy",
        &config,
        &request,
    )
    .await
}

/// One `instance/NAME` comparison: `plugin` (the built-in `builtin`, with `config`) on
/// `request`, fresh vs reused, natively, and a fresh instance's parts.
async fn instance_row(
    fixture: &Fixture,
    report: &mut Report,
    name: &str,
    plugin: &LoadedPlugin,
    builtin: &'static str,
    config: &str,
    request: &ToolRequest,
) -> Result<()> {
    let (fresh, reused) =
        fresh_vs_reused(&fixture.runtime, plugin, request, config, EVALUATIONS).await?;
    let builtin = PluginRef::Builtin(builtin);
    let native = (0..EVALUATIONS)
        .map(|_| {
            let started = Instant::now();
            let verdict = native::evaluate(&builtin, &to_plugin_request(request), config);
            let elapsed = started.elapsed();
            verdict.map(|_| elapsed).map_err(anyhow::Error::msg)
        })
        .collect::<Result<Vec<_>>>()?;
    let parts = fresh_parts(&fixture.runtime, plugin, request).await?;
    report.add(
        Comparison::new(
            format!("instance/{name}"),
            "µs",
            ("fresh instance", Stats::micros(&fresh)),
            ("reused instance", Stats::micros(&reused)),
        )
        .extra_stats("native", Stats::micros(&native))
        .extra_stats("instantiate", Stats::micros(&parts.instantiate))
        .extra_stats("first_call", Stats::micros(&parts.first_call))
        .extra_stats("drop", Stats::micros(&parts.drop))
        .extra("page_faults_per_instance", parts.page_faults),
    );
    Ok(())
}

/// A PreToolUse hook the way Claude Code runs one: a process per request, the event as JSON on
/// stdin, the decision as JSON on stdout.
struct Hook {
    /// The comparison's name prefix.
    slug: &'static str,
    name: &'static str,
    program: PathBuf,
    script: PathBuf,
    runs: usize,
}

impl Hook {
    /// The bash and the Python hook in `benches/runtime/`: the default chain's checks, as far
    /// as a short script goes.
    fn all() -> Result<Vec<Hook>> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/runtime");
        // The interpreter itself, not a version manager's shim in front of it (pyenv's is a
        // shell script that takes longer than Python).
        let output = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .context("python3")?;
        ensure!(output.status.success(), "python3 does not run");
        let python = String::from_utf8(output.stdout)?.trim().to_owned();
        Ok(vec![
            Hook {
                slug: "hook-bash",
                name: "bash hook",
                program: "bash".into(),
                script: dir.join("hook.sh"),
                runs: 300,
            },
            Hook {
                slug: "hook-python",
                name: "Python hook",
                program: python.into(),
                script: dir.join("hook.py"),
                runs: 60,
            },
        ])
    }

    /// Runs the hook once on `event`: its `permissionDecision`.
    fn decide(&self, event: &[u8], cwd: &Path) -> Result<String> {
        let mut child = Command::new(&self.program)
            .arg(&self.script)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("{}", self.program.display()))?;
        child.stdin.take().context("stdin")?.write_all(event)?;
        let output = child.wait_with_output()?;
        ensure!(output.status.success(), "{} failed", self.name);
        let answer: Value = serde_json::from_slice(&output.stdout)?;
        match answer["hookSpecificOutput"]["permissionDecision"].as_str() {
            Some(decision) => Ok(decision.to_owned()),
            None => bail!("{} answered {answer}", self.name),
        }
    }
}

/// The PreToolUse event Claude Code sends a hook for `request`.
fn hook_event(request: &ToolRequest, cwd: &Path) -> Vec<u8> {
    let tool_call = &request.raw["toolCall"];
    json!({
        "session_id": request.session_id,
        "transcript_path": "",
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "tool_name": tool_call["title"],
        "tool_input": tool_call["rawInput"],
    })
    .to_string()
    .into_bytes()
}

/// One decision, timed.
async fn timed_decision(chain: &Chain, request: &ToolRequest) -> Duration {
    let started = Instant::now();
    std::hint::black_box(chain.decide(request).await);
    started.elapsed()
}

/// `decision`: the default chain against its floor (the same checks as plain Rust) and
/// against process-per-request hooks.
pub async fn decision(fixture: &Fixture, report: &mut Report) -> Result<()> {
    report.section(
        "the default chain's decision (three built-ins, fresh instances) vs the same checks as plain Rust, and vs a hook process per request",
    );
    let chain = Arc::new(
        load_chain(&LoadOptions {
            workspace: fixture.workspace.clone(),
            ..Default::default()
        })
        .await?,
    );
    let native = Arc::new(NativeChain::default_chain()?);
    let hooks = Arc::new(Hook::all()?);
    for (name, what, request) in fixture.requests()? {
        let decided = chain.decide(&request).await.outcome.as_str();
        println!("request: {what} -> {decided}");
        same_decision(
            what,
            decided,
            ("plain Rust", native.decide(&request).as_str()),
        )?;
        let event = hook_event(&request, &fixture.workspace);
        for hook in hooks.iter() {
            same_decision(
                what,
                decided,
                (hook.name, &hook.decide(&event, &fixture.workspace)?),
            )?;
        }
        let (chain, native, timed_hooks, cwd) = (
            chain.clone(),
            native.clone(),
            hooks.clone(),
            fixture.workspace.clone(),
        );
        let timed = Arc::new(request);
        // The hooks' runs are spread among the chain's decisions, so that a change in the
        // machine's speed during the run weighs on both sides alike.
        let (ours, floor, back_to_back, hooked) = on_worker(async move {
            let (mut ours, mut floor, mut back_to_back) = (Vec::new(), Vec::new(), Vec::new());
            let mut hooked = vec![Vec::new(); timed_hooks.len()];
            for i in 0..EVALUATIONS {
                for (hook, samples) in timed_hooks.iter().zip(&mut hooked) {
                    if i % (EVALUATIONS / hook.runs) == 0 {
                        let started = Instant::now();
                        hook.decide(&event, &cwd)?;
                        samples.push(started.elapsed());
                    }
                }
                // The last decision's clean-up runs on this worker, as it does once a
                // decision's task is done in `run` and `proxy` (see `on_worker`).
                tokio::task::yield_now().await;
                // Spun, not slept: a vCPU that goes idle comes back with cold caches, which
                // would be measured instead of the chain.
                let paused = Instant::now();
                while paused.elapsed() < PACE {
                    std::hint::spin_loop();
                }
                ours.push(timed_decision(&chain, &timed).await);
                let started = Instant::now();
                std::hint::black_box(native.decide(std::hint::black_box(&timed)));
                floor.push(started.elapsed());
            }
            for _ in 0..EVALUATIONS {
                back_to_back.push(timed_decision(&chain, &timed).await);
            }
            Ok::<_, anyhow::Error>((ours, floor, back_to_back, hooked))
        })
        .await??;
        let ours = Stats::micros(&ours);
        report.add(
            Comparison::new(
                format!("decision/{name}"),
                "µs",
                ("default chain", ours),
                ("plain Rust", Stats::micros(&floor)),
            )
            .extra_stats("back_to_back", Stats::micros(&back_to_back))
            .target(Target::AtMost(30.0, "≤ 30× the floor")),
        );
        for (hook, samples) in hooks.iter().zip(hooked) {
            let comparison = Comparison::new(
                format!("{}/{name}", hook.slug),
                "µs",
                ("default chain", ours),
                (hook.name, Stats::micros(&samples)),
            );
            report.add(if hook.slug == "hook-bash" {
                comparison.target(Target::AtMost(0.02, "≥ 50× faster: ratio ≤ 0.02"))
            } else {
                comparison
            });
        }
    }
    Ok(())
}

/// An example plugin in examples/plugins/, built from source with its own toolchain.
struct Example {
    lang: &'static str,
    wasm: &'static str,
    /// A request its handler applies to.
    params: fn() -> Value,
    /// Evaluations per figure (a Python instance is heavy).
    evaluations: usize,
    /// Its verdict on that request (the Python example's depends on the day and hour).
    expect: Option<&'static str>,
}

const EXAMPLES: [Example; 3] = [
    Example {
        lang: "js",
        wasm: "domain_allowlist.wasm",
        params: || {
            json!({
                "sessionId": "bench",
                "toolCall": {
                    "toolCallId": "call-1",
                    "title": "Fetch https://docs.rs/serde",
                    "kind": "fetch",
                    "rawInput": {"url": "https://docs.rs/serde", "prompt": "Summarise"}
                }
            })
        },
        evaluations: 300,
        expect: Some("allow"),
    },
    Example {
        lang: "python",
        wasm: "change_freeze.wasm",
        params: || {
            permission_params(
                "Edit",
                json!({"file_path": "deploy/prod.yaml", "old_string": "a", "new_string": "b"}),
            )
        },
        evaluations: 100,
        expect: None,
    },
    Example {
        lang: "go",
        wasm: "branch_guard.wasm",
        params: || permission_params("Bash", json!({"command": "git push origin main"})),
        evaluations: 300,
        expect: Some("deny"),
    },
];

/// The `plugin new` templates: one rule (a `git commit` names a ticket) in every language, on
/// one request, with evaluations per figure.
const TEMPLATES: [(&str, usize); 5] = [
    ("rust", 300),
    ("c", 300),
    ("js", 300),
    ("python", 100),
    ("go", 300),
];

/// Runs `script` (a plugin's `build.sh`) to write `out`.
fn build(script: &Path, out: &Path, what: &str) -> Result<()> {
    let build = Command::new("bash")
        .arg(script)
        .env("OUT", out)
        // Rust templates share the tests' target directory, to build their crates once.
        .env(
            "CARGO_TARGET_DIR",
            repo().join("target/examples/new-rust-target"),
        )
        .output()?;
    ensure!(
        build.status.success(),
        "building {what} failed (run scripts/install-plugin-toolchains.sh): {}",
        String::from_utf8_lossy(&build.stderr)
    );
    Ok(())
}

/// The `[handler.config]` (as JSON) and the grants of a `handlers.toml` snippet.
fn handler(snippet: &Path) -> Result<(String, BTreeSet<Grant>)> {
    let snippet: toml::Value = toml::from_str(&std::fs::read_to_string(snippet)?)?;
    let handler = &snippet["handler"][0];
    let config = serde_json::to_string(handler.get("config").context("no config")?)?;
    let grants = handler["imports"]
        .as_array()
        .context("no imports")?
        .iter()
        .map(|g| g.as_str().and_then(Grant::parse).context("unknown grant"))
        .collect::<Result<_>>()?;
    Ok((config, grants))
}

/// One plugin's figures: per decision, a fresh instance against a reused one (after checking
/// its verdict is `expect`, when known); its compile cache (`acp-gate plugin validate` with an empty cache,
/// then five times warm), with its size.
#[allow(clippy::too_many_arguments)]
async fn plugin_figures(
    fixture: &Fixture,
    report: &mut Report,
    name: &str,
    wasm: &Path,
    (config, grants): (String, BTreeSet<Grant>),
    request: &ToolRequest,
    evaluations: usize,
    expect: Option<&str>,
) -> Result<()> {
    let bytes = std::fs::read(wasm)?;
    let plugin = fixture.runtime.load(name, &bytes, None, &grants)?;
    let evaluation = fixture
        .runtime
        .evaluate(&plugin, request, &config, Limits::default())
        .await;
    let ruling = evaluation.outcome.map_err(anyhow::Error::msg)?;
    if let Some(expect) = expect {
        same_decision(name, ruling.verdict.as_str(), ("its cases", expect))?;
    }
    let (fresh, reused) =
        fresh_vs_reused(&fixture.runtime, &plugin, request, &config, evaluations).await?;
    report.add(Comparison::new(
        format!("heavy/{name}"),
        "µs",
        ("fresh instance", Stats::micros(&fresh)),
        ("reused instance", Stats::micros(&reused)),
    ));

    let imports: Vec<&str> = grants.iter().map(|g| g.name()).collect();
    let load = |cache: &Path| -> Result<Duration> {
        let started = Instant::now();
        let output = Command::new(acp_gate())
            .args(["plugin", "validate", "--imports", &imports.join(",")])
            .arg(wasm)
            .env("ACP_GATE_CACHE_DIR", cache)
            .output()?;
        ensure!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        Ok(started.elapsed())
    };
    let cache = fixture.path(&format!("{}-cache", name.replace('/', "-")));
    let first = load(&cache)?;
    let second = (0..5).map(|_| load(&cache)).collect::<Result<Vec<_>>>()?;
    report.add(
        Comparison::new(
            format!("compile-cache/{name}"),
            "ms",
            ("second load (median of 5)", Stats::millis(&second)),
            ("first load", Stats::millis(&[first])),
        )
        .extra("size_kib", (bytes.len() >> 10) as f64),
    );
    Ok(())
}

/// `heavy`: the JavaScript, Python and Go examples, each on a request of its own, then the
/// `plugin new` template of every language on one request (`git commit -m 'fix the build'`,
/// which each denies): per decision (fresh vs reused instance), and the compile cache
/// (`acp-gate plugin validate` with an empty cache, then warm).
pub async fn heavy(fixture: &Fixture, report: &mut Report) -> Result<()> {
    report.section(
        "heavy plugins (examples/plugins, built here with their toolchains): per decision, fresh instance vs reused; compile cache, second load vs first",
    );
    for example in &EXAMPLES {
        let source = repo().join("examples/plugins").join(example.lang);
        let wasm = repo()
            .join("target/examples")
            .join(example.lang)
            .join(example.wasm);
        build(&source.join("build.sh"), &wasm, example.lang)?;
        let request = fixture.request((example.params)())?;
        plugin_figures(
            fixture,
            report,
            example.lang,
            &wasm,
            handler(&source.join("handlers.toml"))?,
            &request,
            example.evaluations,
            example.expect,
        )
        .await?;
    }

    let request = fixture.request(permission_params(
        "Bash",
        json!({"command": "git commit -m 'fix the build'"}),
    ))?;
    for (lang, evaluations) in TEMPLATES {
        let dir = fixture.path(&format!("template-{lang}"));
        let name = format!("guard-{lang}");
        let output = Command::new(acp_gate())
            .args(["plugin", "new", "--lang", lang, &name, "--dir"])
            .arg(&dir)
            .output()?;
        ensure!(
            output.status.success(),
            "plugin new --lang {lang}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let wasm = dir.join(format!("{name}.wasm"));
        build(
            &dir.join("build.sh"),
            &wasm,
            &format!("the {lang} template"),
        )?;
        let handler = handler(&dir.join("handlers.toml"))?;
        plugin_figures(
            fixture,
            report,
            &format!("template/{lang}"),
            &wasm,
            handler,
            &request,
            evaluations,
            Some("deny"),
        )
        .await?;
    }
    Ok(())
}
