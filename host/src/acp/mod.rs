//! `acp-gate run` and `acp-gate demo`: acp-gate as the ACP client of a real agent; `acp-gate
//! proxy` ([`proxy`]): acp-gate between an editor and its agent, relaying lines
//! ([`stream`]).
//!
//! The agent is spawned ([`session`]); what it streams is shown ([`output`]); every
//! permission request, `fs/*` and `terminal/create` call goes through the chain in the
//! [`gate`], enriched first by the [`tracker`] with what earlier `tool_call` updates announced.
//! An ask is settled by a session rule ([`rules`]), the person at the terminal ([`ask`]), or,
//! with nobody to ask, rejected and escalated. acp-gate itself carries out the `fs` ([`fs`])
//! and `terminal` ([`terminal`]) calls it allowed. [`demo`] runs the bundled demo agent.
//!
//! Exit codes ([`exit`]): 0 done, 1 error, 2 usage, 3 something was escalated, 4 the agent
//! died or broke the protocol, 130 interrupted (Ctrl-C).

pub mod ask;
pub mod calls;
pub mod demo;
pub mod fs;
pub mod gate;
pub mod output;
pub mod proxy;
pub mod rules;
pub mod session;
pub mod stream;
pub mod terminal;
pub mod tracker;

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;

use crate::audit::AuditLog;
use crate::cli::{OutputFormat, PolicyArgs};
use crate::request::SessionContext;

pub use demo::demo;

/// Exit codes of `run` and `demo`.
pub mod exit {
    pub use crate::cli::exit::{ERROR, OK, USAGE};
    /// At least one ask had nobody to answer it: it was rejected and an escalation record
    /// was printed.
    pub const ESCALATED: u8 = 3;
    /// The agent died, never answered, or broke the protocol.
    pub const AGENT_FAILED: u8 = 4;
    /// Ctrl-C: a one-shot turn was cancelled, or a second Ctrl-C ended the run.
    pub const INTERRUPTED: u8 = 130;
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Send this prompt (one turn) and exit when the turn ends. Without it, prompts are read
    /// from the terminal, one per line (or all of stdin, as one prompt, when it is not one).
    #[arg(short = 'p', long = "prompt", value_name = "TEXT")]
    pub prompt: Option<String>,
    /// Never ask: every ask is rejected and escalated (exit code 3). Implied when stdin is
    /// not a terminal.
    #[arg(long)]
    pub non_interactive: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// The audit log [default: $ACP_GATE_AUDIT_LOG, else ~/.local/state/acp-gate/audit.jsonl].
    #[arg(long, value_name = "FILE")]
    pub audit: Option<PathBuf>,
    /// How long the agent may take to answer `initialize` and `session/new`.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub init_timeout: f64,
    /// The agent's command and arguments.
    #[arg(last = true, required = true, value_name = "AGENT")]
    pub agent: Vec<String>,
}

/// `acp-gate run`.
pub async fn run(args: RunArgs) -> Result<ExitCode> {
    let options = args.policy.load_options()?;
    let interactive = !args.non_interactive && std::io::stdin().is_terminal();
    let input = interactive.then(|| Arc::new(ask::LineInput::stdin()));
    let prompts = match (args.prompt, &input) {
        (Some(text), _) => session::Prompts::Once(text),
        (None, Some(input)) => session::Prompts::Interactive(input.clone()),
        (None, None) => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading the prompt from stdin")?;
            if text.trim().is_empty() {
                anyhow::bail!("no prompt: give one with -p TEXT, or on stdin");
            }
            session::Prompts::Once(text)
        }
    };
    let setup = Setup {
        load: options,
        audit: args.audit,
        format: args.format,
        verbose: false,
        input,
        init_timeout: Duration::try_from_secs_f64(args.init_timeout)
            .context("--init-timeout must be a positive number of seconds")?,
    };
    let (code, gate) = start(setup, args.agent, prompts).await?;
    let escalations = gate.escalations();
    if escalations > 0 && !gate.output.is_json() {
        gate.output.notice(&format!(
            "{escalations} request(s) needed a person and nobody could be asked: rejected and escalated (exit code {})",
            exit::ESCALATED
        ));
    }
    Ok(ExitCode::from(code))
}

/// What a session needs besides the agent and the prompts.
struct Setup {
    load: crate::LoadOptions,
    audit: Option<PathBuf>,
    format: OutputFormat,
    verbose: bool,
    /// The terminal, when there is someone to ask.
    input: Option<Arc<ask::LineInput>>,
    init_timeout: Duration,
}

/// Loads the chain, opens the audit log and runs the session; returns the exit code and the
/// gate (for its tally).
async fn start(
    setup: Setup,
    agent: Vec<String>,
    prompts: session::Prompts,
) -> Result<(u8, Arc<gate::Gate>)> {
    let chain = crate::load_chain(&setup.load).await?;
    let out = output::Output::new(setup.format, setup.verbose);
    for notice in &chain.notices {
        out.notice(notice);
    }
    let audit_path = setup.audit.unwrap_or_else(AuditLog::default_path);
    let audit = AuditLog::open(&audit_path)?;
    let ctx = SessionContext::for_workspace("", &setup.load.workspace);
    let prompter = setup.input.map(ask::Prompter::new);
    let gate = Arc::new(gate::Gate::new(Arc::new(chain), audit, ctx, prompter, out));
    let code = session::run_session(
        gate.clone(),
        session::SessionSpec {
            agent,
            workspace: setup.load.workspace.clone(),
            prompts,
            init_timeout: setup.init_timeout,
        },
    )
    .await;
    gate.output.end(code, gate.escalations());
    Ok((code, gate))
}
