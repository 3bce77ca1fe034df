//! `acp-gate hook`: acp-gate as the agents' own hook (see [`crate::hook`]): one hook call of
//! Claude Code, Codex, Gemini CLI or GitHub Copilot CLI answered from its payload on stdin;
//! the hook installed in (or taken out of) an agent's settings; the HTTP hooks served.

use std::io::{Read, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};

use crate::acp::output::Output;
use crate::args::{EscalationArgs, OutputFormat, PolicyArgs};
use crate::exit;
use crate::hook::install::{self, Action, Scope};
use crate::hook::once::{self, Decider, MAX_PAYLOAD};
use crate::hook::resident;
use crate::hook::serve::{self, Listen};
use crate::hook::status::reported;
use crate::request::hook::Agent;
use crate::service::ship::{Shipping, shippers};
use crate::style::Style;

#[derive(Subcommand)]
pub enum HookCommand {
    /// Answer Claude Code's PreToolUse or PermissionRequest hook (its payload on stdin).
    Claude(HookArgs),
    /// Answer Codex's PreToolUse or PermissionRequest hook (its payload on stdin).
    Codex(HookArgs),
    /// Answer Gemini CLI's BeforeTool hook (its payload on stdin).
    Gemini(HookArgs),
    /// Answer GitHub Copilot CLI's preToolUse hook (its payload on stdin).
    Copilot(HookArgs),
    /// Add acp-gate's hook to an agent's settings, beside what is there.
    Install(InstallArgs),
    /// Take acp-gate's hook out of an agent's settings, and nothing else.
    Uninstall(InstallArgs),
    /// Answer the agents' HTTP hooks (`POST /hook/AGENT`) from a chain loaded once, on a
    /// loopback port or a Unix socket.
    Serve(ServeArgs),
    /// Stop this user's resident hook servers (the next hook call starts one again).
    Stop,
    /// A resident hook server, as a hook call starts it (docs/hooks.md).
    #[command(hide = true)]
    Resident(ResidentArgs),
}

/// Where a resident hook server listens, and the arguments of the calls it serves.
#[derive(Args)]
pub struct ResidentArgs {
    #[arg(long, value_name = "PATH")]
    pub socket: PathBuf,
    /// The agent whose call started it: its chain is loaded first.
    #[arg(long, value_enum)]
    pub agent: AgentArg,
    #[command(flatten)]
    pub hook: HookArgs,
}

/// The agents whose hooks acp-gate answers.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum AgentArg {
    Claude,
    Codex,
    Gemini,
    Copilot,
}

impl AgentArg {
    fn agent(self) -> Agent {
        match self {
            AgentArg::Claude => Agent::Claude,
            AgentArg::Codex => Agent::Codex,
            AgentArg::Gemini => Agent::Gemini,
            AgentArg::Copilot => Agent::Copilot,
        }
    }
}

/// Where the hook goes, and how.
#[derive(Args)]
#[command(group(clap::ArgGroup::new("scope").args(["user", "project", "managed"])))]
pub struct InstallArgs {
    /// The agent.
    #[arg(value_enum)]
    pub agent: AgentArg,
    /// In the user's own settings (the default).
    #[arg(long)]
    pub user: bool,
    /// In the project's settings: refused, since the repository could drop or disable it
    /// silently (the message says how, for the agent).
    #[arg(long)]
    pub project: bool,
    /// In the machine's managed settings, which user and project settings cannot override.
    #[arg(long)]
    pub managed: bool,
    /// Print the change as a diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The command the agent runs [default: this acp-gate, by its absolute path, with
    /// `hook AGENT`].
    #[arg(long, value_name = "COMMAND")]
    pub command: Option<String>,
}

/// Where `hook serve` listens, and for which policy.
#[derive(Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// A loopback address to listen on (port 0: a free one, printed).
    #[arg(
        long,
        value_name = "ADDRESS",
        default_value = "127.0.0.1:0",
        conflicts_with = "socket"
    )]
    pub listen: std::net::SocketAddr,
    /// A Unix socket to listen on instead.
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Refuse requests without `Authorization: Bearer TOKEN` (also $ACP_GATE_HOOK_TOKEN).
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    #[command(flatten)]
    pub escalation: EscalationArgs,
}

impl HookCommand {
    /// Whether it decides on one thread: one hook call (the process per call an agent
    /// starts), or a resident server's calls one after another (a decision is a few dozen
    /// microseconds of work; handing each between threads costs more than it).
    pub fn on_one_thread(&self) -> bool {
        matches!(
            self,
            HookCommand::Claude(_)
                | HookCommand::Codex(_)
                | HookCommand::Gemini(_)
                | HookCommand::Copilot(_)
                | HookCommand::Resident(_)
        )
    }
}

/// How one hook call is decided.
#[derive(Args)]
pub struct HookArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub escalation: EscalationArgs,
}

pub async fn hook(command: HookCommand) -> Result<u8> {
    let (agent, args) = match command {
        HookCommand::Claude(args) => (Agent::Claude, args),
        HookCommand::Codex(args) => (Agent::Codex, args),
        HookCommand::Gemini(args) => (Agent::Gemini, args),
        HookCommand::Copilot(args) => (Agent::Copilot, args),
        HookCommand::Install(args) => return install(args, Action::Install),
        HookCommand::Uninstall(args) => return install(args, Action::Uninstall),
        HookCommand::Serve(args) => return serve(args).await,
        HookCommand::Stop => return stop(),
        HookCommand::Resident(args) => {
            let agent = args.agent.agent();
            let HookArgs { policy, escalation } = args.hook;
            return resident::serve(&args.socket, agent, policy, escalation).await;
        }
    };
    // What the resident server was not handed (it read stdin already), or stdin.
    let (input, start) = match resident::declined() {
        Some(declined) => declined,
        None => {
            let mut input = Vec::new();
            std::io::stdin()
                .take(MAX_PAYLOAD)
                .read_to_end(&mut input)
                .context("reading the hook's input")?;
            (input, None)
        }
    };
    let reply = once::once(agent, &input, &args.policy, &args.escalation).await;
    std::io::stdout().write_all(reply.stdout.as_bytes())?;
    std::io::stdout().flush()?;
    eprint!("{}", reply.stderr);
    // Answered: a server for the next calls, where none serves them.
    if let Some(start) = start {
        start.spawn();
    }
    // The process ends here: the answer is out and the audit line written, and what it holds
    // (instances, the engine, the runtime's tasks) needs no clean-up before the kernel takes
    // it back.
    std::process::exit(reply.code.into())
}

/// `hook install` and `hook uninstall`: the change planned, shown, and written (not with
/// `--dry-run`).
fn install(args: InstallArgs, action: Action) -> Result<u8> {
    let agent = args.agent.agent();
    let scope = match (args.project, args.managed) {
        (true, _) => Scope::Project,
        (_, true) => Scope::Managed,
        _ => Scope::User,
    };
    let command = match args.command {
        Some(command) => command,
        None => install::default_command(agent)?,
    };
    let plan = install::plan(agent, scope, action, &command)?;
    let out = Style::stdout();
    let path = plan.path.display();
    if !plan.changes() {
        match action {
            Action::Install => println!("acp-gate's hook is in {path} already: nothing to change"),
            Action::Uninstall => println!("acp-gate's hook is not in {path}: nothing to take out"),
        }
        return Ok(exit::OK);
    }
    let done = match (action, args.dry_run) {
        (Action::Install, true) => "would add acp-gate's hook to",
        (Action::Uninstall, true) => "would take acp-gate's hook out of",
        (Action::Install, false) => "added acp-gate's hook to",
        (Action::Uninstall, false) => "took acp-gate's hook out of",
    };
    if !args.dry_run {
        plan.write()?;
    }
    println!("{} {path} ({}):", done, agent.title());
    for line in install::diff(&plan, out) {
        println!("{line}");
    }
    for note in &plan.notes {
        println!("{}", out.dim(&format!("note: {note}")));
    }
    if args.dry_run {
        println!("{}", out.dim("(--dry-run: nothing was written)"));
    }
    Ok(exit::OK)
}

/// `hook stop`: this user's resident hook servers stopped, and what they had served.
fn stop() -> Result<u8> {
    let (stopped, calls) = resident::stop_all()?;
    let calls = match calls {
        1 => "1 call".to_owned(),
        n => format!("{n} calls"),
    };
    match stopped {
        0 => println!("no resident hook server was running"),
        1 => println!("stopped 1 resident hook server ({calls} served)"),
        n => println!("stopped {n} resident hook servers ({calls} served)"),
    }
    Ok(exit::OK)
}

/// `hook serve`: the chain loaded once, then every request answered until the process stops.
async fn serve(args: ServeArgs) -> Result<u8> {
    let options = super::load_options(&args.policy)?;
    // One hook server answers every agent's hooks.
    let decider = Decider::load(None, &options, None, &args.escalation).await?;
    let audit = decider.gate.audit_path();
    let service = (decider.escalator.as_ref()).map(|e| {
        e.gate_shipper(
            audit,
            decider.gate.chain(),
            "hook serve",
            reported(&options.workspace),
        )
    });
    let shipping = Shipping::start_all(shippers(audit, service)?);
    let listen = match args.socket {
        Some(path) => Listen::Unix(path),
        None => Listen::Tcp(args.listen),
    };
    let token = args
        .token
        .or_else(|| std::env::var("ACP_GATE_HOOK_TOKEN").ok());
    let served = serve::serve(decider, listen, token, |at| {
        println!(
            "acp-gate hook serve: listening on {at} (POST /hook/claude, /hook/codex, /hook/gemini, /hook/copilot)"
        );
        let _ = std::io::stdout().flush();
    });
    // Stopped by a signal, it ships what its calls recorded before it exits.
    let code = tokio::select! {
        served = served => served.map(|()| exit::OK)?,
        signal = exit::terminated() => signal,
    };
    for error in Shipping::finish_all(shipping).await {
        Output::on_stderr(OutputFormat::Text).notice(&format!("{error:#}"));
    }
    Ok(code)
}
