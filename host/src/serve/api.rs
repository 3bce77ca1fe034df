//! The versioned JSON API (`/v1`): gates submit escalations (idempotent on the id), wait for
//! their decisions (long-poll with a deadline), claim a grant for a resumed session, post
//! audit batches and report themselves for the fleet view; reviewers' scripts list and decide. Every input is validated, with an error
//! that names the field.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Service;
use super::auth::Caller;
use super::db::{AuditRecord, AuditSummary, Escalation, Listed, Role, Submitted, Token};
use super::decision::{Choice, signed};
use super::error::Refusal;
use super::find::Filter;
use super::fleet::{self, Gates};
use crate::service::fleet::{GateReport, Reported};
use crate::service::{AuditBatch, Ingested, Submission, Waited};

/// The largest escalation a gate may send, and the largest audit batch.
const MAX_SUBMISSION: usize = 256 << 10;
const MAX_BATCH: usize = 8 << 20;
/// The most records in one audit batch.
const MAX_RECORDS: usize = 5000;
/// The longest one wait may hold.
const MAX_WAIT: Duration = Duration::from_secs(60);
/// How often a waiter looks at the database again even without a wake-up.
const RECHECK: Duration = Duration::from_secs(5);

pub fn routes() -> Router<Arc<Service>> {
    Router::new()
        .route("/v1/health", get(|| async { Json(json!({ "ok": true })) }))
        .route("/v1/key", get(key))
        .route(
            "/v1/escalations",
            post(submit)
                .get(list)
                .layer(DefaultBodyLimit::max(MAX_SUBMISSION)),
        )
        .route("/v1/escalations/{id}", get(show))
        .route(
            "/v1/escalations/{id}/decision",
            get(wait)
                .post(decide)
                .layer(DefaultBodyLimit::max(MAX_SUBMISSION)),
        )
        .route("/v1/escalations/{id}/claim", post(claim))
        .route(
            "/v1/audit",
            post(audit).layer(DefaultBodyLimit::max(MAX_BATCH)),
        )
        .route("/v1/audit/summary", get(summary))
        .route(
            "/v1/gates/report",
            post(report).layer(DefaultBodyLimit::max(MAX_SUBMISSION)),
        )
        .route("/v1/gates", get(gates))
        .route("/v1/audit/records", get(records))
}

/// A filter from a query, tidied, or a 400 that names the field.
fn tidied(filter: Filter) -> Result<Filter, Refusal> {
    filter.tidy().map_err(Refusal::bad_request)
}

/// The organisation's audit, grouped as the page shows it (over the records the query's
/// filter picks: `from`, `to`, `developer`…).
async fn summary(
    State(service): State<Arc<Service>>,
    Caller(token): Caller,
    Query(filter): Query<Filter>,
) -> Result<Json<AuditSummary>, Refusal> {
    require(&token, Role::Reviewer, "reading the audit")?;
    Ok(Json(service.db.audit_summary(&tidied(filter)?).await?))
}

/// A page of the audited calls the query's filter picks, newest first.
async fn records(
    State(service): State<Arc<Service>>,
    Caller(token): Caller,
    Query(filter): Query<Filter>,
) -> Result<Json<Listed<AuditRecord>>, Refusal> {
    require(&token, Role::Reviewer, "reading the audit")?;
    Ok(Json(service.db.audit_records(&tidied(filter)?).await?))
}

/// A gate reports itself for the fleet view: kept as its last report; the answer says what
/// the service finds wrong with it.
async fn report(
    State(service): State<Arc<Service>>,
    Caller(token): Caller,
    Json(report): Json<GateReport>,
) -> Result<Json<Reported>, Refusal> {
    require(&token, Role::Gate, "reporting a gate")?;
    fleet::validate(&report).map_err(Refusal::bad_request)?;
    if !service
        .db
        .report_gate(&token, &report, fleet::MAX_GATES)
        .await?
    {
        return Err(Refusal::conflict(format!(
            "token `{}` reports {} gates already (machines and logins): one more is refused",
            token.name,
            fleet::MAX_GATES
        )));
    }
    let fleet = &service.settings.fleet;
    let now = super::db::now();
    Ok(Json(Reported {
        published: fleet.published.clone(),
        flags: (fleet.flags(&report, now, now).into_iter())
            .map(|flag| flag.text)
            .collect(),
    }))
}

/// Every gate, flagged ones first.
async fn gates(
    State(service): State<Arc<Service>>,
    Caller(token): Caller,
) -> Result<Json<Gates>, Refusal> {
    require(&token, Role::Reviewer, "reading the fleet")?;
    Ok(Json(
        service.settings.fleet.gates(service.db.gates().await?),
    ))
}

/// The key decisions are signed with, for `[escalation] key` in the org file.
async fn key(State(service): State<Arc<Service>>) -> Json<Value> {
    let key = service.key.public_key();
    Json(json!({ "public_key": key.to_pem(), "fingerprint": key.fingerprint() }))
}

fn require(token: &Token, role: Role, what: &str) -> Result<(), Refusal> {
    let allowed = match role {
        Role::Gate => token.role == Role::Gate,
        _ => token.role >= role,
    };
    if allowed {
        return Ok(());
    }
    Err(Refusal::forbidden(format!(
        "token `{}` is a {} token: {what} needs a {} token",
        token.name,
        token.role.as_str(),
        role.as_str()
    )))
}

/// Checks a submission's fields; the first bad one is named.
fn validate(submission: &Submission) -> Result<(), Refusal> {
    let id_ok = |id: &str| {
        !id.is_empty()
            && id.len() <= 128
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    if !id_ok(&submission.id) {
        return Err(Refusal::bad_request(
            "`id`: 1 to 128 letters, digits, `-`, `_` or `.`",
        ));
    }
    if submission.fingerprint.len() != 64
        || !submission
            .fingerprint
            .chars()
            .all(|c| c.is_ascii_hexdigit())
    {
        return Err(Refusal::bad_request("`fingerprint`: 64 hexadecimal digits"));
    }
    let short = [
        ("session_id", &submission.session_id),
        ("kind", &submission.kind),
        ("tool", &submission.tool),
        ("developer", &submission.developer),
        ("machine", &submission.machine),
        ("agent", &submission.agent),
    ];
    for (field, value) in short {
        if value.len() > 256 {
            return Err(Refusal::bad_request(format!(
                "`{field}`: at most 256 bytes"
            )));
        }
    }
    if submission.session_id.is_empty() || submission.kind.is_empty() {
        return Err(Refusal::bad_request(
            "`session_id` and `kind` must not be empty",
        ));
    }
    if submission.reasons.len() > 100 || submission.paths.len() > 1000 {
        return Err(Refusal::bad_request(
            "`reasons` (at most 100) or `paths` (at most 1000) is too long",
        ));
    }
    Ok(())
}

async fn submit(
    State(service): State<Arc<Service>>,
    Caller(token): Caller,
    Json(submission): Json<Submission>,
) -> Result<(StatusCode, Json<Value>), Refusal> {
    require(&token, Role::Gate, "submitting an escalation")?;
    validate(&submission)?;
    match service.db.submit(&token, &submission).await? {
        Submitted::Created => {
            if let Some(escalation) = service.db.escalation(&submission.id).await? {
                service.announce(&escalation);
            }
            Ok((
                StatusCode::CREATED,
                Json(json!({ "id": submission.id, "status": "open" })),
            ))
        }
        Submitted::Existing => Ok((
            StatusCode::OK,
            Json(json!({ "id": submission.id, "status": "known" })),
        )),
        Submitted::Conflict(why) => Err(Refusal::conflict(format!(
            "escalation {}: {why}",
            submission.id
        ))),
    }
}

/// Escalation `id` as `token` may see it: its own gate's, or any for a reviewer.
async fn visible(service: &Service, token: &Token, id: &str) -> Result<Escalation, Refusal> {
    let escalation = service.db.escalation(id).await?;
    match escalation {
        Some(e) if token.role.reviews() || e.token_id == token.id => Ok(e),
        _ => Err(Refusal::not_found(format!("no escalation {id} of yours"))),
    }
}

async fn show(
    State(service): State<Arc<Service>>,
    Caller(token): Caller,
    Path(id): Path<String>,
) -> Result<Json<Escalation>, Refusal> {
    Ok(Json(visible(&service, &token, &id).await?))
}

#[derive(Deserialize)]
struct WaitQuery {
    #[serde(default)]
    wait_ms: u64,
}

/// Long-poll: the decision, or `open` when `wait_ms` passed without one.
async fn wait(
    State(service): State<Arc<Service>>,
    Caller(token): Caller,
    Path(id): Path<String>,
    Query(query): Query<WaitQuery>,
) -> Result<Json<Waited>, Refusal> {
    require(&token, Role::Gate, "waiting for a decision")?;
    let held = Duration::from_millis(query.wait_ms).min(MAX_WAIT);
    let deadline = tokio::time::Instant::now() + held;
    let waiting = service.wake.wait(&id);
    // The page shows that this escalation's gate waits, and until when this poll holds (only
    // the gate's own escalation is marked: the update names its token).
    let until = super::db::now() + held.as_millis() as i64;
    service.db.gate_waits(&id, &token, until).await?;
    loop {
        let notified = waiting.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let escalation = visible(&service, &token, &id).await?;
        if let Some(decision) = signed(&escalation) {
            if !service.db.deliver(&id, &token).await? {
                return Err(Refusal::conflict(format!(
                    "the decision of escalation {id} was claimed by a resumed session already: a decision is used once"
                )));
            }
            return Ok(Json(Waited::Decided { decision }));
        }
        let now = tokio::time::Instant::now();
        if now >= deadline || service.wake.closing() {
            return Ok(Json(Waited::Open));
        }
        let _ = tokio::time::timeout((deadline - now).min(RECHECK), notified).await;
    }
}

/// A resumed session takes its grant: once.
async fn claim(
    State(service): State<Arc<Service>>,
    Caller(token): Caller,
    Path(id): Path<String>,
) -> Result<Json<Waited>, Refusal> {
    require(&token, Role::Gate, "claiming a grant")?;
    let escalation = visible(&service, &token, &id).await?;
    let Some(decision) = signed(&escalation) else {
        return Ok(Json(Waited::Open));
    };
    if !service.db.claim(&id, &token).await? {
        return Err(Refusal::conflict(format!(
            "the decision of escalation {id} was claimed already, or delivered to the gate that waited for it: a grant is used once"
        )));
    }
    Ok(Json(Waited::Decided { decision }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecideBody {
    choice: Choice,
    #[serde(default)]
    message: Option<String>,
}

async fn decide(
    State(service): State<Arc<Service>>,
    Caller(token): Caller,
    Path(id): Path<String>,
    Json(body): Json<DecideBody>,
) -> Result<Json<Escalation>, Refusal> {
    let decided = service
        .decide(&token, &id, body.choice, body.message.as_deref())
        .await?;
    Ok(Json(decided))
}

/// Whether a list is of the decided escalations (`?decided=true`) rather than the open ones.
#[derive(Deserialize)]
struct ListQuery {
    #[serde(default)]
    decided: bool,
}

async fn list(
    State(service): State<Arc<Service>>,
    Caller(token): Caller,
    Query(query): Query<ListQuery>,
    Query(filter): Query<Filter>,
) -> Result<Json<Vec<Escalation>>, Refusal> {
    require(&token, Role::Reviewer, "listing escalations")?;
    let filter = tidied(filter)?;
    Ok(Json(
        service.db.list(!query.decided, &filter).await?.listed.rows,
    ))
}

async fn audit(
    State(service): State<Arc<Service>>,
    Caller(token): Caller,
    Json(batch): Json<AuditBatch>,
) -> Result<Json<Ingested>, Refusal> {
    require(&token, Role::Gate, "shipping audit records")?;
    if batch.records.len() > MAX_RECORDS {
        return Err(Refusal::bad_request(format!(
            "`records`: at most {MAX_RECORDS} in one batch"
        )));
    }
    if let Some(bad) = batch
        .records
        .iter()
        .find(|r| r.log.is_empty() || r.log.len() > 64 || r.seq == 0 || !r.record.is_object())
    {
        return Err(Refusal::bad_request(format!(
            "record {} of log `{}`: a record needs a log id (1 to 64 bytes), a number from 1 and an object",
            bad.seq, bad.log
        )));
    }
    let (accepted, duplicates, breaks) = service.db.ingest(&token, &batch.records).await?;
    Ok(Json(Ingested {
        accepted,
        duplicates,
        breaks,
    }))
}
