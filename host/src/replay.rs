//! What-if before shipping: recorded requests (audit lines) decided again under another policy,
//! and what would change, grouped by the rule that changes it. `acp-gate audit replay` runs it
//! on a log; the review service on the audit its gates shipped.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Result;
use serde::Serialize;
use serde_json::Value;

use crate::chain::{Chain, Decision};
use crate::request::ToolRequest;
use crate::verdict::Verdict;

/// How many changes of a group are shown as examples.
const EXAMPLES: usize = 5;

/// One recorded request: what the chain was given and what it decided then.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub timestamp_ms: u64,
    pub developer: Option<String>,
    pub request: ToolRequest,
    /// The chain's verdict when it was recorded.
    pub was: Verdict,
    /// Its contents reached us redacted (shipped to the review service): a decision on what a
    /// file would contain is taken on an excerpt.
    pub redacted: bool,
}

impl Recorded {
    /// An audit line read back; `None` for a line written before audit lines carried their
    /// request (or one that is not a decision).
    pub fn from_line(line: &Value) -> Option<Recorded> {
        let was = Verdict::parse(line.get("decision")?.as_str()?)?;
        let mut redacted = false;
        let mut readable = |value: &Value| unredacted(value, &mut redacted);
        let mut request: ToolRequest =
            serde_json::from_value(readable(line.get("request")?)).ok()?;
        request.raw = readable(line.get("params")?);
        Some(Recorded {
            timestamp_ms: line
                .get("timestamp_ms")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            developer: line
                .get("developer")
                .and_then(Value::as_str)
                .map(str::to_owned),
            request,
            was,
            redacted,
        })
    }
}

/// `value` with the written contents the review service keeps as a digest and an excerpt
/// (`service::redact`) put back as their excerpt; `redacted` is set when one was.
fn unredacted(value: &Value, redacted: &mut bool) -> Value {
    match value {
        Value::Object(map) if map.contains_key("sha256") && map.contains_key("excerpt") => {
            *redacted = true;
            map["excerpt"].clone()
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| (key.clone(), unredacted(value, redacted)))
                .collect(),
        ),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| unredacted(v, redacted)).collect())
        }
        other => {
            if other
                .as_str()
                .is_some_and(|s| s.contains(crate::service::redact::REDACTED))
            {
                *redacted = true;
            }
            other.clone()
        }
    }
}

/// A request whose decision would change.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub timestamp_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub developer: Option<String>,
    pub kind: &'static str,
    pub subject: String,
    pub was: Verdict,
    pub now: Verdict,
    /// Why it is decided so now.
    pub reasons: Vec<String>,
}

/// The changes one rule makes, from one verdict to another.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    /// What decides them now: the handler and its reason, or the policy's default.
    pub rule: String,
    pub was: Verdict,
    pub now: Verdict,
    pub count: usize,
    /// The first few, in the order they were recorded.
    pub examples: Vec<Change>,
}

/// What a replay found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// Requests decided again.
    pub decided: usize,
    pub changed: usize,
    /// Of those decided, how many were taken on redacted contents.
    pub redacted: usize,
    /// Lines left out: they carry no request (written before audit lines did) or are not
    /// decisions.
    pub skipped: usize,
    /// Largest first.
    pub groups: Vec<Group>,
}

/// Decides `records` again under `chain`, a worker per core, and groups what changed.
pub async fn replay(chain: Arc<Chain>, records: Vec<Recorded>, skipped: usize) -> Result<Report> {
    let records = Arc::new(records);
    let workers = std::thread::available_parallelism().map_or(2, usize::from);
    let mut tasks = Vec::with_capacity(workers);
    for worker in 0..workers {
        let (chain, records) = (chain.clone(), records.clone());
        tasks.push(tokio::spawn(async move {
            let mut changes = Vec::new();
            for at in (worker..records.len()).step_by(workers) {
                let record = &records[at];
                let decision = chain.decide(&record.request).await;
                if decision.outcome != record.was {
                    changes.push((at, decision));
                }
            }
            changes
        }));
    }
    let mut changes = Vec::new();
    for task in tasks {
        changes.extend(task.await?);
    }
    changes.sort_by_key(|(at, _)| *at);
    let mut report = Report {
        decided: records.len(),
        changed: changes.len(),
        redacted: records.iter().filter(|r| r.redacted).count(),
        skipped,
        groups: Vec::new(),
    };
    let mut groups: BTreeMap<(String, Verdict, Verdict), Group> = BTreeMap::new();
    for (at, decision) in changes {
        let change = change(&records[at], &decision);
        let rule = rule(&decision);
        let group = groups
            .entry((rule.clone(), change.was, change.now))
            .or_insert_with(|| Group {
                rule,
                was: change.was,
                now: change.now,
                count: 0,
                examples: Vec::new(),
            });
        group.count += 1;
        if group.examples.len() < EXAMPLES {
            group.examples.push(change);
        }
    }
    report.groups = groups.into_values().collect();
    report.groups.sort_by_key(|g| std::cmp::Reverse(g.count));
    Ok(report)
}

fn change(record: &Recorded, decision: &Decision) -> Change {
    Change {
        timestamp_ms: record.timestamp_ms,
        developer: record.developer.clone(),
        kind: record.request.kind.as_str(),
        subject: crate::record::subject(&record.request),
        was: record.was,
        now: decision.outcome,
        reasons: decision.reasons.clone(),
    }
}

/// What decides a request now, as a group's name: the first reason given for the outcome (a
/// handler and its reason), the policy's default, or the handlers that allowed it.
fn rule(decision: &Decision) -> String {
    if let Some(reason) = decision.reasons.first() {
        return reason.clone();
    }
    let allowing: Vec<&str> = decision
        .handlers
        .iter()
        .filter(|h| h.verdict == decision.outcome)
        .map(|h| h.name.as_str())
        .collect();
    format!("allowed by {}", allowing.join(", "))
}

/// A moment as `--since` and `--until` take it: an RFC 3339 time (`2026-11-29T10:00:00Z`), a
/// day (`2026-11-29`, from its start in UTC), or an age before now (`90m`, `24h`, `7d`), in
/// milliseconds since the Unix epoch.
pub fn moment(text: &str, now_ms: u64) -> Result<u64> {
    let text = text.trim();
    let age = |unit: u64, digits: &str| -> Option<u64> {
        digits
            .parse::<u64>()
            .ok()
            .map(|n| now_ms.saturating_sub(n.saturating_mul(unit)))
    };
    let parsed = match text.char_indices().last() {
        Some((at, 'm')) => age(60_000, &text[..at]),
        Some((at, 'h')) => age(3_600_000, &text[..at]),
        Some((at, 'd')) => age(86_400_000, &text[..at]),
        _ => None,
    };
    if let Some(ms) = parsed {
        return Ok(ms);
    }
    if let Ok(time) = chrono::DateTime::parse_from_rfc3339(text) {
        return u64::try_from(time.timestamp_millis())
            .map_err(|_| anyhow::anyhow!("`{text}` is before 1970"));
    }
    if let Ok(day) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        let start = day
            .and_hms_opt(0, 0, 0)
            .map(|t| t.and_utc().timestamp_millis());
        if let Some(ms) = start.and_then(|ms| u64::try_from(ms).ok()) {
            return Ok(ms);
        }
    }
    anyhow::bail!(
        "`{text}` is not a time: write 2026-11-29T10:00:00Z, 2026-11-29, or an age such as 90m, 24h, 7d"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moment_is_a_time_a_day_or_an_age() {
        let now = 1_800_000_000_000;
        assert_eq!(
            moment("2026-11-29T10:00:00Z", now).unwrap(),
            1_795_946_400_000
        );
        assert_eq!(
            moment("2026-11-29T11:00:00+01:00", now).unwrap(),
            1_795_946_400_000
        );
        assert_eq!(moment("2026-11-29", now).unwrap(), 1_795_910_400_000);
        assert_eq!(moment("90m", now).unwrap(), now - 90 * 60_000);
        assert_eq!(moment(" 24h ", now).unwrap(), now - 86_400_000);
        assert_eq!(moment("7d", now).unwrap(), now - 7 * 86_400_000);
        for wrong in ["yesterday", "7 days", "d", "2026-13-01", ""] {
            assert!(moment(wrong, now).is_err(), "{wrong}");
        }
    }

    #[test]
    fn a_line_shipped_redacted_is_replayed_on_its_excerpts_and_says_so() {
        let request = serde_json::json!({
            "session_id": "s", "tool_call_id": "t", "title": "Write", "kind": "edit",
            "declared_kind": null, "tool_name": "Write", "source": "permission_request",
            "command": null, "paths": [],
            "diffs": [{"path": "/w/a.rs", "old_text": null,
                       "new_text": {"sha256": "00", "bytes": 9, "truncated": false, "excerpt": "fn a() {}"}}],
            "cwd": "/w", "workspace_roots": ["/w"], "home": "/h", "options": [], "received_at_ms": 5,
        });
        let line = serde_json::json!({
            "timestamp_ms": 7, "decision": "allow", "developer": "ana",
            "request": request, "params": {"toolCall": {"rawInput": {"content": "x"}}},
        });
        let recorded = Recorded::from_line(&line).unwrap();
        assert_eq!(recorded.request.diffs[0].new_text, "fn a() {}");
        assert!(recorded.redacted);
        assert_eq!((recorded.was, recorded.timestamp_ms), (Verdict::Allow, 7));
        assert_eq!(recorded.developer.as_deref(), Some("ana"));
        // A line from before lines carried their request.
        let old = serde_json::json!({"timestamp_ms": 7, "decision": "allow", "subject": "ls"});
        assert!(Recorded::from_line(&old).is_none());
    }
}
