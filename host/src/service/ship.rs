//! Audit shipping: the local audit log is the spool. Lines are appended there first (as
//! always); a shipper sends the chained lines after its cursor to the review service in
//! batches, redacted, and moves the cursor only when the service has them. A service that is
//! down loses nothing: the lines wait in the log and go later, in order; the service keeps
//! each (log, number) once, so a batch sent twice is counted once.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::Value;

use super::client::ServiceClient;
use super::redact::Redaction;
use super::{AuditBatch, Ingested, ShippedRecord};
use crate::digest::sha256_hex;
use crate::record::Link;

/// How many records one batch carries at most.
pub const BATCH: usize = 500;

/// The log, its cursor and the service it ships to.
pub struct Shipper {
    log: PathBuf,
    client: ServiceClient,
    redaction: Redaction,
}

/// What one shipping round did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Shipped {
    pub sent: usize,
    pub ingested: Ingested,
}

impl Shipper {
    pub fn new(log: &Path, client: ServiceClient, redaction: Redaction) -> Shipper {
        Shipper {
            log: log.to_path_buf(),
            client,
            redaction,
        }
    }

    /// Where the cursor for this service is kept: beside the log, one file per service.
    fn cursor_path(&self) -> PathBuf {
        let service = &sha256_hex(self.client.url().as_bytes())[..12];
        let name = self
            .log
            .file_name()
            .map_or_else(|| "audit".into(), |n| n.to_string_lossy().into_owned());
        self.log
            .with_file_name(format!(".{name}.shipped-{service}"))
    }

    fn cursor(&self) -> u64 {
        std::fs::read_to_string(self.cursor_path())
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Sends every complete line after the cursor, batch by batch; stops at the first batch
    /// the service does not take (the rest stays spooled).
    pub async fn ship(&self) -> Result<Shipped> {
        let mut shipped = Shipped::default();
        let bytes = match std::fs::read(&self.log) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(shipped),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", self.log.display())),
        };
        let mut cursor = (self.cursor() as usize).min(bytes.len());
        // Only whole lines: a line being written now goes next time.
        let end = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        while cursor < end {
            let mut records = Vec::new();
            let mut next = cursor;
            for line in bytes[cursor..end].split_inclusive(|b| *b == b'\n') {
                next += line.len();
                if let Some(record) = self.record(line) {
                    records.push(record);
                }
                if records.len() == BATCH {
                    break;
                }
            }
            if !records.is_empty() {
                let ingested = self.client.ship(&AuditBatch { records }).await?;
                shipped.sent += ingested.accepted + ingested.duplicates;
                shipped.ingested.accepted += ingested.accepted;
                shipped.ingested.duplicates += ingested.duplicates;
                shipped.ingested.breaks.extend(ingested.breaks);
            }
            cursor = next;
            crate::state::write_atomically(&self.cursor_path(), cursor.to_string().as_bytes())?;
        }
        Ok(shipped)
    }

    /// One line as shipped: chained lines only (lines from before the chain stay home).
    fn record(&self, line: &[u8]) -> Option<ShippedRecord> {
        let text = std::str::from_utf8(line).ok()?.trim_end_matches('\n');
        let mut value: Value = serde_json::from_str(text).ok()?;
        let link: Link = serde_json::from_value(value.clone()).ok()?;
        if let Some(object) = value.as_object_mut() {
            for key in ["log", "seq", "prev"] {
                object.remove(key);
            }
        }
        Some(ShippedRecord {
            log: link.log,
            seq: link.seq,
            prev: link.prev,
            hash: sha256_hex(text.as_bytes()),
            record: self.redaction.value(&value),
        })
    }
}
