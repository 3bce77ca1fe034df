//! acp-gate: a permission gate for coding agents that speak the Agent Client Protocol.
//!
//! A permission request goes: `acp::gate` (read it, with what the agent announced earlier) ->
//! [`request`] (normalise what the agent sent) -> [`chain`] (run every handler of the
//! [`config`] layers in its [`runtime`] sandbox, combine the [`verdict`]s) -> `audit` (record
//! the decision, as a `record`) -> the answer, which `acp::client` (`run`) or `acp::proxy`
//! (`proxy`) sends. `cli` parses the command line and `cmd` holds one entry point per command;
//! `cmd::check` decides recorded requests offline. [`builtin`] holds the embedded plugins and
//! the default chain's text; [`shorthand`] reads the short request form of tests and cases.
//!
//! ```no_run
//! # async fn example() -> anyhow::Result<()> {
//! use acp_gate::{LoadOptions, load_chain, request::{SessionContext, ToolRequest}};
//! let workspace = std::path::PathBuf::from("/work/project");
//! let chain = load_chain(&LoadOptions { workspace: workspace.clone(), ..Default::default() }).await?;
//! let params = serde_json::json!({"sessionId": "s", "toolCall": {"toolCallId": "1", "rawInput": {"command": "rm -rf ~"}}});
//! let request = ToolRequest::from_permission_request(&params, None, &SessionContext::for_workspace("s", &workspace))?;
//! let decision = chain.decide(&request).await;
//! println!("{}", decision.outcome); // deny
//! # Ok(()) }
//! ```

mod acp;
mod args;
mod audit;
pub mod builtin;
mod cache;
pub mod chain;
pub mod cli;
mod cmd;
pub mod config;
mod digest;
mod distribution;
mod exit;
pub mod paths;
pub mod policy;
mod record;
pub mod request;
mod resolve;
mod review;
pub mod runtime;
mod scaffold;
mod serve;
pub mod service;
pub mod shorthand;
mod state;
mod style;
pub mod verdict;

use std::path::PathBuf;

use anyhow::Result;

use crate::cache::{CacheDirs, CompileCache, Managed};
use crate::chain::Chain;
use crate::config::{LayerPaths, PluginRef, Tier};
use crate::request::SessionContext;
use crate::runtime::Runtime;

/// Where a command finds its policy.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// `--handlers FILE`: used instead of the project and user files (the org file still applies).
    pub handlers: Option<PathBuf>,
    /// `--org-handlers FILE`: the org layer, instead of the managed location.
    pub org_handlers: Option<PathBuf>,
    /// The workspace root: where the project's `.acp-gate/handlers.toml` is looked for.
    pub workspace: PathBuf,
    /// `--permission-policy`: an acpx permission policy (JSON or a file's path).
    pub permission_policy: Option<String>,
}

/// Reads the layered `handlers.toml` files (or the built-in default chain), loads every plugin
/// and runs the inline tests: the one way every command gets its [`Chain`].
pub async fn load_chain(options: &LoadOptions) -> Result<Chain> {
    let mut layers = LayerPaths::discover(
        options.org_handlers.as_deref(),
        options.handlers.as_deref(),
        &options.workspace,
    )?;
    layers.permission_policy = options.permission_policy.clone();
    let policy = config::load(&layers)?;
    // A managed install's cache serves the plugins the org file pins; nothing else does.
    let managed = policy.cache_dir.clone().map(|dir| Managed {
        dir,
        digests: policy
            .handlers
            .iter()
            .filter(|h| h.tier == Tier::Org)
            .filter_map(|h| match (&h.sha256, &h.plugin) {
                (Some(pin), _) => Some(pin.clone()),
                (None, PluginRef::Oci(location)) => distribution::component_sha256(location),
                (None, _) => None,
            })
            .collect(),
    });
    let runtime = Runtime::with_cache(CacheDirs {
        writable: CompileCache::default_dir(),
        managed,
        precompile: false,
    })?;
    let ctx = SessionContext::for_workspace("inline-test", &options.workspace);
    Chain::load(runtime, policy, &ctx).await
}
