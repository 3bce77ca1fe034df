//! Closing the loop to policy: the rules reviewers proposed, each with the requests that led to
//! it, exported as a `handlers.toml` fragment; and a what-if replay of the audit the gates
//! shipped under a proposed policy (admins), by `acp-gate audit replay`'s own code.

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Form, Router};
use serde::{Deserialize, Serialize};

use super::Service;
use super::auth::Reviewer;
use super::db::{Escalation, Role};
use super::error::Refusal;
use super::page::{PageResult, View, check_form, failed, signed_in};
use crate::replay::{self, Recorded, Report};
use crate::review::{self, Suggestion};

/// The largest policy a replay form takes.
const MAX_POLICY: usize = 256 << 10;
/// The most audit records one replay on the service decides again.
pub const MAX_REPLAYED: i64 = 1_000_000;

pub fn routes() -> Router<Arc<Service>> {
    Router::new()
        .route("/policy", get(policy))
        .route("/policy/proposals.toml", get(export))
        .route(
            "/policy/replay",
            post(replay).layer(DefaultBodyLimit::max(MAX_POLICY)),
        )
}

/// A proposed rule and the escalations whose allows proposed it.
#[derive(Debug, Serialize)]
pub struct Proposed {
    pub rule: Suggestion,
    pub escalations: Vec<Escalation>,
}

/// The proposals, merged into rules (as `audit suggest` merges approvals), newest first.
fn proposed(escalations: Vec<Escalation>) -> Vec<Proposed> {
    let rules = review::proposals(escalations.iter().map(|e| e.subject.as_str()));
    let mut proposed: Vec<Proposed> = rules
        .into_iter()
        .map(|rule| Proposed {
            rule,
            escalations: Vec::new(),
        })
        .collect();
    for escalation in escalations {
        let command = review::proposal(&escalation.subject).map(|s| s.commands[0].clone());
        if let Some(group) = proposed.iter_mut().find(|p| {
            command
                .as_ref()
                .is_some_and(|c| p.rule.commands.contains(c))
        }) {
            group.escalations.push(escalation);
        }
    }
    proposed.sort_by_key(|p| std::cmp::Reverse(p.escalations.first().and_then(|e| e.decided_ms)));
    proposed
}

async fn policy(State(service): State<Arc<Service>>, reviewer: Reviewer) -> PageResult {
    page(&service, &reviewer, None).await
}

/// The policy page, with a replay's findings when one was run.
async fn page(service: &Service, reviewer: &Reviewer, replay: Option<&Replayed>) -> PageResult {
    let escalations =
        (service.db.proposals().await).map_err(|e| failed(service, Some(reviewer), e.into()))?;
    let proposed = proposed(escalations);
    signed_in(
        service,
        reviewer,
        View::Policy {
            proposed: &proposed,
            replay,
        },
    )
    .await
}

/// Every proposed rule as one `handlers.toml` (an org-policy handler), to review and take into
/// the org's file: each rule's `match` examples are the commands allowed.
async fn export(State(service): State<Arc<Service>>, reviewer: Reviewer) -> PageResult {
    let escalations =
        (service.db.proposals().await).map_err(|e| failed(&service, Some(&reviewer), e.into()))?;
    let rules: Vec<Suggestion> = proposed(escalations).into_iter().map(|p| p.rule).collect();
    let header = format!(
        "# Proposed by reviewers on the review service: {} rule(s), each allowing exactly the\n\
         # commands reviewers allowed with a proposal (its `match` examples). Review, replay\n\
         # against real traffic (`acp-gate audit replay --handlers THIS_FILE`), then take the\n\
         # rules into the org's handlers.toml.\n",
        rules.len()
    );
    let headers = [
        (header::CONTENT_TYPE, "application/toml; charset=utf-8"),
        (
            header::CONTENT_DISPOSITION,
            "attachment; filename=\"proposed-rules.toml\"",
        ),
    ];
    Ok((headers, review::rules_toml(&rules, &header)).into_response())
}

#[derive(Deserialize)]
struct ReplayForm {
    #[serde(default)]
    csrf: String,
    handlers: String,
    #[serde(default)]
    since: String,
    #[serde(default)]
    until: String,
}

/// What a replay on the service was asked for and found.
#[derive(Debug, Serialize)]
pub struct Replayed {
    pub handlers: String,
    pub since: String,
    pub until: String,
    pub report: Report,
    /// Records in the range beyond [`MAX_REPLAYED`] were left out.
    pub cut: bool,
}

async fn replay(
    State(service): State<Arc<Service>>,
    reviewer: Reviewer,
    headers: HeaderMap,
    Form(form): Form<ReplayForm>,
) -> PageResult {
    let fail = |refusal: Refusal| failed(&service, Some(&reviewer), refusal);
    check_form(&service, &reviewer, &headers, &form.csrf).map_err(fail)?;
    if reviewer.token.role != Role::Admin {
        return Err(fail(Refusal::forbidden(
            "only an admin replays the audit under another policy (it loads the policy on the service)",
        )));
    }
    // As typed: a browser sends a text area's lines ended by CRLF, and the page shows each
    // hidden character as its escape, which reads back as the character.
    let form = ReplayForm {
        handlers: super::visible::unplain(&form.handlers.replace("\r\n", "\n")).into_owned(),
        ..form
    };
    let replayed = replay_audit(&service, &form).await.map_err(fail)?;
    page(&service, &reviewer, Some(&replayed)).await
}

/// The audit of `form`'s time range decided again under its policy.
async fn replay_audit(service: &Service, form: &ReplayForm) -> Result<Replayed, Refusal> {
    let bad = |message: String| Refusal::new(axum::http::StatusCode::UNPROCESSABLE_ENTITY, message);
    let now = super::db::now();
    let moment = |text: &str, otherwise: i64| match text.trim() {
        "" => Ok(otherwise),
        text => replay::moment(text, now as u64)
            .map(|ms| ms as i64)
            .map_err(|e| bad(format!("{e:#}"))),
    };
    let (from, to) = (moment(&form.since, 0)?, moment(&form.until, i64::MAX)?);
    builtin_only(&form.handlers).map_err(bad)?;
    // The proposed policy as the org layer of an empty place: no file of the service's own
    // (its user's or a project's) takes part.
    let place = tempfile::tempdir().map_err(|e| Refusal::from(anyhow::Error::from(e)))?;
    let org = place.path().join("handlers.toml");
    let empty = place.path().join("empty.toml");
    std::fs::write(&org, &form.handlers).map_err(|e| Refusal::from(anyhow::Error::from(e)))?;
    std::fs::write(&empty, "").map_err(|e| Refusal::from(anyhow::Error::from(e)))?;
    let options = crate::LoadOptions {
        handlers: Some(empty),
        org_handlers: Some(org),
        workspace: place.path().to_path_buf(),
        permission_policy: None,
    };
    let chain = crate::load_chain(&options)
        .await
        .map_err(|e| bad(format!("the policy does not load: {e:#}")))?;
    if let Some((handler, why)) = chain.load_failures().next() {
        return Err(bad(format!(
            "the policy does not load: handler `{}`: {why}",
            handler.name
        )));
    }
    let lines = (service.db.audit_lines(from, to, MAX_REPLAYED + 1).await)?;
    let cut = lines.len() as i64 > MAX_REPLAYED;
    let (mut records, mut skipped) = (Vec::new(), 0);
    for line in lines.iter().take(MAX_REPLAYED as usize) {
        match Recorded::from_line(line) {
            Some(record) => records.push(record),
            None => skipped += 1,
        }
    }
    let report = replay::replay(Arc::new(chain), records, skipped).await?;
    Ok(Replayed {
        handlers: form.handlers.clone(),
        since: form.since.clone(),
        until: form.until.clone(),
        report,
        cut,
    })
}

/// A policy replayed on the service names built-in plugins only: a plugin file or a registry
/// reference would be read from the service's own disk or fetched by it.
fn builtin_only(text: &str) -> Result<(), String> {
    let policy: toml::Table =
        toml::from_str(text).map_err(|e| format!("the policy is not TOML: {e}"))?;
    let handlers = policy.get("handler").and_then(toml::Value::as_array);
    for handler in handlers.into_iter().flatten() {
        let plugin = handler
            .get("plugin")
            .and_then(toml::Value::as_str)
            .unwrap_or("");
        if !plugin.starts_with("builtin:") {
            let name = handler
                .get("name")
                .and_then(toml::Value::as_str)
                .unwrap_or("?");
            return Err(format!(
                "handler `{name}`: the service replays built-in plugins only (`builtin:…`), not `{plugin}`: replay a policy with other plugins where they are, with `acp-gate audit replay --handlers FILE`"
            ));
        }
    }
    Ok(())
}
