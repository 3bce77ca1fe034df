//! The audit log: one JSON line per decision ([`AuditLine`]), appended and flushed before the
//! answer is sent. A decision that is not recorded did not happen. Each line carries the hash
//! of the line before it ([`Link`]), so a deleted, reordered or edited line is detectable
//! ([`verify`]); processes sharing a log append under a file lock and continue its chain.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result};
use serde_json::Value;

use crate::chain::Decision;
use crate::digest::sha256_hex;
use crate::record::{AuditLine, DecisionRecord, Link};
use crate::request::ToolRequest;

pub struct AuditLog {
    path: PathBuf,
    file: Mutex<Tail>,
    /// The agent's program, for every line.
    agent: Option<String>,
}

/// The open file and what this process knows of its last line.
struct Tail {
    file: File,
    /// The file's length after our last append (another process appended when it differs).
    end: u64,
    /// The last line's link (none: written before the chain) and hash.
    last: Option<(Option<Link>, String)>,
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
            .read(true)
            .append(true)
            .open(path)
            .with_context(|| format!("{}: cannot open the audit log", path.display()))?;
        Ok(AuditLog {
            path: path.to_path_buf(),
            file: Mutex::new(Tail {
                file,
                // Unknown: read at the first append.
                end: u64::MAX,
                last: None,
            }),
            agent: None,
        })
    }

    /// Names the agent's program on every line.
    pub fn with_agent(self, agent: Option<String>) -> AuditLog {
        AuditLog { agent, ..self }
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

    /// Appends one decision: `answer` as sent (and by whom), `allowed` whether it let the
    /// request go ahead (`None`: neither, or nothing was answered).
    pub fn record(
        &self,
        request: &ToolRequest,
        decision: &Decision,
        answer: &str,
        allowed: Option<bool>,
    ) -> Result<()> {
        let mut tail = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let appended = (|| -> std::io::Result<()> {
            let tail = &mut *tail;
            // Another process may append to the same log: hold the file while linking.
            rustix::fs::flock(&tail.file, rustix::fs::FlockOperation::LockExclusive)?;
            let result = (|| {
                let end = tail.file.metadata()?.len();
                if end != tail.end {
                    tail.last = last_line(&mut tail.file, end)?.map(|line| {
                        let link = serde_json::from_str::<Link>(&line).ok();
                        (link, sha256_hex(line.as_bytes()))
                    });
                }
                let link = match &tail.last {
                    // A chained log goes on; an unchained one (written before the chain) starts one.
                    Some((Some(link), hash)) => Link {
                        log: link.log.clone(),
                        seq: link.seq + 1,
                        prev: Some(hash.clone()),
                    },
                    Some((_, hash)) => Link {
                        log: new_log_id(),
                        seq: 1,
                        prev: Some(hash.clone()),
                    },
                    None => Link {
                        log: new_log_id(),
                        seq: 1,
                        prev: None,
                    },
                };
                let line = AuditLine {
                    link: link.clone(),
                    timestamp_ms: crate::state::now_ms(),
                    request_digest: sha256_hex(request.raw.to_string().as_bytes()),
                    record: DecisionRecord::new(request, decision),
                    answer,
                    allowed,
                    trace: request.trace_context(),
                    agent: self.agent.as_deref(),
                    request,
                    params: &request.raw,
                };
                let line = serde_json::to_string(&line).map_err(std::io::Error::other)?;
                tail.file.write_all(format!("{line}\n").as_bytes())?;
                tail.file.flush()?;
                tail.end = end + line.len() as u64 + 1;
                tail.last = Some((Some(link), sha256_hex(line.as_bytes())));
                Ok(())
            })();
            let _ = rustix::fs::flock(&tail.file, rustix::fs::FlockOperation::Unlock);
            result
        })();
        if appended.is_err() {
            // What we knew of the file may be wrong now: read it again next time.
            tail.end = u64::MAX;
        }
        appended.with_context(|| format!("{}: cannot append", self.path.display()))
    }
}

/// A new log's id: 16 random hexadecimal digits.
fn new_log_id() -> String {
    crate::digest::random_hex(8)
}

/// The last non-empty line of a file `end` bytes long, read backwards in chunks.
fn last_line(file: &mut File, end: u64) -> std::io::Result<Option<String>> {
    const CHUNK: u64 = 8192;
    let mut buffer: Vec<u8> = Vec::new();
    let mut start = end;
    loop {
        let trimmed = buffer.iter().rposition(|b| *b != b'\n').map(|i| i + 1);
        if let Some(stop) = trimmed
            && let Some(newline) = buffer[..stop].iter().rposition(|b| *b == b'\n')
        {
            return Ok(Some(
                String::from_utf8_lossy(&buffer[newline + 1..stop]).into_owned(),
            ));
        }
        if start == 0 {
            return Ok(trimmed.map(|stop| String::from_utf8_lossy(&buffer[..stop]).into_owned()));
        }
        let from = start.saturating_sub(CHUNK);
        let mut chunk = vec![0; (start - from) as usize];
        file.seek(SeekFrom::Start(from))?;
        file.read_exact(&mut chunk)?;
        chunk.extend_from_slice(&buffer);
        buffer = chunk;
        start = from;
    }
}

/// What [`verify`] found in a log.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Verified {
    /// Lines read (not counting empty ones).
    pub lines: usize,
    /// Lines written before acp-gate chained its audit log, at its start.
    pub unchained: usize,
    /// The first line where the chain does not hold, and why.
    pub broken: Option<(usize, String)>,
}

/// Checks a log's chain: every chained line names the hash of the line before it, counts on
/// from it and keeps its log's id. The first line that does not is named (an edited line is
/// found at the line after it, whose link no longer matches).
pub fn verify(text: &str) -> Verified {
    let mut verified = Verified {
        lines: 0,
        unchained: 0,
        broken: None,
    };
    let mut before: Option<(Option<Link>, String)> = None;
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let number = index + 1;
        verified.lines += 1;
        let value: Option<Value> = serde_json::from_str(line).ok();
        let link = value
            .as_ref()
            .filter(|v| v.get("seq").is_some())
            .map(|v| serde_json::from_value::<Link>(v.clone()));
        let why = match (&link, &before) {
            (None, _) if value.is_none() => Some("not a JSON audit record".to_owned()),
            (None, None | Some((None, _))) => {
                verified.unchained += 1;
                None
            }
            (None, Some((Some(_), _))) => {
                Some("carries no chain, after lines that do (a line was replaced)".to_owned())
            }
            (Some(Err(e)), _) => Some(format!("its chain fields are malformed: {e}")),
            (Some(Ok(link)), None) => match &link.prev {
                Some(_) => Some(
                    "it names a line before it, but it is the first: lines were deleted from the start"
                        .to_owned(),
                ),
                None if link.seq != 1 => Some(format!("the first line is number {}, not 1", link.seq)),
                None => None,
            },
            (Some(Ok(link)), Some((earlier, hash))) => {
                let expected_seq = earlier.as_ref().map_or(1, |e| e.seq + 1);
                let same_log = earlier.as_ref().is_none_or(|e| e.log == link.log);
                if link.prev.as_deref() != Some(hash.as_str()) {
                    Some(format!(
                        "it does not follow line {}: that line was edited, or lines were deleted or moved",
                        number - 1
                    ))
                } else if !same_log || link.seq != expected_seq {
                    Some(format!(
                        "it is number {} of log {}, where number {expected_seq} was due",
                        link.seq, link.log
                    ))
                } else {
                    None
                }
            }
        };
        if let Some(why) = why {
            verified.broken = Some((number, why));
            return verified;
        }
        let link = link.and_then(Result::ok);
        before = Some((link, sha256_hex(line.as_bytes())));
    }
    verified
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::SessionContext;

    fn log_with(lines: usize) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let ctx = SessionContext::for_workspace("s", dir.path());
        let params =
            serde_json::json!({"sessionId": "s", "toolCall": {"toolCallId": "t", "title": "x"}});
        let request = ToolRequest::from_permission_request(&params, None, &ctx).unwrap();
        let decision = Decision::refused("test".into());
        for n in 0..lines {
            // Two writers on one file, as two runs sharing the default log.
            let log = AuditLog::open(&path).unwrap();
            log.record(&request, &decision, &format!("answer {n}"), None)
                .unwrap();
            let other = AuditLog::open(&path).unwrap();
            other
                .record(&request, &decision, "other", Some(false))
                .unwrap();
        }
        (dir, path)
    }

    #[test]
    fn a_chained_log_verifies_and_any_deleted_moved_or_edited_line_is_named() {
        let (_dir, path) = log_with(3);
        let text = std::fs::read_to_string(&path).unwrap();
        let verified = verify(&text);
        assert_eq!(
            (verified.lines, verified.broken.clone()),
            (6, None),
            "{text}"
        );
        let lines: Vec<&str> = text.lines().collect();
        let joined = |lines: &[&str]| lines.join("\n");

        let mut deleted = lines.clone();
        deleted.remove(2);
        assert_eq!(verify(&joined(&deleted)).broken.unwrap().0, 3);

        let mut moved = lines.clone();
        moved.swap(3, 4);
        assert_eq!(verify(&joined(&moved)).broken.unwrap().0, 4);

        let edited_line = lines[1].replace("other", "allow-once");
        let mut edited = lines.clone();
        edited[1] = &edited_line;
        let broken = verify(&joined(&edited)).broken.unwrap();
        assert_eq!(broken.0, 3, "{}", broken.1);
        assert!(broken.1.contains("line 2"), "{}", broken.1);

        let head_cut = joined(&lines[1..]);
        assert_eq!(verify(&head_cut).broken.unwrap().0, 1);
    }

    #[test]
    fn a_log_written_before_the_chain_is_continued_by_a_new_chain() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        std::fs::write(&path, "{\"timestamp_ms\":1,\"answer\":\"old\"}\n").unwrap();
        let ctx = SessionContext::for_workspace("s", dir.path());
        let params = serde_json::json!({"sessionId": "s", "toolCall": {"toolCallId": "t"}});
        let request = ToolRequest::from_permission_request(&params, None, &ctx).unwrap();
        let log = AuditLog::open(&path).unwrap();
        let decision = Decision::refused("test".into());
        log.record(&request, &decision, "new", None).unwrap();
        log.record(&request, &decision, "newer", None).unwrap();
        let verified = verify(&std::fs::read_to_string(&path).unwrap());
        assert_eq!(
            verified,
            Verified {
                lines: 3,
                unchained: 1,
                broken: None
            }
        );
    }
}
