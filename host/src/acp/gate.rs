//! The gating core that `run` (`acp::client`), `proxy` (`acp::proxy`) and `hook` (the agents'
//! own hooks) share: a request in (a permission request, or a gated `fs/*` / `terminal/create` call, read
//! with what the [`ToolCallTracker`] knows of its tool call, or a mode switch), the [`Chain`]'s
//! decision, the record (audit log first, then the output), and a typed reply to the agent. The
//! front ends keep only what differs: `run` settles asks and carries out the calls it allowed;
//! `proxy` holds asks for the editor, forwards and cancels; `hook` answers in the agent's own
//! hook output (it records with [`Gate::record`] and replies in its own terms).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use agent_client_protocol::{Error, ErrorCode};
use anyhow::Result;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::calls::{self, Call};
use super::orchestrate::Orchestration;
use super::output::Output;
use super::switch::{Modes, Switch};
use super::tracker::ToolCallTracker;
use crate::audit::AuditLog;
use crate::chain::{Chain, Decision};
use crate::exit;
use crate::record::{Escalation, ResolvedBy};
use crate::request::{OptionKind, SessionContext, ToolRequest};
use crate::verdict::Verdict;

/// How the requests of a session were settled, for the summary.
#[derive(Debug, Default)]
pub struct Tally {
    pub allowed: AtomicUsize,
    pub denied: AtomicUsize,
    pub escalated: AtomicUsize,
    pub cancelled: AtomicUsize,
}

/// What the agent asked for, as read from its message.
#[derive(Debug, Clone)]
pub enum Asked {
    /// `session/request_permission`: its params, and what earlier `tool_call` updates announced
    /// for its tool call.
    Permission {
        params: Value,
        earlier: Option<Value>,
    },
    /// A client call acp-gate judges (`fs/read_text_file`, `fs/write_text_file`,
    /// `terminal/create`).
    Call(Call),
    /// A switch of the session's mode or configuration: asked for by the editor (it goes ahead
    /// like a call), or reported by the agent (it happened: see [`Answer::Reported`]).
    Switch(Switch),
    /// A request of a gated method that acp-gate cannot read (a permission request of no
    /// shape it knows, a call without what it needs): refused without the chain, recorded
    /// with `why`, and the run or proxy exits [`exit::AGENT_FAILED`] at the end.
    Unreadable {
        method: String,
        params: Value,
        why: String,
    },
}

impl Asked {
    /// Whether it is answered like a call (goes ahead or is refused), not with an option.
    pub fn is_call(&self) -> bool {
        match self {
            Asked::Permission { .. } => false,
            Asked::Unreadable { method, .. } => method != PERMISSION,
            Asked::Call(_) | Asked::Switch(_) => true,
        }
    }
}

/// A request of `method` that could not be read, and why.
fn unreadable(method: &str, params: Value, why: String) -> Asked {
    Asked::Unreadable {
        method: method.to_owned(),
        params,
        why,
    }
}

/// The method of a permission request.
const PERMISSION: &str = "session/request_permission";

/// A request the chain has decided.
#[derive(Debug)]
pub struct Judged {
    pub asked: Asked,
    pub request: ToolRequest,
    pub decision: Decision,
    /// The id it was sent to the review service with, once it was (set where it is sent): its
    /// escalation record carries the id the service knows.
    pub escalated_as: OnceLock<String>,
}

impl Judged {
    /// What a switch switches to, for messages: ``mode `X` `` or its title.
    pub fn switched_to(&self) -> String {
        match self.request.raw.get("modeId").and_then(Value::as_str) {
            Some(mode) => format!("mode `{mode}`"),
            None => self.request.title.clone(),
        }
    }

    /// What the tool would be run with: the request's input, or the one announced in the tool
    /// call (for an escalation record).
    pub fn input(&self) -> Value {
        match &self.asked {
            Asked::Permission { params, earlier } => params
                .pointer("/toolCall/rawInput")
                .or_else(|| params.pointer("/subject/toolCall/rawInput"))
                .or_else(|| earlier.as_ref().and_then(|e| e.get("rawInput")))
                .or_else(|| params.get("subject"))
                .cloned()
                .unwrap_or(Value::Null),
            Asked::Call(_) | Asked::Switch(_) | Asked::Unreadable { .. } => {
                self.request.raw.clone()
            }
        }
    }
}

/// How a judged request was answered: what is recorded, and what the agent is sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A permission request: the offered option with this id, and a message for the agent (a
    /// person's reason for a rejection).
    Selected {
        option: String,
        message: Option<String>,
    },
    /// A permission request's outcome exactly as the editor gave it (proxy).
    Relayed(Value),
    /// A gated call goes ahead.
    Allowed,
    /// A gated call goes ahead on someone's word given elsewhere (a grant, a reviewer): who.
    Approved(String),
    /// A gated call is refused; with the person's message, if they gave one.
    Denied { message: Option<String> },
    /// `cancelled`: the turn was cancelled, or no option of the needed kind was offered.
    Cancelled,
    /// A gated call is refused after an allow, and why (its file changed since the decision).
    Refused(String),
    /// A switch the agent made by itself: judged after the fact, and what acp-gate did.
    Reported(String),
    /// An ask passed on to the agent's own prompt (a hook's `ask`): its user answers there,
    /// where acp-gate does not see the answer.
    PassedOn,
}

/// What the agent is sent once the decision is recorded.
#[derive(Debug)]
pub enum Reply {
    /// The result of a permission request.
    Outcome(Value),
    /// A gated call may go ahead: `run` carries it out, `proxy` forwards it to the editor.
    Proceed,
    /// A refused or cancelled call, or a decision that could not be recorded.
    Error(Error),
}

impl Answer {
    /// The answer to a permission request for a chain verdict alone: the offered option of the
    /// needed kind, else `cancelled` (ask has no option: a person must answer).
    pub fn by_chain(request: &ToolRequest, decision: &Decision) -> Answer {
        match decision.select_option(&request.options) {
            Some(option) => Answer::Selected {
                option: option.id.clone(),
                message: None,
            },
            None => Answer::Cancelled,
        }
    }

    /// The answer to a permission request of `kind` (a person's or a rule's), by kind only.
    pub fn by_kind(request: &ToolRequest, kind: OptionKind, message: Option<String>) -> Answer {
        match request.options.iter().find(|o| o.kind == kind) {
            Some(option) => Answer::Selected {
                option: option.id.clone(),
                message,
            },
            None => Answer::Cancelled,
        }
    }

    /// Whether it lets the request go ahead: `None` when it says neither (cancelled, an
    /// option of a kind acp-gate does not know, a reported switch).
    fn allows(&self, request: &ToolRequest) -> Option<bool> {
        let option_allows = |id: &str| {
            request
                .options
                .iter()
                .find(|o| o.id == id)
                .map(|o| matches!(o.kind, OptionKind::AllowOnce | OptionKind::AllowAlways))
        };
        match self {
            Answer::Allowed | Answer::Approved(_) => Some(true),
            Answer::Selected { option, .. } => option_allows(option),
            Answer::Relayed(outcome) => match outcome.get("outcome").and_then(Value::as_str) {
                Some("selected") => option_allows(outcome.get("optionId")?.as_str()?),
                _ => None,
            },
            Answer::Denied { .. } | Answer::Refused(_) => Some(false),
            Answer::Cancelled | Answer::Reported(_) | Answer::PassedOn => None,
        }
    }

    /// What the audit log records as the answer, before who gave it.
    fn word(&self) -> String {
        match self {
            Answer::Selected { option, .. } => option.clone(),
            Answer::Relayed(outcome) => outcome
                .get("optionId")
                .and_then(Value::as_str)
                .filter(|_| outcome.get("outcome").and_then(Value::as_str) == Some("selected"))
                .unwrap_or("cancelled")
                .to_owned(),
            Answer::Allowed | Answer::Approved(_) => "allowed".to_owned(),
            Answer::Denied { .. } => "denied".to_owned(),
            Answer::Cancelled => "cancelled".to_owned(),
            Answer::Refused(why) => format!("refused: {why}"),
            Answer::Reported(action) => format!("reported: {action}"),
            Answer::PassedOn => "ask".to_owned(),
        }
    }

    fn message(&self) -> Option<&str> {
        match self {
            Answer::Selected { message, .. } | Answer::Denied { message } => message.as_deref(),
            Answer::Approved(by) => Some(by),
            _ => None,
        }
    }
}

/// What [`Gate::record`] kept of a decision besides the audit line.
#[derive(Debug)]
pub struct Recorded {
    /// The id of the escalation record kept for an orchestrator (`run --session`, `hook`).
    pub escalation: Option<String>,
}

/// The error a call is refused with when its decision could not be recorded.
pub fn unrecorded() -> Error {
    Error::internal_error().data(json!(
        "acp-gate could not record the decision in its audit log, so it was not made"
    ))
}

/// The chain, the audit log, the output and the tool-call tracker of one `run` or `proxy`.
pub struct Gate {
    chain: Chain,
    audit: AuditLog,
    pub output: Output,
    tracker: Mutex<ToolCallTracker>,
    modes: Mutex<Modes>,
    pub tally: Tally,
    /// Set when a decision could not be written to the audit log.
    unrecorded: AtomicBool,
    /// Set when the agent sent something acp-gate could not gate (an unreadable request, a
    /// protocol version it does not speak).
    ungated: AtomicBool,
    /// `run`'s named session, escalations and grants; a hook's escalations, kept from its
    /// first one on ([`Gate::keep_escalations`]).
    orchestration: OnceLock<Orchestration>,
    /// The tool calls the agent's own hooks brought to this session's gate, by id: whether
    /// each was let through (`None` while it is being decided). The same call brought again
    /// (by a second hook, or by the agent's permission request once its hook let it on) gets
    /// that answer, with no second decision and no second audit line.
    hooked: Mutex<HashMap<String, watch::Receiver<Option<bool>>>>,
    /// Set when the agent's own hooks bring every call of the session to this gate, in any
    /// mode (`run` and `proxy` give them to the adapters they know): a mode in which the agent
    /// stops asking hides nothing.
    sees_every_call: AtomicBool,
}

/// What the gate knows of a tool call the agent's hooks bring.
pub enum Hooked {
    /// Not seen before: the caller decides it, and settles the ticket with the answer.
    First(HookTicket),
    /// Seen: whether it was let through (waited for while it was being decided).
    Answered(bool),
}

/// The promise to settle a hooked tool call: a ticket dropped unsettled refuses it.
pub struct HookTicket(Option<watch::Sender<Option<bool>>>);

impl HookTicket {
    pub fn settle(mut self, allowed: bool) {
        if let Some(sender) = self.0.take() {
            sender.send_replace(Some(allowed));
        }
    }
}

impl Drop for HookTicket {
    fn drop(&mut self) {
        if let Some(sender) = self.0.take() {
            sender.send_replace(Some(false));
        }
    }
}

impl Gate {
    pub fn new(chain: Chain, audit: AuditLog, output: Output) -> Gate {
        for notice in &chain.notices {
            output.notice(notice);
        }
        Gate {
            chain,
            audit,
            output,
            tracker: Mutex::default(),
            modes: Mutex::default(),
            tally: Tally::default(),
            unrecorded: AtomicBool::new(false),
            ungated: AtomicBool::new(false),
            orchestration: OnceLock::new(),
            hooked: Mutex::default(),
            sees_every_call: AtomicBool::new(false),
        }
    }

    /// From now on, every call of the session reaches the gate through the agent's own hooks,
    /// whatever mode the agent is in.
    pub fn sees_every_call(&self) {
        self.sees_every_call.store(true, Ordering::Relaxed);
    }

    /// The gate of a `run` whose escalations are kept, and grants given, for an orchestrator.
    pub fn orchestrated(self, orchestration: Orchestration) -> Gate {
        Gate {
            orchestration: OnceLock::from(orchestration),
            ..self
        }
    }

    pub fn orchestration(&self) -> Option<&Orchestration> {
        self.orchestration.get()
    }

    /// Keeps escalation records from now on, in the orchestration `open` makes, unless the
    /// gate keeps them already: a hook opens the state directory only when it escalates.
    pub fn keep_escalations(&self, open: impl FnOnce() -> Result<Orchestration>) -> Result<()> {
        if self.orchestration.get().is_none() {
            // Two first escalations at once keep the one set first: the same files either way.
            let _ = self.orchestration.set(open()?);
        }
        Ok(())
    }

    pub fn audit_path(&self) -> &std::path::Path {
        self.audit.path()
    }

    pub fn chain(&self) -> &Chain {
        &self.chain
    }

    /// A `session/update` from the agent: tool calls feed the tracker. Returns the merged
    /// state of a tool call, for showing it.
    pub fn observe(&self, update: &Value) -> Option<Value> {
        lock(&self.tracker).observe(update)
    }

    /// Reads a request of the agent's that the gate judges; `None` when `method` is not one.
    /// What the tracker knows is read now, so that the tool calls announced before the request
    /// count, however long the decision waits.
    pub fn read(&self, method: &str, params: Value) -> Option<Asked> {
        if method == PERMISSION {
            let earlier = tool_call_id(&params).and_then(|id| lock(&self.tracker).get(id));
            return Some(Asked::Permission { params, earlier });
        }
        let call = Call::parse(method, &params)?;
        Some(call.map_or_else(|why| unreadable(method, params, why), Asked::Call))
    }

    /// Reads a request of the editor's that the gate judges (a mode or configuration
    /// switch); `None` when `method` is not one.
    pub fn read_editor(&self, method: &str, params: &Value) -> Option<Asked> {
        let switch = lock(&self.modes).requested(method, params)?;
        Some(switch.map_or_else(|why| unreadable(method, params.clone(), why), Asked::Switch))
    }

    /// A `session/update` from the agent that reports a switch of mode not judged yet.
    pub fn reported(&self, session_id: &str, update: &Value) -> Option<Asked> {
        lock(&self.modes)
            .reported(session_id, update)
            .map(Asked::Switch)
    }

    /// The mode a session starts in (the agent's answer to `method`, which opened it), to
    /// judge.
    pub fn opened(&self, session_id: &str, method: &str, result: &Value) -> Option<Asked> {
        lock(&self.modes)
            .opened(session_id, method, result)
            .map(Asked::Switch)
    }

    /// Normalises and decides. What cannot be read is refused without the chain (shown, and
    /// recorded like any decision); a permission request about a subject acp-gate does not
    /// know is at most asked about.
    pub async fn judge(&self, asked: Asked, ctx: &SessionContext) -> Judged {
        let request = match &asked {
            Asked::Permission { params, earlier } => {
                match ToolRequest::from_permission_request(params, earlier.as_ref(), ctx) {
                    Ok(request) => request,
                    Err(error) => {
                        let asked = unreadable(PERMISSION, params.clone(), format!("{error:#}"));
                        return self.refuse_unreadable(asked, ctx);
                    }
                }
            }
            Asked::Call(call) => call.tool_request(ctx),
            Asked::Switch(switch) => switch.tool_request(ctx),
            Asked::Unreadable { .. } => return self.refuse_unreadable(asked, ctx),
        };
        let mut decision = self.chain.decide(&request).await;
        if matches!(asked, Asked::Switch(_)) {
            self.through_hooks(&mut decision);
        }
        if let Some(kind) = request.unknown_subject()
            && decision.outcome != Verdict::Deny
        {
            decision.outcome = Verdict::Ask;
            decision.by_default = false;
            let note = format!(
                "acp-gate does not know a permission request about a `{kind}`: a person must answer"
            );
            decision.reasons.insert(0, note);
        }
        Judged {
            asked,
            request,
            decision,
            escalated_as: OnceLock::new(),
        }
    }

    /// A switch into a mode in which the agent stops asking, asked about only by the built-in
    /// handlers (whose question is that acp-gate would see no more requests), when the agent's
    /// own hooks bring every call to the gate in any mode: nothing is hidden, so it goes on.
    /// A handler of an org, project or user that asks or denies still counts.
    fn through_hooks(&self, decision: &mut Decision) {
        let asked_by: Vec<&crate::chain::HandlerTrace> = decision
            .handlers
            .iter()
            .filter(|h| h.verdict == Verdict::Ask)
            .collect();
        let only_builtins = !asked_by.is_empty()
            && asked_by
                .iter()
                .all(|h| h.tier == crate::config::Tier::Builtin);
        if self.sees_every_call.load(Ordering::Relaxed)
            && decision.outcome == Verdict::Ask
            && !decision.by_default
            && only_builtins
        {
            decision.outcome = Verdict::Allow;
            decision.reasons.push(
                "acp-gate is the agent's own hook in this session and decides each of its calls \
                 in any mode: the switch hides nothing"
                    .to_owned(),
            );
        }
    }

    /// A request that could not be read: denied, shown, and the session marked as failed.
    fn refuse_unreadable(&self, asked: Asked, ctx: &SessionContext) -> Judged {
        let Asked::Unreadable {
            method,
            params,
            why,
        } = &asked
        else {
            unreachable!("only an unreadable request is refused unread")
        };
        let reason = format!("acp-gate cannot read this `{method}` request: {why}");
        self.output.error(&reason);
        self.ungated.store(true, Ordering::Relaxed);
        Judged {
            request: ToolRequest::unreadable(method, params, ctx),
            decision: Decision::refused(reason),
            asked,
            escalated_as: OnceLock::new(),
        }
    }

    /// The agent answered `initialize` with a protocol version acp-gate cannot gate: shown,
    /// and the run or proxy exits [`exit::AGENT_FAILED`].
    pub fn refuse_protocol(&self, message: &str) {
        self.output.error(message);
        self.ungated.store(true, Ordering::Relaxed);
    }

    /// Records how `judged` was answered, then returns what the agent is sent (see
    /// [`Gate::record`]).
    pub fn conclude(&self, judged: &Judged, answer: Answer, by: ResolvedBy) -> Reply {
        if self.record(judged, &answer, by).is_none() {
            return Reply::Error(unrecorded());
        }
        let decision = &judged.decision;
        let is_call = judged.asked.is_call();
        match answer {
            Answer::Selected { option, message } => {
                let mut result =
                    json!({ "outcome": { "outcome": "selected", "optionId": option } });
                if let Some(message) = message {
                    // ACP has no field for it: agents that read `_meta` can show it to their model.
                    result["_meta"] = json!({ "acpGate": { "message": message } });
                }
                Reply::Outcome(result)
            }
            Answer::Relayed(outcome) => Reply::Outcome(json!({ "outcome": outcome })),
            Answer::Cancelled if is_call => Reply::Error(Error::request_cancelled()),
            Answer::Cancelled => Reply::Outcome(json!({ "outcome": { "outcome": "cancelled" } })),
            // Only a hook passes an ask on, and it answers in its own terms.
            Answer::Allowed | Answer::Reported(_) | Answer::PassedOn | Answer::Approved(_) => {
                Reply::Proceed
            }
            Answer::Denied { message } => Reply::Error(calls::denial(decision, message.as_deref())),
            Answer::Refused(why) => Reply::Error(Error::new(
                ErrorCode::from(calls::DENIED),
                format!("acp-gate: {why}"),
            )),
        }
    }

    /// Records how `judged` was answered (the audit log first: an unrecorded decision is not
    /// made), shows it, and keeps the escalation record when nobody could be asked: what
    /// every front end does with a decision before answering in its own terms. `None` when
    /// it could not be recorded (it is then refused).
    pub fn record(&self, judged: &Judged, answer: &Answer, by: ResolvedBy) -> Option<Recorded> {
        let Judged {
            request, decision, ..
        } = judged;
        let recorded = by.annotate(&answer.word(), answer.message());
        let allowed = answer.allows(request);
        if let Err(error) = self.audit.record(request, decision, &recorded, allowed) {
            self.output.error(&format!("{error:#}"));
            self.unrecorded.store(true, Ordering::Relaxed);
            return None;
        }
        let word = answer.word();
        if allowed == Some(true) {
            self.note_mode(judged, answer);
        }
        let counter = match (allowed, &answer) {
            (Some(true), _) => Some(&self.tally.allowed),
            (Some(false), _) => Some(&self.tally.denied),
            (None, Answer::Cancelled) => Some(&self.tally.cancelled),
            (None, _) => None,
        };
        if let Some(counter) = counter {
            counter.fetch_add(1, Ordering::Relaxed);
        }
        self.output.decision(request, decision, by, &word);
        let mut recorded = Recorded { escalation: None };
        if by == ResolvedBy::Escalated {
            self.tally.escalated.fetch_add(1, Ordering::Relaxed);
            let input = judged.input();
            let mut escalation = Escalation::new(request, decision, &word, &input);
            if let Some(orchestration) = self.orchestration.get()
                && let Err(error) =
                    orchestration.escalated(&mut escalation, request, judged.escalated_as.get())
            {
                self.output.error(&format!("{error:#}"));
            }
            self.output.escalation(&escalation);
            recorded.escalation = escalation.id;
        }
        Some(recorded)
    }

    /// An allowed switch puts the session in its mode, so that the agent's report of it is
    /// not judged again. For a permission request to switch (Claude Code's `ExitPlanMode`),
    /// the agent's option ids are the modes it switches to.
    fn note_mode(&self, judged: &Judged, answer: &Answer) {
        let request = &judged.request;
        let mode = match (&judged.asked, answer) {
            (Asked::Switch(switch), _) => switch.mode.as_deref(),
            (Asked::Permission { .. }, Answer::Selected { option, .. })
                if request.kind == crate::request::ToolKind::SwitchMode =>
            {
                Some(option.as_str())
            }
            _ => None,
        };
        if let Some(mode) = mode {
            lock(&self.modes).approve(&request.session_id, mode);
        }
    }

    /// A tool call (`id`) one of the agent's own hooks brings: the first time, a ticket to
    /// decide it with; after that, the answer it got.
    pub async fn hooked(&self, id: &str) -> Hooked {
        let known = {
            let mut hooked = lock(&self.hooked);
            match hooked.get(id) {
                Some(known) => known.clone(),
                None => {
                    let (sender, receiver) = watch::channel(None);
                    hooked.insert(id.to_owned(), receiver);
                    return Hooked::First(HookTicket(Some(sender)));
                }
            }
        };
        Hooked::Answered(settled(known).await)
    }

    /// How the tool call a permission request `params` asks about was answered when the
    /// agent's hook brought it, if it did (waited for while it is being decided).
    pub async fn hook_answer(&self, params: &Value) -> Option<bool> {
        let id = tool_call_id(params)?;
        let known = lock(&self.hooked).get(id).cloned()?;
        Some(settled(known).await)
    }

    pub fn escalations(&self) -> usize {
        self.tally.escalated.load(Ordering::Relaxed)
    }

    /// The exit code of a run or proxy that ended with `code`: [`exit::UNRECORDED`] instead
    /// of a success when some decision could not be recorded, [`exit::AGENT_FAILED`] when the
    /// agent sent something that could not be gated.
    pub fn exit_code(&self, code: u8) -> u8 {
        if !matches!(code, exit::OK | exit::ESCALATED) {
            return code;
        }
        if self.ungated.load(Ordering::Relaxed) && !self.unrecorded.load(Ordering::Relaxed) {
            self.output.error(&format!(
                "the agent sent what acp-gate could not gate; it was refused (exit code {})",
                exit::AGENT_FAILED
            ));
            return exit::AGENT_FAILED;
        }
        if !self.unrecorded.load(Ordering::Relaxed) {
            return code;
        }
        self.output.error(&format!(
            "some decisions could not be written to the audit log {} and were refused (exit code {})",
            self.audit.path().display(),
            exit::UNRECORDED
        ));
        exit::UNRECORDED
    }
}

/// The answer a hooked tool call got, once it has one (a refusal if its decider went away).
async fn settled(mut known: watch::Receiver<Option<bool>>) -> bool {
    let _ = known.wait_for(Option::is_some).await;
    let answer = *known.borrow();
    answer.unwrap_or(false)
}

/// The id of the tool call a permission request's `params` ask about (v1, or a v2 subject).
pub fn tool_call_id(params: &Value) -> Option<&str> {
    params
        .pointer("/toolCall/toolCallId")
        .or_else(|| params.pointer("/subject/toolCall/toolCallId"))
        .or_else(|| params.pointer("/subject/toolCallId"))
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
}

/// The outcome of a permission request whose answer is known already: its first offered
/// option of the kind that allows (`allowed`) or rejects, once before always; `cancelled`
/// when none is offered.
pub fn outcome_by_kind(params: &Value, allowed: bool) -> Value {
    let kinds: [&str; 2] = match allowed {
        true => ["allow_once", "allow_always"],
        false => ["reject_once", "reject_always"],
    };
    let options = params.get("options").and_then(Value::as_array);
    let chosen = kinds.iter().find_map(|kind| {
        options?
            .iter()
            .find(|o| o.get("kind").and_then(Value::as_str) == Some(kind))?
            .get("optionId")
    });
    match chosen {
        Some(id) => json!({ "outcome": { "outcome": "selected", "optionId": id } }),
        None => json!({ "outcome": { "outcome": "cancelled" } }),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
