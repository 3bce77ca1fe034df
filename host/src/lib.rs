//! acp-gate: a permission gate for coding agents that speak the Agent Client Protocol.
//!
//! A permission request goes: `acp::gate` (read it, with what the agent announced earlier) ->
//! [`request`] (normalise what the agent sent) -> [`chain`] (run every handler of the
//! [`config`] layers in its [`runtime`] sandbox, combine the [`verdict`]s) -> `audit` (record
//! the decision, as a `record`) -> the answer, which `acp::client` (`run`) or `acp::proxy`
//! (`proxy`) sends. `cli` parses the command line and `cmd` holds one entry point per command;
//! `cmd::check` decides recorded requests offline and shows what each does (`effects`). [`builtin`] holds the embedded plugins and
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
mod effects;
mod exit;
mod hook;
pub mod paths;
pub mod policy;
mod record;
pub mod replay;
pub mod request;
mod resolve;
mod review;
pub mod runtime;
mod scaffold;
mod serve;
pub mod service;
pub mod shorthand;
mod stamps;
mod state;
mod style;
pub mod verdict;

use std::path::PathBuf;

use anyhow::Result;

use crate::cache::{CacheDirs, CompileCache, Managed};
use crate::chain::Chain;
use crate::config::{LayerPaths, PluginRef, Tier};
use crate::request::{SessionContext, ToolRequest};
use crate::runtime::{Runtime, Serving};

/// Where a command finds its policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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

impl LoadOptions {
    /// Where a command's policy comes from, from its arguments.
    pub fn from_args(policy: &args::PolicyArgs) -> Result<LoadOptions> {
        Ok(LoadOptions {
            handlers: policy.handlers.clone(),
            org_handlers: policy.org_handlers.clone(),
            workspace: policy.workspace()?,
            permission_policy: policy.permission_policy.clone(),
        })
    }
}

/// Reads the layered `handlers.toml` files (or the built-in default chain), loads every plugin
/// and runs the inline tests: the one way every command gets its [`Chain`]. A failing inline
/// test is an error; a plugin that does not load is not (it counts as its handler's
/// `on_error`), but is in [`Chain::load_failures`].
pub async fn load_chain(options: &LoadOptions) -> Result<Chain> {
    assemble(
        &layer_paths(options)?,
        &options.workspace,
        Serving::Many,
        None,
    )
    .await?
    .checked()
}

/// [`load_chain`] for a process that decides `requests` and exits (a hook call): the runtime
/// is set up for one request, and a handler that would abstain on each of them unseen is not
/// loaded ([`Chain::assemble`]). The chain decides those requests as the whole one does.
pub async fn load_chain_for(options: &LoadOptions, requests: &[ToolRequest]) -> Result<Chain> {
    let layers = layer_paths(options)?;
    assemble(&layers, &options.workspace, Serving::One, Some(requests))
        .await?
        .checked()
}

/// Where `options` find the policy's layers.
pub fn layer_paths(options: &LoadOptions) -> Result<LayerPaths> {
    let mut layers = LayerPaths::discover(
        options.org_handlers.as_deref(),
        options.handlers.as_deref(),
        &options.workspace,
    )?;
    layers.permission_policy = options.permission_policy.clone();
    Ok(layers)
}

/// The chain of `layers` as a session in `workspace` would load it, its inline tests run and
/// reported in [`Chain::tests`] instead of refused: what `load_chain` checks, and what the
/// commands that report on a policy (`plugin validate --resolve`, `chain`) show whole.
pub async fn assemble_chain(layers: &LayerPaths, workspace: &std::path::Path) -> Result<Chain> {
    assemble(layers, workspace, Serving::Many, None).await
}

/// [`assemble_chain`] with the runtime set up for `serving`, for `requests` only when given.
async fn assemble(
    layers: &LayerPaths,
    workspace: &std::path::Path,
    serving: Serving,
    requests: Option<&[ToolRequest]>,
) -> Result<Chain> {
    let policy = config::load(layers)?;
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
    let dirs = CacheDirs {
        writable: CompileCache::default_dir(),
        managed,
        precompile: false,
    };
    let runtime = Runtime::serving(dirs, serving)?;
    let ctx = SessionContext::for_workspace("inline-test", workspace);
    Ok(Chain::assemble(runtime, policy, &ctx, requests).await)
}

/// Every `.rs` file of this crate's `src/`, with its text: for the tests that hold a rule over
/// the whole source (every variable read is keyed, every deadline armed on the clock).
#[cfg(test)]
pub(crate) fn crate_sources() -> Vec<(std::path::PathBuf, String)> {
    let mut dirs = vec![std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")];
    let mut found = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                found.push((path, text));
            }
        }
    }
    assert!(found.len() > 50, "the sources are not where they were");
    found
}
