//! The fleet: every gate that reports (`POST /v1/gates/report`, see
//! [`crate::service::fleet`]), its last report, and what is wrong with it: a policy other than
//! the org's published one, a chain that did not load, an agent on its machine found ungated,
//! or a silence longer than the service allows.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::digest::sha256_hex;
use crate::service::fleet::{self, GateReport};

/// How long a gate may be silent before the fleet view flags it, when nothing says otherwise.
pub const SILENT_AFTER: Duration = Duration::from_secs(24 * 3600);

/// The most gates (machine and login) one token reports: a token shared by a team's CI
/// runners is many, but a gate cannot fill the database with made-up machines.
pub const MAX_GATES: i64 = 256;

/// What the service holds gates to.
#[derive(Debug, Clone)]
pub struct Fleet {
    /// The org's published policy: the digest of the org file every gate should run.
    pub published: Option<String>,
    /// How long a gate may go without reporting.
    pub silent_after: Duration,
}

impl Default for Fleet {
    fn default() -> Fleet {
        Fleet {
            published: None,
            silent_after: SILENT_AFTER,
        }
    }
}

/// One gate as the fleet view lists it.
#[derive(Debug, Clone, Serialize)]
pub struct GateRow {
    /// The name and team of the token it reports with.
    pub token: String,
    pub team: Option<String>,
    pub report: GateReport,
    pub first_ms: i64,
    pub last_ms: i64,
    /// What is wrong with it; empty: nothing.
    pub flags: Vec<Flag>,
}

/// Something wrong with a gate.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Flag {
    /// `policy`, `chain`, `ungated` or `silent`.
    pub kind: &'static str,
    pub text: String,
}

/// The fleet as the page and the API show it: flagged gates first, then the latest reports.
#[derive(Debug, Clone, Serialize)]
pub struct Gates {
    pub published: Option<String>,
    pub silent_after_s: u64,
    /// The same, in words.
    pub silent_after: String,
    pub gates: Vec<GateRow>,
    /// How many gates have each kind of flag.
    pub flagged: usize,
    pub other_policy: usize,
    pub ungated: usize,
    pub silent: usize,
}

impl Fleet {
    /// The settings: `policy` is the org file (a path, read now) or its digest
    /// (`sha256:…`).
    pub fn resolve(policy: Option<&str>, silent_after: Option<Duration>) -> Result<Fleet> {
        let published = match policy {
            None => None,
            Some(digest) if digest.starts_with("sha256:") => {
                let hex = &digest["sha256:".len()..];
                if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    bail!("--fleet-policy {digest}: a sha256 digest is 64 hexadecimal digits");
                }
                Some(digest.to_ascii_lowercase())
            }
            Some(file) => {
                let bytes = std::fs::read(Path::new(file))
                    .with_context(|| format!("--fleet-policy {file}: cannot read the org file"))?;
                Some(format!("sha256:{}", sha256_hex(&bytes)))
            }
        };
        let silent_after = silent_after.unwrap_or(SILENT_AFTER);
        if silent_after < fleet::EVERY {
            bail!(
                "--silent-after {}s: a running gate reports every {} s, so it cannot be shorter",
                silent_after.as_secs(),
                fleet::EVERY.as_secs()
            );
        }
        Ok(Fleet {
            published,
            silent_after,
        })
    }

    /// What is wrong with a gate that said `report`, last `last_ms` (now: `now`).
    pub fn flags(&self, report: &GateReport, last_ms: i64, now: i64) -> Vec<Flag> {
        let mut flags = Vec::new();
        if let Some(published) = &self.published
            && report.policy.as_ref() != Some(published)
        {
            let text = match &report.policy {
                None => format!(
                    "runs no org policy (the org publishes {})",
                    short(published)
                ),
                Some(runs) => format!(
                    "runs policy {}, not the org's published {}",
                    short(runs),
                    short(published)
                ),
            };
            flags.push(Flag {
                kind: "policy",
                text,
            });
        }
        if !report.chain_loads {
            flags.push(Flag {
                kind: "chain",
                text: "a handler of its chain did not load".to_owned(),
            });
        }
        for agent in report.agents.iter().filter(|a| a.ungated()) {
            let why = (agent.problems.first())
                .map(|p| format!(": {p}"))
                .unwrap_or_default();
            flags.push(Flag {
                kind: "ungated",
                text: format!("{} is not gated{why}", agent.title),
            });
        }
        let silent_ms = now - last_ms;
        if silent_ms > self.silent_after.as_millis() as i64 {
            flags.push(Flag {
                kind: "silent",
                text: format!(
                    "silent for {} (allowed: {})",
                    span(silent_ms / 1000),
                    span(self.silent_after.as_secs() as i64)
                ),
            });
        }
        flags
    }

    /// The rows of every gate, flagged, flagged ones first, then the latest.
    pub fn gates(&self, rows: Vec<(String, Option<String>, GateReport, i64, i64)>) -> Gates {
        let now = super::db::now();
        let mut gates: Vec<GateRow> = (rows.into_iter())
            .map(|(token, team, report, first_ms, last_ms)| GateRow {
                flags: self.flags(&report, last_ms, now),
                token,
                team,
                report,
                first_ms,
                last_ms,
            })
            .collect();
        gates.sort_by_key(|g| (g.flags.is_empty(), -g.last_ms));
        let with = |kind: &str| {
            (gates.iter())
                .filter(|g| g.flags.iter().any(|f| f.kind == kind))
                .count()
        };
        Gates {
            published: self.published.clone(),
            silent_after_s: self.silent_after.as_secs(),
            silent_after: span(self.silent_after.as_secs() as i64),
            flagged: gates.iter().filter(|g| !g.flags.is_empty()).count(),
            other_policy: with("policy"),
            ungated: with("ungated"),
            silent: with("silent"),
            gates,
        }
    }
}

/// A digest cut for reading: `sha256:0123456789ab…`.
pub fn short(digest: &str) -> String {
    digest
        .chars()
        .take("sha256:".len() + 12)
        .collect::<String>()
        + "…"
}

/// Seconds in the largest whole unit: `3 days`, `5 h`, `12 min`, `40 s`.
fn span(seconds: i64) -> String {
    match seconds {
        ..120 => format!("{seconds} s"),
        120..7200 => format!("{} min", seconds / 60),
        7200..172_800 => format!("{} h", seconds / 3600),
        _ => format!("{} days", seconds / 86400),
    }
}

/// The most of each part of a report the service keeps.
const MAX_TEXT: usize = 4096;
const MAX_ITEMS: usize = 32;

/// Checks a report's fields; the first bad one is named.
pub fn validate(report: &GateReport) -> Result<(), String> {
    let text = |name: &str, value: &str| match value.len() {
        0 if name != "workspace" => Err(format!("`{name}` is empty")),
        n if n > MAX_TEXT => Err(format!("`{name}`: at most {MAX_TEXT} bytes")),
        _ => Ok(()),
    };
    text("developer", &report.developer)?;
    text("machine", &report.machine)?;
    text("version", &report.version)?;
    text("via", &report.via)?;
    text("workspace", &report.workspace)?;
    if let Some(policy) = &report.policy {
        text("policy", policy)?;
    }
    if report.layers.len() > MAX_ITEMS {
        return Err(format!("`layers`: at most {MAX_ITEMS}"));
    }
    for layer in &report.layers {
        text("layers.tier", &layer.tier)?;
        text("layers.file", &layer.file)?;
    }
    if report.agents.len() > MAX_ITEMS {
        return Err(format!("`agents`: at most {MAX_ITEMS}"));
    }
    for agent in &report.agents {
        text("agents.agent", &agent.agent)?;
        text("agents.title", &agent.title)?;
        if agent.problems.len() > MAX_ITEMS {
            return Err(format!("`agents.problems`: at most {MAX_ITEMS}"));
        }
        for problem in &agent.problems {
            text("agents.problems", problem)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::fleet::AgentGate;

    fn report(policy: Option<&str>, codex_gated: bool) -> GateReport {
        GateReport {
            developer: "alice".into(),
            machine: "laptop".into(),
            version: "0.1.0".into(),
            via: "doctor".into(),
            workspace: "/src/app".into(),
            policy: policy.map(str::to_owned),
            layers: Vec::new(),
            chain_loads: true,
            agents: vec![AgentGate {
                agent: "codex".into(),
                title: "Codex".into(),
                found: true,
                gated: codex_gated,
                problems: vec!["not trusted".into()],
            }],
        }
    }

    #[test]
    fn a_gate_is_flagged_for_another_policy_an_ungated_agent_and_silence() {
        let org = format!("sha256:{}", "a".repeat(64));
        let other = format!("sha256:{}", "b".repeat(64));
        let fleet = Fleet::resolve(Some(&org), Some(Duration::from_secs(3600))).unwrap();
        let now = 10_000_000;
        assert!(fleet.flags(&report(Some(&org), true), now, now).is_empty());
        let kinds = |flags: Vec<Flag>| flags.iter().map(|f| f.kind).collect::<Vec<_>>();
        assert_eq!(
            kinds(fleet.flags(&report(Some(&other), true), now, now)),
            ["policy"]
        );
        assert_eq!(
            kinds(fleet.flags(&report(None, true), now, now)),
            ["policy"]
        );
        let ungated = fleet.flags(&report(Some(&org), false), now, now);
        assert_eq!(ungated[0].text, "Codex is not gated: not trusted");
        let silent = fleet.flags(&report(Some(&org), true), now - 7_200_000, now);
        assert_eq!(silent[0].text, "silent for 2 h (allowed: 60 min)");
        // Without a published policy, any policy is the org's.
        let open = Fleet::resolve(None, None).unwrap();
        assert!(open.flags(&report(Some(&other), true), now, now).is_empty());
    }

    #[test]
    fn the_published_policy_is_a_file_or_a_digest_and_silence_is_longer_than_a_report() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("org.toml");
        std::fs::write(&file, "default = \"ask\"\n").unwrap();
        let fleet = Fleet::resolve(Some(file.to_str().unwrap()), None).unwrap();
        assert_eq!(
            fleet.published,
            Some(format!("sha256:{}", sha256_hex(b"default = \"ask\"\n")))
        );
        let missing = Fleet::resolve(Some("/nowhere/org.toml"), None).unwrap_err();
        assert!(format!("{missing:#}").contains("/nowhere/org.toml"));
        assert!(Fleet::resolve(Some("sha256:abc"), None).is_err());
        assert!(Fleet::resolve(None, Some(Duration::from_secs(60))).is_err());
    }
}
