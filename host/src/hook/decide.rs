//! A hook call judged by the chain and recorded through the [`Gate`], like any request of
//! `run`'s, and what the agent is told.
//!
//! What an `ask` becomes depends on whether the agent's answer reaches a person:
//! - where the agent has an ask of its own (Claude Code's and Copilot's `ask`; the
//!   `PermissionRequest` events, where no decision lets the agent ask its user), it is passed
//!   on, with the chain's reasons;
//! - where it has none (Codex's and Gemini CLI's hooks before a tool), it is refused and
//!   escalated, as `run --non-interactive` does: with a review service (`--escalate-to`, the
//!   org file's `[escalation]`) it goes there, through `run`'s own path, and a reviewer's
//!   allow within `--wait` lets it through; else (a deny, no decision in time, a service out
//!   of reach) an escalation record goes to the state directory's `escalations.jsonl`
//!   (`acp-gate escalations`);
//! - in a permission mode in which the agent stops asking (Claude Code's `bypassPermissions`,
//!   ...; judged by the chain as a switch into that mode, as `run` judges one), the mode's
//!   verdict counts: allowed, asks are passed on as above; asked about, every ask is refused
//!   and escalated (the agent might not show it to anyone); denied, every call is refused.

use serde_json::json;

use crate::acp::escalation::{self, Reviewed};
use crate::acp::gate::{Answer, Asked, Gate, Judged};
use crate::acp::switch::Switch;
use crate::record::ResolvedBy;
use crate::request::hook::{Agent, HookCall, HookEvent};
use crate::request::{SessionContext, ToolRequest};
use crate::service::escalator::Escalator;
use crate::verdict::Verdict;

/// What the agent is told, with the reasons it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Told {
    Allow(String),
    Deny(String),
    /// Passed on to the agent's own prompt.
    Ask(String),
}

/// A hook call judged: the mode the agent is in (when it is not the one it starts in) and the
/// call, each with how it is answered.
pub struct Judgement {
    mode: Option<(Judged, Answer, ResolvedBy)>,
    call: Judged,
    answer: Answer,
    by: ResolvedBy,
    /// The review service the call was escalated to, and what it made of it.
    reviewed: Option<(String, Reviewed)>,
}

impl Judgement {
    /// Whether recording it keeps an escalation record (the gate must then be orchestrated).
    pub fn escalates(&self) -> bool {
        self.by == ResolvedBy::Escalated
            || self
                .mode
                .as_ref()
                .is_some_and(|(.., by)| *by == ResolvedBy::Escalated)
    }
}

/// The requests the chain decides for `call`: the switch into the mode it is in (when it is
/// not the one the agent starts in), and the call itself (when it can be read). A chain
/// loaded for a hook call is loaded for these ([`crate::load_chain_for`]).
pub fn requests(call: &HookCall, ctx: &SessionContext) -> Vec<ToolRequest> {
    let switch = mode_switch(call).map(|switch| switch.tool_request(ctx));
    let tool_call = ToolRequest::from_permission_request(&call.params, None, ctx).ok();
    switch.into_iter().chain(tool_call).collect()
}

/// Judges `call`: the mode it is in, then the call itself; an ask nobody here can answer goes
/// to the review service `escalator`, if there is one.
pub async fn judge(
    gate: &Gate,
    call: &HookCall,
    ctx: &SessionContext,
    escalator: Option<&Escalator>,
) -> Judgement {
    let mode = match mode_switch(call) {
        Some(switch) => Some(judge_mode(gate, switch, ctx).await),
        None => None,
    };
    let asked = Asked::Permission {
        params: call.params.clone(),
        earlier: None,
    };
    let mut judged = gate.judge(asked, ctx).await;
    let mode_outcome = mode.as_ref().map(|(judged, ..)| judged.decision.outcome);
    let decision = &mut judged.decision;
    if mode_outcome == Some(Verdict::Deny) {
        let mode = call.mode.as_deref().unwrap_or_default();
        decision.outcome = Verdict::Deny;
        decision.by_default = false;
        decision.reasons.insert(
            0,
            format!("the agent is in permission mode `{mode}`, which the policy forbids"),
        );
    }
    let (answer, by) = match decision.outcome {
        Verdict::Allow => (Answer::Allowed, ResolvedBy::Chain),
        Verdict::Deny => (Answer::Denied { message: None }, ResolvedBy::Chain),
        _ if can_ask(call) && mode_outcome.is_none_or(|m| m == Verdict::Allow) => {
            (Answer::PassedOn, ResolvedBy::Agent)
        }
        _ => (Answer::Denied { message: None }, ResolvedBy::Escalated),
    };
    let (answer, by, reviewed) = match escalator {
        Some(escalator) if by == ResolvedBy::Escalated => {
            let nobody = nobody_asks(call, &mode);
            let reviewed = escalation::review(gate, escalator, &judged, &nobody).await;
            let (answer, by) = reviewed.clone().answer(None);
            let url = escalator.client.url().to_owned();
            (answer, by, Some((url, reviewed)))
        }
        _ => (answer, by, None),
    };
    Judgement {
        mode,
        call: judged,
        answer,
        by,
        reviewed,
    }
}

/// The mode the agent says it is in, as a switch into it: what `run` judges of the mode a
/// session starts in.
fn mode_switch(call: &HookCall) -> Option<Switch> {
    Some(Switch {
        method: "permission_mode".to_owned(),
        params: json!({ "sessionId": call.session_id }),
        mode: Some(call.mode.clone()?),
    })
}

/// The switch into the mode the agent is in, judged and answered as `run` answers a switch
/// the agent made by itself.
async fn judge_mode(
    gate: &Gate,
    switch: Switch,
    ctx: &SessionContext,
) -> (Judged, Answer, ResolvedBy) {
    let judged = gate.judge(Asked::Switch(switch), ctx).await;
    let (action, by) = match judged.decision.outcome {
        Verdict::Allow => ("asks are passed on to it", ResolvedBy::Chain),
        Verdict::Deny => ("every call is refused", ResolvedBy::Escalated),
        _ => (
            "asks are refused and escalated, not passed on",
            ResolvedBy::Escalated,
        ),
    };
    (judged, Answer::Reported(action.to_owned()), by)
}

/// Whether the agent has an ask of its own at this event: one that reaches its user.
fn can_ask(call: &HookCall) -> bool {
    match (call.agent, call.event) {
        (_, HookEvent::PermissionRequest) => true,
        (Agent::Claude | Agent::Copilot, HookEvent::BeforeTool) => true,
        (Agent::Codex | Agent::Gemini, HookEvent::BeforeTool) => false,
    }
}

/// Records `judgement` (the mode, then the call: the audit log first) and says what the agent
/// is told. A decision that could not be recorded is refused.
pub fn settle(gate: &Gate, call: &HookCall, judgement: Judgement) -> Told {
    let Judgement {
        mode,
        call: judged,
        answer,
        by,
        reviewed,
    } = judgement;
    if let Some((mode_judged, mode_answer, mode_by)) = &mode
        && gate.record(mode_judged, mode_answer, *mode_by).is_none()
    {
        return Told::Deny(unrecorded());
    }
    let Some(recorded) = gate.record(&judged, &answer, by) else {
        return Told::Deny(unrecorded());
    };
    let reasons = judged.decision.reasons.join("; ");
    let said = |what: &str| match reasons.is_empty() {
        true => format!("acp-gate {what}"),
        false => format!("acp-gate {what}: {reasons}"),
    };
    let service = reviewed.as_ref().map(|(url, _)| url.as_str()).unwrap_or("");
    match (&answer, judged.decision.outcome) {
        (Answer::Allowed, _) => Told::Allow(said("allows this")),
        (Answer::Approved(note), _) => Told::Allow(format!(
            "acp-gate: a reviewer at the review service {service} allowed this ({note})"
        )),
        (Answer::PassedOn, _) => Told::Ask(said("asks you to confirm this")),
        (_, Verdict::Deny) => Told::Deny(said("denies this")),
        (
            Answer::Denied {
                message: Some(note),
            },
            _,
        ) if by == ResolvedBy::Reviewer => Told::Deny(format!(
            "acp-gate: a reviewer at the review service {service} denied this ({note})"
        )),
        _ => {
            let mut why = nobody_asks(call, &mode);
            if let Some((_, Reviewed::Open(open))) = &reviewed {
                why = format!("{why}; {open}");
            }
            let id = recorded
                .escalation
                .map(|id| format!(" as {id} (see `acp-gate escalations`)"))
                .unwrap_or_default();
            Told::Deny(format!(
                "acp-gate: a person must approve this ({reasons}), and {why}: refused, and escalated{id}"
            ))
        }
    }
}

/// Why an ask of `call` is not passed on to the agent's own user: the mode it is in, or an
/// agent that cannot ask at this event.
fn nobody_asks(call: &HookCall, mode: &Option<(Judged, Answer, ResolvedBy)>) -> String {
    match (&call.mode, mode_refuses_asks(mode)) {
        (Some(name), true) => format!("in permission mode `{name}` the agent might not ask anyone"),
        _ => format!("{} cannot ask anyone here", call.agent.title()),
    }
}

/// Whether the judged mode is what kept an ask from being passed on.
fn mode_refuses_asks(mode: &Option<(Judged, Answer, ResolvedBy)>) -> bool {
    mode.as_ref()
        .is_some_and(|(judged, ..)| judged.decision.outcome != Verdict::Allow)
}

fn unrecorded() -> String {
    "acp-gate could not record the decision in its audit log, so it was not made".to_owned()
}
