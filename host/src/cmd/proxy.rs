//! `acp-gate proxy`: between an editor and its agent, or a proxy of a conductor's chain (see
//! [`crate::acp::proxy`]).

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::acp::gate::Gate;
use crate::acp::output::Output;
use crate::acp::proxy::IN_A_CHAIN;
use crate::args::{EscalationArgs, OutputFormat, PolicyArgs};
use crate::audit::AuditLog;
use crate::exit;
use crate::hook::status::reported;
use crate::service::escalator::Escalator;
use crate::service::origin::Origin;
use crate::service::ship::{Shipping, shippers};

#[derive(Args, Debug)]
pub struct ProxyArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// The audit log [default: $ACP_GATE_AUDIT_LOG, else ~/.local/state/acp-gate/audit.jsonl].
    #[arg(long, value_name = "FILE")]
    pub audit: Option<PathBuf>,
    /// How decisions are shown on stderr.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    #[command(flatten)]
    pub escalation: EscalationArgs,
    /// The agent's command and arguments. Without one, acp-gate is a proxy of an ACP
    /// conductor's chain (`agent-client-protocol-conductor agent "acp-gate proxy" "AGENT"`).
    #[arg(last = true, value_name = "AGENT")]
    pub agent: Vec<String>,
}

pub async fn proxy(args: ProxyArgs) -> Result<u8> {
    let output = Output::on_stderr(args.format);
    if args.agent.is_empty() && std::io::stdin().is_terminal() {
        // Nobody types JSON-RPC: this is not a conductor.
        output.error(&format!(
            "acp-gate proxy needs the agent's command (acp-gate proxy -- AGENT [ARGS]), unless \
             an ACP conductor starts it as a proxy of its chain ({IN_A_CHAIN})"
        ));
        return Ok(exit::USAGE);
    }
    let options = super::load_options(&args.policy)?;
    let chain = crate::load_chain(&options).await?;
    let origin = Origin::here(&options.workspace, &args.agent);
    let escalator = Escalator::configure(&args.escalation, chain.escalation.as_ref(), origin)?;
    let audit_path = args.audit.unwrap_or_else(AuditLog::default_path);
    let audit = AuditLog::open(&audit_path)?;
    let gate = Gate::new(chain, audit, output);
    let shipping = Shipping::start_all(shippers(
        &audit_path,
        (escalator.as_ref()).map(|e| {
            e.gate_shipper(
                &audit_path,
                gate.chain(),
                "proxy",
                reported(&options.workspace),
            )
        }),
    )?);
    let code = crate::acp::proxy::serve(gate, escalator, options.workspace, &args.agent).await;
    for error in Shipping::finish_all(shipping).await {
        Output::on_stderr(args.format).notice(&format!("{error:#}"));
    }
    code
}
