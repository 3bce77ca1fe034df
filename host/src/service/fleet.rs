//! A gate's report for the review service's fleet view: who and where it runs, its acp-gate
//! version, the policy it decides by (each layer's file by its digest) and whether each agent
//! on the machine is gated, as `acp-gate doctor` finds it. A gate that ships its audit sends
//! one when it starts and every [`EVERY`] while it runs; `doctor` sends one when it checks the
//! service.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::origin::Origin;
use crate::chain::Chain;
use crate::config::Tier;
use crate::digest::sha256_hex;

/// How often a running gate reports: a service calls a gate silent only after longer than
/// this.
pub const EVERY: Duration = Duration::from_secs(600);

/// What a gate tells the service about itself.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GateReport {
    /// The developer's login and machine, as the gate sees them (the service also names the
    /// gate by its token).
    pub developer: String,
    pub machine: String,
    /// The acp-gate it runs.
    pub version: String,
    /// What reported: `run`, `proxy`, `hook serve`, `hook server` (resident) or `doctor`.
    pub via: String,
    pub workspace: String,
    /// `sha256:…` of the org file its chain was loaded from (what the service compares with
    /// the org's published policy); `None`: no org file.
    pub policy: Option<String>,
    /// Every layer of its chain, most authoritative first.
    pub layers: Vec<Layer>,
    /// Whether every handler of its chain loaded.
    pub chain_loads: bool,
    /// The agents acp-gate knows, and whether each is on the machine and gated.
    pub agents: Vec<AgentGate>,
}

/// One layer of a gate's policy.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Layer {
    pub tier: String,
    pub file: String,
    /// `sha256:…` of the file as read now; `None`: it could not be read.
    pub sha256: Option<String>,
}

/// One agent, as `doctor` finds it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AgentGate {
    pub agent: String,
    pub title: String,
    /// Whether it is on the machine.
    pub found: bool,
    /// Whether one of its hooks decides every call.
    pub gated: bool,
    /// Why it is not gated, when it is not.
    #[serde(default)]
    pub problems: Vec<String>,
}

impl AgentGate {
    /// On the machine, and nothing of acp-gate's decides its calls.
    pub fn ungated(&self) -> bool {
        self.found && !self.gated
    }
}

/// What the service answers a report: the org's published policy, and what it found wrong
/// with this gate (as its fleet page says it).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Reported {
    pub published: Option<String>,
    pub flags: Vec<String>,
}

impl GateReport {
    /// The report of a gate here running `chain` for `origin`, with the agents' state as
    /// `doctor` reads it (`hook::status::reported`).
    pub fn new(origin: &Origin, via: &str, chain: &Chain, agents: Vec<AgentGate>) -> GateReport {
        let mut sources = chain.sources.clone();
        // The built-in chain beneath the files is a layer too, though no file names it.
        let builtin = chain.handlers().any(|(spec, _)| spec.tier == Tier::Builtin);
        if builtin && !sources.iter().any(|(tier, _)| *tier == Tier::Builtin) {
            sources.push((Tier::Builtin, "<builtin default chain>".into()));
        }
        let layers: Vec<Layer> = (sources.iter())
            .map(|(tier, file)| Layer {
                tier: tier.as_str().to_owned(),
                file: file.display().to_string(),
                sha256: layer_digest(*tier, file),
            })
            .collect();
        let policy = (chain.sources.iter())
            .find(|(tier, _)| *tier == Tier::Org)
            .and_then(|(tier, file)| layer_digest(*tier, file));
        GateReport {
            developer: origin.developer.clone(),
            machine: origin.machine.clone(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            via: via.to_owned(),
            workspace: origin.workspace.display().to_string(),
            policy,
            layers,
            chain_loads: chain.load_failures().next().is_none(),
            agents,
        }
    }
}

/// A layer's digest: its file's bytes (the built-in chain's own text).
fn layer_digest(tier: Tier, file: &Path) -> Option<String> {
    let bytes = match tier {
        Tier::Builtin => crate::builtin::DEFAULT_CHAIN.as_bytes().to_vec(),
        _ => std::fs::read(file).ok()?,
    };
    Some(format!("sha256:{}", sha256_hex(&bytes)))
}
