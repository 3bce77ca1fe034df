//! Audit shipping: the local audit log is the spool. Lines are appended there first (as
//! always); a shipper sends the chained lines after its cursor to the review service, or to the
//! org's OpenTelemetry collector ([`Destination`]), in batches, redacted, and moves the cursor
//! only when the destination has them. A service that is
//! down loses nothing: the lines wait in the log and go later, in order; the service keeps
//! each (log, number) once, so a batch sent twice is counted once. A gate that runs for a while
//! (`run`, `proxy`, `hook serve`) ships in [`Shipping`] rounds while it runs, and once more at
//! its end.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::Value;

use super::client::ServiceClient;
use super::fleet::{self, GateReport};
use super::otlp::Collector;
use super::redact::Redaction;
use super::{AuditBatch, Ingested, ShippedRecord};
use crate::digest::sha256_hex;
use crate::record::Link;

/// How many records one batch carries at most.
pub const BATCH: usize = 500;

/// The log, its cursor and where it ships to.
pub struct Shipper {
    log: PathBuf,
    destination: Destination,
    redaction: Redaction,
    /// The gate's report for the review service's fleet view, sent as rounds start and every
    /// [`fleet::EVERY`].
    report: Option<GateReport>,
}

/// Where audit records go: each keeps its own cursor in the log.
pub enum Destination {
    /// The review service, which keeps and checks the chain.
    Service(ServiceClient),
    /// An OpenTelemetry collector: a log record and a span per decision.
    Collector(Collector),
}

impl Destination {
    fn url(&self) -> &str {
        match self {
            Destination::Service(client) => client.url(),
            Destination::Collector(collector) => collector.url(),
        }
    }

    async fn send(&self, records: Vec<ShippedRecord>) -> Result<Ingested> {
        match self {
            Destination::Service(client) => client.ship(&AuditBatch { records }).await,
            Destination::Collector(collector) => collector.export(&records).await,
        }
    }
}

/// The shippers of a gate's audit log `log`: `service`'s (to the review service it escalates
/// to, when it does), and one to the collector the environment names
/// (`OTEL_EXPORTER_OTLP_ENDPOINT`), redacted as the service's is (as the org file says), else
/// by the built-in rules.
pub fn shippers(log: &Path, service: Option<Shipper>) -> Result<Vec<Shipper>> {
    let redaction = service
        .as_ref()
        .map_or_else(Redaction::default, |s| s.redaction.clone());
    let mut shippers: Vec<Shipper> = service.into_iter().collect();
    if let Some(collector) = Collector::from_env()? {
        shippers.push(Shipper::new(
            log,
            Destination::Collector(collector),
            redaction,
        ));
    }
    Ok(shippers)
}

/// What one shipping round did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Shipped {
    pub sent: usize,
    pub ingested: Ingested,
}

impl Shipper {
    pub fn new(log: &Path, destination: Destination, redaction: Redaction) -> Shipper {
        Shipper {
            log: log.to_path_buf(),
            destination,
            redaction,
            report: None,
        }
    }

    /// The same, also reporting the gate to the review service's fleet view while it ships
    /// in [`Shipping`] rounds (a collector gets no report).
    pub fn reporting(self, report: GateReport) -> Shipper {
        Shipper {
            report: Some(report),
            ..self
        }
    }

    /// Sends the gate's report, when it has one and ships to the review service.
    async fn report(&self) -> Result<()> {
        if let (Some(report), Destination::Service(client)) = (&self.report, &self.destination) {
            client.report(report).await?;
        }
        Ok(())
    }

    /// Where it ships to.
    pub fn url(&self) -> &str {
        self.destination.url()
    }

    /// Where the cursor for this service is kept: beside the log, one file per service (so
    /// it also names what a shipper ships from and to).
    pub fn cursor_path(&self) -> PathBuf {
        let service = &sha256_hex(self.destination.url().as_bytes())[..12];
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

    /// The log from its cursor on (from its start, when the cursor is past its end): where
    /// that is, and what follows. Only what was not shipped is read, however long the log.
    fn after_cursor(&self) -> std::io::Result<(u64, Vec<u8>)> {
        use std::io::{Read, Seek};
        let mut file = std::fs::File::open(&self.log)?;
        let length = file.metadata()?.len();
        let start = Some(self.cursor()).filter(|c| *c <= length).unwrap_or(0);
        file.seek(std::io::SeekFrom::Start(start))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok((start, bytes))
    }

    /// Sends every complete line after the cursor, batch by batch; stops at the first batch
    /// the service does not take (the rest stays spooled).
    pub async fn ship(&self) -> Result<Shipped> {
        let mut shipped = Shipped::default();
        let (start, bytes) = match self.after_cursor() {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(shipped),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", self.log.display())),
        };
        // Offsets in `bytes`; the cursor written is in the log.
        let mut cursor = 0;
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
                let ingested = self.destination.send(records).await?;
                shipped.sent += ingested.accepted + ingested.duplicates;
                shipped.ingested.accepted += ingested.accepted;
                shipped.ingested.duplicates += ingested.duplicates;
                shipped.ingested.breaks.extend(ingested.breaks);
            }
            cursor = next;
            let shipped_to = start + cursor as u64;
            crate::state::write_atomically(&self.cursor_path(), shipped_to.to_string().as_bytes())?;
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

/// How often a running gate ships its audit log.
const ROUND: Duration = Duration::from_secs(2);

/// How long a gate waits at its end for its audit records to reach the review service.
const LAST_ROUND: Duration = Duration::from_secs(10);

/// A gate's audit shipping while it runs: a round every [`ROUND`] in the background (a failure
/// waits for the next round: the log is the spool), and a last one at its end. Its report for
/// the fleet view goes first, and again every [`fleet::EVERY`] (one that fails is tried again
/// next round).
pub struct Shipping {
    background: tokio::task::JoinHandle<()>,
    shipper: Arc<Shipper>,
}

impl Shipping {
    /// Starts the rounds of `shipper`.
    pub fn start(shipper: Shipper) -> Shipping {
        let shipper = Arc::new(shipper);
        let background = {
            let shipper = shipper.clone();
            tokio::spawn(async move {
                let mut report = tokio::time::Instant::now();
                loop {
                    if tokio::time::Instant::now() >= report && shipper.report().await.is_ok() {
                        report += fleet::EVERY;
                    }
                    let _ = shipper.ship().await;
                    tokio::time::sleep(ROUND).await;
                }
            })
        };
        Shipping {
            background,
            shipper,
        }
    }

    /// The rounds of each of `shippers`.
    pub fn start_all(shippers: Vec<Shipper>) -> Vec<Shipping> {
        shippers.into_iter().map(Shipping::start).collect()
    }

    /// [`Shipping::finish`] of each; the errors of those that could not ship all.
    pub async fn finish_all(shipping: Vec<Shipping>) -> Vec<anyhow::Error> {
        let mut errors = Vec::new();
        for shipping in shipping {
            if let Err(error) = shipping.finish().await {
                errors.push(error);
            }
        }
        errors
    }

    /// Stops the rounds, reports the gate once more and ships what is left; the error says
    /// what stays in the log for next time, and why.
    pub async fn finish(self) -> Result<()> {
        self.background.abort();
        // A gate that ended before its first round still reports.
        let last = async {
            let _ = self.shipper.report().await;
            self.shipper.ship().await
        };
        let last = tokio::time::timeout(LAST_ROUND, last)
            .await
            .unwrap_or_else(|_| Err(anyhow::anyhow!("it took longer than {LAST_ROUND:?}")));
        last.map(|_| ()).with_context(|| {
            format!(
                "the audit records not shipped yet stay in {} and go next time",
                self.shipper.log.display()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipper(log: &Path) -> Shipper {
        let client = ServiceClient::new("http://127.0.0.1:9", "token".into()).unwrap();
        Shipper::new(log, Destination::Service(client), Redaction::default())
    }

    #[test]
    fn only_what_follows_the_cursor_is_read_and_a_log_shorter_than_it_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("audit.jsonl");
        std::fs::write(&log, "one\ntwo\nthree\n").unwrap();
        let shipper = shipper(&log);
        assert_eq!(
            shipper.after_cursor().unwrap(),
            (0, b"one\ntwo\nthree\n".to_vec())
        );
        std::fs::write(shipper.cursor_path(), "8").unwrap();
        assert_eq!(shipper.after_cursor().unwrap(), (8, b"three\n".to_vec()));
        // Moved away and started again: the new log is shipped from its start.
        std::fs::write(&log, "four\n").unwrap();
        assert_eq!(shipper.after_cursor().unwrap(), (0, b"four\n".to_vec()));
    }
}
