//! acp-gate's state directory: the named sessions `run` can resume, and the escalations an
//! orchestrator reviews and grants.
//!
//! Both live beside the audit log (`$ACP_GATE_STATE_DIR`, else `$XDG_STATE_HOME/acp-gate`, else
//! `~/.local/state/acp-gate`): `sessions.json` (one entry per name, rewritten whole, atomically)
//! and `escalations.jsonl` (appended: an escalation per line, and a line per grant of one).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The state directory.
pub fn dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("ACP_GATE_STATE_DIR") {
        return dir.into();
    }
    let base = match (std::env::var_os("XDG_STATE_HOME"), std::env::var_os("HOME")) {
        (Some(dir), _) => PathBuf::from(dir),
        (None, Some(home)) => PathBuf::from(home).join(".local/state"),
        (None, None) => PathBuf::from("."),
    };
    base.join("acp-gate")
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A session `run --session NAME` started.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SessionEntry {
    pub name: String,
    pub session_id: String,
    /// The agent's command and arguments.
    pub agent: Vec<String>,
    pub workspace: PathBuf,
    pub protocol: u16,
    pub created_ms: u64,
    pub updated_ms: u64,
}

/// The named sessions.
pub struct Sessions {
    path: PathBuf,
    entries: Vec<SessionEntry>,
}

impl Sessions {
    pub fn open(dir: &Path) -> Result<Sessions> {
        let path = dir.join("sessions.json");
        let entries = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .with_context(|| format!("{}: not a list of sessions", path.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        Ok(Sessions { path, entries })
    }

    pub fn list(&self) -> &[SessionEntry] {
        &self.entries
    }

    /// The session named `key`, else the one whose id is `key`.
    pub fn find(&self, key: &str) -> Option<&SessionEntry> {
        let named = self.entries.iter().find(|e| e.name == key);
        named.or_else(|| self.entries.iter().find(|e| e.session_id == key))
    }

    /// Records `entry` under its name (replacing an earlier one) and writes the file.
    pub fn record(&mut self, entry: SessionEntry) -> Result<()> {
        self.entries.retain(|e| e.name != entry.name);
        self.entries.push(entry);
        let text = serde_json::to_string_pretty(&self.entries)?;
        write_atomically(&self.path, text.as_bytes())
    }
}

/// An ask nobody could answer, as kept for the orchestrator.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EscalationEntry {
    /// Stable: the same request escalated again in the same session has the same id; but an
    /// ask a gate waited on at the review service keeps the id it was sent with, its own.
    pub id: String,
    pub session_id: String,
    pub session_name: Option<String>,
    pub at_ms: u64,
    /// [`crate::request::ToolRequest::fingerprint`]: what a grant lets through.
    pub fingerprint: String,
    pub tool: String,
    pub kind: String,
    pub title: String,
    pub input: Value,
    /// The command line that resumes the session with this request granted, when the session
    /// has a name (else `null`).
    pub resume: Option<String>,
}

/// A line of `escalations.jsonl`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Line {
    Escalation(Box<EscalationEntry>),
    Grant {
        id: String,
        by: Option<String>,
        at_ms: u64,
    },
}

/// Every escalation, with whether it was granted.
pub struct Escalations {
    path: PathBuf,
    pub entries: Vec<(EscalationEntry, Option<String>)>,
}

impl Escalations {
    pub fn open(dir: &Path) -> Result<Escalations> {
        let path = dir.join("escalations.jsonl");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let mut entries: Vec<(EscalationEntry, Option<String>)> = Vec::new();
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let line: Line = serde_json::from_str(line)
                .with_context(|| format!("{}:{}: not an escalation", path.display(), n + 1))?;
            match line {
                // The same request escalated again after a grant: open again.
                Line::Escalation(entry) => {
                    let entry = *entry;
                    match entries.iter_mut().find(|(e, _)| e.id == entry.id) {
                        Some(known) => *known = (entry, None),
                        None => entries.push((entry, None)),
                    }
                }
                Line::Grant { id, by, .. } => {
                    for (entry, granted) in &mut entries {
                        if entry.id == id {
                            *granted = Some(by.clone().unwrap_or_default());
                        }
                    }
                }
            }
        }
        Ok(Escalations { path, entries })
    }

    /// Escalation `id`, and who granted it if it was granted (and not escalated again since).
    pub fn find(&self, id: &str) -> Option<&(EscalationEntry, Option<String>)> {
        self.entries.iter().find(|(e, _)| e.id == id)
    }

    /// Appends `entry`: once per id while it is open (an escalation repeated is the same one);
    /// one granted and escalated again is open again.
    pub fn record(&mut self, entry: EscalationEntry) -> Result<()> {
        let known = self.entries.iter().position(|(e, _)| e.id == entry.id);
        if known.is_some_and(|i| self.entries[i].1.is_none()) {
            return Ok(());
        }
        self.append(&Line::Escalation(Box::new(entry.clone())))?;
        match known {
            Some(i) => self.entries[i] = (entry, None),
            None => self.entries.push((entry, None)),
        }
        Ok(())
    }

    /// Notes that escalation `id` was granted (and its grant used), by whom.
    pub fn granted(&mut self, id: &str, by: Option<&str>) -> Result<()> {
        self.append(&Line::Grant {
            id: id.to_owned(),
            by: by.map(str::to_owned),
            at_ms: now_ms(),
        })?;
        for (entry, granted) in &mut self.entries {
            if entry.id == id {
                *granted = Some(by.unwrap_or_default().to_owned());
            }
        }
        Ok(())
    }

    fn append(&self, line: &Line) -> Result<()> {
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .with_context(|| format!("cannot open {}", self.path.display()))?;
        writeln!(file, "{}", serde_json::to_string(line)?)
            .with_context(|| format!("{}: cannot append", self.path.display()))
    }
}

/// Writes `path` through a temporary file renamed over it: a reader sees the old file or the
/// new one, never half of one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let Some(parent) = path.parent() else {
        bail!("{} has no directory", path.display());
    };
    std::fs::create_dir_all(parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let temporary = parent.join(format!(".{}.{}", std::process::id(), now_ms()));
    std::fs::write(&temporary, bytes)
        .and_then(|()| std::fs::rename(&temporary, path))
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escalations_are_kept_once_and_grants_are_read_back() {
        let dir = std::env::temp_dir().join(format!("acp-gate-state-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let entry = EscalationEntry {
            id: "esc-1".into(),
            session_id: "s".into(),
            session_name: Some("job".into()),
            at_ms: 1,
            fingerprint: "f".into(),
            tool: "Bash".into(),
            kind: "execute".into(),
            title: "terraform apply".into(),
            input: Value::Null,
            resume: None,
        };
        let mut log = Escalations::open(&dir).unwrap();
        log.record(entry.clone()).unwrap();
        log.record(entry.clone()).unwrap();
        log.granted("esc-1", Some("alice")).unwrap();
        let mut read = Escalations::open(&dir).unwrap();
        assert_eq!(
            read.entries,
            vec![(entry.clone(), Some("alice".to_owned()))]
        );
        // Escalated again after its grant: open again.
        read.record(entry.clone()).unwrap();
        assert_eq!(
            Escalations::open(&dir).unwrap().entries,
            vec![(entry, None)]
        );

        let mut sessions = Sessions::open(&dir).unwrap();
        let session = SessionEntry {
            name: "job".into(),
            session_id: "s-1".into(),
            agent: vec!["agent".into()],
            workspace: "/ws".into(),
            protocol: 1,
            created_ms: 1,
            updated_ms: 1,
        };
        sessions.record(session.clone()).unwrap();
        let read = Sessions::open(&dir).unwrap();
        assert_eq!(read.find("job"), Some(&session));
        assert_eq!(read.find("s-1"), Some(&session));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
