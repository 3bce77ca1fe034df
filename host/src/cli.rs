//! The command line: argument parsing and dispatch. Exit codes are documented in README.md.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::LoadOptions;

/// Exit codes shared by every command.
pub mod exit {
    /// Everything ran; nothing was escalated.
    pub const OK: u8 = 0;
    /// An error: bad policy, bad input, a plugin that cannot be loaded, an I/O failure.
    pub const ERROR: u8 = 1;
    /// Bad command-line usage (clap's own code).
    pub const USAGE: u8 = 2;
}

#[derive(Parser)]
#[command(
    name = "acp-gate",
    version,
    about = "A permission gate for ACP coding agents: every request runs through a chain of sandboxed WebAssembly plugins."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Be the ACP client of an agent: spawn it, send the prompt, stream its output, gate every
    /// permission request and every `fs/*` / `terminal/*` call.
    Run(crate::acp::RunArgs),
    /// Sit between an editor and its agent: configured in the editor as the agent command, it
    /// answers what the chain decides and forwards only the real questions to the editor.
    Proxy(crate::acp::proxy::ProxyArgs),
    /// Run the bundled demo agent through the default chain in a scratch workspace.
    Demo,
    /// The bundled demo agent itself, speaking ACP on stdio (what `acp-gate demo` spawns).
    #[command(hide = true)]
    DemoAgent {
        /// demo, ask, repeat, inject, die or soak:N.
        #[arg(long, default_value = "demo")]
        script: String,
    },
    /// Decide recorded `session/request_permission` requests offline and show each handler's verdict.
    Check(CheckArgs),
    /// Inspect, validate, hash, test and create plugin components.
    #[command(subcommand)]
    Plugin(crate::plugin::PluginCommand),
}

/// Where the policy comes from; shared by every command that decides.
#[derive(Args, Clone, Debug)]
pub struct PolicyArgs {
    /// A handlers.toml to use instead of the project and user files (the org file still applies).
    #[arg(long, value_name = "FILE")]
    pub handlers: Option<PathBuf>,
    /// The org layer, instead of /etc/acp-gate/handlers.toml (also $ACP_GATE_ORG_HANDLERS).
    #[arg(long, value_name = "FILE")]
    pub org_handlers: Option<PathBuf>,
    /// The workspace root [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

impl PolicyArgs {
    pub fn load_options(&self) -> anyhow::Result<LoadOptions> {
        let workspace = match &self.workspace {
            Some(dir) => dir.clone(),
            None => std::env::current_dir()?,
        };
        let workspace = std::path::absolute(&workspace)?;
        if !workspace.is_dir() {
            anyhow::bail!("--workspace {}: not a directory", workspace.display());
        }
        Ok(LoadOptions {
            handlers: self.handlers.clone(),
            org_handlers: self.org_handlers.clone(),
            workspace,
        })
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum OutputFormat {
    /// For people: aligned, coloured on a terminal.
    #[default]
    Text,
    /// For machines: one JSON object per line.
    Json,
}

#[derive(Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// Also append each decision to this audit log.
    #[arg(long, value_name = "FILE")]
    pub audit: Option<PathBuf>,
    /// Files holding the params of a `session/request_permission` (or a whole JSON-RPC message);
    /// `-` reads one JSON document per line from stdin.
    #[arg(required = true, value_name = "REQUEST")]
    pub requests: Vec<PathBuf>,
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            });
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("acp-gate: cannot start the async runtime: {error}");
            return ExitCode::from(exit::ERROR);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Check(args) => crate::check::run(args).await,
            Command::Run(args) => crate::acp::run(args).await,
            Command::Proxy(args) => crate::acp::proxy::proxy(args).await,
            Command::Demo => crate::acp::demo().await,
            Command::DemoAgent { script } => crate::acp::demo::agent(&script).await,
            Command::Plugin(command) => crate::plugin::run(command),
        }
    });
    // A read of stdin still blocked in tokio's pool (the proxy's editor side) must not hold
    // the exit.
    runtime.shutdown_background();
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("acp-gate: {error:#}");
            ExitCode::from(exit::ERROR)
        }
    }
}
