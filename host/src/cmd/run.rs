//! `acp-gate run`: acp-gate as the ACP client of a real agent (see [`crate::acp::client`]).

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;

use crate::LoadOptions;
use crate::acp::ask::{LineInput, Prompter};
use crate::acp::client::Client;
use crate::acp::gate::Gate;
use crate::acp::output::Output;
use crate::acp::session::{self, Prompts, SessionSpec};
use crate::args::{OutputFormat, PolicyArgs};
use crate::audit::AuditLog;
use crate::exit;
use crate::request::SessionContext;

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
    /// The ACP protocol version to offer the agent: 1, or 2 (the published draft). An agent
    /// that answers with another ends the run (exit code 4).
    #[arg(long, value_name = "VERSION", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=2))]
    pub protocol: u16,
    /// Resume this earlier session of the agent instead of starting one (`session/resume`,
    /// or `session/load` where the agent offers only that).
    #[arg(long, value_name = "SESSION_ID")]
    pub resume: Option<String>,
    /// The agent's command and arguments.
    #[arg(last = true, required = true, value_name = "AGENT")]
    pub agent: Vec<String>,
}

pub async fn run(args: RunArgs) -> Result<u8> {
    let options = super::load_options(&args.policy)?;
    let interactive = !args.non_interactive && std::io::stdin().is_terminal();
    let input = interactive.then(|| Arc::new(LineInput::stdin()));
    let prompts = match (args.prompt, &input) {
        (Some(text), _) => Prompts::Once(text),
        (None, Some(input)) => Prompts::Interactive(input.clone()),
        (None, None) => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading the prompt from stdin")?;
            if text.trim().is_empty() {
                anyhow::bail!("no prompt: give one with -p TEXT, or on stdin");
            }
            Prompts::Once(text)
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
        protocol: args.protocol,
        resume: args.resume,
    };
    let (code, client) = start(setup, args.agent, prompts).await?;
    let escalations = client.gate.escalations();
    if escalations > 0 && !client.gate.output.is_json() {
        client.gate.output.notice(&format!(
            "{escalations} request(s) needed a person and nobody could be asked: rejected and escalated (exit code {})",
            exit::ESCALATED
        ));
    }
    Ok(code)
}

/// What a session needs besides the agent and the prompts (`run` and `demo`).
pub(super) struct Setup {
    pub load: LoadOptions,
    pub audit: Option<PathBuf>,
    pub format: OutputFormat,
    /// Show every handler's verdict (the demo).
    pub verbose: bool,
    /// The terminal, when there is someone to ask.
    pub input: Option<Arc<LineInput>>,
    pub init_timeout: Duration,
    /// The protocol version offered, and the session to resume (see [`SessionSpec`]).
    pub protocol: u16,
    pub resume: Option<String>,
}

/// Loads the chain, opens the audit log and runs the session; returns the exit code and the
/// client (for its tally).
pub(super) async fn start(
    setup: Setup,
    agent: Vec<String>,
    prompts: Prompts,
) -> Result<(u8, Arc<Client>)> {
    let chain = crate::load_chain(&setup.load).await?;
    let output = Output::new(setup.format, setup.verbose);
    let audit = AuditLog::open(&setup.audit.unwrap_or_else(AuditLog::default_path))?;
    let ctx = SessionContext::for_workspace("", &setup.load.workspace);
    let prompter = setup.input.map(Prompter::new);
    let client = Arc::new(Client::new(Gate::new(chain, audit, output), ctx, prompter));
    let code = session::run_session(
        client.clone(),
        SessionSpec {
            agent,
            workspace: setup.load.workspace.clone(),
            prompts,
            init_timeout: setup.init_timeout,
            protocol: setup.protocol,
            resume: setup.resume,
        },
    )
    .await;
    let code = client.gate.exit_code(code);
    client.gate.output.end(code, client.gate.escalations());
    Ok((code, client))
}
