//! A decision as data: one serialisable record of what was asked and how it was decided, and
//! the views built on it (the audit line, the `decision` and `escalation` lines of `run` and
//! `proxy`, `check --format json`). Every JSON a decision becomes is made here.

use serde::Serialize;
use serde_json::Value;

use crate::chain::{Decision, HandlerTrace};
use crate::request::{RequestSource, ToolKind, ToolRequest};
use crate::verdict::Verdict;

/// Who settled a request, after the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResolvedBy {
    /// The chain's allow or deny.
    Chain,
    /// An "always" answered earlier in this session.
    SessionRule,
    /// The person at the terminal.
    User,
    /// Nobody could be asked: rejected and escalated.
    Escalated,
    /// `session/cancel` arrived first.
    Cancelled,
    /// A grant of the orchestrator's (`run --grant`) of this request, escalated earlier.
    Granted,
    /// The editor, for `proxy`: its user answered in its own approval UI.
    Editor,
    /// The agent, for `hook`: an ask passed on to its own prompt, answered by its user there.
    Agent,
    /// A reviewer on the review service (`acp-gate serve`), while the request waited.
    Reviewer,
}

impl ResolvedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            ResolvedBy::Chain => "chain",
            ResolvedBy::SessionRule => "session-rule",
            ResolvedBy::User => "user",
            ResolvedBy::Escalated => "escalated",
            ResolvedBy::Cancelled => "cancelled",
            ResolvedBy::Granted => "granted",
            ResolvedBy::Editor => "editor",
            ResolvedBy::Agent => "agent",
            ResolvedBy::Reviewer => "reviewer",
        }
    }

    /// The answer as the audit log records it: who gave it, unless the chain did, and the
    /// person's message.
    pub fn annotate(self, answer: &str, message: Option<&str>) -> String {
        match (self, message) {
            (ResolvedBy::Chain | ResolvedBy::Cancelled, _) => answer.to_owned(),
            (by, Some(message)) => format!("{answer} ({}: {message})", by.as_str()),
            (by, None) => format!("{answer} ({})", by.as_str()),
        }
    }

    /// Who gave an audit line's `answer`, read back from what [`annotate`](Self::annotate)
    /// wrote: the name in the parentheses after the answer's word (a message after it may say
    /// anything). `None`: nobody is named (the chain, or a cancel).
    pub fn of_answer(answer: &str) -> Option<ResolvedBy> {
        let (_, note) = answer.split_once(" (")?;
        let name = note.split([':', ')']).next()?;
        Self::NAMED.into_iter().find(|by| by.as_str() == name)
    }

    /// Those [`annotate`](Self::annotate) names in an answer.
    const NAMED: [ResolvedBy; 7] = [
        ResolvedBy::SessionRule,
        ResolvedBy::User,
        ResolvedBy::Escalated,
        ResolvedBy::Granted,
        ResolvedBy::Editor,
        ResolvedBy::Agent,
        ResolvedBy::Reviewer,
    ];
}

/// What was asked and how the chain decided: the part every view shows.
#[derive(Debug, Serialize)]
pub struct Judged<'a> {
    pub kind: ToolKind,
    pub title: &'a str,
    /// The command, the first path or the title: [`subject`].
    pub subject: String,
    pub decision: Verdict,
    pub by_default: bool,
    pub reasons: &'a [String],
    pub handlers: &'a [HandlerTrace],
}

impl<'a> Judged<'a> {
    pub fn new(request: &'a ToolRequest, decision: &'a Decision) -> Judged<'a> {
        Judged {
            kind: request.kind,
            title: &request.title,
            subject: subject(request),
            decision: decision.outcome,
            by_default: decision.by_default,
            reasons: &decision.reasons,
            handlers: &decision.handlers,
        }
    }
}

/// A decision in its session: the record the audit log and the output are made of.
#[derive(Debug, Serialize)]
pub struct DecisionRecord<'a> {
    pub session_id: &'a str,
    pub tool_call_id: &'a str,
    pub source: RequestSource,
    /// The agent's own tool name (Claude Code's `Bash`, the tool call's `name`), if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<&'a str>,
    #[serde(flatten)]
    pub judged: Judged<'a>,
}

impl<'a> DecisionRecord<'a> {
    pub fn new(request: &'a ToolRequest, decision: &'a Decision) -> DecisionRecord<'a> {
        DecisionRecord {
            session_id: &request.session_id,
            tool_call_id: &request.tool_call_id,
            source: request.source,
            tool_name: request.tool_name.as_deref(),
            judged: Judged::new(request, decision),
        }
    }
}

/// One line of the audit log.
#[derive(Debug, Serialize)]
pub struct AuditLine<'a> {
    /// The log's id, the line's place in it (from 1) and the hash of the line before it
    /// (absent for the first): deleting, reordering or editing a line breaks the chain
    /// (`acp-gate audit verify`).
    #[serde(flatten)]
    pub link: Link,
    pub timestamp_ms: u64,
    /// The sha256 of the params the agent sent.
    pub request_digest: String,
    #[serde(flatten)]
    pub record: DecisionRecord<'a>,
    /// The option id sent, `cancelled`, or what else was done, with who answered.
    pub answer: &'a str,
    /// Whether the answer let the request go ahead (absent: neither, e.g. cancelled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed: Option<bool>,
    /// The W3C trace context the agent sent with the request (`traceparent`, `tracestate`),
    /// to join the decision with the agent's traces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Value>,
    /// The agent's program, when the gate knows it (for the review service's audit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<&'a str>,
    /// The request whole, as the chain saw it, and the params the agent sent: what `acp-gate
    /// audit replay` decides again under another policy (`replay.rs`).
    pub request: &'a ToolRequest,
    pub params: &'a Value,
}

/// A line's place in its log's hash chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Link {
    pub log: String,
    pub seq: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prev: Option<String>,
}

/// A `decision` line of `run` and `proxy` with `--format json`.
#[derive(Debug, Serialize)]
pub struct DecisionLine<'a> {
    #[serde(rename = "type")]
    pub line_type: &'static str,
    #[serde(flatten)]
    pub record: DecisionRecord<'a>,
    pub resolved_by: &'a str,
    pub answer: &'a str,
}

/// What an orchestrator needs to act on an ask nobody could answer.
#[derive(Debug, Serialize)]
pub struct Escalation<'a> {
    #[serde(rename = "type")]
    pub line_type: &'static str,
    #[serde(flatten)]
    pub record: DecisionRecord<'a>,
    /// The agent's tool name, else what the request came through.
    pub tool: String,
    /// What the tool would be run with.
    pub input: &'a Value,
    pub paths: Vec<String>,
    pub answer: &'a str,
    /// Its id, to grant it on a resume: the stable one, or the one it was sent to the review
    /// service with (see [`ask_id`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The `--session` name of the session, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_name: Option<String>,
    /// The command line that resumes the session with this request granted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
}

impl<'a> Escalation<'a> {
    pub fn new(
        request: &'a ToolRequest,
        decision: &'a Decision,
        answer: &'a str,
        input: &'a Value,
    ) -> Escalation<'a> {
        let tool = request
            .tool_name
            .clone()
            .unwrap_or_else(|| match request.source {
                RequestSource::PermissionRequest => request.title.clone(),
                other => other.method().to_owned(),
            });
        Escalation {
            line_type: "escalation",
            record: DecisionRecord::new(request, decision),
            tool,
            input,
            paths: request
                .paths
                .iter()
                .map(|p| p.absolute.display().to_string())
                .collect(),
            answer,
            id: None,
            session_name: None,
            resume: None,
        }
    }
}

/// An escalation's stable id: the same request (its fingerprint) in the same session is the
/// same escalation, locally and on the review service (where a resumed session claims its
/// grant by it).
pub fn escalation_id(session_id: &str, fingerprint: &str) -> String {
    let digest = crate::digest::sha256_hex(format!("{session_id}\n{fingerprint}").as_bytes());
    format!("esc-{}", &digest[..12])
}

/// The id of one ask a gate waits on at the review service: the stable id and a random part
/// of its own, so that a reviewer's "allow once" answers this ask and never the same request
/// asked again (in the same session, or by another hook process).
pub fn ask_id(session_id: &str, fingerprint: &str) -> String {
    let stable = escalation_id(session_id, fingerprint);
    format!("{stable}-{}", crate::digest::random_hex(8))
}

/// A line of `check --format json`: which document, what it asked, how it was decided.
#[derive(Debug, Serialize)]
pub struct CheckLine<'a> {
    /// The file (or `stdin:N`) the request came from.
    pub source: &'a str,
    pub option_id: Option<&'a str>,
    #[serde(flatten)]
    pub judged: Judged<'a>,
    /// What the request does, as read.
    pub effects: &'a crate::effects::Effects,
}

/// What a request is about, in one line: the command, else the first path (relative inside
/// the workspace), else the title.
pub fn subject(request: &ToolRequest) -> String {
    if let Some(command) = &request.command {
        return command.text();
    }
    match request.paths.first() {
        Some(path) => request.shown(&path.absolute),
        None => request.title.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn who_gave_an_answer_is_read_back_from_what_annotate_wrote() {
        use ResolvedBy::*;
        for by in ResolvedBy::NAMED {
            for message in [None, Some("esc-1 by bob: ask (user) first: (editor)")] {
                let answer = by.annotate("allow-once", message);
                assert_eq!(ResolvedBy::of_answer(&answer), Some(by), "{answer}");
            }
        }
        for by in [Chain, Cancelled] {
            assert_eq!(
                ResolvedBy::of_answer(&by.annotate("reject", Some("x"))),
                None
            );
        }
    }
}
