//! The gate: what acp-gate does with each message the agent sends during a session.
//!
//! Every `session/request_permission`, `fs/*` and `terminal/create` becomes a
//! [`ToolRequest`] (enriched from the [`ToolCallTracker`]), goes through the [`Chain`], is
//! settled (the chain's allow or deny; for ask, a session rule, the person at the terminal, or
//! an escalation), is recorded in the [`AuditLog`], and only then answered. The work runs in
//! tasks spawned off the connection's dispatch loop, so a slow plugin or a person thinking
//! never stalls the stream.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Error, ErrorCode, UntypedMessage};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::ask::{Answer, PromptChoice, Prompter};
use super::calls::{self, Call, DENIED};
use super::fs;
use super::output::{Output, ResolvedBy, subject};
use super::rules::{SessionRule, SessionRules};
use super::terminal::{Spawn, Terminals};
use super::tracker::ToolCallTracker;
use crate::audit::AuditLog;
use crate::chain::{Chain, Decision, Outcome};
use crate::request::{OptionKind, PermissionOption, SessionContext, ToolRequest};

/// ACP's "resource not found".
const NOT_FOUND: i32 = -32002;

/// How the requests of a session were settled, for the summary.
#[derive(Debug, Default)]
pub struct Tally {
    pub allowed: AtomicUsize,
    pub denied: AtomicUsize,
    pub escalated: AtomicUsize,
    pub cancelled: AtomicUsize,
}

/// The settled answer to one request, before it is put in the agent's terms.
#[derive(Debug, Clone)]
enum Action {
    Allow {
        chosen: Option<String>,
    },
    Reject {
        chosen: Option<String>,
        message: Option<String>,
    },
    Cancelled,
}

struct Settlement {
    action: Action,
    resolved_by: ResolvedBy,
}

pub struct Gate {
    chain: Arc<Chain>,
    audit: AuditLog,
    ctx: RwLock<SessionContext>,
    tracker: Mutex<ToolCallTracker>,
    rules: Mutex<SessionRules>,
    /// `None`: nobody to ask (`--non-interactive`, or stdin is not a terminal).
    prompter: Option<Prompter>,
    pub output: Output,
    /// True from `session/cancel` until the next turn starts.
    cancelled: watch::Sender<bool>,
    terminals: Terminals,
    pub tally: Tally,
}

impl Gate {
    pub fn new(
        chain: Arc<Chain>,
        audit: AuditLog,
        ctx: SessionContext,
        prompter: Option<Prompter>,
        output: Output,
    ) -> Gate {
        Gate {
            chain,
            audit,
            ctx: RwLock::new(ctx),
            tracker: Mutex::new(ToolCallTracker::default()),
            rules: Mutex::new(SessionRules::default()),
            prompter,
            output,
            cancelled: watch::channel(false).0,
            terminals: Terminals::default(),
            tally: Tally::default(),
        }
    }

    pub fn audit_path(&self) -> &std::path::Path {
        self.audit.path()
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

    pub fn escalations(&self) -> usize {
        self.tally.escalated.load(Ordering::Relaxed)
    }

    /// The session rules, for the interactive `/rules` and `/forget N` commands.
    pub fn with_rules<T>(&self, f: impl FnOnce(&mut SessionRules) -> T) -> T {
        f(&mut self.rules.lock().unwrap_or_else(|p| p.into_inner()))
    }

    pub fn shutdown(&self) {
        self.terminals.kill_all();
    }

    async fn until_cancelled(&self) {
        let mut rx = self.cancelled.subscribe();
        let _ = rx.wait_for(|cancelled| *cancelled).await;
    }

    fn is_cancelled(&self) -> bool {
        *self.cancelled.borrow()
    }

    /// A notification from the agent: `session/update` feeds the tracker and the output.
    pub fn on_notification(&self, message: UntypedMessage) {
        let (method, params) = message.into_parts();
        if method != "session/update" {
            return;
        }
        let Some(update) = params.get("update") else {
            return;
        };
        let merged = self
            .tracker
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .observe(update);
        self.output.update(update, merged.as_ref());
    }

    /// A request from the agent. Runs on the dispatch loop: it reads what it needs from the
    /// tracker now (so the notifications sent before it are taken into account), then moves
    /// the slow part into a task.
    pub fn on_request(
        self: &Arc<Self>,
        message: UntypedMessage,
        responder: Responder<Value>,
        cx: &ConnectionTo<Agent>,
    ) -> Result<(), Error> {
        let (method, params) = message.into_parts();
        let gate = self.clone();
        if let Some(call) = Call::parse(&method, &params) {
            return cx.spawn(async move {
                match call {
                    Ok(call) => respond_call(responder, gate.carry_out(call).await),
                    Err(error) => respond_call(responder, Err(error)),
                }
                Ok(())
            });
        }
        match method.as_str() {
            "session/request_permission" => {
                let earlier = params
                    .pointer("/toolCall/toolCallId")
                    .and_then(Value::as_str)
                    .and_then(|id| {
                        self.tracker
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .get(id)
                    });
                cx.spawn(async move {
                    gate.permission(params, earlier, responder).await;
                    Ok(())
                })
            }
            "terminal/wait_for_exit" => cx.spawn(async move {
                let result = match terminal_id(&params) {
                    Ok(id) => gate.terminals.wait_for_exit(&id).await.map(|e| e.to_json()),
                    Err(error) => Err(error),
                };
                respond(responder, result);
                Ok(())
            }),
            "terminal/output" => {
                let result = terminal_id(&params).and_then(|id| self.terminals.output(&id));
                respond(responder, result);
                Ok(())
            }
            "terminal/kill" => {
                let result = terminal_id(&params)
                    .and_then(|id| self.terminals.kill(&id))
                    .map(|()| json!({}));
                respond(responder, result);
                Ok(())
            }
            "terminal/release" => {
                let result = terminal_id(&params)
                    .and_then(|id| self.terminals.release(&id))
                    .map(|()| json!({}));
                respond(responder, result);
                Ok(())
            }
            _ => responder
                .respond_with_error(Error::method_not_found().data(json!({ "method": method }))),
        }
    }

    /// `session/request_permission`: answered with the offered option the settlement selects,
    /// by kind, or `cancelled`.
    async fn permission(&self, params: Value, earlier: Option<Value>, responder: Responder<Value>) {
        let request =
            match ToolRequest::from_permission_request(&params, earlier.as_ref(), &self.ctx()) {
                Ok(request) => request,
                Err(error) => {
                    self.output
                        .error(&format!("an unreadable permission request: {error:#}"));
                    let _ = responder.respond_with_error(
                        Error::invalid_params().data(json!(format!("{error:#}"))),
                    );
                    return;
                }
            };
        // What the tool would be run with: in the request, or announced in the tool call.
        let input = params
            .pointer("/toolCall/rawInput")
            .or_else(|| earlier.as_ref().and_then(|e| e.get("rawInput")))
            .cloned()
            .unwrap_or(Value::Null);
        let decision = self.chain.decide(&request).await;
        let choices: Vec<PromptChoice> = request
            .options
            .iter()
            .map(|o| PromptChoice {
                label: o.name.clone(),
                kind: o.kind,
                id: Some(o.id.clone()),
            })
            .collect();
        let settlement = self.settle(&request, &decision, &choices).await;
        let (option, message) = match &settlement.action {
            Action::Allow { chosen } => (
                pick(
                    &request.options,
                    chosen.as_deref(),
                    OptionKind::AllowOnce,
                    &decision,
                    &settlement,
                ),
                None,
            ),
            Action::Reject { chosen, message } => (
                pick(
                    &request.options,
                    chosen.as_deref(),
                    OptionKind::RejectOnce,
                    &decision,
                    &settlement,
                ),
                message.clone(),
            ),
            Action::Cancelled => (None, None),
        };
        let answer = option.map_or("cancelled", |o| o.id.as_str()).to_owned();
        let mut response = match option {
            Some(option) => json!({ "outcome": { "outcome": "selected", "optionId": option.id } }),
            None => json!({ "outcome": { "outcome": "cancelled" } }),
        };
        if let Some(message) = &message {
            // ACP has no field for it: agents that read `_meta` can show it to their model.
            response["_meta"] = json!({ "acpGate": { "message": message } });
        }
        if !self.record(
            &request,
            &decision,
            &settlement,
            &answer,
            message.as_deref(),
            &input,
        ) {
            let _ = responder.respond_with_error(Error::internal_error().data(json!(
                "acp-gate could not record the decision in its audit log, so it was not made"
            )));
            return;
        }
        let _ = responder.respond(response);
    }

    /// A gated call acp-gate carries out itself once the chain (or the person) allowed it.
    async fn carry_out(&self, call: Call) -> Result<Value, Error> {
        let ctx = self.ctx();
        let request = call.tool_request(&ctx);
        match &call {
            Call::Read { path, line, limit } => {
                let decided = fs::resolve(path, &ctx);
                self.gated_call(&request, &ctx, Some((path, &decided)), |target| {
                    let target = target.expect("fs calls have a target");
                    fs::read(&target, *line, *limit).map(|content| json!({ "content": content }))
                })
                .await
            }
            Call::Write { path, content } => {
                let decided = fs::resolve(path, &ctx);
                self.gated_call(&request, &ctx, Some((path, &decided)), |target| {
                    let target = target.expect("fs calls have a target");
                    fs::write(&target, content).map(|()| json!({}))
                })
                .await
            }
            Call::Terminal {
                command,
                args,
                env,
                output_limit,
                ..
            } => {
                let run_in = request.cwd.clone();
                self.gated_call(&request, &ctx, None, |_| {
                    self.terminals
                        .create(Spawn {
                            command,
                            args,
                            cwd: &run_in,
                            env: env.clone(),
                            output_limit: *output_limit,
                        })
                        .map(|id| json!({ "terminalId": id }))
                })
                .await
            }
        }
    }

    /// The common path of the calls acp-gate carries out itself: decide, settle, re-check the
    /// file's path, record, then act. `target` is the path as sent and where it led when the
    /// request arrived.
    async fn gated_call(
        &self,
        request: &ToolRequest,
        ctx: &SessionContext,
        target: Option<(&str, &PathBuf)>,
        act: impl FnOnce(Option<PathBuf>) -> anyhow::Result<Value>,
    ) -> Result<Value, Error> {
        let decision = self.chain.decide(request).await;
        let choices = [
            (OptionKind::AllowOnce, "Allow"),
            (OptionKind::AllowAlways, "Allow always in this session"),
            (OptionKind::RejectOnce, "Reject"),
        ]
        .map(|(kind, label)| PromptChoice {
            label: label.to_owned(),
            kind,
            id: None,
        });
        let settlement = self.settle(request, &decision, &choices).await;
        let (answer, outcome) = match &settlement.action {
            Action::Allow { .. } => {
                match target.map(|(raw, decided)| fs::recheck(raw, ctx, decided)) {
                    Some(Err(changed)) => (
                        format!("refused: {changed:#}"),
                        Err(Error::new(
                            ErrorCode::from(DENIED),
                            format!("acp-gate: {changed:#}"),
                        )),
                    ),
                    checked => ("allowed".to_owned(), Ok(checked.map(Result::unwrap))),
                }
            }
            Action::Reject { message, .. } => (
                "denied".to_owned(),
                Err(calls::denial(&decision, message.as_deref())),
            ),
            Action::Cancelled => ("cancelled".to_owned(), Err(Error::request_cancelled())),
        };
        let message = match &settlement.action {
            Action::Reject { message, .. } => message.as_deref(),
            _ => None,
        };
        if !self.record(
            request,
            &decision,
            &settlement,
            &answer,
            message,
            &request.raw,
        ) {
            return Err(Error::internal_error().data(json!(
                "acp-gate could not record the decision in its audit log, so it was not made"
            )));
        }
        let target = outcome?;
        act(target).map_err(|error| {
            let code = if error.chain().any(|e| {
                e.downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound)
            }) {
                NOT_FOUND
            } else {
                -32603
            };
            Error::new(ErrorCode::from(code), format!("{error:#}"))
        })
    }

    /// The chain's allow and deny stand; an ask goes to a session rule, then the person at
    /// the terminal, else it is rejected and escalated.
    async fn settle(
        &self,
        request: &ToolRequest,
        decision: &Decision,
        choices: &[PromptChoice],
    ) -> Settlement {
        let settled = |action, resolved_by| Settlement {
            action,
            resolved_by,
        };
        if self.is_cancelled() {
            return settled(Action::Cancelled, ResolvedBy::Cancelled);
        }
        match decision.outcome {
            Outcome::Allow => return settled(Action::Allow { chosen: None }, ResolvedBy::Chain),
            Outcome::Deny => {
                return settled(
                    Action::Reject {
                        chosen: None,
                        message: None,
                    },
                    ResolvedBy::Chain,
                );
            }
            Outcome::Ask => {}
        }
        let remembered = self
            .rules
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .settling(request, decision)
            .is_some();
        if remembered {
            return settled(Action::Allow { chosen: None }, ResolvedBy::SessionRule);
        }
        let Some(prompter) = &self.prompter else {
            return settled(
                Action::Reject {
                    chosen: None,
                    message: None,
                },
                ResolvedBy::Escalated,
            );
        };
        let rule = SessionRule::for_request(request);
        let always_note = match &rule {
            Ok(rule) => format!("acp-gate remembers {} for this session", rule.describe()),
            Err(why) => format!("allows once: {why}"),
        };
        let answer = tokio::select! {
            answer = prompter.ask(request, decision, choices, &always_note) => answer,
            () = self.until_cancelled() => return settled(Action::Cancelled, ResolvedBy::Cancelled),
        };
        match answer {
            Answer::Choice(index) => {
                let choice = &choices[index];
                match choice.kind {
                    OptionKind::AllowOnce => settled(
                        Action::Allow {
                            chosen: choice.id.clone(),
                        },
                        ResolvedBy::User,
                    ),
                    OptionKind::AllowAlways => {
                        if let Ok(rule) = rule {
                            self.output.notice(&format!(
                                "remembered for this session: {} (type /rules to see, /forget N to revoke)",
                                rule.describe()
                            ));
                            self.rules
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .remember(rule);
                        }
                        // The agent is told "once" so that it keeps asking, and acp-gate keeps
                        // judging: its own "always" may be broader than ours and cannot be revoked.
                        settled(Action::Allow { chosen: None }, ResolvedBy::User)
                    }
                    OptionKind::RejectOnce | OptionKind::RejectAlways => settled(
                        Action::Reject {
                            chosen: choice.id.clone(),
                            message: None,
                        },
                        ResolvedBy::User,
                    ),
                }
            }
            Answer::RejectWithMessage(message) => settled(
                Action::Reject {
                    chosen: None,
                    message: Some(message),
                },
                ResolvedBy::User,
            ),
            Answer::Unanswered => settled(
                Action::Reject {
                    chosen: None,
                    message: None,
                },
                ResolvedBy::Escalated,
            ),
        }
    }

    /// Audits the decision (before anything is answered), shows it, and emits the escalation
    /// record when nobody could be asked. Returns false when the audit log could not be written.
    fn record(
        &self,
        request: &ToolRequest,
        decision: &Decision,
        settlement: &Settlement,
        answer: &str,
        message: Option<&str>,
        input: &Value,
    ) -> bool {
        let audited = settlement.resolved_by.annotate(answer, message);
        if let Err(error) = self.audit.record(request, decision, &audited) {
            self.output.error(&format!("{error:#}"));
            return false;
        }
        let counter = match &settlement.action {
            Action::Allow { .. } => &self.tally.allowed,
            Action::Reject { .. } => &self.tally.denied,
            Action::Cancelled => &self.tally.cancelled,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        self.output
            .decision(request, decision, settlement.resolved_by, answer);
        if settlement.resolved_by == ResolvedBy::Escalated {
            self.tally.escalated.fetch_add(1, Ordering::Relaxed);
            self.output
                .escalation(&escalation_record(request, decision, answer, input));
        }
        true
    }
}

/// The option to send: the one the person chose, else the decision's by kind. For a chain
/// verdict that is exactly [`Decision::select_option`]; `None` answers `cancelled`.
fn pick<'a>(
    options: &'a [PermissionOption],
    chosen: Option<&str>,
    kind: OptionKind,
    decision: &Decision,
    settlement: &Settlement,
) -> Option<&'a PermissionOption> {
    if let Some(id) = chosen {
        return options.iter().find(|o| o.id == id);
    }
    if settlement.resolved_by == ResolvedBy::Chain {
        return decision.select_option(options);
    }
    options.iter().find(|o| o.kind == kind)
}

/// What an orchestrator needs to act on an ask nobody could answer.
pub fn escalation_record(
    request: &ToolRequest,
    decision: &Decision,
    answer: &str,
    input: &Value,
) -> Value {
    let tool = request
        .tool_name
        .clone()
        .unwrap_or_else(|| match request.source {
            crate::request::RequestSource::PermissionRequest => request.title.clone(),
            crate::request::RequestSource::FsRead => "fs/read_text_file".into(),
            crate::request::RequestSource::FsWrite => "fs/write_text_file".into(),
            crate::request::RequestSource::TerminalCreate => "terminal/create".into(),
        });
    json!({
        "type": "escalation",
        "session_id": request.session_id,
        "tool_call_id": request.tool_call_id,
        "source": request.source,
        "tool": tool,
        "kind": request.kind,
        "title": request.title,
        "subject": subject(request),
        "input": input,
        "paths": request.paths.iter().map(|p| p.absolute.clone()).collect::<Vec<_>>(),
        "decision": decision.outcome,
        "reasons": decision.reasons,
        "handlers": decision.handlers.iter().map(|h| json!({
            "name": h.name, "tier": h.tier, "verdict": h.verdict, "reason": h.reason,
        })).collect::<Vec<_>>(),
        "answer": answer,
    })
}

fn terminal_id(params: &Value) -> anyhow::Result<String> {
    params
        .get("terminalId")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| anyhow::anyhow!("no `terminalId`"))
}

fn respond(responder: Responder<Value>, result: anyhow::Result<Value>) {
    let _ = match result {
        Ok(value) => responder.respond(value),
        Err(error) => {
            responder.respond_with_error(Error::invalid_params().data(json!(format!("{error:#}"))))
        }
    };
}

fn respond_call(responder: Responder<Value>, result: Result<Value, Error>) {
    let _ = match result {
        Ok(value) => responder.respond(value),
        Err(error) => responder.respond_with_error(error),
    };
}
