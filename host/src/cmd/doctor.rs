//! `acp-gate doctor`: whether every agent on this machine is gated, and by what: each agent's
//! hook (installed, trusted, running this acp-gate: [`crate::hook::status`]), the chain that
//! decides here (loaded as `acp-gate chain` loads it), the review service (reached with this
//! gate's token and key), and the resident hook servers running.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use serde_json::json;

use super::chain;
use crate::args::{EscalationArgs, OutputFormat, PolicyArgs};
use crate::chain::Chain;
use crate::config::{PluginRef, Tier};
use crate::exit;
use crate::hook::resident;
use crate::hook::status::{self, AgentStatus, HookStatus};
use crate::service::escalator::Escalator;
use crate::service::fleet::{AgentGate, GateReport, Reported};
use crate::service::origin::Origin;
use crate::style::Style;

/// The options of the commands that decide: the policy's, and the gates' escalation options to
/// reach the service as they do (`--wait`, which changes nothing here, hidden).
#[derive(Args)]
#[command(mut_arg("wait", |arg| arg.hide(true)))]
pub struct DoctorArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub escalation: EscalationArgs,
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

/// How long the review service has to answer: a gate's own submission gets no longer.
const PROBE: Duration = crate::service::escalator::SUBMIT_ALONE;

/// The review service as a gate here would reach it.
#[derive(Debug, Default, Serialize)]
struct ServiceStatus {
    /// Whether the gate escalates to one (`false`: not checked when the policy did not load).
    configured: bool,
    url: Option<String>,
    /// Where the key its decisions are checked with was read from.
    key: Option<PathBuf>,
    /// Whether it took this gate's report with the gate's token.
    reached: bool,
    /// What it said of this gate: the org's published policy, and what it finds wrong.
    fleet: Option<Reported>,
    error: Option<String>,
}

/// `acp-gate doctor`. Exit 1 when an agent on this machine is not gated, or the chain does not
/// load.
pub async fn doctor(args: DoctorArgs) -> Result<u8> {
    let options = super::load_options(&args.policy)?;
    let this = status::this_program()?;
    let agents = status::all_agents(&this, &options.workspace)?;
    let chain = chain::assemble(&options).await;
    let service = match &chain {
        Ok(chain) => service(&args.escalation, chain, &options.workspace, &agents).await,
        Err(_) => ServiceStatus {
            error: Some("not checked: the policy did not load".to_owned()),
            ..ServiceStatus::default()
        },
    };
    let running = resident::running()?;
    let report = Report {
        this: &this,
        workspace: &options.workspace,
        agents: &agents,
        chain: &chain,
        service: &service,
        running,
    };
    match args.format {
        OutputFormat::Json => println!("{}", report.json()),
        OutputFormat::Text => report.print(args.policy.handlers.is_some()),
    }
    Ok(if report.ok() { exit::OK } else { exit::ERROR })
}

/// The review service a gate here escalates to, reached as a gate reaches it: its settings
/// put together as `run`, `proxy` and `hook` put them together, then this gate's report for
/// the fleet view posted with the gate's token (what the service says of it is shown).
async fn service(
    args: &EscalationArgs,
    chain: &Chain,
    workspace: &Path,
    agents: &[AgentStatus],
) -> ServiceStatus {
    let org = chain.escalation.as_ref();
    let origin = Origin::here(workspace, &[]);
    let mut status = ServiceStatus {
        url: (org.map(|o| o.url.clone())).or_else(|| args.escalate_to.clone()),
        key: (org
            .and_then(|o| o.key.as_ref())
            .map(|(file, _)| file.clone()))
        .or_else(|| args.service_key.clone()),
        ..ServiceStatus::default()
    };
    let agents = agents.iter().map(AgentGate::from).collect();
    let report = GateReport::new(&origin, "doctor", chain, agents);
    let escalator = match Escalator::configure(args, org, origin) {
        Ok(Some(escalator)) => escalator,
        Ok(None) => return status,
        Err(error) => {
            status.configured = true;
            status.error = Some(format!("{error:#}"));
            return status;
        }
    };
    status.configured = true;
    match tokio::time::timeout(PROBE, escalator.client.report(&report)).await {
        Ok(Ok(reported)) => {
            status.reached = true;
            status.fleet = Some(reported);
        }
        Ok(Err(error)) => status.error = Some(format!("{error:#}")),
        Err(_) => {
            status.error = Some(format!(
                "{} did not answer within {} s",
                escalator.client.url(),
                PROBE.as_secs()
            ))
        }
    }
    status
}

/// What doctor found.
struct Report<'a> {
    this: &'a Path,
    workspace: &'a Path,
    agents: &'a [AgentStatus],
    chain: &'a Result<Chain>,
    service: &'a ServiceStatus,
    /// Resident hook servers running.
    running: usize,
}

impl Report<'_> {
    /// Every agent on this machine gated, and the chain loads.
    fn ok(&self) -> bool {
        self.ungated().next().is_none() && self.chain_loads()
    }

    fn ungated(&self) -> impl Iterator<Item = &AgentStatus> {
        self.agents.iter().filter(|agent| agent.ungated())
    }

    fn chain_loads(&self) -> bool {
        self.chain.as_ref().is_ok_and(|chain| !chain::broken(chain))
    }

    fn json(&self) -> serde_json::Value {
        let chain = match self.chain {
            Ok(chain) => {
                let mut described = chain::describe(chain, self.workspace);
                described["loads"] = self.chain_loads().into();
                described
            }
            Err(error) => json!({ "loads": false, "error": format!("{error:#}") }),
        };
        json!({
            "ok": self.ok(),
            "acp_gate": { "path": self.this, "version": env!("CARGO_PKG_VERSION") },
            "workspace": self.workspace,
            "agents": self.agents,
            "ungated": self.ungated().map(|agent| agent.agent).collect::<Vec<_>>(),
            "chain": chain,
            "service": self.service,
            "resident_servers": { "enabled": resident::enabled(), "running": self.running },
        })
    }

    fn print(&self, handlers_flag: bool) {
        let style = Style::stdout();
        println!(
            "{} {} {}, in {}",
            style.bold("acp-gate doctor:"),
            self.this.display(),
            env!("CARGO_PKG_VERSION"),
            self.workspace.display()
        );
        println!();
        let width = self.agents.iter().map(|a| a.title.len()).max().unwrap_or(0);
        for agent in self.agents {
            print_agent(style, agent, width);
        }
        println!();
        self.print_chain(style, handlers_flag);
        self.print_service(style);
        let servers = match self.running {
            1 => "1 hook server running".to_owned(),
            n => format!("{n} hook servers running"),
        };
        let off = match resident::enabled() {
            true => "",
            false => " (off: $ACP_GATE_HOOK_RESIDENT)",
        };
        println!("{:<8} {servers}{off}", style.bold("resident"));
        println!();
        let ungated: Vec<&str> = self.ungated().map(|agent| agent.title).collect();
        let found = self.agents.iter().filter(|a| a.found.is_some()).count();
        match (ungated.is_empty(), self.chain_loads()) {
            (true, true) if found == 0 => println!(
                "{}",
                style.green("No agent was found on this machine; the chain loads.")
            ),
            (true, true) => println!(
                "{}",
                style.green("Every agent on this machine is gated, and the chain loads.")
            ),
            (all, loads) => {
                if !all {
                    println!(
                        "{}",
                        style.red(&format!("Not gated: {}.", ungated.join(", ")))
                    );
                }
                if !loads {
                    println!("{}", style.red("The chain does not load."));
                }
            }
        }
    }

    fn print_chain(&self, style: Style, handlers_flag: bool) {
        let chain = match self.chain {
            Ok(chain) => chain,
            Err(error) => {
                println!(
                    "{:<8} {} {error:#}",
                    style.bold("chain"),
                    style.red("DOES NOT LOAD:")
                );
                return;
            }
        };
        let loads = match self.chain_loads() {
            true => style.green("loads"),
            false => style.red("DOES NOT LOAD"),
        };
        println!(
            "{:<8} {loads} {}",
            style.bold("chain"),
            style.dim("(`acp-gate chain` shows it whole)")
        );
        for tier in [Tier::Org, Tier::Project, Tier::User, Tier::Builtin] {
            let files = chain::layer_files(chain, tier);
            let label = format!("  {:<8}", tier.as_str());
            if files.is_empty() {
                let none = format!("none ({})", chain::looked_for(tier, handlers_flag));
                println!("{label} {}", style.dim(&none));
            }
            for file in files {
                match tier {
                    Tier::Builtin => println!("{label} the built-in default chain"),
                    _ => println!("{label} {}", file.display()),
                }
                let handlers: Vec<_> = (chain.handlers())
                    .filter(|(s, _)| s.tier == tier && s.file == file)
                    .collect();
                let width = handlers.iter().map(|(s, _)| s.name.len()).max();
                let plugins = (handlers.iter())
                    .map(|(s, _)| s.plugin.to_string().len())
                    .max();
                for (spec, loaded) in handlers {
                    let how = match (loaded, &spec.plugin) {
                        (Ok(_), PluginRef::Builtin(_)) => style.dim("built in"),
                        (Ok(origin), _) => {
                            let pin = match chain::pinned(spec) {
                                Some(true) => "pinned",
                                _ => "not pinned",
                            };
                            style.dim(&format!("{pin}, {}", chain::provenance(origin)))
                        }
                        (Err(error), _) => format!(
                            "{} {error} (in a session it counts as {} on every request)",
                            style.red("FAILED to load:"),
                            spec.on_error
                        ),
                    };
                    let name = format!("{:<1$}", spec.name, width.unwrap_or(0));
                    let plugin = format!("{:<1$}", spec.plugin.to_string(), plugins.unwrap_or(0));
                    println!("    {}  {plugin}  {how}", style.bold(&name));
                }
            }
        }
        if chain.tests.run > 0 {
            println!("  {:<8} {}", "tests", chain.tests.summary());
            for failure in &chain.tests.failures {
                println!("    {} {}", style.red("FAILED"), failure.message);
            }
        }
        for notice in &chain.notices {
            println!("  {:<8} {notice}", "notice");
        }
    }

    fn print_service(&self, style: Style) {
        let service = self.service;
        let label = style.bold("service");
        let url = service.url.as_deref().unwrap_or("the review service");
        match (&service.error, service.reached) {
            (Some(error), _) if !service.configured => {
                println!("{label:<8} {}", style.dim(error))
            }
            (Some(error), _) => println!("{label:<8} {url}: {} {error}", style.red("PROBLEM:")),
            (None, true) => {
                let key = (service.key.as_ref())
                    .map(|key| format!(", decisions checked with {}", key.display()))
                    .unwrap_or_default();
                println!(
                    "{label:<8} {url}: {}{}",
                    style.green("reached with this gate's token"),
                    style.dim(&key)
                );
                let fleet = service.fleet.clone().unwrap_or_default();
                if let Some(published) = &fleet.published {
                    println!(
                        "         {}",
                        style.dim(&format!("the org's published policy: {published}"))
                    );
                }
                for flag in &fleet.flags {
                    println!("         {} {flag}", style.yellow("the service says:"));
                }
            }
            (None, false) => println!(
                "{label:<8} {}",
                style.dim("none (no --escalate-to, no [escalation] in an org file)")
            ),
        }
    }
}

fn print_agent(style: Style, agent: &AgentStatus, width: usize) {
    let verdict = match (&agent.found, agent.gated) {
        (Some(_), true) => style.green("gated"),
        (Some(_), false) => style.red("NOT GATED"),
        (None, _) => style.dim("not installed"),
    };
    let found = (agent.found.as_deref())
        .map(|found| format!("  {}", style.dim(found)))
        .unwrap_or_default();
    println!(
        "{}  {verdict}{found}",
        style.bold(&format!("{:<width$}", agent.title))
    );
    // An agent that is not here is shown with its hooks only when one was left in place.
    let shown =
        |hook: &&HookStatus| agent.found.is_some() || hook.installed || !hook.problems.is_empty();
    for hook in agent.hooks.iter().filter(shown) {
        let file = hook.file.display();
        match (hook.installed, hook.gates) {
            (false, _) if hook.problems.is_empty() => {
                println!(
                    "  {:<8} {}",
                    hook.scope,
                    style.dim(&format!("{file}: no hook"))
                )
            }
            (false, _) => println!("  {:<8} {file}", hook.scope),
            (true, true) => println!(
                "  {:<8} {file}: {}",
                hook.scope,
                style.green("acp-gate's hook, running this acp-gate")
            ),
            (true, false) => println!(
                "  {:<8} {file}: {}",
                hook.scope,
                style.red("acp-gate's hook, not gating")
            ),
        }
        for problem in &hook.problems {
            println!("           {} {problem}", style.red("problem:"));
        }
        for warning in &hook.warnings {
            println!("           {} {warning}", style.yellow("warning:"));
        }
    }
    if agent.ungated() && !agent.hooks.iter().any(|hook| hook.installed) {
        println!(
            "  {}",
            style.dim(&format!(
                "`acp-gate hook install {}` puts acp-gate's hook in",
                agent.agent
            ))
        );
    }
}
