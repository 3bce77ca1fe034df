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

/// Where escalations go and whether to wait for a reviewer; shared by the commands that gate.
#[derive(Args, Clone, Debug, Default)]
pub struct EscalationArgs {
    /// Send escalations to this review service (`acp-gate serve`) [default: the org file's
    /// `[escalation] url`, which this cannot change].
    #[arg(long, value_name = "URL")]
    pub escalate_to: Option<String>,
    /// Keep the agent's request pending until a reviewer decides, at most this long (`90s`,
    /// `10m`, `1h`); then it is denied and escalated, as without it.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub wait: Option<std::time::Duration>,
    /// A file holding this gate's token for the review service [default:
    /// $ACP_GATE_SERVICE_TOKEN].
    #[arg(long, value_name = "FILE")]
    pub service_token_file: Option<PathBuf>,
    /// The review service's public key (PEM, as `acp-gate serve key` prints it), when the org
    /// file's `[escalation] key` names none: its decisions are checked against it.
    #[arg(long, value_name = "FILE")]
    pub service_key: Option<PathBuf>,
}

/// A duration: a number and a unit (`500ms`, `30s`, `10m`, `2h`), or a number of seconds.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("`{text}`: a number and a unit, like 90s, 10m or 1h"))?;
    let seconds = match unit.trim() {
        "ms" => number / 1000.0,
        "" | "s" => number,
        "m" => number * 60.0,
        "h" => number * 3600.0,
        other => return Err(format!("`{other}` is not a unit: ms, s, m or h")),
    };
    std::time::Duration::try_from_secs_f64(seconds).map_err(|e| format!("`{text}`: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn durations_read_with_their_units() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("5"), Ok(Duration::from_secs(5)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5d").is_err());
    }
}
