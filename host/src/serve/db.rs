//! The review service's storage: SQLite (a file, the default) or PostgreSQL, behind one
//! `sqlx::Any` pool and one set of queries in the SQL both speak. Migrations are compiled into
//! the binary (`host/migrations/`) and run on start; nothing needs a database at build time.

use std::borrow::Cow;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::{AnyPool, Row};

use super::find::{Bound, Filter, PAGE_SIZE, Paged};
use super::waiting::{GRACE_MS, Gate, Reached};
use crate::distribution::signature::PrivateKey;
use crate::record::ResolvedBy;
use crate::service::fleet::GateReport;
use crate::service::{Ruling, ShippedRecord, Submission};

/// The migrations, in order: (version, description, SQL).
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (
        1,
        "review service",
        include_str!("../../migrations/0001_review_service.sql"),
    ),
    (
        2,
        "decision delivered",
        include_str!("../../migrations/0002_decision_delivered.sql"),
    ),
    (
        3,
        "gate waiting",
        include_str!("../../migrations/0003_gate_waiting.sql"),
    ),
    (
        4,
        "audit decided by",
        include_str!("../../migrations/0004_audit_decided_by.sql"),
    ),
    (
        5,
        "session escalations",
        include_str!("../../migrations/0005_session_escalations.sql"),
    ),
    (
        6,
        "escalation developer",
        include_str!("../../migrations/0006_escalation_developer.sql"),
    ),
    (7, "gates", include_str!("../../migrations/0007_gates.sql")),
];

/// How many of a session's other escalations an escalation's page lists.
const SESSION_SHOWN: usize = 50;

/// Which database a URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A role a token gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A developer's gate: submits escalations, waits for them, ships audit. Decides nothing.
    Gate,
    /// Decides escalations (never their own) and reads the page.
    Reviewer,
    /// A reviewer who also sees every token.
    Admin,
}

impl Role {
    pub fn parse(text: &str) -> Result<Role> {
        match text {
            "gate" => Ok(Role::Gate),
            "reviewer" => Ok(Role::Reviewer),
            "admin" => Ok(Role::Admin),
            other => bail!("`{other}` is not a role: gate, reviewer or admin"),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Gate => "gate",
            Role::Reviewer => "reviewer",
            Role::Admin => "admin",
        }
    }

    /// Whether it may decide escalations and read the page.
    pub fn reviews(self) -> bool {
        self >= Role::Reviewer
    }
}

/// A token's record (never its secret).
#[derive(Debug, Clone, Serialize)]
pub struct Token {
    pub id: String,
    pub name: String,
    pub role: Role,
    pub team: Option<String>,
    pub created_ms: i64,
    pub revoked_ms: Option<i64>,
}

impl Token {
    /// The person a token stands for, normalised: its name up to `@` (`alice@laptop` is
    /// alice's).
    pub fn person(&self) -> String {
        super::identity::person(&self.name)
    }
}

/// An escalation as stored.
#[derive(Debug, Clone, Serialize)]
pub struct Escalation {
    pub id: String,
    pub token_id: String,
    pub requester: String,
    pub team: Option<String>,
    pub session_id: String,
    pub fingerprint: String,
    pub kind: String,
    pub tool: String,
    pub subject: String,
    pub agent: String,
    pub submission: Submission,
    pub created_ms: i64,
    pub status: String,
    pub reviewer: Option<String>,
    pub decided_ms: Option<i64>,
    pub message: Option<String>,
    pub rule: Option<String>,
    pub statement: Option<String>,
    pub signature: Option<String>,
    /// When a resumed session claimed the decision as its grant.
    pub claimed_ms: Option<i64>,
    /// When the decision reached the gate that waited for it.
    pub delivered_ms: Option<i64>,
    /// When the latest long-poll of its gate ends (none: its gate never waited).
    pub gate_until_ms: Option<i64>,
    /// Whether its gate waits, as the escalation was read.
    pub gate: Gate,
    /// What became of its decision, once decided.
    pub reached: Option<Reached>,
}

#[cfg(test)]
impl Escalation {
    /// For tests: an open escalation of alice's (`alice@laptop`, team payments), asking to run
    /// `subject`.
    pub fn example(id: &str, subject: &str) -> Escalation {
        let submission = Submission {
            id: id.to_owned(),
            session_id: "session-1".to_owned(),
            fingerprint: "a".repeat(64),
            kind: "execute".to_owned(),
            tool: "Bash".to_owned(),
            title: subject.to_owned(),
            subject: subject.to_owned(),
            reasons: vec!["unknown command: a person must answer".to_owned()],
            handlers: serde_json::json!([{"name": "builtin-commands", "tier": "builtin", "verdict": "ask", "reason": "unknown"}]),
            input: serde_json::json!({ "command": subject }),
            paths: vec!["/ws/src".to_owned()],
            developer: "alice".to_owned(),
            machine: "laptop".to_owned(),
            workspace: "/ws".to_owned(),
            agent: "claude".to_owned(),
            context: Default::default(),
        };
        Escalation {
            id: id.to_owned(),
            token_id: "tok_alice".to_owned(),
            requester: "alice@laptop".to_owned(),
            team: Some("payments".to_owned()),
            session_id: submission.session_id.clone(),
            fingerprint: submission.fingerprint.clone(),
            kind: submission.kind.clone(),
            tool: submission.tool.clone(),
            subject: subject.to_owned(),
            agent: submission.agent.clone(),
            submission,
            created_ms: now() - 60_000,
            status: "open".to_owned(),
            reviewer: None,
            decided_ms: None,
            message: None,
            rule: None,
            statement: None,
            signature: None,
            claimed_ms: None,
            delivered_ms: None,
            gate_until_ms: None,
            gate: Gate::DidNotWait,
            reached: None,
        }
    }
}

impl Escalation {
    /// Sets what is read from its times at `now`: whether its gate waits, and what became of
    /// its decision.
    pub fn observe(&mut self, now: i64) {
        self.gate = Gate::of(self.created_ms, self.gate_until_ms, now);
        self.reached = (self.status != "open")
            .then(|| Reached::of(self.delivered_ms, self.claimed_ms, self.gate));
    }
}

/// What a submission did.
#[derive(Debug, PartialEq)]
pub enum Submitted {
    Created,
    /// The same escalation, sent again.
    Existing,
    /// The id is taken by another gate's escalation, or by another request.
    Conflict(&'static str),
}

/// One page of a list, and where it stands.
#[derive(Debug, Serialize)]
pub struct Listed<T> {
    pub rows: Vec<T>,
    pub paged: Paged,
}

/// A page of escalations, and how many of all that match have a gate waiting (the queue's).
#[derive(Debug, Serialize)]
pub struct Escalations {
    pub listed: Listed<Escalation>,
    pub waiting: i64,
}

/// The values a list's filters offer, by field (`team`: the teams seen).
#[derive(Debug, Default, Clone, Serialize)]
pub struct Facet {
    pub name: &'static str,
    pub values: Vec<String>,
}

/// An audited call, as the audit's drill-down lists it.
#[derive(Debug, Clone, Serialize)]
pub struct AuditRecord {
    pub timestamp_ms: i64,
    pub developer: String,
    pub agent: String,
    pub kind: String,
    pub subject: String,
    /// What the chain said (`allow`, `deny`, `ask`).
    pub decision: String,
    /// What happened: `allowed`, `denied` or `neither`.
    pub outcome: &'static str,
    /// Who decided (see [`Tally`]), and the answer the gate recorded, which names them.
    pub decided_by: String,
    pub answer: String,
    pub log: String,
    pub seq: i64,
}

/// Binds `values` to `query`, in order.
fn bound<'q>(
    mut query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    values: &'q [Bound],
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    for value in values {
        query = match value {
            Bound::Text(text) => query.bind(text.as_str()),
            Bound::Number(n) => query.bind(*n),
        };
    }
    query
}

/// The queue's order: the escalations whose gate waits first (as [`Gate::of`] reads it: a
/// poll that ended less than [`GRACE_MS`] ago, or none yet and asked less than that ago), each
/// part newest first. `$since` stands for now less the grace.
const QUEUE_ORDER: &str = "CASE WHEN COALESCE(gate_until_ms, created_ms) > $since THEN 0 ELSE 1 END, created_ms DESC, id DESC";

/// The decision to store.
pub struct Decided<'a> {
    pub reviewer: &'a str,
    pub ruling: Ruling,
    pub message: Option<&'a str>,
    pub rule: Option<&'a str>,
    pub statement: &'a str,
    pub signature: &'a str,
    pub decided_ms: i64,
}

/// A count of audited calls by what happened to them, and by who decided: each adds up to
/// `total`.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Tally {
    pub name: String,
    pub total: i64,
    /// Let through, refused, or neither (cancelled, or passed on to the agent's own prompt).
    pub allowed: i64,
    pub denied: i64,
    pub neither: i64,
    /// The chain; a person (at the terminal, in the editor, at the agent's prompt, or an
    /// "always" they gave); a reviewer (on the review service, or a grant of an escalation);
    /// nobody (escalated with nobody to ask, or cancelled).
    pub chain: i64,
    pub person: i64,
    pub reviewer: i64,
    pub nobody: i64,
}

/// What one handler said, over the audited calls it judged: its own verdicts, which are not
/// outcomes (a handler's ask may end in a reviewer's allow). Each adds up to `total`.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Verdicts {
    pub name: String,
    pub total: i64,
    pub allow: i64,
    pub deny: i64,
    pub ask: i64,
    pub abstain: i64,
}

/// The organisation's audit, grouped for the page.
#[derive(Debug, Default, Serialize)]
pub struct AuditSummary {
    pub total: Tally,
    /// `total` cut by what happened (allowed, denied, neither): who decided each.
    pub by_outcome: Vec<Tally>,
    pub by_handler: Vec<Verdicts>,
    pub by_agent: Vec<Tally>,
    pub by_developer: Vec<Tally>,
    pub most_asked: Vec<(String, i64)>,
    pub broken: Vec<BrokenChain>,
}

/// A log whose chain the service found broken.
#[derive(Debug, Clone, Serialize)]
pub struct BrokenChain {
    pub developer: String,
    pub log: String,
    pub seq: i64,
    pub why: String,
}

pub struct Db {
    pool: AnyPool,
    pub backend: Backend,
    /// The URL, for LISTEN/NOTIFY's own connection.
    pub url: String,
}

/// A database URL from `--database`: a `postgres://` URL, a `sqlite:` URL, or a file's path
/// (a SQLite database, created if missing).
pub fn url_of(database: &str) -> Result<(Backend, String)> {
    if database.starts_with("postgres://") || database.starts_with("postgresql://") {
        return Ok((Backend::Postgres, database.to_owned()));
    }
    let path = database
        .strip_prefix("sqlite://")
        .or_else(|| database.strip_prefix("sqlite:"));
    let path = Path::new(path.unwrap_or(database));
    if database.contains("://") && !database.starts_with("sqlite:") {
        bail!("--database {database}: a postgres:// URL, or a SQLite file's path");
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("--database: cannot create {}", parent.display()))?;
    }
    let absolute = std::path::absolute(path)?;
    Ok((
        Backend::Sqlite,
        format!("sqlite://{}?mode=rwc", absolute.display()),
    ))
}

impl Db {
    /// Connects, and brings the schema up to date.
    pub async fn open(database: &str) -> Result<Db> {
        let (backend, url) = url_of(database)?;
        sqlx::any::install_default_drivers();
        let mut options = AnyPoolOptions::new().max_connections(16);
        if backend == Backend::Sqlite {
            options = options.after_connect(|connection, _| {
                Box::pin(async move {
                    // WAL: readers never wait for the writer; NORMAL: a commit survives a crash
                    // of the service (not of the machine's power) without an fsync each.
                    sqlx::query("PRAGMA synchronous = NORMAL")
                        .execute(&mut *connection)
                        .await?;
                    sqlx::query("PRAGMA busy_timeout = 10000")
                        .execute(&mut *connection)
                        .await?;
                    Ok(())
                })
            });
        }
        let pool = options
            .connect(&url)
            .await
            .with_context(|| format!("cannot open the database {}", redact_url(&url)))?;
        if backend == Backend::Sqlite {
            sqlx::query("PRAGMA journal_mode = WAL")
                .execute(&pool)
                .await?;
        }
        let migrator = Migrator {
            migrations: Cow::Owned(
                MIGRATIONS
                    .iter()
                    .map(|(version, description, sql)| {
                        Migration::new(
                            *version,
                            Cow::Borrowed(description),
                            MigrationType::Simple,
                            Cow::Borrowed(sql),
                            false,
                        )
                    })
                    .collect(),
            ),
            ..Migrator::DEFAULT
        };
        migrator
            .run(&pool)
            .await
            .with_context(|| format!("cannot migrate the database {}", redact_url(&url)))?;
        let db = Db { pool, backend, url };
        db.name_developers().await?;
        Ok(db)
    }

    /// Fills in the developer of escalations stored before it was kept (migration 6): the
    /// person their requester stands for, in the form only Rust computes.
    async fn name_developers(&self) -> Result<()> {
        let rows =
            sqlx::query("SELECT DISTINCT requester FROM escalations WHERE developer IS NULL")
                .fetch_all(&self.pool)
                .await?;
        for row in rows {
            let requester: String = row.try_get("requester")?;
            sqlx::query(
                "UPDATE escalations SET developer = $1 WHERE requester = $2 AND developer IS NULL",
            )
            .bind(super::identity::person(&requester))
            .bind(&requester)
            .execute(&self.pool)
            .await?;
        }
        Ok(())
    }

    // ---- tokens ----

    /// Stores a new token, known by the hash of its secret only.
    pub async fn insert_token(&self, token: &Token, hash: &str) -> Result<()> {
        sqlx::query("INSERT INTO tokens (id, name, role, team, hash, created_ms) VALUES ($1, $2, $3, $4, $5, $6)")
            .bind(&token.id)
            .bind(&token.name)
            .bind(token.role.as_str())
            .bind(&token.team)
            .bind(hash)
            .bind(token.created_ms)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The live token whose secret hashes to `hash`.
    pub async fn token_by_hash(&self, hash: &str) -> Result<Option<Token>> {
        let row = sqlx::query("SELECT id, name, role, team, created_ms, revoked_ms FROM tokens WHERE hash = $1 AND revoked_ms IS NULL")
            .bind(hash)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|row| token_of(&row)).transpose()
    }

    pub async fn token(&self, id: &str) -> Result<Option<Token>> {
        let row = sqlx::query("SELECT id, name, role, team, created_ms, revoked_ms FROM tokens WHERE id = $1 AND revoked_ms IS NULL")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|row| token_of(&row)).transpose()
    }

    pub async fn tokens(&self) -> Result<Vec<Token>> {
        let rows = sqlx::query(
            "SELECT id, name, role, team, created_ms, revoked_ms FROM tokens ORDER BY created_ms",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(token_of).collect()
    }

    /// Revokes token `id`; false when there is no such live token.
    pub async fn revoke_token(&self, id: &str) -> Result<bool> {
        let done =
            sqlx::query("UPDATE tokens SET revoked_ms = $1 WHERE id = $2 AND revoked_ms IS NULL")
                .bind(now())
                .bind(id)
                .execute(&self.pool)
                .await?;
        sqlx::query("DELETE FROM page_sessions WHERE token_id = $1")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    // ---- the signing key ----

    /// The key decisions are signed with: made by the first instance that needs it.
    pub async fn signing_key(&self) -> Result<PrivateKey> {
        let made = PrivateKey::generate().to_pem()?;
        sqlx::query("INSERT INTO signing_key (id, pem) VALUES (1, $1) ON CONFLICT (id) DO NOTHING")
            .bind(made)
            .execute(&self.pool)
            .await?;
        let pem: String = sqlx::query("SELECT pem FROM signing_key WHERE id = 1")
            .fetch_one(&self.pool)
            .await?
            .try_get("pem")?;
        PrivateKey::from_pem(&pem, || bail!("the service's key is not encrypted"))
            .context("the service's signing key in the database is unreadable")
    }

    // ---- escalations ----

    /// Stores an escalation from `gate`, once per id.
    pub async fn submit(&self, gate: &Token, submission: &Submission) -> Result<Submitted> {
        let body = serde_json::to_string(submission)?;
        let inserted = sqlx::query(
            "INSERT INTO escalations (id, token_id, requester, team, session_id, fingerprint, kind, tool, subject, agent, body, created_ms, status, developer) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'open', $13) ON CONFLICT (id) DO NOTHING",
        )
        .bind(&submission.id)
        .bind(&gate.id)
        .bind(&gate.name)
        .bind(&gate.team)
        .bind(&submission.session_id)
        .bind(&submission.fingerprint)
        .bind(&submission.kind)
        .bind(&submission.tool)
        .bind(&submission.subject)
        .bind(&submission.agent)
        .bind(body)
        .bind(now())
        .bind(gate.person())
        .execute(&self.pool)
        .await?;
        if inserted.rows_affected() == 1 {
            return Ok(Submitted::Created);
        }
        let Some(existing) = self.escalation(&submission.id).await? else {
            bail!(
                "escalation {} vanished while it was submitted",
                submission.id
            );
        };
        Ok(if existing.token_id != gate.id {
            Submitted::Conflict("another gate's escalation has this id")
        } else if existing.fingerprint != submission.fingerprint
            || existing.session_id != submission.session_id
        {
            Submitted::Conflict("an escalation of another request has this id")
        } else {
            Submitted::Existing
        })
    }

    pub async fn escalation(&self, id: &str) -> Result<Option<Escalation>> {
        let row = sqlx::query(&format!(
            "SELECT {ESCALATION_COLUMNS} FROM escalations WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|row| escalation_of(&row)).transpose()
    }

    /// Records a decision of an open escalation; false when it was decided already.
    pub async fn decide(&self, id: &str, decided: &Decided<'_>) -> Result<bool> {
        let status = match decided.ruling {
            Ruling::Allow => "allowed",
            Ruling::Deny => "denied",
        };
        let done = sqlx::query(
            "UPDATE escalations SET status = $1, reviewer = $2, decided_ms = $3, message = $4, rule = $5, statement = $6, signature = $7 \
             WHERE id = $8 AND status = 'open'",
        )
        .bind(status)
        .bind(decided.reviewer)
        .bind(decided.decided_ms)
        .bind(decided.message)
        .bind(decided.rule)
        .bind(decided.statement)
        .bind(decided.signature)
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// `gate`'s long-poll for escalation `id`'s decision holds until `until_ms`: the gate
    /// waits.
    pub async fn gate_waits(&self, id: &str, gate: &Token, until_ms: i64) -> Result<()> {
        sqlx::query("UPDATE escalations SET gate_until_ms = $1 WHERE id = $2 AND token_id = $3")
            .bind(until_ms)
            .bind(id)
            .bind(&gate.id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The open escalations' ids and gates, oldest first: what the queue's count and its
    /// live updates follow.
    pub async fn open_gates(&self) -> Result<Vec<(String, Gate)>> {
        let rows = sqlx::query(
            "SELECT id, created_ms, gate_until_ms FROM escalations WHERE status = 'open' ORDER BY created_ms, id",
        )
        .fetch_all(&self.pool)
        .await?;
        let now = now();
        rows.iter()
            .map(|row| {
                let gate = Gate::of(
                    row.try_get("created_ms")?,
                    row.try_get("gate_until_ms")?,
                    now,
                );
                Ok((row.try_get("id")?, gate))
            })
            .collect()
    }

    /// Marks a decided escalation's grant as taken by its gate; false when it was taken already
    /// (claimed, or delivered to the gate that waited for it).
    pub async fn claim(&self, id: &str, gate: &Token) -> Result<bool> {
        let unused = "claimed_ms IS NULL AND delivered_ms IS NULL";
        self.use_decision(id, gate, "claimed_ms = $1", unused).await
    }

    /// Marks a decided escalation's decision as delivered to its waiting gate (again, for a
    /// wait asked again); false when a resumed session claimed it: it is used once.
    pub async fn deliver(&self, id: &str, gate: &Token) -> Result<bool> {
        let set = "delivered_ms = COALESCE(delivered_ms, $1)";
        self.use_decision(id, gate, set, "claimed_ms IS NULL").await
    }

    /// Sets `set` (the time as `$1`) on `gate`'s decided escalation `id` when `unused` holds:
    /// in one statement, so that two uses at once cannot both succeed.
    async fn use_decision(&self, id: &str, gate: &Token, set: &str, unused: &str) -> Result<bool> {
        let done = sqlx::query(&format!(
            "UPDATE escalations SET {set} WHERE id = $2 AND token_id = $3 AND status <> 'open' AND {unused}"
        ))
        .bind(now())
        .bind(id)
        .bind(&gate.id)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// A page of the open escalations that `filter` picks, in the queue's order ([`QUEUE_ORDER`]),
    /// or of the decided ones (most recently decided first).
    pub async fn list(&self, open: bool, filter: &Filter) -> Result<Escalations> {
        // Every value bound must be used (PostgreSQL counts them): each query binds its own.
        let mut conditions = filter.escalations(open);
        let clause = conditions.clause();
        let since = Bound::Number(now() - GRACE_MS);
        let mut counting = conditions.clone();
        let waits = format!(
            "COALESCE(gate_until_ms, created_ms) > {}",
            counting.placeholder(since.clone())
        );
        let counted = format!(
            "SELECT COUNT(*) AS total, SUM(CASE WHEN status = 'open' AND {waits} THEN 1 ELSE 0 END) AS waiting FROM escalations {clause}"
        );
        let row = bound(sqlx::query(&counted), counting.values())
            .fetch_one(&self.pool)
            .await?;
        let total: i64 = row.try_get("total")?;
        let waiting = row.try_get::<Option<i64>, _>("waiting")?.unwrap_or(0);
        let order = match open {
            true => QUEUE_ORDER.replace("$since", &conditions.placeholder(since)),
            false => "decided_ms DESC, id DESC".to_owned(),
        };
        let page = filter.page();
        let limit = conditions.placeholder(Bound::Number(PAGE_SIZE));
        let offset = conditions.placeholder(Bound::Number(Paged::offset(page)));
        let sql = format!(
            "SELECT {ESCALATION_COLUMNS} FROM escalations {clause} ORDER BY {order} LIMIT {limit} OFFSET {offset}"
        );
        let rows = bound(sqlx::query(&sql), conditions.values())
            .fetch_all(&self.pool)
            .await?;
        let rows = rows.iter().map(escalation_of).collect::<Result<Vec<_>>>()?;
        let paged = Paged::of(page, total, rows.len());
        Ok(Escalations {
            listed: Listed { rows, paged },
            waiting,
        })
    }

    /// The open escalations before and after `id` in the queue's order (with no filter): what
    /// an escalation's page offers as the previous and the next. Once `id` is decided, the next
    /// is the queue's first.
    pub async fn neighbours(&self, id: &str) -> Result<(Option<String>, Option<String>)> {
        let order = QUEUE_ORDER.replace("$since", "$1");
        let rows = sqlx::query(&format!(
            "SELECT id FROM escalations WHERE status = 'open' ORDER BY {order} LIMIT 10000"
        ))
        .bind(now() - GRACE_MS)
        .fetch_all(&self.pool)
        .await?;
        let ids: Vec<String> = rows
            .iter()
            .map(|row| row.try_get("id"))
            .collect::<Result<_, _>>()?;
        Ok(match ids.iter().position(|other| other == id) {
            Some(at) => (
                at.checked_sub(1).map(|before| ids[before].clone()),
                ids.get(at + 1).cloned(),
            ),
            None => (None, ids.first().cloned()),
        })
    }

    /// The other escalations of `escalation`'s session (the same gate's), newest first.
    pub async fn session_escalations(&self, escalation: &Escalation) -> Result<Vec<Escalation>> {
        let rows = sqlx::query(&format!(
            "SELECT {ESCALATION_COLUMNS} FROM escalations \
             WHERE token_id = $1 AND session_id = $2 AND id <> $3 \
             ORDER BY created_ms DESC LIMIT {SESSION_SHOWN}"
        ))
        .bind(&escalation.token_id)
        .bind(&escalation.session_id)
        .bind(&escalation.id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(escalation_of).collect()
    }

    /// The values the filters of the queue and the history (`escalations`) or of the audit
    /// (`audit_records`) offer: those seen of each field.
    pub async fn facets(&self, audit: bool) -> Result<Vec<Facet>> {
        let (table, names): (&str, &[&'static str]) = match audit {
            false => ("escalations", &["developer", "team", "agent", "kind"]),
            true => ("audit_records", &["developer", "agent", "kind"]),
        };
        let mut facets = Vec::new();
        for &name in names {
            let rows = sqlx::query(&format!(
                "SELECT DISTINCT {name} AS v FROM {table} WHERE {name} IS NOT NULL ORDER BY v LIMIT 200"
            ))
            .fetch_all(&self.pool)
            .await?;
            let values = rows
                .iter()
                .filter_map(|r| r.try_get::<String, _>("v").ok())
                .collect();
            facets.push(Facet { name, values });
        }
        Ok(facets)
    }

    // ---- audit ----

    /// Stores a batch from `gate`, checking each log's chain as it grows; returns (accepted,
    /// duplicates, breaks found).
    pub async fn ingest(
        &self,
        gate: &Token,
        records: &[ShippedRecord],
    ) -> Result<(usize, usize, Vec<String>)> {
        // SQLite: take the write lock at the start. A deferred transaction reads the chains
        // first and then cannot upgrade while another batch writes ("database is locked",
        // which the busy timeout does not wait out), so gates shipping at once failed.
        let mut transaction = match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => self.pool.begin().await?,
        };
        let (mut accepted, mut duplicates, mut breaks) = (0, 0, Vec::new());
        let received = now();
        // Chains of the logs this batch touches, as far as they are known.
        let mut chains: std::collections::HashMap<String, (i64, String, bool)> = Default::default();
        for record in records {
            let seq = i64::try_from(record.seq).context("a record's number is out of range")?;
            if !chains.contains_key(&record.log) {
                let row = sqlx::query("SELECT last_seq, last_hash, broken_seq FROM audit_chains WHERE token_id = $1 AND log = $2")
                    .bind(&gate.id)
                    .bind(&record.log)
                    .fetch_optional(&mut *transaction)
                    .await?;
                let known = match row {
                    Some(row) => (
                        row.try_get::<i64, _>("last_seq")?,
                        row.try_get::<String, _>("last_hash")?,
                        row.try_get::<Option<i64>, _>("broken_seq")?.is_some(),
                    ),
                    None => (0, String::new(), false),
                };
                chains.insert(record.log.clone(), known);
            }
            let text = |key: &str| {
                record
                    .record
                    .get(key)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_owned()
            };
            let allowed = record.record.get("allowed").and_then(|v| v.as_bool());
            let inserted = sqlx::query(
                "INSERT INTO audit_records (token_id, log, seq, prev, hash, developer, agent, kind, decision, allowed, answer, subject, handlers, timestamp_ms, received_ms, body, decided_by) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) ON CONFLICT (token_id, log, seq) DO NOTHING",
            )
            .bind(&gate.id)
            .bind(&record.log)
            .bind(seq)
            .bind(&record.prev)
            .bind(&record.hash)
            .bind(gate.person())
            .bind(record.record.get("agent").and_then(|v| v.as_str()).unwrap_or("(unknown)"))
            .bind(text("kind"))
            .bind(text("decision"))
            .bind(allowed.map(i64::from))
            .bind(text("answer"))
            .bind(text("subject"))
            .bind(record.record.get("handlers").map(|h| h.to_string()).unwrap_or_else(|| "[]".into()))
            .bind(record.record.get("timestamp_ms").and_then(|v| v.as_i64()).unwrap_or(received))
            .bind(received)
            .bind(record.record.to_string())
            .bind(decided_by(&text("answer"), allowed))
            .execute(&mut *transaction)
            .await?;
            if inserted.rows_affected() == 0 {
                duplicates += 1;
                continue;
            }
            accepted += 1;
            let chain = chains.get_mut(&record.log).expect("read above");
            let (last_seq, last_hash, broken) = chain;
            let linked = match (*last_seq, &record.prev) {
                (0, None) => record.seq == 1,
                // The first record this service sees of a log that started elsewhere.
                (0, Some(_)) => true,
                (_, prev) => seq == *last_seq + 1 && prev.as_deref() == Some(last_hash.as_str()),
            };
            if !linked && !*broken {
                *broken = true;
                let why = format!(
                    "record {} of log {} does not follow record {} (a record was deleted, reordered or edited)",
                    record.seq, record.log, last_seq
                );
                breaks.push((record.log.clone(), seq, why));
            }
            if seq > *last_seq {
                *last_seq = seq;
                *last_hash = record.hash.clone();
            }
        }
        // Each log's chain is written once per batch.
        for (log, (last_seq, last_hash, _)) in &chains {
            sqlx::query(
                "INSERT INTO audit_chains (token_id, log, developer, last_seq, last_hash) VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (token_id, log) DO UPDATE SET last_seq = excluded.last_seq, last_hash = excluded.last_hash",
            )
            .bind(&gate.id)
            .bind(log)
            .bind(gate.person())
            .bind(*last_seq)
            .bind(last_hash)
            .execute(&mut *transaction)
            .await?;
        }
        for (log, seq, why) in &breaks {
            sqlx::query("UPDATE audit_chains SET broken_seq = $1, broken_why = $2 WHERE token_id = $3 AND log = $4")
                .bind(*seq)
                .bind(why)
                .bind(&gate.id)
                .bind(log)
                .execute(&mut *transaction)
                .await?;
        }
        transaction.commit().await?;
        Ok((
            accepted,
            duplicates,
            breaks.into_iter().map(|(_, _, why)| why).collect(),
        ))
    }

    /// The organisation's audit of the calls `filter` picks (a time range, a developer…),
    /// grouped.
    pub async fn audit_summary(&self, filter: &Filter) -> Result<AuditSummary> {
        let conditions = filter.audit_records();
        let clause = conditions.clause();
        let values = conditions.values();
        let count = |condition: &str, name: &str| {
            format!("SUM(CASE WHEN {condition} THEN 1 ELSE 0 END) AS {name}")
        };
        let by = |who: &str| count(&format!("decided_by = '{who}'"), who);
        let tally = |group: &str| {
            format!(
                "SELECT {group} AS name, COUNT(*) AS total, {}, {}, {}, {}, {}, {}, {} FROM audit_records {clause}",
                count("allowed = 1", "allowed"),
                count("allowed = 0", "denied"),
                count("allowed IS NULL", "neither"),
                by("chain"),
                by("person"),
                by("reviewer"),
                by("nobody"),
            )
        };
        let grouped = |group: &str| {
            format!(
                "{} GROUP BY {group} ORDER BY total DESC, name LIMIT 50",
                tally(group)
            )
        };
        let mut summary = AuditSummary::default();
        let total = bound(sqlx::query(&tally("'all'")), values)
            .fetch_one(&self.pool)
            .await?;
        summary.total = tally_of(&total)?;
        let outcome = "CASE WHEN allowed = 1 THEN 'allowed' WHEN allowed = 0 THEN 'denied' ELSE 'neither' END";
        summary.by_outcome = self.tallies(&grouped(outcome), values).await?;
        let order = ["allowed", "denied", "neither"];
        (summary.by_outcome).sort_by_key(|t| order.iter().position(|o| *o == t.name));
        summary.by_agent = self.tallies(&grouped("agent"), values).await?;
        summary.by_developer = self.tallies(&grouped("developer"), values).await?;
        // Handlers: each record names several; counted from their JSON in Rust.
        let rows = bound(
            sqlx::query(&format!(
                "SELECT handlers FROM audit_records {clause} ORDER BY received_ms DESC LIMIT 100000"
            )),
            values,
        )
        .fetch_all(&self.pool)
        .await?;
        let mut handlers: std::collections::BTreeMap<String, Verdicts> = Default::default();
        for row in rows {
            let text: String = row.try_get("handlers")?;
            let traces: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap_or_default();
            for trace in traces {
                let name = trace
                    .get("name")
                    .and_then(|v| v.as_str())
                    .unwrap_or("?")
                    .to_owned();
                let entry = handlers.entry(name.clone()).or_insert_with(|| Verdicts {
                    name,
                    ..Verdicts::default()
                });
                entry.total += 1;
                match trace.get("verdict").and_then(|v| v.as_str()) {
                    Some("allow") => entry.allow += 1,
                    Some("deny") => entry.deny += 1,
                    Some("ask") => entry.ask += 1,
                    // Abstain, and whatever else a record says: counted, so the row adds up.
                    _ => entry.abstain += 1,
                }
            }
        }
        summary.by_handler = handlers.into_values().collect();
        summary
            .by_handler
            .sort_by(|a, b| b.total.cmp(&a.total).then_with(|| a.name.cmp(&b.name)));
        let asked = match clause.is_empty() {
            true => "WHERE decision = 'ask'".to_owned(),
            false => format!("{clause} AND decision = 'ask'"),
        };
        let rows = bound(
            sqlx::query(&format!(
                "SELECT subject, COUNT(*) AS n FROM audit_records {asked} GROUP BY subject ORDER BY n DESC, subject LIMIT 15"
            )),
            values,
        )
        .fetch_all(&self.pool)
        .await?;
        for row in rows {
            summary
                .most_asked
                .push((row.try_get("subject")?, row.try_get("n")?));
        }
        let rows = sqlx::query("SELECT developer, log, broken_seq, broken_why FROM audit_chains WHERE broken_seq IS NOT NULL ORDER BY developer, log")
            .fetch_all(&self.pool)
            .await?;
        for row in rows {
            summary.broken.push(BrokenChain {
                developer: row.try_get("developer")?,
                log: row.try_get("log")?,
                seq: row.try_get("broken_seq")?,
                why: row.try_get("broken_why")?,
            });
        }
        Ok(summary)
    }

    async fn tallies(&self, sql: &str, values: &[Bound]) -> Result<Vec<Tally>> {
        let rows = bound(sqlx::query(sql), values)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(tally_of).collect()
    }

    /// A page of the audited calls `filter` picks, newest first: what a count of the audit
    /// page lists when clicked.
    pub async fn audit_records(&self, filter: &Filter) -> Result<Listed<AuditRecord>> {
        let mut conditions = filter.audit_records();
        let clause = conditions.clause();
        let counted = format!("SELECT COUNT(*) AS total FROM audit_records {clause}");
        let total: i64 = bound(sqlx::query(&counted), conditions.values())
            .fetch_one(&self.pool)
            .await?
            .try_get("total")?;
        let page = filter.page();
        let limit = conditions.placeholder(Bound::Number(PAGE_SIZE));
        let offset = conditions.placeholder(Bound::Number(Paged::offset(page)));
        let sql = format!(
            "SELECT timestamp_ms, developer, agent, kind, subject, decision, allowed, decided_by, answer, log, seq \
             FROM audit_records {clause} ORDER BY timestamp_ms DESC, token_id, log, seq DESC LIMIT {limit} OFFSET {offset}"
        );
        let rows = bound(sqlx::query(&sql), conditions.values())
            .fetch_all(&self.pool)
            .await?;
        let rows = rows
            .iter()
            .map(|row| {
                Ok(AuditRecord {
                    timestamp_ms: row.try_get("timestamp_ms")?,
                    developer: row.try_get("developer")?,
                    agent: row.try_get("agent")?,
                    kind: row.try_get("kind")?,
                    subject: row.try_get("subject")?,
                    decision: row.try_get("decision")?,
                    outcome: match row.try_get::<Option<i64>, _>("allowed")? {
                        Some(1) => "allowed",
                        Some(_) => "denied",
                        None => "neither",
                    },
                    decided_by: row.try_get("decided_by")?,
                    answer: row.try_get("answer")?,
                    log: row.try_get("log")?,
                    seq: row.try_get("seq")?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let paged = Paged::of(page, total, rows.len());
        Ok(Listed { rows, paged })
    }

    /// PostgreSQL's `NOTIFY channel, payload`.
    pub async fn notify(&self, channel: &str, payload: &str) -> Result<()> {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(channel)
            .bind(payload)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    // ---- page sessions ----

    pub async fn open_session(
        &self,
        id_hash: &str,
        token: &Token,
        csrf: &str,
        expires_ms: i64,
    ) -> Result<()> {
        sqlx::query("DELETE FROM page_sessions WHERE expires_ms < $1")
            .bind(now())
            .execute(&self.pool)
            .await?;
        sqlx::query(
            "INSERT INTO page_sessions (id, token_id, csrf, expires_ms) VALUES ($1, $2, $3, $4)",
        )
        .bind(id_hash)
        .bind(&token.id)
        .bind(csrf)
        .bind(expires_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The live session's token and CSRF token.
    pub async fn session(&self, id_hash: &str) -> Result<Option<(Token, String)>> {
        let row = sqlx::query(
            "SELECT token_id, csrf FROM page_sessions WHERE id = $1 AND expires_ms > $2",
        )
        .bind(id_hash)
        .bind(now())
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let token_id: String = row.try_get("token_id")?;
        let csrf: String = row.try_get("csrf")?;
        Ok(self.token(&token_id).await?.map(|token| (token, csrf)))
    }

    pub async fn close_session(&self, id_hash: &str) -> Result<()> {
        sqlx::query("DELETE FROM page_sessions WHERE id = $1")
            .bind(id_hash)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    // ---- the fleet ----

    /// Keeps `report` as the last of its gate (`gate`'s token, its machine and developer);
    /// false, and nothing kept, when it would be a new gate of a token that has `most` already.
    pub async fn report_gate(&self, gate: &Token, report: &GateReport, most: i64) -> Result<bool> {
        let now = now();
        let row = sqlx::query(
            "SELECT COUNT(*) AS n, SUM(CASE WHEN machine = $2 AND developer = $3 THEN 1 ELSE 0 END) AS known \
             FROM gates WHERE token_id = $1",
        )
        .bind(&gate.id)
        .bind(&report.machine)
        .bind(&report.developer)
        .fetch_one(&self.pool)
        .await?;
        let (gates, known): (i64, Option<i64>) = (row.try_get("n")?, row.try_get("known")?);
        if gates >= most && known.unwrap_or(0) == 0 {
            return Ok(false);
        }
        sqlx::query(
            "INSERT INTO gates (token_id, machine, developer, body, first_ms, last_ms) \
             VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (token_id, machine, developer) \
             DO UPDATE SET body = excluded.body, last_ms = excluded.last_ms",
        )
        .bind(&gate.id)
        .bind(&report.machine)
        .bind(&report.developer)
        .bind(serde_json::to_string(report)?)
        .bind(now)
        .execute(&self.pool)
        .await?;
        Ok(true)
    }

    /// Every gate of a live token: its token's name and team, its last report, when it
    /// first and last reported.
    pub async fn gates(&self) -> Result<Vec<(String, Option<String>, GateReport, i64, i64)>> {
        let rows = sqlx::query(
            "SELECT t.name, t.team, g.body, g.first_ms, g.last_ms FROM gates g \
             JOIN tokens t ON t.id = g.token_id WHERE t.revoked_ms IS NULL ORDER BY g.last_ms DESC",
        )
        .fetch_all(&self.pool)
        .await?;
        (rows.iter())
            .map(|row| {
                let body: String = row.try_get("body")?;
                Ok((
                    row.try_get("name")?,
                    row.try_get("team")?,
                    serde_json::from_str(&body).context("a gate's stored report is unreadable")?,
                    row.try_get("first_ms")?,
                    row.try_get("last_ms")?,
                ))
            })
            .collect()
    }

    // ---- policy ----

    /// The escalations a reviewer allowed with a proposed rule, most recently decided first.
    pub async fn proposals(&self) -> Result<Vec<Escalation>> {
        let rows = sqlx::query(&format!(
            "SELECT {ESCALATION_COLUMNS} FROM escalations WHERE rule IS NOT NULL \
             ORDER BY decided_ms DESC LIMIT {PROPOSALS_SHOWN}"
        ))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(escalation_of).collect()
    }

    /// The audit records the gates shipped that were recorded in `[from_ms, to_ms)`, oldest
    /// first, at most `limit`: each as shipped, with the developer the service knows it by.
    pub async fn audit_lines(
        &self,
        from_ms: i64,
        to_ms: i64,
        limit: i64,
    ) -> Result<Vec<serde_json::Value>> {
        let rows = sqlx::query(
            "SELECT body, developer FROM audit_records WHERE timestamp_ms >= $1 AND timestamp_ms < $2 \
             ORDER BY timestamp_ms, token_id, log, seq LIMIT $3",
        )
        .bind(from_ms)
        .bind(to_ms)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let mut line: serde_json::Value =
                    serde_json::from_str(&row.try_get::<String, _>("body")?)
                        .context("an audit record's stored body is unreadable")?;
                if let Some(object) = line.as_object_mut() {
                    object.insert(
                        "developer".into(),
                        row.try_get::<String, _>("developer")?.into(),
                    );
                }
                Ok(line)
            })
            .collect()
    }
}

/// How many proposals the policy page lists.
const PROPOSALS_SHOWN: usize = 1000;

const ESCALATION_COLUMNS: &str = "id, token_id, requester, team, session_id, fingerprint, kind, tool, subject, agent, body, created_ms, status, reviewer, decided_ms, message, rule, statement, signature, claimed_ms, delivered_ms, gate_until_ms";

fn token_of(row: &AnyRow) -> Result<Token> {
    Ok(Token {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        role: Role::parse(&row.try_get::<String, _>("role")?)?,
        team: row.try_get("team")?,
        created_ms: row.try_get("created_ms")?,
        revoked_ms: row.try_get("revoked_ms")?,
    })
}

fn escalation_of(row: &AnyRow) -> Result<Escalation> {
    let body: String = row.try_get("body")?;
    let mut escalation = Escalation {
        id: row.try_get("id")?,
        token_id: row.try_get("token_id")?,
        requester: row.try_get("requester")?,
        team: row.try_get("team")?,
        session_id: row.try_get("session_id")?,
        fingerprint: row.try_get("fingerprint")?,
        kind: row.try_get("kind")?,
        tool: row.try_get("tool")?,
        subject: row.try_get("subject")?,
        agent: row.try_get("agent")?,
        submission: serde_json::from_str(&body)
            .context("an escalation's stored body is unreadable")?,
        created_ms: row.try_get("created_ms")?,
        status: row.try_get("status")?,
        reviewer: row.try_get("reviewer")?,
        decided_ms: row.try_get("decided_ms")?,
        message: row.try_get("message")?,
        rule: row.try_get("rule")?,
        statement: row.try_get("statement")?,
        signature: row.try_get("signature")?,
        claimed_ms: row.try_get("claimed_ms")?,
        delivered_ms: row.try_get("delivered_ms")?,
        gate_until_ms: row.try_get("gate_until_ms")?,
        gate: Gate::DidNotWait,
        reached: None,
    };
    escalation.observe(now());
    Ok(escalation)
}

fn tally_of(row: &AnyRow) -> Result<Tally> {
    // SUM over no rows is NULL.
    let count = |key: &str| -> Result<i64> { Ok(row.try_get::<Option<i64>, _>(key)?.unwrap_or(0)) };
    Ok(Tally {
        name: row.try_get("name")?,
        total: count("total")?,
        allowed: count("allowed")?,
        denied: count("denied")?,
        neither: count("neither")?,
        chain: count("chain")?,
        person: count("person")?,
        reviewer: count("reviewer")?,
        nobody: count("nobody")?,
    })
}

/// Who decided an audited call whose answer was `answer` and that was `allowed` (or neither),
/// as the audit page counts it (see [`Tally`]).
fn decided_by(answer: &str, allowed: Option<bool>) -> &'static str {
    use ResolvedBy::*;
    match ResolvedBy::of_answer(answer) {
        Some(SessionRule | User | Editor | Agent) => "person",
        Some(Reviewer | Granted) => "reviewer",
        Some(Escalated | Cancelled) => "nobody",
        Some(Chain) | None if allowed.is_some() => "chain",
        Some(Chain) | None => "nobody",
    }
}

/// Milliseconds since the Unix epoch, as the database stores them.
pub fn now() -> i64 {
    crate::state::now_ms() as i64
}

/// A database URL without its password, for messages.
pub fn redact_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_owned(),
    }
}
