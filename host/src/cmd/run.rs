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
use crate::acp::orchestrate::Orchestration;
use crate::acp::output::Output;
use crate::acp::session::{self, Prompts, SessionSpec};
use crate::args::{EscalationArgs, OutputFormat, PolicyArgs};
use crate::audit::AuditLog;
use crate::exit;
use crate::hook::status::reported;
use crate::request::SessionContext;
use crate::service::escalator::Escalator;
use crate::service::origin::Origin;
use crate::service::ship::{Shipping, shippers};
use crate::state::{self, Escalations, Sessions};

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
    /// that answers with another ends the run (exit code 4). [default: the resumed session's,
    /// else 1]
    #[arg(long, value_name = "VERSION", value_parser = clap::value_parser!(u16).range(1..=2))]
    pub protocol: Option<u16>,
    /// Name this session, to resume it later by name (`acp-gate sessions` lists them).
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// Resume a session, by its `--session` name or the agent's session id, instead of
    /// starting one (`session/resume`, or `session/load` where the agent offers only that; an
    /// agent that offers neither gets a new session, with a notice).
    #[arg(long, value_name = "NAME|ID")]
    pub resume: Option<String>,
    /// Let the request of this escalation (`acp-gate escalations`) through once in the resumed
    /// session, where the chain asks about it; never over a deny or an org handler's ask.
    #[arg(long, value_name = "ESCALATION_ID", requires = "resume")]
    pub grant: Vec<String>,
    /// Who granted, for the audit log.
    #[arg(long, value_name = "TEXT", requires = "grant")]
    pub granted_by: Option<String>,
    #[command(flatten)]
    pub escalation: EscalationArgs,
    /// The agent's command and arguments [default: the resumed session's].
    #[arg(last = true, value_name = "AGENT")]
    pub agent: Vec<String>,
}

pub async fn run(args: RunArgs) -> Result<u8> {
    let options = super::load_options(&args.policy)?;
    let (agent, orchestration) = orchestrate(&args, &options.workspace)?;
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
        protocol: orchestration.protocol,
        resume: orchestration.resumed.clone(),
        orchestration: Some(orchestration),
        escalation: Some(args.escalation),
    };
    let (code, client) = start(setup, agent, prompts).await?;
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
    /// The named session, its escalations and grants (`run`, not the demo).
    pub orchestration: Option<Orchestration>,
    /// Where escalations go (`run`; the demo escalates nowhere).
    pub escalation: Option<EscalationArgs>,
}

/// The agent to run, and the orchestration of its session: the session resumed (by name or
/// id) gives its agent and protocol unless they are given again; grants must be of it.
fn orchestrate(
    args: &RunArgs,
    workspace: &std::path::Path,
) -> Result<(Vec<String>, Orchestration)> {
    let dir = state::dir();
    let sessions = Sessions::open(&dir)?;
    let escalations = Escalations::open(&dir)?;
    let resumed = args
        .resume
        .as_deref()
        .and_then(|key| sessions.find(key))
        .cloned();
    let agent = match (&resumed, args.agent.is_empty()) {
        (_, false) => args.agent.clone(),
        (Some(entry), true) => entry.agent.clone(),
        (None, true) => anyhow::bail!("no agent: give its command after `--`"),
    };
    let protocol = args
        .protocol
        .or(resumed.as_ref().map(|e| e.protocol))
        .unwrap_or(1);
    let name = args
        .session
        .clone()
        .or_else(|| resumed.as_ref().map(|e| e.name.clone()));
    let mut orchestration = Orchestration::new(
        name,
        agent.clone(),
        workspace.to_path_buf(),
        protocol,
        sessions,
        escalations,
    );
    if let Some(key) = &args.resume {
        let session_id = resumed.map_or_else(|| key.clone(), |e| e.session_id);
        orchestration.grant(&args.grant, &session_id, args.granted_by.clone())?;
        orchestration.resumed = Some(session_id);
    }
    Ok((agent, orchestration))
}

/// Loads the chain, opens the audit log and runs the session; returns the exit code and the
/// client (for its tally).
pub(super) async fn start(
    setup: Setup,
    agent: Vec<String>,
    prompts: Prompts,
) -> Result<(u8, Arc<Client>)> {
    let chain = crate::load_chain(&setup.load).await?;
    let origin = Origin::here(&setup.load.workspace, &agent);
    let escalator = match &setup.escalation {
        Some(args) => Escalator::configure(args, chain.escalation.as_ref(), origin.clone())?,
        None => None,
    };
    let output = Output::new(setup.format, setup.verbose);
    let audit_path = setup.audit.unwrap_or_else(AuditLog::default_path);
    let audit = AuditLog::open(&audit_path)?.with_agent(Some(origin.agent));
    let ctx = SessionContext::for_workspace("", &setup.load.workspace);
    let prompter = setup.input.map(Prompter::new);
    let mut gate = Gate::new(chain, audit, output);
    if let Some(mut orchestration) = setup.orchestration {
        if let Some(escalator) = &escalator {
            orchestration.countersign(escalator).await?;
        }
        gate = gate.orchestrated(orchestration);
    }
    let shipping = Shipping::start_all(shippers(
        &audit_path,
        (escalator.as_ref()).map(|e| {
            e.gate_shipper(
                &audit_path,
                gate.chain(),
                "run",
                reported(&setup.load.workspace),
            )
        }),
    )?);
    let client = Arc::new(Client::new(gate, ctx, prompter).escalating(escalator));
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
    for error in Shipping::finish_all(shipping).await {
        client.gate.output.notice(&format!("{error:#}"));
    }
    let code = client.gate.exit_code(code);
    client.gate.output.end(code, client.gate.escalations());
    Ok((code, client))
}
