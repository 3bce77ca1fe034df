//! The command line: parses the arguments and dispatches to the command's entry point in
//! [`crate::cmd`]; nothing else imports it. Exit codes are in [`crate::exit`] and README.md.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::cmd;
use crate::exit;

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
    Run(cmd::run::RunArgs),
    /// Sit between an editor and its agent: configured in the editor as the agent command, it
    /// answers what the chain decides and forwards only the real questions to the editor.
    Proxy(cmd::proxy::ProxyArgs),
    /// Run the bundled demo agent through the default chain in a scratch workspace.
    Demo,
    /// The bundled demo agent itself, speaking ACP on stdio (what `acp-gate demo` spawns).
    #[command(hide = true)]
    DemoAgent {
        /// demo, ask, repeat, inject, die, soak:N or flood:N.
        #[arg(long, default_value = "demo")]
        script: String,
    },
    /// Decide recorded `session/request_permission` requests offline and show each handler's verdict.
    Check(cmd::check::CheckArgs),
    /// Show the chain that applies here: each layer's file, each handler with its plugin,
    /// control, on_error, kinds and grants, what the built-in ones are for, whether it loads.
    Chain(cmd::chain::ChainArgs),
    /// Whether every agent on this machine is gated: each agent's hook (installed, trusted,
    /// running this acp-gate), the chain that decides here, the review service, resident servers.
    Doctor(cmd::doctor::DoctorArgs),
    /// List the sessions `run --session NAME` named, to resume them (`run --resume NAME`).
    Sessions(cmd::sessions::SessionsArgs),
    /// List the asks nobody could answer (open ones), to grant them on a resume
    /// (`run --resume NAME --grant ID`).
    Escalations(cmd::sessions::EscalationsArgs),
    /// Read an audit log back: a summary (the default), or `suggest` policy rules from what
    /// people approved again and again.
    Audit(cmd::audit::AuditArgs),
    /// The organisation's review service: escalations from every gate, a page for reviewers to
    /// decide them, and everyone's audit in one place (`serve token create`, `serve key`).
    Serve(cmd::serve::ServeArgs),
    /// Import Claude Code, Codex and Gemini CLI rule files as acp-gate policy, or export
    /// acp-gate's rules to them.
    #[command(subcommand)]
    Policy(cmd::policy::PolicyCommand),
    /// Inspect, validate, hash, test and create plugin components.
    #[command(subcommand)]
    Plugin(cmd::plugin::PluginCommand),
    /// Be the hook of Claude Code, Codex, Gemini CLI or GitHub Copilot CLI: the same chain
    /// decides their tool calls (docs/hooks.md).
    #[command(subcommand)]
    Hook(cmd::hook::HookCommand),
}

/// Parses the command line, runs the command on an async runtime, and returns its exit code.
pub fn main() -> ExitCode {
    // A hook call a resident server answers needs none of what follows.
    if let Some(code) = crate::hook::resident::answered() {
        return ExitCode::from(code);
    }
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
    if matches!(
        cli.command,
        Command::Check(_)
            | Command::Chain(_)
            | Command::Doctor(_)
            | Command::Plugin(_)
            | Command::Sessions(_)
            | Command::Escalations(_)
            | Command::Audit(_)
            | Command::Policy(_)
    ) {
        // Their output is for people and pipes (`acp-gate check ... | head`): a reader that
        // goes away ends them quietly, as it does any filter. Not `run` and `proxy`, which
        // must see a closed agent pipe as an error to report.
        // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    // A hook call, or a resident hook server: no worker threads to start or hand work between.
    let mut builder = match &cli.command {
        Command::Hook(hook) if hook.on_one_thread() => {
            tokio::runtime::Builder::new_current_thread()
        }
        _ => tokio::runtime::Builder::new_multi_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("acp-gate: cannot start the async runtime: {error}");
            return ExitCode::from(exit::ERROR);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Check(args) => cmd::check::check(args).await,
            Command::Chain(args) => cmd::chain::chain(args).await,
            Command::Doctor(args) => cmd::doctor::doctor(args).await,
            Command::Run(args) => cmd::run::run(args).await,
            Command::Proxy(args) => cmd::proxy::proxy(args).await,
            Command::Sessions(args) => cmd::sessions::sessions(args),
            Command::Audit(args) => cmd::audit::audit(args).await,
            Command::Escalations(args) => cmd::sessions::escalations(args),
            Command::Demo => cmd::demo::demo().await,
            Command::DemoAgent { script } => cmd::demo::agent(&script).await,
            Command::Plugin(command) => cmd::plugin::plugin(command).await,
            Command::Policy(command) => cmd::policy::policy(command).await,
            Command::Hook(command) => cmd::hook::hook(command).await,
            Command::Serve(args) => cmd::serve::serve(args).await,
        }
    });
    // A read of stdin still blocked in tokio's pool (the proxy's editor side) must not hold
    // the exit.
    runtime.shutdown_background();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("acp-gate: {error:#}");
            ExitCode::from(exit::ERROR)
        }
    }
}
