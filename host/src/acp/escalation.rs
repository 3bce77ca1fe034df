//! Escalating to the review service: the path `run` takes when the chain asks and nobody
//! here can answer (`proxy` does not escalate to it yet). The judged request becomes a redacted submission;
//! with `--wait`, the request stays pending until a reviewer decides (checked: signed by the
//! service, for this very request) or the deadline passes. It decides nothing itself: an
//! allow only lets through what the chain asked about, once.

use serde_json::json;

use super::gate::{Gate, Judged};
use crate::record::{Escalation, escalation_id, subject};
use crate::service::escalator::Escalator;
use crate::service::{Ruling, Submission};
use crate::verdict::Verdict;

/// What the review service made of an escalation.
#[derive(Debug, Clone, PartialEq)]
pub enum Reviewed {
    /// A reviewer allowed it: the note names the escalation and the reviewer.
    Allowed(String),
    /// A reviewer denied it, with their message for the agent (or the note).
    Denied(String),
    /// Sent, and nobody decided (no `--wait`, or not in time); or the service could not be
    /// reached. Either way: denied and escalated, as without a service.
    Open,
}

/// The submission for a judged request: what a reviewer needs, redacted.
pub fn submission(escalator: &Escalator, judged: &Judged) -> Submission {
    let request = &judged.request;
    let redaction = &escalator.redaction;
    let input = judged.input();
    let record = Escalation::new(request, &judged.decision, "escalated", &input);
    let fingerprint = request.fingerprint();
    let origin = &escalator.origin;
    Submission {
        id: escalation_id(&request.session_id, &fingerprint),
        session_id: request.session_id.clone(),
        fingerprint,
        kind: request.kind.as_str().to_owned(),
        tool: redaction.text(&record.tool),
        title: redaction.text(&request.title),
        subject: redaction.text(&subject(request)),
        reasons: judged
            .decision
            .reasons
            .iter()
            .map(|r| redaction.text(r))
            .collect(),
        handlers: redaction.value(&json!(judged.decision.handlers)),
        input: redaction.value(&input),
        paths: record.paths,
        developer: origin.developer.clone(),
        machine: origin.machine.clone(),
        workspace: origin.workspace.display().to_string(),
        agent: origin.agent.clone(),
    }
}

/// Sends `judged` (an ask nobody here can answer) to the review service and, with `--wait`,
/// waits for a reviewer. A chain's deny or an org handler's insistence is never sent: only
/// what a person may decide.
pub async fn review(gate: &Gate, escalator: &Escalator, judged: &Judged) -> Reviewed {
    if judged.decision.outcome != Verdict::Ask {
        return Reviewed::Open;
    }
    let submission = submission(escalator, judged);
    if escalator.wait.is_some() {
        gate.output.notice(&format!(
            "escalation {} sent to {}: waiting for a reviewer",
            submission.id,
            escalator.client.url()
        ));
    }
    match escalator.escalate(&submission).await {
        Ok(Some(statement)) => {
            let note = format!("{} by {}", submission.id, statement.reviewer);
            match statement.ruling {
                Ruling::Allow => Reviewed::Allowed(note),
                Ruling::Deny => Reviewed::Denied(match statement.message {
                    Some(message) => format!("{note}: {message}"),
                    None => note,
                }),
            }
        }
        Ok(None) => Reviewed::Open,
        Err(error) => {
            gate.output.error(&format!("{error:#}"));
            Reviewed::Open
        }
    }
}
