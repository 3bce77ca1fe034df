//! `run`'s front end: acp-gate as the agent's client. Every message the agent sends during a
//! session arrives here. Gated requests go through the shared [`Gate`]; an ask is settled by
//! `run`'s ask policy ([`settle`]: a session rule, the person at the terminal, or an
//! escalation); the `fs` and `terminal` calls the chain allowed are carried out here. A switch
//! of mode the agent reports making by itself is judged too: one the chain does not allow ends
//! the turn (or, at the session's start, stops it before the first prompt). The work
//! runs in tasks spawned off the connection's dispatch loop, so a slow plugin or a person
//! thinking never stalls the stream.

use std::collections::HashSet;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Mutex, RwLock};

use agent_client_protocol::v1::schema::CancelNotification;
use agent_client_protocol::{
    Agent, ConnectionTo, Error, ErrorCode, RawJsonRpcId, Responder, UntypedMessage,
};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::ask::{Answer as Choice, PromptChoice, Prompter};
use super::calls::Call;
use super::escalation::{self, Reviewed};
use super::fs;
use super::gate::{self, Answer, Asked, Gate, Judged, Reply};
use super::orchestrate::Granted;
use super::own_hooks;
use super::rules::{SessionRule, SessionRules};
use super::terminal::{Spawn, Terminals};
use crate::chain::Decision;
use crate::record::ResolvedBy;
use crate::request::{OptionKind, SessionContext};
use crate::service::escalator::Escalator;
use crate::verdict::Verdict;

/// ACP's "resource not found".
const NOT_FOUND: i32 = -32002;

/// How `run` settles a decision before anyone is prompted: its ask policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settle {
    /// Settled without a person: allowed or rejected, and by whom.
    Now { allow: bool, by: ResolvedBy },
    /// The turn was cancelled first.
    Cancelled,
    /// Ask the person at the terminal.
    Prompt,
}

/// The ask policy. The chain's allow and deny stand; an ask is settled by a session rule that
/// `remembered` it, else by the person at the terminal (`can_prompt`), else it is rejected and
/// escalated. A cancelled turn answers everything `cancelled`.
pub fn settle(outcome: Verdict, cancelled: bool, remembered: bool, can_prompt: bool) -> Settle {
    let now = |allow, by| Settle::Now { allow, by };
    match outcome {
        _ if cancelled => Settle::Cancelled,
        Verdict::Allow => now(true, ResolvedBy::Chain),
        Verdict::Deny => now(false, ResolvedBy::Chain),
        _ if remembered => now(true, ResolvedBy::SessionRule),
        _ if can_prompt => Settle::Prompt,
        _ => now(false, ResolvedBy::Escalated),
    }
}

/// Why an ask of `run` goes to the review service: without a prompter, it is the only way.
const NOBODY: &str = "nobody is at a terminal to answer (acp-gate run --non-interactive, or its input is not a terminal)";

/// What a person or the policy settled, before it is put in the agent's terms.
enum Settled {
    /// With the agent's option the person chose, if they chose one of its options.
    Allow(Option<String>),
    /// By a grant of the orchestrator's: which, and who gave it.
    Granted(String),
    Reject {
        chosen: Option<String>,
        message: Option<String>,
    },
    Cancelled,
}

pub struct Client {
    pub gate: Gate,
    ctx: RwLock<SessionContext>,
    rules: Mutex<SessionRules>,
    /// `None`: nobody to ask (`--non-interactive`, or stdin is not a terminal).
    prompter: Option<Prompter>,
    /// True from `session/cancel` until the next turn starts.
    cancelled: watch::Sender<bool>,
    terminals: Terminals,
    /// The ids of the gated requests not answered yet.
    in_flight: Mutex<HashSet<RawJsonRpcId>>,
    /// The review service asks nobody here can answer go to (`--escalate-to`).
    escalator: Option<Escalator>,
}

impl Client {
    pub fn new(gate: Gate, ctx: SessionContext, prompter: Option<Prompter>) -> Client {
        Client {
            gate,
            ctx: RwLock::new(ctx),
            rules: Mutex::new(SessionRules::default()),
            prompter,
            cancelled: watch::channel(false).0,
            terminals: Terminals::default(),
            in_flight: Mutex::default(),
            escalator: None,
        }
    }

    /// Sends the asks nobody here can answer to a review service.
    pub fn escalating(self, escalator: Option<Escalator>) -> Client {
        Client { escalator, ..self }
    }

    pub fn set_session_id(&self, id: &str) {
        self.ctx
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .session_id = id.to_owned();
    }

    fn ctx(&self) -> SessionContext {
        self.ctx.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn begin_turn(&self) {
        self.cancelled.send_replace(false);
    }

    /// `session/cancel` was sent: every pending and later request of this turn is answered
    /// `cancelled`.
    pub fn cancel_turn(&self) {
        self.cancelled.send_replace(true);
    }

    /// The session rules, for the interactive `/rules` and `/forget N` commands.
    pub fn with_rules<T>(&self, f: impl FnOnce(&mut SessionRules) -> T) -> T {
        f(&mut lock(&self.rules))
    }

    pub fn shutdown(&self) {
        self.terminals.kill_all();
    }

    async fn until_cancelled(&self) {
        let mut rx = self.cancelled.subscribe();
        let _ = rx.wait_for(|cancelled| *cancelled).await;
    }

    /// A notification from the agent: `session/update` feeds the tracker and the output; a
    /// switch of mode it reports is judged, and one the chain does not allow ends the turn.
    pub async fn on_notification(&self, message: UntypedMessage, cx: &ConnectionTo<Agent>) {
        let (method, params) = message.into_parts();
        if method != "session/update" {
            return;
        }
        let Some(update) = params.get("update") else {
            return;
        };
        let merged = self.gate.observe(update);
        self.gate.output.update(update, merged.as_ref());
        let session = params.get("sessionId").and_then(Value::as_str);
        let Some(reported) = session.and_then(|s| self.gate.reported(s, update)) else {
            return;
        };
        if !self.report(reported, "ended the turn").await {
            self.cancel_turn();
            let session = session.unwrap_or_default().to_owned();
            let _ = cx.send_notification(CancelNotification::new(session));
        }
    }

    /// Judges a switch the agent made by itself (or the mode its session starts in): true
    /// when the chain allows it. Otherwise it is said loudly, and recorded and escalated with
    /// `action`, what acp-gate does about it.
    pub async fn report(&self, reported: Asked, action: &str) -> bool {
        let judged = self.gate.judge(reported, &self.ctx()).await;
        let allowed = judged.decision.outcome == Verdict::Allow;
        let (action, by) = match allowed {
            true => ("went on", ResolvedBy::Chain),
            false => {
                self.gate.output.error(&format!(
                    "the agent put itself in {}, which acp-gate does not let it switch to ({}); acp-gate {action}",
                    judged.switched_to(),
                    judged.decision.reasons.join("; ")
                ));
                (action, ResolvedBy::Escalated)
            }
        };
        self.gate
            .conclude(&judged, Answer::Reported(action.to_owned()), by);
        allowed
    }

    /// A request from the agent. Runs on the dispatch loop: the gate reads what it needs from
    /// the tracker now (so the notifications sent before it are taken into account), then the
    /// slow part moves into a task.
    pub fn on_request(
        self: &std::sync::Arc<Self>,
        message: UntypedMessage,
        responder: Responder<Value>,
        cx: &ConnectionTo<Agent>,
    ) -> Result<(), Error> {
        let (method, params) = message.into_parts();
        let client = self.clone();
        if let Some(asked) = self.gate.read(&method, params.clone()) {
            let id = responder.raw_id().clone();
            if !lock(&self.in_flight).insert(id.clone()) {
                // Two answers on one id could be matched to either request: the second is
                // refused and never decided; the first is answered as usual.
                self.gate.output.error(&format!(
                    "the agent sent `{method}` with id {id}, which a request still in flight has; refused"
                ));
                return responder.respond_with_error(Error::invalid_request().data(json!(
                    format!(
                        "request id {id} is already in use by a request acp-gate has not answered"
                    )
                )));
            }
            let cancellation = responder.cancellation();
            return cx.spawn(async move {
                // On a runtime thread of its own: the connection goes on reading the agent's
                // messages (a `$/cancel_request` of this one) while the chain decides.
                let deciding = {
                    let client = client.clone();
                    let withdrawn = async move { cancellation.cancelled().await };
                    tokio::spawn(async move { client.gated(asked, withdrawn).await })
                };
                let result = deciding.await.unwrap_or_else(|panicked| {
                    Err(Error::internal_error().data(json!(panicked.to_string())))
                });
                lock(&client.in_flight).remove(&id);
                let _ = match result {
                    Ok(value) => responder.respond(value),
                    Err(error) => responder.respond_with_error(error),
                };
                Ok(())
            });
        }
        let terminal = |params: &Value| {
            params
                .get("terminalId")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| anyhow::anyhow!("no `terminalId`"))
        };
        let result = match method.as_str() {
            "terminal/wait_for_exit" => {
                return cx.spawn(async move {
                    let result = match terminal(&params) {
                        Ok(id) => client
                            .terminals
                            .wait_for_exit(&id)
                            .await
                            .map(|e| e.to_json()),
                        Err(error) => Err(error),
                    };
                    respond(responder, result);
                    Ok(())
                });
            }
            "elicitation/create" => {
                return cx.spawn(async move {
                    let answer = match &client.prompter {
                        Some(prompter) => prompter.elicit(&params).await,
                        None => {
                            client.gate.output.notice(
                                "the agent asked a question (elicitation) and nobody can answer: declined",
                            );
                            json!({ "action": "decline" })
                        }
                    };
                    respond(responder, Ok(answer));
                    Ok(())
                });
            }
            "terminal/output" => terminal(&params).and_then(|id| self.terminals.output(&id)),
            "terminal/kill" => terminal(&params)
                .and_then(|id| self.terminals.kill(&id))
                .map(|()| json!({})),
            "terminal/release" => terminal(&params)
                .and_then(|id| self.terminals.release(&id))
                .map(|()| json!({})),
            _ => {
                return responder.respond_with_error(
                    Error::method_not_found().data(json!({ "method": method })),
                );
            }
        };
        respond(responder, result);
        Ok(())
    }

    /// A permission request or gated call: judged, settled, recorded, then answered (and, for
    /// an allowed call, carried out). A permission request for a tool call the agent's own hook
    /// brought already gets the answer the hook got ([`Gate::hook_answer`]).
    async fn gated(
        &self,
        asked: Asked,
        withdrawn: impl Future<Output = ()>,
    ) -> Result<Value, Error> {
        if let Asked::Permission { params, .. } = &asked
            && let Some(allowed) = self.gate.hook_answer(params).await
        {
            return Ok(gate::outcome_by_kind(params, allowed));
        }
        self.decided(asked, withdrawn).await.0
    }

    /// A tool call the agent's own hook brought (see [`super::own_hooks`]): its permission
    /// request decided as the agent's would be; whether it was let through, with the chain's
    /// verdict and reasons.
    pub async fn hooked(&self, mut asked: Asked) -> (bool, Verdict, Vec<String>) {
        // Recorded under the session `run` opened (the agent's own id for it may differ).
        if let Asked::Permission { params, .. } = &mut asked {
            params["sessionId"] = self.ctx().session_id.into();
        }
        let (result, judged) = self.decided(asked, std::future::pending()).await;
        let allowed = result.as_ref().is_ok_and(own_hooks::allowed);
        (allowed, judged.decision.outcome, judged.decision.reasons)
    }

    /// [`Client::gated`], its decision made here: the answer, and the request as judged.
    async fn decided(
        &self,
        asked: Asked,
        withdrawn: impl Future<Output = ()>,
    ) -> (Result<Value, Error>, Judged) {
        let ctx = self.ctx();
        // Where a file call's path led when the request arrived, to check again before acting.
        let target = match &asked {
            Asked::Call(Call::Read { path, .. } | Call::Write { path, .. }) => {
                Some((path.clone(), fs::resolve(path, &ctx)))
            }
            _ => None,
        };
        let judged = self.gate.judge(asked, &ctx).await;
        // The agent may withdraw its request (`$/cancel_request`): it is answered `cancelled`.
        let (answer, by) = tokio::select! {
            biased;
            () = withdrawn => (Answer::Cancelled, ResolvedBy::Cancelled),
            settled = self.answer(&judged) => settled,
        };
        let answer = match (answer, &target) {
            (answer @ (Answer::Allowed | Answer::Approved(_)), Some((raw, decided))) => {
                match fs::recheck(raw, &ctx, decided) {
                    Ok(_) => answer,
                    Err(changed) => Answer::Refused(format!("{changed:#}")),
                }
            }
            (answer, _) => answer,
        };
        let result = match self.gate.conclude(&judged, answer, by) {
            Reply::Outcome(value) => Ok(value),
            Reply::Error(error) => Err(error),
            Reply::Proceed => {
                let Asked::Call(call) = &judged.asked else {
                    unreachable!("only a call proceeds")
                };
                self.carry_out(call, &judged, target.map(|(_, decided)| decided))
            }
        };
        (result, judged)
    }

    /// The settled answer, in the agent's terms, and who gave it.
    async fn answer(&self, judged: &Judged) -> (Answer, ResolvedBy) {
        let Judged {
            asked,
            request,
            decision,
            ..
        } = judged;
        let is_call = asked.is_call();
        let choices: Vec<PromptChoice> = match is_call {
            false => request
                .options
                .iter()
                .map(|o| PromptChoice {
                    label: o.name.clone(),
                    kind: o.kind,
                    id: Some(o.id.clone()),
                })
                .collect(),
            true => [
                (OptionKind::AllowOnce, "Allow"),
                (OptionKind::AllowAlways, "Allow always in this session"),
                (OptionKind::RejectOnce, "Reject"),
            ]
            .map(|(kind, label)| PromptChoice {
                label: label.to_owned(),
                kind,
                id: None,
            })
            .into(),
        };
        let (settled, by) = self.settle(judged, &choices).await;
        let answer = match (settled, is_call) {
            (Settled::Cancelled, _) => Answer::Cancelled,
            (Settled::Allow(_), true) => Answer::Allowed,
            (Settled::Granted(note), true) => Answer::Approved(note),
            (Settled::Granted(note), false) => {
                Answer::by_kind(request, OptionKind::AllowOnce, Some(note))
            }
            (Settled::Reject { message, .. }, true) => Answer::Denied { message },
            // The person chose one of the agent's own options.
            (Settled::Allow(Some(option)), false)
            | (
                Settled::Reject {
                    chosen: Some(option),
                    ..
                },
                false,
            ) => Answer::Selected {
                option,
                message: None,
            },
            (_, false) if by == ResolvedBy::Chain => Answer::by_chain(request, decision),
            (Settled::Allow(_), false) => Answer::by_kind(request, OptionKind::AllowOnce, None),
            (Settled::Reject { message, .. }, false) => {
                Answer::by_kind(request, OptionKind::RejectOnce, message)
            }
        };
        (answer, by)
    }

    /// Runs the ask policy, prompting the person when it says to.
    async fn settle(&self, judged: &Judged, choices: &[PromptChoice]) -> (Settled, ResolvedBy) {
        let (request, decision) = (&judged.request, &judged.decision);
        let grant = self
            .gate
            .orchestration()
            .and_then(|o| o.granted(request, decision));
        match grant {
            Some(Granted::Allow(note)) => return (Settled::Granted(note), ResolvedBy::Granted),
            Some(Granted::Refused(why)) => self.gate.output.notice(&why),
            None => {}
        }
        let remembered = self.with_rules(|rules| rules.settling(request, decision).is_some());
        let reject = Settled::Reject {
            chosen: None,
            message: None,
        };
        let cancelled = *self.cancelled.borrow();
        match settle(
            decision.outcome,
            cancelled,
            remembered,
            self.prompter.is_some(),
        ) {
            Settle::Cancelled => return (Settled::Cancelled, ResolvedBy::Cancelled),
            Settle::Now { allow: true, by } => return (Settled::Allow(None), by),
            Settle::Now {
                allow: false,
                by: ResolvedBy::Escalated,
            } if self.escalator.is_some() => return self.escalate(judged).await,
            Settle::Now { allow: false, by } => return (reject, by),
            Settle::Prompt => {}
        }
        let Some(prompter) = &self.prompter else {
            return (reject, ResolvedBy::Escalated);
        };
        self.prompt(prompter, judged, decision, choices).await
    }

    /// An ask nobody here can answer ([`NOBODY`]), sent to the review service (see
    /// [`escalation`]); a cancelled turn stops the wait.
    async fn escalate(&self, judged: &Judged) -> (Settled, ResolvedBy) {
        let Some(escalator) = &self.escalator else {
            unreachable!("only called with a review service")
        };
        let reviewed = tokio::select! {
            reviewed = escalation::review(&self.gate, escalator, judged, NOBODY) => reviewed,
            () = self.until_cancelled() => return (Settled::Cancelled, ResolvedBy::Cancelled),
        };
        match reviewed {
            Reviewed::Allowed(note) => (Settled::Granted(note), ResolvedBy::Reviewer),
            Reviewed::Denied(note) => (
                Settled::Reject {
                    chosen: None,
                    message: Some(note),
                },
                ResolvedBy::Reviewer,
            ),
            Reviewed::Open(_) => (
                Settled::Reject {
                    chosen: None,
                    message: None,
                },
                ResolvedBy::Escalated,
            ),
        }
    }

    async fn prompt(
        &self,
        prompter: &Prompter,
        judged: &Judged,
        decision: &Decision,
        choices: &[PromptChoice],
    ) -> (Settled, ResolvedBy) {
        let request = &judged.request;
        let rule = SessionRule::for_request(request);
        let always_note = match &rule {
            Ok(rule) => format!("acp-gate remembers {} for this session", rule.describe()),
            Err(why) => format!("allows once: {why}"),
        };
        let answer = tokio::select! {
            answer = prompter.ask(request, decision, choices, &always_note) => answer,
            () = self.until_cancelled() => return (Settled::Cancelled, ResolvedBy::Cancelled),
        };
        let by = ResolvedBy::User;
        match answer {
            Choice::Choice(index) => {
                let choice = &choices[index];
                match choice.kind {
                    OptionKind::AllowOnce => (Settled::Allow(choice.id.clone()), by),
                    OptionKind::AllowAlways => {
                        if let Ok(rule) = rule {
                            self.gate.output.notice(&format!(
                                "remembered for this session: {} (type /rules to see, /forget N to revoke)",
                                rule.describe()
                            ));
                            self.with_rules(|rules| rules.remember(rule));
                        }
                        // The agent is told "once" so that it keeps asking, and acp-gate keeps
                        // judging: its own "always" may be broader than ours and cannot be revoked.
                        (Settled::Allow(None), by)
                    }
                    OptionKind::RejectOnce | OptionKind::RejectAlways => (
                        Settled::Reject {
                            chosen: choice.id.clone(),
                            message: None,
                        },
                        by,
                    ),
                }
            }
            Choice::RejectWithMessage(message) => (
                Settled::Reject {
                    chosen: None,
                    message: Some(message),
                },
                by,
            ),
            Choice::Unanswered => (
                Settled::Reject {
                    chosen: None,
                    message: None,
                },
                ResolvedBy::Escalated,
            ),
        }
    }

    /// Carries out a call the chain (or the person) allowed. `target` is where a file call's
    /// path led when it was judged (checked again just before).
    fn carry_out(
        &self,
        call: &Call,
        judged: &Judged,
        target: Option<PathBuf>,
    ) -> Result<Value, Error> {
        let done = match (call, target) {
            (Call::Read { line, limit, .. }, Some(target)) => {
                match fs::read(&target, *line, *limit) {
                    // A file the agent is about to create, read first (Gemini CLI reads every
                    // file it writes): empty, as an editor's new buffer is. Outside the
                    // workspace a missing file is not found.
                    Err(error)
                        if missing(&error)
                            && judged
                                .request
                                .workspace_roots
                                .iter()
                                .any(|root| inside(&target, root)) =>
                    {
                        Ok(json!({ "content": "" }))
                    }
                    read => read.map(|content| json!({ "content": content })),
                }
            }
            (Call::Write { content, .. }, Some(target)) => {
                fs::write(&target, content).map(|()| json!({}))
            }
            (
                Call::Terminal {
                    command,
                    args,
                    env,
                    output_limit,
                    ..
                },
                _,
            ) => self
                .terminals
                .create(Spawn {
                    command,
                    args,
                    cwd: &judged.request.cwd,
                    env: env.clone(),
                    output_limit: *output_limit,
                })
                .map(|id| json!({ "terminalId": id })),
            (Call::Read { .. } | Call::Write { .. }, None) => {
                unreachable!("a file call is judged with its target")
            }
        };
        done.map_err(|error| {
            let code = if missing(&error) { NOT_FOUND } else { -32603 };
            Error::new(ErrorCode::from(code), format!("{error:#}"))
        })
    }
}

/// Whether the resolved path `target` is inside the workspace root `root` (resolved too).
fn inside(target: &std::path::Path, root: &std::path::Path) -> bool {
    target.starts_with(root.canonicalize().as_deref().unwrap_or(root))
}

/// Whether `error` is a file that is not there.
fn missing(error: &anyhow::Error) -> bool {
    error.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    })
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

fn respond(responder: Responder<Value>, result: anyhow::Result<Value>) {
    let _ = match result {
        Ok(value) => responder.respond(value),
        Err(error) => {
            responder.respond_with_error(Error::invalid_params().data(json!(format!("{error:#}"))))
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_decides_allow_and_deny_and_only_an_ask_goes_further() {
        use ResolvedBy::*;
        let now = |allow, by| Settle::Now { allow, by };
        for (remembered, prompt) in [(false, false), (true, true), (false, true)] {
            assert_eq!(
                settle(Verdict::Allow, false, remembered, prompt),
                now(true, Chain)
            );
            assert_eq!(
                settle(Verdict::Deny, false, remembered, prompt),
                now(false, Chain)
            );
        }
        assert_eq!(
            settle(Verdict::Ask, false, true, true),
            now(true, SessionRule)
        );
        assert_eq!(settle(Verdict::Ask, false, false, true), Settle::Prompt);
        assert_eq!(
            settle(Verdict::Ask, false, false, false),
            now(false, Escalated)
        );
        for outcome in [Verdict::Allow, Verdict::Ask, Verdict::Deny] {
            assert_eq!(settle(outcome, true, true, true), Settle::Cancelled);
        }
    }
}
