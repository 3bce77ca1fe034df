//! The grant model: which interfaces a plugin may import, and what each import needs. The one
//! place where a plugin's authority is decided; `load` refuses a component whose imports
//! exceed its handler's grants, naming the import.

use std::collections::BTreeSet;

/// What a plugin may import. Each grant covers a set of interfaces; WASI interfaces that give
/// access to the outside world are never granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Grant {
    /// `acp-gate:plugin/log`.
    Log,
    /// `acp-gate:plugin/paths`: host-resolved facts about paths.
    Paths,
    /// `acp-gate:plugin/shell`: a command line read into its simple commands by the host.
    Shell,
    /// `wasi:cli/*` and `wasi:io/*`, served empty: no environment, no arguments, no stdin,
    /// output discarded. Language runtimes import these even when they never use them.
    WasiCli,
    /// `wasi:clocks/*`: the real clocks.
    WasiClocks,
    /// `wasi:random/*`.
    WasiRandom,
    /// `wasi:filesystem/*`, served with no preopened directory: no file can be opened.
    WasiFilesystem,
}

impl Grant {
    pub const ALL: [Grant; 7] = [
        Grant::Log,
        Grant::Paths,
        Grant::Shell,
        Grant::WasiCli,
        Grant::WasiClocks,
        Grant::WasiRandom,
        Grant::WasiFilesystem,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Grant::Log => "log",
            Grant::Paths => "paths",
            Grant::Shell => "shell",
            Grant::WasiCli => "wasi-cli",
            Grant::WasiClocks => "wasi-clocks",
            Grant::WasiRandom => "wasi-random",
            Grant::WasiFilesystem => "wasi-filesystem",
        }
    }

    pub fn parse(name: &str) -> Option<Grant> {
        Grant::ALL.into_iter().find(|g| g.name() == name)
    }
}

/// What importing an interface takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Need {
    /// Nothing: the contract's own types carry no authority.
    Nothing,
    Grant(Grant),
    /// acp-gate never grants it (sockets, HTTP, unknown interfaces).
    Refused,
}

impl Need {
    pub fn of(import: &str) -> Need {
        let interface = import.split('@').next().unwrap_or(import);
        match interface {
            "acp-gate:plugin/types" => Need::Nothing,
            "acp-gate:plugin/log" => Need::Grant(Grant::Log),
            "acp-gate:plugin/paths" => Need::Grant(Grant::Paths),
            "acp-gate:plugin/shell" => Need::Grant(Grant::Shell),
            _ if interface.starts_with("wasi:cli/") || interface.starts_with("wasi:io/") => {
                Need::Grant(Grant::WasiCli)
            }
            _ if interface.starts_with("wasi:clocks/") => Need::Grant(Grant::WasiClocks),
            _ if interface.starts_with("wasi:random/") => Need::Grant(Grant::WasiRandom),
            _ if interface.starts_with("wasi:filesystem/") => Need::Grant(Grant::WasiFilesystem),
            _ => Need::Refused,
        }
    }
}

/// The grants every plugin has unless its entry says otherwise.
pub fn default_grants() -> BTreeSet<Grant> {
    [Grant::Log, Grant::WasiCli].into()
}

/// The imports of a component that `grants` do not cover, each with why, for the error that
/// refuses it.
pub fn refused<'a>(
    imports: impl IntoIterator<Item = &'a (String, Need)>,
    grants: &BTreeSet<Grant>,
) -> Vec<String> {
    imports
        .into_iter()
        .filter_map(|(import, need)| match need {
            Need::Nothing => None,
            Need::Grant(grant) if grants.contains(grant) => None,
            Need::Grant(grant) => Some(format!("`{import}` (needs the `{}` grant)", grant.name())),
            Need::Refused => Some(format!("`{import}` (never granted to plugins)")),
        })
        .collect()
}
