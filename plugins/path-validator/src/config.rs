//! The `[handler.config]` table.

use serde::Deserialize;

/// What a read outside every workspace root gets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutsideRead {
    Allow,
    #[default]
    Ask,
    Deny,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// More secret patterns (denied to read and to write), added to
    /// `acp_gate_plugin::sensitive::SECRETS`.
    pub sensitive: Vec<String>,
    /// More write-protected patterns (readable, never written), added to
    /// `acp_gate_plugin::sensitive::RUNS_CODE`.
    pub protected: Vec<String>,
    /// Built-in patterns to drop, written exactly as in those lists.
    pub allow_sensitive: Vec<String>,
    /// Reads outside the workspace: `allow`, `ask` (default) or `deny`.
    pub outside_read: OutsideRead,
    /// More directories that count as inside the workspace (`~/` allowed), e.g. a shared
    /// build cache.
    pub extra_roots: Vec<String>,
}
