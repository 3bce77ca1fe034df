//! The `[handler.config]` table.

use serde::Deserialize;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Modes (of agents acp-gate does not know) in which the agent keeps asking: let through.
    pub keeps_asking: Vec<String>,
    /// Modes in which the agent stops asking: asked about. Wins over `keeps_asking`.
    pub stops_asking: Vec<String>,
}
