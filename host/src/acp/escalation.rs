//! Escalating to the review service: the one path `run`, `proxy` and `hook` take when the
//! chain asks and nobody here can answer. The judged request becomes a redacted submission;
//! with `--wait`, the request stays pending until a reviewer decides (checked: signed by the
//! service, for this very request) or the deadline passes. It decides nothing itself: an
//! allow only lets through what the chain asked about, once: each ask a gate waits on is sent
//! with an id of its own, so a decision answers that ask and never the same request again.

use serde_json::json;

use super::gate::{Answer, Gate, Judged};
use crate::record::{Escalation, ResolvedBy, ask_id, escalation_id, subject};
use crate::request::{OptionKind, ToolRequest};
use crate::service::client::unreachable;
use crate::service::escalator::Escalator;
use crate::service::{Circumstances, Ruling, Submission};
use crate::verdict::Verdict;

/// What the review service made of an escalation.
#[derive(Debug, Clone, PartialEq)]
pub enum Reviewed {
    /// A reviewer allowed it: the note names the escalation and the reviewer.
    Allowed(String),
    /// A reviewer denied it, with their message for the agent (or the note).
    Denied(String),
    /// Sent, and nobody decided (no `--wait`, or not in time); or the service could not be
    /// reached. Either way: denied and escalated, as without a service. Why, naming the
    /// service.
    Open(String),
}

impl Reviewed {
    /// The answer it makes, and who gave it: with the agent's options of `permission` for a
    /// permission request, else a call's go-ahead or refusal (a gated call, a hook call).
    pub fn answer(self, permission: Option<&ToolRequest>) -> (Answer, ResolvedBy) {
        let (kind, message, by) = match self {
            Reviewed::Allowed(note) => (OptionKind::AllowOnce, Some(note), ResolvedBy::Reviewer),
            Reviewed::Denied(note) => (OptionKind::RejectOnce, Some(note), ResolvedBy::Reviewer),
            Reviewed::Open(_) => (OptionKind::RejectOnce, None, ResolvedBy::Escalated),
        };
        let answer = match (permission, kind, message) {
            (Some(request), kind, message) => Answer::by_kind(request, kind, message),
            (None, OptionKind::AllowOnce, Some(note)) => Answer::Approved(note),
            (None, _, message) => Answer::Denied { message },
        };
        (answer, by)
    }
}

/// The submission for a judged request: what a reviewer needs, redacted, with `context`. Its
/// id is the request's stable one when nothing waits (a resumed session claims its grant by
/// it), else this ask's own ([`ask_id`]: retries of the submission keep it).
pub fn submission(escalator: &Escalator, judged: &Judged, context: Circumstances) -> Submission {
    let request = &judged.request;
    let redaction = &escalator.redaction;
    let input = judged.input();
    let record = Escalation::new(request, &judged.decision, "escalated", &input);
    let fingerprint = request.fingerprint();
    let origin = &escalator.origin;
    Submission {
        id: match escalator.wait {
            Some(_) => ask_id(&request.session_id, &fingerprint),
            None => escalation_id(&request.session_id, &fingerprint),
        },
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
        context,
    }
}

/// Why `judged` comes to a person (`nobody`: why nobody where the agent runs could answer it),
/// in the agent's words, and the workspace's git state now; redacted.
async fn context(escalator: &Escalator, judged: &Judged, nobody: &str) -> Circumstances {
    let (request, redaction) = (&judged.request, &escalator.redaction);
    let input = judged.input();
    let described = ["description", "justification", "explanation"]
        .iter()
        .find_map(|key| input.get(key).and_then(|v| v.as_str()))
        .or(Some(request.title.as_str()))
        .map(str::trim)
        .filter(|said| !said.is_empty() && *said != subject(request));
    let edits = request
        .diffs
        .iter()
        .map(|diff| {
            let old = diff.old_text.as_deref().unwrap_or("");
            let lines = similar::TextDiff::from_lines(old, &diff.new_text);
            let (mut added, mut removed) = (0, 0);
            for change in lines.iter_all_changes() {
                match change.tag() {
                    similar::ChangeTag::Insert => added += 1,
                    similar::ChangeTag::Delete => removed += 1,
                    similar::ChangeTag::Equal => {}
                }
            }
            redaction.text(&format!(
                "{}: +{added} -{removed}",
                request.shown(&diff.path)
            ))
        })
        .collect();
    let dir = match request.cwd.is_dir() {
        true => request.cwd.as_path(),
        false => escalator.origin.workspace.as_path(),
    };
    let git = crate::service::git::state(dir).await.map(|mut git| {
        for line in &mut git.outgoing {
            *line = redaction.text(line);
        }
        git
    });
    Circumstances {
        nobody: Some(nobody.to_owned()),
        by_default: judged.decision.by_default,
        description: described.map(|said| redaction.text(said)),
        git,
        edits,
    }
}

/// Sends `judged` (an ask nobody here can answer, for the reason `nobody`) to the review
/// service and, with `--wait`, waits for a reviewer. A chain's deny or an org handler's
/// insistence is never sent: only what a person may decide.
pub async fn review(gate: &Gate, escalator: &Escalator, judged: &Judged, nobody: &str) -> Reviewed {
    let url = escalator.client.url();
    if judged.decision.outcome != Verdict::Ask {
        return Reviewed::Open(format!("only an ask goes to the review service at {url}"));
    }
    let context = context(escalator, judged, nobody).await;
    let submission = submission(escalator, judged, context);
    let _ = judged.escalated_as.set(submission.id.clone());
    if escalator.wait.is_some() {
        gate.output.notice(&format!(
            "escalation {} sent to {url}: waiting for a reviewer",
            submission.id,
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
        Ok(None) => Reviewed::Open(match escalator.wait {
            Some(wait) => {
                format!("no reviewer at the review service {url} decided within {wait:?}")
            }
            None => {
                format!("it is open at the review service {url} (nothing here waits: no --wait)")
            }
        }),
        Err(error) => {
            gate.output.error(&format!("{error:#}"));
            let what = match unreachable(&error) {
                true => "could not be reached",
                false => "gave no decision acp-gate takes",
            };
            Reviewed::Open(format!("the review service at {url} {what}: {error:#}"))
        }
    }
}
