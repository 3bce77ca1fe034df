//! `acp-gate proxy`: between an editor and its agent (see [`crate::acp::proxy`]).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::acp::gate::Gate;
use crate::acp::output::Output;
use crate::args::{OutputFormat, PolicyArgs};
use crate::audit::AuditLog;

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
    /// The agent's command and arguments.
    #[arg(last = true, required = true, value_name = "AGENT")]
    pub agent: Vec<String>,
}

pub async fn proxy(args: ProxyArgs) -> Result<u8> {
    let options = super::load_options(&args.policy)?;
    let output = Output::on_stderr(args.format);
    let chain = crate::load_chain(&options).await?;
    let audit = AuditLog::open(&args.audit.unwrap_or_else(AuditLog::default_path))?;
    let gate = Gate::new(chain, audit, output);
    crate::acp::proxy::serve(gate, options.workspace, &args.agent).await
}
