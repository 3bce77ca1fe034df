//! Command-line arguments shared by several commands: where the policy comes from and how
//! output is formatted. A leaf: it imports nothing of the crate.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

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
    /// An acpx permission policy, as JSON or a file's path (`{"autoApprove": [..], "autoDeny":
    /// [..], "escalate": [..], "defaultAction": "approve"|"deny"|"escalate"}`): one more handler
    /// of the user tier, above the built-in chain (which still judges every request).
    #[arg(long, alias = "policy", value_name = "JSON|FILE")]
    pub permission_policy: Option<String>,
}

impl PolicyArgs {
    /// `--workspace` (or the current directory), absolute, and checked to be a directory.
    pub fn workspace(&self) -> anyhow::Result<PathBuf> {
        let workspace = match &self.workspace {
            Some(dir) => dir.clone(),
            None => std::env::current_dir()?,
        };
        let workspace = std::path::absolute(&workspace)?;
        if !workspace.is_dir() {
            anyhow::bail!("--workspace {}: not a directory", workspace.display());
        }
        Ok(workspace)
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
