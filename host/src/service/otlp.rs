//! Decisions into the org's observability: audit records, redacted as for the review service,
//! sent to an OpenTelemetry collector over OTLP/HTTP (JSON) as a log record and a span each;
//! the span joins the agent's trace when the request carried a W3C `traceparent`. Configured
//! with OpenTelemetry's own variables (`OTEL_EXPORTER_OTLP_ENDPOINT`, `_LOGS_ENDPOINT`,
//! `_TRACES_ENDPOINT`, `_HEADERS`, `OTEL_SERVICE_NAME`, `OTEL_SDK_DISABLED`).

use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::{Ingested, ShippedRecord};

/// An OTLP/HTTP collector: where logs and spans go, and the headers it wants.
#[derive(Debug, Clone)]
pub struct Collector {
    logs: String,
    traces: String,
    headers: Vec<(String, String)>,
    service: String,
    http: reqwest::Client,
}

/// OpenTelemetry's severity numbers (`SeverityNumber`).
const INFO: u8 = 9;
const WARN: u8 = 13;

impl Collector {
    /// The collector the environment names, if any.
    pub fn from_env() -> Result<Option<Collector>> {
        Collector::from_vars(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
    }

    /// [`Collector::from_env`] over `var` (the tests give their own variables).
    fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Option<Collector>> {
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let base = var("OTEL_EXPORTER_OTLP_ENDPOINT");
        let signal = |own: &str, path: &str| {
            var(own).or_else(|| {
                base.as_ref()
                    .map(|b| format!("{}/{path}", b.trim().trim_end_matches('/')))
            })
        };
        let (logs, traces) = match (
            signal("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "v1/logs"),
            signal("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "v1/traces"),
        ) {
            (Some(logs), Some(traces)) => (logs, traces),
            (None, None) => return Ok(None),
            _ => bail!(
                "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT and _TRACES_ENDPOINT: acp-gate sends both, set both (or OTEL_EXPORTER_OTLP_ENDPOINT)"
            ),
        };
        for (name, url) in [("logs", &logs), ("traces", &traces)] {
            let parsed = reqwest::Url::parse(url.trim())
                .with_context(|| format!("the OTLP {name} endpoint `{url}` is not a URL"))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                bail!("the OTLP {name} endpoint `{url}`: acp-gate speaks OTLP over HTTP");
            }
        }
        if let Some(protocol) = var("OTEL_EXPORTER_OTLP_PROTOCOL")
            && !matches!(protocol.trim(), "http/json" | "http/protobuf")
        {
            bail!(
                "OTEL_EXPORTER_OTLP_PROTOCOL={protocol}: acp-gate sends OTLP/HTTP with JSON bodies (`http/json`), which the collector's HTTP receiver takes"
            );
        }
        let headers = var("OTEL_EXPORTER_OTLP_HEADERS")
            .map(|text| headers(&text))
            .transpose()?
            .unwrap_or_default();
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .context("cannot set up the HTTP client of the OTLP exporter")?;
        Ok(Some(Collector {
            logs: logs.trim().to_owned(),
            traces: traces.trim().to_owned(),
            headers,
            service: var("OTEL_SERVICE_NAME").unwrap_or_else(|| "acp-gate".to_owned()),
            http,
        }))
    }

    /// Where its logs go: what a shipper's cursor is named after.
    pub fn url(&self) -> &str {
        &self.logs
    }

    /// Sends `records` as log records, then as spans; both must be taken.
    pub async fn export(&self, records: &[ShippedRecord]) -> Result<Ingested> {
        let resource = json!({ "attributes": [attribute("service.name", json!(self.service))] });
        let scope = json!({ "name": "acp-gate", "version": env!("CARGO_PKG_VERSION") });
        let logs = json!({ "resourceLogs": [{
            "resource": resource,
            "scopeLogs": [{ "scope": scope, "logRecords": records.iter().map(log_record).collect::<Vec<_>>() }],
        }]});
        let spans = json!({ "resourceSpans": [{
            "resource": resource,
            "scopeSpans": [{ "scope": scope, "spans": records.iter().map(span).collect::<Vec<_>>() }],
        }]});
        self.post(&self.logs, &logs).await?;
        self.post(&self.traces, &spans).await?;
        Ok(Ingested {
            accepted: records.len(),
            ..Ingested::default()
        })
    }

    async fn post(&self, url: &str, body: &Value) -> Result<()> {
        let mut request = self
            .http
            .post(url)
            .timeout(Duration::from_secs(30))
            .json(body);
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        let response = (request.send().await)
            .with_context(|| format!("the OTLP collector at {url} cannot be reached"))?;
        let status = response.status();
        if !status.is_success() {
            let said = response.text().await.unwrap_or_default();
            bail!(
                "the OTLP collector at {url} answered {status}: {}",
                said.chars().take(300).collect::<String>()
            );
        }
        Ok(())
    }
}

/// `OTEL_EXPORTER_OTLP_HEADERS`: `name=value` pairs separated by commas, values percent-encoded.
fn headers(text: &str) -> Result<Vec<(String, String)>> {
    text.split(',')
        .filter(|pair| !pair.trim().is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').with_context(|| {
                format!("OTEL_EXPORTER_OTLP_HEADERS: `{pair}` is not name=value")
            })?;
            let value = percent_decoded(value.trim());
            Ok((name.trim().to_owned(), value))
        })
        .collect()
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes
            .get(at + 1..at + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[at], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn attribute(key: &str, value: Value) -> Value {
    let value = match value {
        Value::Bool(b) => json!({ "boolValue": b }),
        Value::Number(n) if n.is_u64() || n.is_i64() => json!({ "intValue": n.to_string() }),
        Value::Array(items) => {
            let values: Vec<Value> = items
                .into_iter()
                .map(|v| json!({ "stringValue": text(&v) }))
                .collect();
            json!({ "arrayValue": { "values": values } })
        }
        other => json!({ "stringValue": text(&other) }),
    };
    json!({ "key": key, "value": value })
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What a record says, as attributes (`acp_gate.*`), the redacted record's fields.
fn attributes(shipped: &ShippedRecord) -> Vec<Value> {
    let record = &shipped.record;
    let field = |key: &str| record.get(key).cloned().filter(|v| !v.is_null());
    let mut out = vec![
        attribute("acp_gate.log", json!(shipped.log)),
        attribute("acp_gate.seq", json!(shipped.seq)),
    ];
    for key in [
        "decision",
        "allowed",
        "answer",
        "kind",
        "subject",
        "tool_name",
        "session_id",
        "tool_call_id",
        "agent",
        "reasons",
    ] {
        if let Some(value) = field(key) {
            out.push(attribute(&format!("acp_gate.{key}"), value));
        }
    }
    let answer = record.get("answer").and_then(Value::as_str).unwrap_or("");
    let by = crate::record::ResolvedBy::of_answer(answer).map_or("chain", |by| by.as_str());
    out.push(attribute("acp_gate.decided_by", json!(by)));
    out
}

/// The record's time in nanoseconds since the epoch, as OTLP writes 64-bit integers.
fn nanos(ms: u64) -> String {
    (u128::from(ms) * 1_000_000).to_string()
}

/// The trace a record's span belongs to: the agent's (`traceparent`), else one of its own
/// (from the record's hash); and the span's parent in the agent's trace.
fn trace_of(shipped: &ShippedRecord) -> (String, Option<String>) {
    let parent = shipped
        .record
        .pointer("/trace/traceparent")
        .and_then(Value::as_str)
        .and_then(|tp| {
            let parts: Vec<&str> = tp.trim().split('-').collect();
            let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
            match parts.as_slice() {
                [_, trace, span, _] if hex(trace, 32) && hex(span, 16) => {
                    Some((trace.to_ascii_lowercase(), span.to_ascii_lowercase()))
                }
                _ => None,
            }
        });
    match parent {
        Some((trace, span)) => (trace, Some(span)),
        None => (shipped.hash[..32].to_owned(), None),
    }
}

fn log_record(shipped: &ShippedRecord) -> Value {
    let record = &shipped.record;
    let time = record
        .get("timestamp_ms")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let decision = record.get("decision").and_then(Value::as_str).unwrap_or("");
    let severity = if decision == "deny" || record.get("allowed") == Some(&json!(false)) {
        (WARN, "WARN")
    } else {
        (INFO, "INFO")
    };
    let (trace, _) = trace_of(shipped);
    json!({
        "timeUnixNano": nanos(time),
        "observedTimeUnixNano": nanos(time),
        "severityNumber": severity.0,
        "severityText": severity.1,
        "body": { "stringValue": format!(
            "{decision} {} {}",
            record.get("kind").and_then(Value::as_str).unwrap_or(""),
            record.get("subject").and_then(Value::as_str).unwrap_or(""),
        ) },
        "attributes": attributes(shipped),
        "traceId": trace,
        "spanId": &shipped.hash[32..48],
    })
}

fn span(shipped: &ShippedRecord) -> Value {
    let record = &shipped.record;
    let end = record
        .get("timestamp_ms")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let start = record
        .pointer("/request/received_at_ms")
        .and_then(Value::as_u64)
        .filter(|s| *s <= end)
        .unwrap_or(end);
    let (trace, parent) = trace_of(shipped);
    // STATUS_CODE_OK when the call went ahead, ERROR when it was refused, UNSET otherwise.
    let status = match record.get("allowed").and_then(Value::as_bool) {
        Some(true) => 1,
        Some(false) => 2,
        None => 0,
    };
    let mut span = json!({
        "traceId": trace,
        "spanId": &shipped.hash[32..48],
        "name": "acp-gate decision",
        // SPAN_KIND_INTERNAL
        "kind": 1,
        "startTimeUnixNano": nanos(start),
        "endTimeUnixNano": nanos(end),
        "attributes": attributes(shipped),
        "status": { "code": status },
    });
    if let Some(parent) = parent {
        span["parentSpanId"] = json!(parent);
    }
    span
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn the_collector_is_found_as_opentelemetry_documents_its_variables() {
        assert!(Collector::from_vars(vars(&[])).unwrap().is_none());
        let base = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")];
        let c = Collector::from_vars(vars(&base)).unwrap().unwrap();
        assert_eq!(
            (c.logs.as_str(), c.traces.as_str()),
            (
                "http://collector:4318/v1/logs",
                "http://collector:4318/v1/traces"
            )
        );
        assert_eq!(c.service, "acp-gate");
        let own = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
            (
                "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
                "https://logs.example/ingest",
            ),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "api-key=s%3Dcret, x-team = payments",
            ),
            ("OTEL_SERVICE_NAME", "gate"),
        ];
        let c = Collector::from_vars(vars(&own)).unwrap().unwrap();
        assert_eq!(c.logs, "https://logs.example/ingest");
        assert_eq!(c.traces, "http://collector:4318/v1/traces");
        assert_eq!(
            c.headers,
            [
                ("api-key".into(), "s=cret".into()),
                ("x-team".into(), "payments".into())
            ]
        );
        assert_eq!(c.service, "gate");
        let off = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            ("OTEL_SDK_DISABLED", "true"),
        ];
        assert!(Collector::from_vars(vars(&off)).unwrap().is_none());
        for wrong in [
            vec![("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")],
            vec![
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ],
            vec![("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "http://c:4318/v1/logs")],
            vec![
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_EXPORTER_OTLP_HEADERS", "novalue"),
            ],
        ] {
            assert!(Collector::from_vars(vars(&wrong)).is_err(), "{wrong:?}");
        }
    }

    #[test]
    fn a_span_joins_the_agents_trace_and_a_refusal_is_an_error() {
        let shipped = |record: Value| ShippedRecord {
            log: "l".into(),
            seq: 3,
            prev: None,
            hash: format!("{:064x}", 0xabcdef_u64),
            record,
        };
        let joined = span(&shipped(json!({
            "timestamp_ms": 2000, "decision": "deny", "allowed": false, "request": {"received_at_ms": 1500},
            "trace": {"traceparent": "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01"},
        })));
        assert_eq!(joined["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(joined["parentSpanId"], "00f067aa0ba902b7");
        assert_eq!(joined["status"]["code"], 2);
        assert_eq!(
            (
                joined["startTimeUnixNano"].as_str(),
                joined["endTimeUnixNano"].as_str()
            ),
            (Some("1500000000"), Some("2000000000"))
        );
        let alone = span(&shipped(
            json!({"timestamp_ms": 2000, "decision": "allow", "allowed": true}),
        ));
        assert_eq!(alone["traceId"].as_str().unwrap().len(), 32);
        assert!(alone.get("parentSpanId").is_none());
        assert_eq!(alone["status"]["code"], 1);
        let log = log_record(&shipped(
            json!({"timestamp_ms": 2000, "decision": "deny", "kind": "execute", "subject": "rm -rf /"}),
        ));
        assert_eq!(
            (
                log["severityNumber"].as_u64(),
                log["body"]["stringValue"].as_str()
            ),
            (Some(13), Some("deny execute rm -rf /"))
        );
    }
}
