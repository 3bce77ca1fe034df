//! The gates' side of the organisation's review service (`acp-gate serve`): what an escalation
//! sends, the decision it gets back (a statement signed by the service's key, checked against
//! the escalation it answers), and the audit records shipped in batches. The service
//! (`crate::serve`) reads and writes these same types: the wire format lives here, once.
//!
//! - [`escalator`]: a gate's settings for the service (from flags and the org file);
//! - [`origin`]: who and where a gate runs;
//! - [`git`]: the workspace's git state an escalation carries, read in bounded time;
//! - [`client`]: the HTTP client a gate uses (submit, wait, fetch a grant, ship audit);
//! - [`redact`]: what leaves the machine: file contents as a digest and an excerpt, secrets
//!   replaced;
//! - [`ship`]: the local audit log as a spool, shipped in order, once;
//! - [`fleet`]: a gate's report of itself (version, policy, agents gated) for the fleet view;
//! - [`otlp`]: decisions as OpenTelemetry log records and spans, for the org's collector.

pub mod client;
pub mod escalator;
pub mod fleet;
pub mod git;
pub mod origin;
pub mod otlp;
pub mod redact;
pub mod ship;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::distribution::signature::PublicKey;

/// The API's version prefix.
pub const API: &str = "/v1";

/// An escalation as the gate sends it: the request (redacted), the chain's trace and reasons,
/// and who and where. Its `id` makes a retry the same escalation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Submission {
    /// The escalation's stable id (`esc-…`): the same request in the same session.
    pub id: String,
    pub session_id: String,
    /// [`crate::request::ToolRequest::fingerprint`]: what a decision lets through.
    pub fingerprint: String,
    pub kind: String,
    pub tool: String,
    pub title: String,
    /// The command, the first path or the title.
    pub subject: String,
    /// Why the chain asked.
    pub reasons: Vec<String>,
    /// Each handler's verdict, reason and time, as the chain recorded them.
    pub handlers: Value,
    /// What the tool would be run with, redacted.
    pub input: Value,
    pub paths: Vec<String>,
    /// The developer's login and machine, the workspace and the agent, as the gate sees them
    /// (the service names the requester by the gate's token, not by these).
    pub developer: String,
    pub machine: String,
    pub workspace: String,
    pub agent: String,
    /// Why it came to a person, and what the gate saw around it (absent from older gates).
    #[serde(default)]
    pub context: Circumstances,
}

/// What a reviewer needs besides the request: why nobody at the gate answered it, the agent's
/// own words for the call, and the workspace's git state when it was escalated.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Circumstances {
    /// Why nobody where the agent runs could answer (`Codex cannot ask anyone here`, the mode
    /// the agent is in, no one at the terminal, the editor did not answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nobody: Option<String>,
    /// Whether no handler had an opinion and the policy's default asked.
    #[serde(default)]
    pub by_default: bool,
    /// The agent's description of the call (a tool's `description` or `justification`, or its
    /// title), redacted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The workspace's git state, when it is a repository git could read in time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<Git>,
    /// What an edit changes, per file: `path: +added -removed lines`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edits: Vec<String>,
}

/// A workspace's git state at escalation time.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Git {
    /// The branch checked out, or the commit when none is.
    pub branch: String,
    /// The branch it tracks, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    /// The commits a push would send (on no remote branch, or ahead of the upstream), newest
    /// first, one line each: at most [`Git::MAX_COMMITS`].
    #[serde(default)]
    pub outgoing: Vec<String>,
    /// Whether there were more than those.
    #[serde(default)]
    pub more: bool,
    /// The uncommitted changes, as `git diff --shortstat HEAD` says them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncommitted: Option<String>,
}

impl Git {
    pub const MAX_COMMITS: usize = 20;
}

/// A reviewer's answer.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Ruling {
    /// Allow this one request, once.
    Allow,
    /// Refuse it, with a message for the agent.
    Deny,
}

/// What the service states about an escalation: the text it signs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Statement {
    pub escalation: String,
    pub session_id: String,
    pub fingerprint: String,
    pub ruling: Ruling,
    /// Who decided (a reviewer token's name).
    pub reviewer: String,
    /// For the agent (a deny's reason), if the reviewer gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub decided_ms: u64,
}

/// A [`Statement`] as the service sent it, with its ECDSA P-256 signature.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SignedDecision {
    /// The statement's JSON text, exactly as signed.
    pub statement: String,
    /// base64 DER ECDSA-P256-SHA256 of `statement`.
    pub signature: String,
}

/// The escalation a decision must answer: what the gate sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected<'a> {
    pub escalation: &'a str,
    pub session_id: &'a str,
    pub fingerprint: &'a str,
}

impl SignedDecision {
    /// The statement, when it is signed by `key` and answers exactly `expected` (its id, its
    /// session and its request's fingerprint): a reply for another request is refused.
    pub fn verify(&self, key: &PublicKey, expected: &Expected) -> Result<Statement> {
        key.verify(self.statement.as_bytes(), &self.signature)
            .context("the review service's decision is not signed by its key")?;
        let statement: Statement = serde_json::from_str(&self.statement)
            .context("the review service's decision is not a statement acp-gate reads")?;
        let answers = [
            ("escalation", &statement.escalation, expected.escalation),
            ("session", &statement.session_id, expected.session_id),
            ("request", &statement.fingerprint, expected.fingerprint),
        ];
        for (what, got, wanted) in answers {
            if got != wanted {
                bail!(
                    "the review service's decision answers another {what} ({got}, not {wanted}): refused"
                );
            }
        }
        Ok(statement)
    }
}

/// The answer to a wait: decided, or still open when the wait ended.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Waited {
    Open,
    Decided { decision: SignedDecision },
}

/// One audit line as shipped: where it sits in its log's chain, and the line (redacted).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ShippedRecord {
    /// The log's id (every line of a log carries it).
    pub log: String,
    pub seq: u64,
    /// The hash of the line before it in its log (absent for the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prev: Option<String>,
    /// The hash of the line itself, as written locally (before redaction).
    pub hash: String,
    pub record: Value,
}

/// A batch of audit records, in their logs' order.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AuditBatch {
    pub records: Vec<ShippedRecord>,
}

/// What the service did with a batch.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Ingested {
    pub accepted: usize,
    /// Records it had already (a batch sent again).
    pub duplicates: usize,
    /// Breaks of a log's chain it found (also flagged on its page).
    pub breaks: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distribution::signature::PrivateKey;

    fn signed(key: &PrivateKey, statement: &Statement) -> SignedDecision {
        let text = serde_json::to_string(statement).unwrap();
        SignedDecision {
            signature: key.sign(text.as_bytes()),
            statement: text,
        }
    }

    #[test]
    fn a_decision_is_taken_only_signed_by_the_service_and_for_the_escalation_sent() {
        let key = PrivateKey::generate();
        let statement = Statement {
            escalation: "esc-1".into(),
            session_id: "s".into(),
            fingerprint: "f".into(),
            ruling: Ruling::Allow,
            reviewer: "bob".into(),
            message: None,
            decided_ms: 1,
        };
        let expected = Expected {
            escalation: "esc-1",
            session_id: "s",
            fingerprint: "f",
        };
        let decision = signed(&key, &statement);
        assert_eq!(
            decision.verify(&key.public_key(), &expected).unwrap(),
            statement
        );
        // Signed by another key.
        let other = PrivateKey::generate();
        assert!(decision.verify(&other.public_key(), &expected).is_err());
        // Edited after signing.
        let mut edited = decision.clone();
        edited.statement = edited.statement.replace("bob", "eve");
        assert!(edited.verify(&key.public_key(), &expected).is_err());
        // A genuine decision for another request, session or escalation.
        for (field, value) in [
            ("fingerprint", "g"),
            ("session_id", "t"),
            ("escalation", "esc-2"),
        ] {
            let mut json = serde_json::to_value(&statement).unwrap();
            json[field] = value.into();
            let other: Statement = serde_json::from_value(json).unwrap();
            let error = signed(&key, &other)
                .verify(&key.public_key(), &expected)
                .unwrap_err();
            assert!(
                format!("{error:#}").contains("answers another"),
                "{error:#}"
            );
        }
    }
}
