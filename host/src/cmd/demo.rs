//! `acp-gate demo`: the bundled demo agent (`examples/demo-agent`, run as the hidden
//! `acp-gate demo-agent` command so that nothing else needs building) asks for safe and
//! dangerous things in a scratch Cargo project; the default chain decides, and every request,
//! each handler's verdict and the outcome are shown.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{Context, Result};

use super::run::{Setup, start};
use crate::acp::ask::LineInput;
use crate::acp::output::Output;
use crate::acp::session::Prompts;
use crate::args::OutputFormat;
use crate::exit;
use crate::style::Style;

const PROMPT: &str = "Tidy up this project and make sure the tests pass.";

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `acp-gate demo`.
pub async fn demo() -> Result<u8> {
    let scratch = scratch_dir()?;
    let workspace = scratch.0.join("project");
    write_project(&workspace)?;
    // An empty policy file stands in for the user's and the project's: the demo shows the
    // built-in default chain (and the org file, which nobody may skip).
    let handlers = scratch.0.join("handlers.toml");
    std::fs::write(
        &handlers,
        "# acp-gate demo: the built-in default chain only\n",
    )?;

    let exe = std::env::current_exe().context("cannot find the acp-gate executable")?;
    let agent = vec![exe.display().to_string(), "demo-agent".to_owned()];
    let interactive = std::io::stdin().is_terminal();
    let s = Style::stdout();
    let mut banner = vec![
        s.bold("acp-gate demo"),
        format!(
            "A scripted coding agent works in a scratch project ({}).",
            workspace.display()
        ),
        "It asks for safe things and dangerous ones; the default chain decides each request:"
            .to_owned(),
        "  builtin-paths (workspace boundary, sensitive files), builtin-commands (shell commands),"
            .to_owned(),
        "  builtin-modes (mode switches) and builtin-policy (rules; none by default, so it never runs)."
            .to_owned(),
    ];
    banner.push(if interactive {
        "When the chain cannot decide, you are asked.".to_owned()
    } else {
        "Nobody is at a terminal: when the chain cannot decide, the request is rejected and escalated.".to_owned()
    });
    banner.push(String::new());
    let out = Output::new(OutputFormat::Text, true);
    out.lines(&banner);

    let setup = Setup {
        load: crate::LoadOptions {
            handlers: Some(handlers),
            org_handlers: None,
            workspace: workspace.clone(),
            permission_policy: None,
        },
        audit: None,
        format: OutputFormat::Text,
        verbose: true,
        input: interactive.then(|| Arc::new(LineInput::stdin())),
        init_timeout: Duration::from_secs(30),
        protocol: 1,
        resume: None,
        orchestration: None,
        escalation: None,
    };
    let (code, client) = start(setup, agent, Prompts::Once(PROMPT.to_owned())).await?;
    let count = |n: &std::sync::atomic::AtomicUsize| n.load(Ordering::Relaxed);
    let t = &client.gate.tally;
    let tally = (
        count(&t.allowed),
        count(&t.denied),
        count(&t.escalated),
        count(&t.cancelled),
    );
    let mut summary = vec![
        String::new(),
        s.bold("Summary"),
        format!(
            "  {} allowed, {} denied, {} escalated{}",
            tally.0,
            tally.1,
            tally.2,
            if tally.3 > 0 {
                format!(", {} cancelled", tally.3)
            } else {
                String::new()
            }
        ),
        format!(
            "  every decision is in the audit log: {}",
            client.gate.audit_path().display()
        ),
        "  gate a real agent:  acp-gate run -- npx -y @zed-industries/claude-agent-acp".to_owned(),
        "  the chain, explained: acp-gate chain".to_owned(),
        "  try a request:      acp-gate check --command 'git push --force'".to_owned(),
        "  your own policy:    acp-gate run --handlers handlers.toml -- AGENT".to_owned(),
    ];
    if code != exit::OK && code != exit::ESCALATED {
        summary.push(format!("  the demo ended early (exit code {code})"));
    }
    out.lines(&summary);
    drop(scratch);
    Ok(match code {
        exit::ESCALATED => exit::OK,
        other => other,
    })
}

fn scratch_dir() -> Result<Scratch> {
    let base = std::env::temp_dir();
    for attempt in 0..100u32 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = base.join(format!(
            "acp-gate-demo-{}-{nanos:x}{attempt}",
            std::process::id()
        ));
        match std::fs::create_dir(&dir) {
            Ok(()) => {
                // Canonical, so that the paths the agent sends match the workspace root.
                let dir = dir.canonicalize()?;
                return Ok(Scratch(dir));
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(error) => {
                return Err(error).with_context(|| {
                    format!("cannot create a scratch directory in {}", base.display())
                });
            }
        }
    }
    anyhow::bail!("cannot create a scratch directory in {}", base.display())
}

/// A small Cargo project for the agent to work on.
fn write_project(root: &Path) -> Result<()> {
    let files = [
        (
            "Cargo.toml",
            "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        ),
        (
            "src/lib.rs",
            "/// Adds two numbers.\npub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(2, 2), 4);\n    }\n}\n",
        ),
        (
            "README.md",
            "# demo\n\nA tiny crate for the acp-gate demo.\n",
        ),
    ];
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a relative path with a parent"))?;
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    std::fs::create_dir_all(root.join(".git/hooks"))?;
    Ok(())
}

/// The hidden `acp-gate demo-agent --script NAME`: the demo agent on stdin/stdout.
pub async fn agent(script: &str) -> Result<u8> {
    let Some(script) = acp_gate_demo_agent::Script::parse(script) else {
        anyhow::bail!(
            "unknown demo script `{script}` (demo, ask, repeat, inject, die, soak:N, flood:N)"
        );
    };
    acp_gate_demo_agent::serve_stdio(script)
        .await
        .map_err(|error| anyhow::anyhow!("demo agent: {error}"))?;
    Ok(exit::OK)
}
