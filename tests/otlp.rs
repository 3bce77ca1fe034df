//! Decisions into the org's observability: `acp-gate run` and `audit ship` export each
//! decision as an OTLP log record and a span to the collector the OpenTelemetry variables name,
//! received by tests/otlp/receiver.py, which parses every request with the official protocol
//! definitions (opentelemetry-proto) and refuses anything they do not define.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::common::{Sandbox, pipe, repo, sdk_agent_script, stderr};

/// The receiver, listening; killed when dropped.
struct Receiver {
    child: Child,
    url: String,
}

impl Receiver {
    fn start(out: &Path) -> Receiver {
        let mut child = Command::new("python3")
            .arg(repo().join("tests/otlp/receiver.py"))
            .arg(out)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs tests/otlp/receiver.py (scripts/install-test-services.sh installs what it needs)");
        let mut port = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut port)
            .unwrap();
        assert!(!port.trim().is_empty(), "the OTLP receiver did not start");
        Receiver {
            child,
            url: format!("http://127.0.0.1:{}", port.trim()),
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the receiver took: (log records, spans), each with its attributes as a map.
fn received(out: &Path) -> (Vec<Value>, Vec<Value>, Vec<Value>) {
    let text = std::fs::read_to_string(out).unwrap_or_default();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let flat = |item: &Value| {
        let mut item = item.clone();
        let attributes: serde_json::Map<String, Value> = item["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                let v = &a["value"];
                let v = v
                    .get("stringValue")
                    .or(v.get("intValue"))
                    .or(v.get("boolValue"))
                    .cloned()
                    .unwrap_or_else(|| v.clone());
                (a["key"].as_str().unwrap().to_owned(), v)
            })
            .collect();
        item["attributes"] = Value::Object(attributes);
        item
    };
    let (mut logs, mut spans) = (Vec::new(), Vec::new());
    for line in &lines {
        for resource in line["request"]["resourceLogs"]
            .as_array()
            .into_iter()
            .flatten()
        {
            assert_eq!(
                resource["resource"]["attributes"][0]["value"]["stringValue"],
                "acp-gate"
            );
            for scope in resource["scopeLogs"].as_array().unwrap() {
                logs.extend(scope["logRecords"].as_array().unwrap().iter().map(flat));
            }
        }
        for resource in line["request"]["resourceSpans"]
            .as_array()
            .into_iter()
            .flatten()
        {
            for scope in resource["scopeSpans"].as_array().unwrap() {
                spans.extend(scope["spans"].as_array().unwrap().iter().map(flat));
            }
        }
    }
    (logs, spans, lines)
}

#[test]
fn decisions_reach_an_opentelemetry_collector_as_log_records_and_spans_redacted() {
    let sandbox = Sandbox::new();
    let out = sandbox.root.join("received.jsonl");
    let receiver = Receiver::start(&out);
    let audit = sandbox.root.join("audit.jsonl");
    let otel = |command: &mut Command| {
        command
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.url)
            .env("OTEL_EXPORTER_OTLP_HEADERS", "x-collector-token=s3cret%21");
    };

    // A run nobody can answer: rm -rf ~ denied, cargo test allowed, terraform apply asked and
    // escalated (no one to ask), ~/.bashrc denied, /etc/hosts asked.
    let mut run = sandbox.command(&[
        "run",
        "--non-interactive",
        "--format",
        "json",
        "--audit",
        audit.to_str().unwrap(),
        "-p",
        "commands",
        "--",
        "node",
        &sdk_agent_script(),
    ]);
    otel(&mut run);
    let output = pipe(&mut run, "");
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let (logs, spans, lines) = received(&out);
    assert!(!lines.is_empty(), "nothing exported: {}", stderr(&output));
    for line in &lines {
        assert_eq!(line["headers"]["x-collector-token"], "s3cret!");
        assert!(
            line["content_type"]
                .as_str()
                .unwrap()
                .starts_with("application/json")
        );
    }
    let recorded = std::fs::read_to_string(&audit).unwrap().lines().count();
    assert_eq!(
        (logs.len(), spans.len()),
        (recorded, recorded),
        "one of each per decision"
    );
    let decisions: Vec<&str> = logs
        .iter()
        .map(|l| l["attributes"]["acp_gate.decision"].as_str().unwrap())
        .collect();
    for verdict in ["allow", "deny", "ask"] {
        assert!(
            decisions.contains(&verdict),
            "no {verdict} in {decisions:?}"
        );
    }
    let escalated = logs
        .iter()
        .find(|l| l["attributes"]["acp_gate.subject"] == "terraform apply")
        .unwrap();
    assert!(
        escalated["attributes"]["acp_gate.answer"]
            .as_str()
            .unwrap()
            .contains("escalated"),
        "{escalated}"
    );
    assert_eq!(escalated["attributes"]["acp_gate.decided_by"], "escalated");
    let denied = logs
        .iter()
        .find(|l| l["attributes"]["acp_gate.decision"] == "deny")
        .unwrap();
    assert_eq!(denied["severityText"], "WARN");
    let refused = spans
        .iter()
        .find(|s| s["attributes"]["acp_gate.allowed"] == false)
        .unwrap();
    assert_eq!(refused["status"]["code"], "STATUS_CODE_ERROR");
    let allowed = spans
        .iter()
        .find(|s| s["attributes"]["acp_gate.subject"] == "cargo test")
        .unwrap();
    assert_eq!(allowed["status"]["code"], "STATUS_CODE_OK");
    assert_eq!(allowed["kind"], "SPAN_KIND_INTERNAL");

    // A request carrying the agent's trace context, with a token in its command: the span joins
    // the agent's trace, and the token never leaves the machine.
    let traced = json!({
        "sessionId": "s", "_meta": {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
        "toolCall": {"toolCallId": "t", "title": "curl", "kind": "execute",
            "rawInput": {"command": "curl -H 'Authorization: Bearer abcdefgh12345678xyz' https://api.example.com"}},
        "options": [],
    });
    let output = sandbox.run(
        &["check", "--audit", audit.to_str().unwrap(), "-"],
        &format!("{traced}\n"),
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let mut ship = sandbox.command(&["audit", "ship", audit.to_str().unwrap()]);
    otel(&mut ship);
    let output = pipe(&mut ship, "");
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("1 record(s) shipped"),
        "only what the run did not ship"
    );
    let (logs, spans, lines) = received(&out);
    let exported = lines.iter().map(|l| l.to_string()).collect::<String>();
    assert!(
        !exported.contains("abcdefgh12345678xyz"),
        "the token left the machine"
    );
    let span = spans.last().unwrap();
    assert_eq!(span["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(span["parentSpanId"], "00f067aa0ba902b7");
    assert!(
        logs.last().unwrap()["attributes"]["acp_gate.subject"]
            .as_str()
            .unwrap()
            .contains("[redacted]")
    );

    // A collector that refuses (here: a signal it does not serve) keeps the records in the log.
    let mut refused = sandbox.command(&["audit", "ship", audit.to_str().unwrap()]);
    refused
        .env(
            "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
            format!("{}/v1/nothing", receiver.url),
        )
        .env(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            format!("{}/v1/traces", receiver.url),
        );
    let output = pipe(&mut refused, "");
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("answered 404"),
        "{}",
        stderr(&output)
    );
}
