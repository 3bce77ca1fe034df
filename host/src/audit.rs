//! The audit log: one JSON line per decision ([`AuditLine`]), appended and flushed before the
//! answer is sent. A decision that is not recorded did not happen.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result};

use crate::chain::Decision;
use crate::digest::sha256_hex;
use crate::record::{AuditLine, DecisionRecord};
use crate::request::ToolRequest;

pub struct AuditLog {
    path: PathBuf,
    file: Mutex<File>,
}

impl AuditLog {
    /// Opens (creating it and its directory if needed) the log at `path` for appending.
    pub fn open(path: &Path) -> Result<AuditLog> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).with_context(|| {
                format!(
                    "{}: cannot create the audit log's directory",
                    parent.display()
                )
            })?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("{}: cannot open the audit log", path.display()))?;
        Ok(AuditLog {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    /// `$ACP_GATE_AUDIT_LOG`, else `audit.jsonl` in the state directory ([`crate::state::dir`]).
    pub fn default_path() -> PathBuf {
        match std::env::var_os("ACP_GATE_AUDIT_LOG") {
            Some(path) => path.into(),
            None => crate::state::dir().join("audit.jsonl"),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one decision. `answer` is the option id sent, `cancelled`, or what else was done.
    /// Appends one decision: `answer` as sent (and by whom), `allowed` whether it let the
    /// request go ahead (`None`: neither, or nothing was answered).
    pub fn record(
        &self,
        request: &ToolRequest,
        decision: &Decision,
        answer: &str,
        allowed: Option<bool>,
    ) -> Result<()> {
        let line = AuditLine {
            timestamp_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            request_digest: sha256_hex(request.raw.to_string().as_bytes()),
            record: DecisionRecord::new(request, decision),
            answer,
            allowed,
            trace: request.trace_context(),
        };
        let line = serde_json::to_string(&line)?;
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        writeln!(file, "{line}")
            .and_then(|()| file.flush())
            .with_context(|| format!("{}: cannot append", self.path.display()))
    }
}
