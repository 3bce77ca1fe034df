//! The reviewers' page: server-rendered HTML (minijinja templates compiled into the binary,
//! escaped by default, every hidden character of a request's text drawn as a visible escape),
//! one stylesheet and one small script (the tab's count and the queue's updates, from
//! `/queue/live`; the pages work without it). A reviewer signs in with their token (it becomes
//! a session cookie); every form that changes something carries the session's CSRF token and
//! must come from the page's own origin.

use std::sync::Arc;

use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{AppendHeaders, Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Json};
use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value as Template, context};
use serde::{Deserialize, Serialize};

use super::Service;
use super::auth::{self, Reviewer};
use super::db::{AuditRecord, AuditSummary, Escalation, Escalations, Facet, Listed, Role, Token};
use super::decision::{self, Choice};
use super::error::Refusal;
use super::find::{DECIDERS, Filter};
use super::fleet::Gates;
use super::policy::{self, Replayed};
use super::visible;
use crate::digest::sha256_hex;

/// The templates, by name, as compiled into the binary.
const TEMPLATES: &[(&str, &str)] = &[
    ("base.html", include_str!("page/base.html")),
    ("login.html", include_str!("page/login.html")),
    ("queue.html", include_str!("page/queue.html")),
    ("escalation.html", include_str!("page/escalation.html")),
    ("history.html", include_str!("page/history.html")),
    ("audit.html", include_str!("page/audit.html")),
    ("error.html", include_str!("page/error.html")),
    ("gate.html", include_str!("page/gate.html")),
    ("policy.html", include_str!("page/policy.html")),
    ("find.html", include_str!("page/find.html")),
    ("records.html", include_str!("page/records.html")),
    ("fleet.html", include_str!("page/fleet.html")),
];

const STYLESHEET: &str = include_str!("page/page.css");
const SCRIPT: &str = include_str!("page/live.js");

/// The largest form the page takes.
const MAX_FORM: usize = 16 << 10;

pub struct Pages {
    env: Environment<'static>,
}

impl Pages {
    pub fn new() -> anyhow::Result<Pages> {
        let mut env = Environment::new();
        // A field a template names that the page's data lacks is an error rather than an
        // empty string: the tests draw every page in every state, so a misspelt field fails
        // there instead of showing nothing.
        env.set_undefined_behavior(UndefinedBehavior::SemiStrict);
        // Every string a page shows goes through `visible::html`: escaped, and each hidden
        // character drawn where it stands, so no template can show a request's text raw.
        env.set_formatter(|out, state, value| match value.as_str() {
            Some(text) if !value.is_safe() && state.auto_escape() == AutoEscape::Html => out
                .write_str(&visible::html(text))
                .map_err(minijinja::Error::from),
            _ => minijinja::escape_formatter(out, state, value),
        });
        for (name, source) in TEMPLATES {
            env.add_template(name, source)
                .map_err(|e| anyhow::anyhow!("page template {name}: {e}"))?;
        }
        env.add_filter("time", time);
        env.add_filter("plain", |text: &str| visible::plain(text).into_owned());
        env.add_function("query", query);
        env.add_filter("truncate", truncate);
        env.add_filter("hides", |value: Template| visible::anywhere(&value));
        env.add_filter("pretty", |value: Template| {
            serde_json::to_string_pretty(&value).unwrap_or_default()
        });
        Ok(Pages { env })
    }

    /// Page `name` drawn with `context`.
    fn draw(&self, name: &str, context: Template) -> Result<String, minijinja::Error> {
        self.env.get_template(name)?.render(context)
    }

    /// Page `name`, or a plain 500 that says it could not be drawn (the log says why).
    fn render(&self, name: &str, context: Template) -> Response {
        match self.draw(name, context) {
            Ok(html) => Html(html).into_response(),
            Err(error) => {
                eprintln!("acp-gate serve: page {name}: {error:#}");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "the page could not be drawn",
                )
                    .into_response()
            }
        }
    }
}

/// How long ago a time in milliseconds was, in words.
fn ago(ms: i64) -> String {
    let seconds = (super::db::now() - ms).max(0) / 1000;
    match seconds {
        0..60 => "just now".to_owned(),
        60..3600 => format!("{} min ago", seconds / 60),
        3600..86400 => format!("{} h ago", seconds / 3600),
        _ => format!("{} days ago", seconds / 86400),
    }
}

/// `text` cut to its first `chars` characters, with `…` when it was longer. (minijinja's own
/// `truncate` is in minijinja-contrib, which the service does not build: a template that used
/// it failed to draw.)
fn truncate(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// A time in milliseconds as a UTC date and time.
fn when(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_default()
}

/// A time in milliseconds as a `<time>` element: the UTC time as its text (or how long ago,
/// `time("ago")`) and its title; the page's script writes it in the reader's own zone, and
/// keeps the UTC time for the title.
fn time(ms: Option<i64>, form: Option<&str>) -> Template {
    let Some(moment) = ms.and_then(chrono::DateTime::from_timestamp_millis) else {
        return Template::from("");
    };
    let iso = moment.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let utc = when(moment.timestamp_millis());
    let element = match form {
        Some("ago") => format!(
            "<time class=ago datetime=\"{iso}\" title=\"{utc}\">{}</time>",
            ago(moment.timestamp_millis())
        ),
        _ => format!("<time datetime=\"{iso}\" title=\"{utc}\">{utc}</time>"),
    };
    Template::from_safe_string(element)
}

/// The URL query of a list's filter (`filter`, as a page's data holds it) with `changes`
/// (`page=2`), empty fields left out: the links of a pager, or of the audit's counts.
fn query(filter: Template, changes: minijinja::value::Kwargs) -> Result<String, minijinja::Error> {
    let text = |value: Template| match value.is_undefined() || value.is_none() {
        true => String::new(),
        false => value.to_string(),
    };
    let mut fields: Vec<(String, String)> = Vec::new();
    for key in filter.try_iter()? {
        let name = key.to_string();
        fields.push((name.clone(), text(filter.get_attr(&name)?)));
    }
    for name in changes.args() {
        let value = text(changes.get::<Template>(name)?);
        match fields.iter_mut().find(|(key, _)| key == name) {
            Some(field) => field.1 = value,
            None => fields.push((name.to_owned(), value)),
        }
    }
    let mut url = reqwest::Url::parse("http://page/").expect("a URL");
    url.query_pairs_mut()
        .extend_pairs(fields.iter().filter(|(_, value)| !value.is_empty()));
    Ok(url.query().unwrap_or_default().to_owned())
}

/// The times a list's quick links start from: the last hour, day, week and 30 days.
fn since_links() -> Vec<(&'static str, String)> {
    let now = super::db::now();
    [
        ("last hour", 1),
        ("24 h", 24),
        ("7 days", 24 * 7),
        ("30 days", 24 * 30),
    ]
    .into_iter()
    .map(|(name, hours)| {
        let since = chrono::DateTime::from_timestamp_millis(now - hours * 3_600_000);
        let since = since.map(|t| t.format("%Y-%m-%dT%H:%M").to_string());
        (name, since.unwrap_or_default())
    })
    .collect()
}

pub fn routes() -> axum::Router<Arc<Service>> {
    axum::Router::new()
        .route("/", get(|| async { Redirect::to("/queue") }))
        .route("/static/page.css", get(|| asset("text/css", STYLESHEET)))
        .route("/static/live.js", get(|| asset("text/javascript", SCRIPT)))
        .route("/queue/live", get(queue_live))
        .route("/login", get(login_form).post(login))
        .route("/logout", post(logout))
        .route("/queue", get(queue))
        .route("/history", get(history))
        .route("/audit", get(audit))
        .route("/audit/records", get(audit_records))
        .route("/escalations/{id}", get(escalation))
        .route("/escalations/{id}/decide", post(decide))
        .route("/policy", get(policy_page))
        .route("/fleet", get(fleet))
        .route("/policy/proposals.toml", get(proposals_toml))
        .route(
            "/policy/replay",
            post(replay).layer(DefaultBodyLimit::max(policy::MAX_POLICY)),
        )
        .layer(DefaultBodyLimit::max(MAX_FORM))
}

/// The stylesheet or the script, as `content_type`.
async fn asset(content_type: &'static str, text: &'static str) -> Response {
    let content_type = format!("{content_type}; charset=utf-8");
    let headers = [
        (header::CONTENT_TYPE, content_type),
        (header::CACHE_CONTROL, "max-age=3600".to_owned()),
    ];
    (headers, text).into_response()
}

/// What the page's script follows, and every page's title carries.
#[derive(Debug, Serialize)]
pub struct Live {
    /// How many requests have a gate waiting for a decision.
    pub waiting: usize,
    /// A digest of the open escalations and whether their gates wait: the queue draws itself
    /// again when it changes.
    pub version: String,
}

impl Live {
    async fn now(service: &Service) -> anyhow::Result<Live> {
        let gates = service.db.open_gates().await?;
        let waiting = gates.iter().filter(|(_, gate)| gate.waits()).count();
        let text: String = (gates.iter())
            .map(|(id, gate)| format!("{id} {}\n", gate.waits()))
            .collect();
        let version = sha256_hex(text.as_bytes())[..16].to_owned();
        Ok(Live { waiting, version })
    }
}

async fn queue_live(
    State(service): State<Arc<Service>>,
    _reviewer: Reviewer,
) -> Result<Json<Live>, Refusal> {
    Ok(Json(Live::now(&service).await?))
}

/// A page, or a page that says what went wrong.
type PageResult = Result<Response, Response>;

fn failed(service: &Service, reviewer: Option<&Reviewer>, refusal: Refusal) -> Response {
    let mut page = service
        .pages
        .render("error.html", error_page(reviewer, &refusal));
    *page.status_mut() = refusal.status;
    page
}

/// The error page's data: what went wrong, for whoever is signed in (if anyone).
fn error_page(reviewer: Option<&Reviewer>, refusal: &Refusal) -> Template {
    context! {
        me => reviewer.map(|r| &r.token),
        csrf => reviewer.map(|r| &r.csrf),
        page => "error",
        status => refusal.status.as_u16(),
        message => &refusal.message,
    }
}

/// A form must come from this page's own site, as the browser tells: `Sec-Fetch-Site` other
/// than same-origin, or an `Origin` other than the page's (its `Host`, or `--public-url` behind
/// a proxy), an opaque `null` one (a sandboxed frame's) included, is refused. A client that
/// sends neither (a script) is judged by the form's CSRF token alone.
fn same_site(service: &Service, headers: &HeaderMap) -> Result<(), Refusal> {
    let header = |name: &str| headers.get(name).and_then(|h| h.to_str().ok());
    let refused = || Refusal::forbidden("this form was sent from another site: refused");
    if header("sec-fetch-site").is_some_and(|site| !matches!(site, "same-origin" | "none")) {
        return Err(refused());
    }
    let Some(origin) = header(header::ORIGIN.as_str()) else {
        return Ok(());
    };
    let host = header(header::HOST.as_str());
    let public = service.settings.public_url.as_deref();
    let public = public.and_then(|url| reqwest::Url::parse(url).ok());
    let ours = origin.split_once("://").map(|(_, host)| host) == host.filter(|h| !h.is_empty())
        || public.is_some_and(|url| url.origin().ascii_serialization() == origin);
    match ours {
        true => Ok(()),
        false => Err(refused()),
    }
}

/// Forms that change something must come from this page: SameSite=Strict keeps the cookie
/// off other sites' requests, the CSRF token proves the form is ours, and another site's is
/// refused outright ([`same_site`]).
fn check_form(
    service: &Service,
    reviewer: &Reviewer,
    headers: &HeaderMap,
    csrf: &str,
) -> Result<(), Refusal> {
    same_site(service, headers)?;
    if !auth::same_secret(csrf, &reviewer.csrf) {
        return Err(Refusal::forbidden(
            "this form is stale or was not sent from this page (CSRF token): reload and try again",
        ));
    }
    Ok(())
}

/// The sign-in page's data: its form's CSRF token, and what went wrong with the last try.
fn login_page(csrf: &str, error: Option<&str>) -> Template {
    context! { csrf, error }
}

/// The sign-in form, with a CSRF token of its own in a cookie beside it: a sign-in posted by
/// another site (which would sign the reviewer's browser in as someone else) has no cookie.
async fn login_form(State(service): State<Arc<Service>>) -> Response {
    let csrf = auth::new_secret("");
    let cookie = auth::login_cookie(&csrf, service.settings.secure_cookies());
    let page = service.pages.render("login.html", login_page(&csrf, None));
    ([(header::SET_COOKIE, cookie)], page).into_response()
}

#[derive(Deserialize)]
struct LoginForm {
    token: String,
    #[serde(default)]
    csrf: String,
}

async fn login(
    State(service): State<Arc<Service>>,
    ConnectInfo(peer): ConnectInfo<auth::Peer>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    let fail = |status: StatusCode, message: &str| {
        let page = login_page(&form.csrf, Some(message));
        let mut page = service.pages.render("login.html", page);
        *page.status_mut() = status;
        page
    };
    if let Err(refusal) = same_site(&service, &headers) {
        return failed(&service, None, refusal);
    }
    let ours = auth::cookie_in(&headers, auth::LOGIN_COOKIE);
    if !ours.is_some_and(|csrf| auth::same_secret(csrf, &form.csrf)) {
        let stale = "this sign-in form is stale or was not sent from this page: reload it and sign in again";
        return failed(&service, None, Refusal::forbidden(stale));
    }
    let client = auth::client_address(peer, &headers, service.settings.behind_proxy());
    let hash = auth::hash(form.token.trim());
    if !service.guesses.may_look_up(&client, &hash) {
        let refusal = auth::Guesses::refusal(&client);
        return fail(refusal.status, &refusal.message);
    }
    let token = match service.db.token_by_hash(&hash).await {
        Ok(found) => {
            service.guesses.found(&hash, found.is_some());
            match found {
                Some(token) => token,
                None => {
                    return fail(StatusCode::UNAUTHORIZED, "this token is unknown or revoked");
                }
            }
        }
        Err(error) => return failed(&service, None, error.into()),
    };
    if !token.role.reviews() {
        let gate = "this is a gate's token: sign in with a reviewer's token";
        return fail(StatusCode::UNAUTHORIZED, gate);
    }
    let secret = auth::new_secret("");
    let csrf = auth::new_secret("");
    let expires = super::db::now() + auth::SESSION_MS;
    if let Err(error) = service
        .db
        .open_session(&auth::hash(&secret), &token, &csrf, expires)
        .await
    {
        return failed(&service, None, error.into());
    }
    let secure = service.settings.secure_cookies();
    let cookies = [
        (header::SET_COOKIE, auth::session_cookie(&secret, secure)),
        (header::SET_COOKIE, auth::login_cookie("", secure)),
    ];
    (AppendHeaders(cookies), Redirect::to("/queue")).into_response()
}

#[derive(Deserialize)]
struct CsrfForm {
    #[serde(default)]
    csrf: String,
}

async fn logout(
    State(service): State<Arc<Service>>,
    reviewer: Reviewer,
    headers: HeaderMap,
    Form(form): Form<CsrfForm>,
) -> PageResult {
    if let Err(refusal) = check_form(&service, &reviewer, &headers, &form.csrf) {
        return Err(failed(&service, Some(&reviewer), refusal));
    }
    service
        .db
        .close_session(&reviewer.session)
        .await
        .map_err(|e| failed(&service, Some(&reviewer), e.into()))?;
    let cookie = auth::session_cookie("", service.settings.secure_cookies());
    Ok(([(header::SET_COOKIE, cookie)], Redirect::to("/login")).into_response())
}

async fn fleet(State(service): State<Arc<Service>>, reviewer: Reviewer) -> PageResult {
    let rows =
        (service.db.gates().await).map_err(|e| failed(&service, Some(&reviewer), e.into()))?;
    let gates = service.settings.fleet.gates(rows);
    signed_in(&service, &reviewer, View::Fleet { gates: &gates }).await
}

async fn policy_page(State(service): State<Arc<Service>>, reviewer: Reviewer) -> PageResult {
    policy_with(&service, &reviewer, None).await
}

/// The policy page, with a replay's findings when one was run.
async fn policy_with(
    service: &Service,
    reviewer: &Reviewer,
    replay: Option<&Replayed>,
) -> PageResult {
    let proposed = (policy::proposals(&service.db).await)
        .map_err(|e| failed(service, Some(reviewer), e.into()))?;
    let view = View::Policy {
        proposed: &proposed,
        replay,
    };
    signed_in(service, reviewer, view).await
}

/// Every proposed rule as one `handlers.toml`, to download.
async fn proposals_toml(State(service): State<Arc<Service>>, reviewer: Reviewer) -> PageResult {
    let proposed = (policy::proposals(&service.db).await)
        .map_err(|e| failed(&service, Some(&reviewer), e.into()))?;
    let headers = [
        (header::CONTENT_TYPE, "application/toml; charset=utf-8"),
        (
            header::CONTENT_DISPOSITION,
            "attachment; filename=\"proposed-rules.toml\"",
        ),
    ];
    Ok((headers, policy::proposals_toml(proposed)).into_response())
}

#[derive(Deserialize)]
struct ReplayForm {
    #[serde(default)]
    csrf: String,
    #[serde(flatten)]
    asked: policy::Asked,
}

/// An admin's replay of the shipped audit under a policy, from the policy page's form.
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
    let replayed = policy::replay_audit(&service.db, form.asked)
        .await
        .map_err(fail)?;
    policy_with(&service, &reviewer, Some(&replayed)).await
}

/// A signed-in page and what it shows. The handlers gather the data; [`Pages::view`] draws it
/// (and the tests draw every page from data in every state).
pub enum View<'a> {
    /// The queue (`open`: its escalations whose gates wait first) or the history.
    Escalations {
        open: bool,
        found: &'a Escalations,
        filter: &'a Filter,
        facets: &'a [Facet],
    },
    Audit {
        summary: &'a AuditSummary,
        tokens: &'a [Token],
        filter: &'a Filter,
        facets: &'a [Facet],
    },
    /// The audited calls behind one of the audit's counts.
    AuditRecords {
        found: &'a Listed<AuditRecord>,
        filter: &'a Filter,
        facets: &'a [Facet],
    },
    Escalation {
        escalation: &'a Escalation,
        own: bool,
        /// The other escalations of its session, newest first.
        session: &'a [Escalation],
        /// The open escalations before and after it in the queue.
        previous: Option<&'a str>,
        next: Option<&'a str>,
    },
    /// For policy owners: the proposed rules, and a replay's findings when one was run.
    Policy {
        proposed: &'a [policy::Proposed],
        replay: Option<&'a Replayed>,
    },
    /// Every gate that reports, flagged ones first.
    Fleet { gates: &'a Gates },
}

impl View<'_> {
    /// The view's template, and its data for `reviewer` (with the title's count from `live`).
    fn page(&self, reviewer: &Reviewer, live: &Live) -> (&'static str, Template) {
        let me =
            context! { me => &reviewer.token, csrf => &reviewer.csrf, waiting => live.waiting };
        let (name, data) = match self {
            View::Escalations {
                open: true,
                found,
                filter,
                facets,
            } => {
                let (awaited, stale): (Vec<_>, Vec<_>) =
                    found.listed.rows.iter().partition(|e| e.gate.waits());
                let context = context! { page => "queue", version => &live.version, found, awaited, stale, filter, facets };
                ("queue.html", context)
            }
            View::Escalations {
                open: false,
                found,
                filter,
                facets,
            } => (
                "history.html",
                context! { page => "history", found, filter, facets },
            ),
            View::Audit {
                summary,
                tokens,
                filter,
                facets,
            } => (
                "audit.html",
                context! { page => "audit", summary, tokens, filter, facets, deciders => DECIDERS, since => since_links() },
            ),
            View::AuditRecords {
                found,
                filter,
                facets,
            } => (
                "records.html",
                context! { page => "audit", found, filter, facets, deciders => DECIDERS },
            ),
            View::Escalation {
                escalation,
                own,
                session,
                previous,
                next,
            } => (
                "escalation.html",
                context! { page => "queue", e => escalation, own, session, previous, next },
            ),
            View::Policy { proposed, replay } => (
                "policy.html",
                context! { page => "policy", proposed, replay, max_replayed => policy::MAX_REPLAYED },
            ),
            View::Fleet { gates } => ("fleet.html", context! { page => "fleet", gates }),
        };
        (name, context! { ..me, ..data })
    }
}

impl Pages {
    fn view(&self, reviewer: &Reviewer, live: &Live, view: View) -> Response {
        let (name, context) = view.page(reviewer, live);
        self.render(name, context)
    }
}

/// A signed-in page: `view` once `Live` is known.
async fn signed_in(service: &Service, reviewer: &Reviewer, view: View<'_>) -> PageResult {
    let live = Live::now(service)
        .await
        .map_err(|e| failed(service, Some(reviewer), e.into()))?;
    Ok(service.pages.view(reviewer, &live, view))
}

/// The filter of a page's query, tidied, or a refusal that says which field is wrong.
fn tidied(filter: Filter) -> Result<Filter, Refusal> {
    filter.tidy().map_err(Refusal::bad_request)
}

async fn queue(
    State(service): State<Arc<Service>>,
    reviewer: Reviewer,
    Query(filter): Query<Filter>,
) -> PageResult {
    escalations(&service, &reviewer, true, filter).await
}

async fn history(
    State(service): State<Arc<Service>>,
    reviewer: Reviewer,
    Query(filter): Query<Filter>,
) -> PageResult {
    escalations(&service, &reviewer, false, filter).await
}

/// The queue (`open`) or the history: the page of escalations that `filter` asks for.
async fn escalations(
    service: &Service,
    reviewer: &Reviewer,
    open: bool,
    filter: Filter,
) -> PageResult {
    let fail = |e: anyhow::Error| failed(service, Some(reviewer), e.into());
    let filter = tidied(filter).map_err(|r| failed(service, Some(reviewer), r))?;
    let found = service.db.list(open, &filter).await.map_err(fail)?;
    let facets = service.db.facets(false).await.map_err(fail)?;
    let view = View::Escalations {
        open,
        found: &found,
        filter: &filter,
        facets: &facets,
    };
    signed_in(service, reviewer, view).await
}

async fn audit(
    State(service): State<Arc<Service>>,
    reviewer: Reviewer,
    Query(filter): Query<Filter>,
) -> PageResult {
    let fail = |e: anyhow::Error| failed(&service, Some(&reviewer), e.into());
    let filter = tidied(filter).map_err(|r| failed(&service, Some(&reviewer), r))?;
    let summary = service.db.audit_summary(&filter).await.map_err(fail)?;
    let tokens = match reviewer.token.role {
        Role::Admin => service.db.tokens().await.map_err(fail)?,
        _ => Vec::new(),
    };
    let facets = service.db.facets(true).await.map_err(fail)?;
    let view = View::Audit {
        summary: &summary,
        tokens: &tokens,
        filter: &filter,
        facets: &facets,
    };
    signed_in(&service, &reviewer, view).await
}

async fn audit_records(
    State(service): State<Arc<Service>>,
    reviewer: Reviewer,
    Query(filter): Query<Filter>,
) -> PageResult {
    let fail = |e: anyhow::Error| failed(&service, Some(&reviewer), e.into());
    let filter = tidied(filter).map_err(|r| failed(&service, Some(&reviewer), r))?;
    let found = service.db.audit_records(&filter).await.map_err(fail)?;
    let facets = service.db.facets(true).await.map_err(fail)?;
    let view = View::AuditRecords {
        found: &found,
        filter: &filter,
        facets: &facets,
    };
    signed_in(&service, &reviewer, view).await
}

async fn escalation(
    State(service): State<Arc<Service>>,
    reviewer: Reviewer,
    Path(id): Path<String>,
) -> PageResult {
    let fail = |e: anyhow::Error| failed(&service, Some(&reviewer), e.into());
    let escalation = match service.db.escalation(&id).await.map_err(fail)? {
        Some(escalation) => escalation,
        None => {
            let missing = Refusal::not_found(format!("no escalation {id}"));
            return Err(failed(&service, Some(&reviewer), missing));
        }
    };
    let session = service
        .db
        .session_escalations(&escalation)
        .await
        .map_err(fail)?;
    let (previous, next) = service.db.neighbours(&id).await.map_err(fail)?;
    let view = View::Escalation {
        own: decision::own(&reviewer.token, &escalation),
        escalation: &escalation,
        session: &session,
        previous: previous.as_deref(),
        next: next.as_deref(),
    };
    signed_in(&service, &reviewer, view).await
}

#[derive(Deserialize)]
struct DecideForm {
    #[serde(default)]
    csrf: String,
    choice: Choice,
    #[serde(default)]
    message: String,
}

async fn decide(
    State(service): State<Arc<Service>>,
    reviewer: Reviewer,
    headers: HeaderMap,
    Path(id): Path<String>,
    Form(form): Form<DecideForm>,
) -> PageResult {
    let decided = match check_form(&service, &reviewer, &headers, &form.csrf) {
        Ok(()) => {
            service
                .decide(&reviewer.token, &id, form.choice, Some(&form.message))
                .await
        }
        Err(refusal) => Err(refusal),
    };
    match decided {
        Ok(_) => Ok(Redirect::to(&format!("/escalations/{id}")).into_response()),
        Err(refusal) => Err(failed(&service, Some(&reviewer), refusal)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::serve::db::{Tally, Verdicts, now};
    use crate::serve::find::Paged;
    use crate::service::{Circumstances, Git};

    fn token(name: &str, role: Role) -> Token {
        Token {
            id: format!("tok_{name}"),
            name: name.to_owned(),
            role,
            team: Some("payments".to_owned()),
            created_ms: 1_700_000_000_000,
            revoked_ms: None,
        }
    }

    fn reviewer() -> Reviewer {
        Reviewer {
            token: token("bob", Role::Admin),
            csrf: "csrf".to_owned(),
            session: "session".to_owned(),
        }
    }

    /// `escalation` whose gate polled until `until` ms from now (none: it never did),
    /// observed now.
    fn polled(mut escalation: Escalation, until: Option<i64>) -> Escalation {
        escalation.gate_until_ms = until.map(|ms| now() + ms);
        escalation.observe(now());
        escalation
    }

    /// `escalation` decided by bob: `status` (allowed or denied), observed now.
    fn decided(mut escalation: Escalation, status: &str) -> Escalation {
        escalation.status = status.to_owned();
        escalation.reviewer = Some("bob".to_owned());
        escalation.decided_ms = Some(now() - 1000);
        escalation.statement = Some("{}".to_owned());
        escalation.signature = Some("sig".to_owned());
        escalation.observe(now());
        escalation
    }

    /// Escalations in every state a page shows: open with a gate waiting (polling, or on its
    /// way), that stopped waiting or never waited; decided each way (delivered, claimed, on its
    /// way, reaching no gate), with a rule and a message; with no reasons or paths, with text
    /// that hides characters, that is long and unbroken, or that looks like markup.
    fn every_state() -> Vec<Escalation> {
        let example = Escalation::example;
        let waiting = |id| polled(example(id, "terraform apply"), Some(20_000));
        let mut bare = waiting("esc-bare");
        bare.submission.reasons.clear();
        bare.submission.paths.clear();
        bare.submission.handlers = json!([]);
        bare.team = None;
        let mut arriving = example("esc-arriving", "make deploy");
        arriving.created_ms = now();
        let mut delivered = waiting("esc-delivered");
        delivered.delivered_ms = Some(now());
        let mut claimed = example("esc-claimed", "terraform apply");
        claimed.claimed_ms = Some(now());
        let mut proposed = waiting("esc-rule");
        proposed.rule = Some("[[handler]]\nname = \"proposed\"\n".to_owned());
        let mut denied = waiting("esc-denied");
        denied.message = Some("not on the shared cluster".to_owned());
        let gone = |id| polled(example(id, "terraform apply"), Some(-120_000));
        let mut hostile = waiting("esc-hostile");
        hostile.subject =
            "rm -rf ~/\u{202E}hs.txt\u{200B} && echo <script>alert(1)</script>".to_owned();
        hostile.submission.reasons = vec!["it said \u{2066}nothing\u{2069}".to_owned()];
        hostile.submission.developer = "ali\u{200B}ce".to_owned();
        hostile.agent = "\"><img src=x onerror=alert(1)>".to_owned();
        hostile.submission.context = Circumstances {
            nobody: Some("Codex cannot ask \u{202E}anyone here".to_owned()),
            by_default: false,
            description: Some("Tidy up <b>nothing</b> \u{200B}important".to_owned()),
            git: Some(Git {
                branch: "ma\u{200B}in".to_owned(),
                upstream: Some("origin/main".to_owned()),
                outgoing: vec!["abc1234 <script>alert(1)</script>".to_owned()],
                more: true,
                uncommitted: Some("1 file changed, 2 insertions(+)".to_owned()),
            }),
            edits: vec!["src/a.rs: +2 -1".to_owned()],
        };
        bare.submission.context.by_default = true;
        let mut long = waiting("esc-long");
        long.subject = format!("echo {}", "A".repeat(5000));
        long.submission.context.description = Some("B".repeat(3000));
        vec![
            waiting("esc-open"),
            bare,
            polled(arriving, None),
            gone("esc-gone"),
            polled(example("esc-nowait", "terraform apply"), None),
            decided(delivered, "allowed"),
            decided(claimed, "allowed"),
            decided(waiting("esc-on-its-way"), "allowed"),
            decided(proposed, "allowed"),
            decided(denied, "denied"),
            decided(gone("esc-late"), "allowed"),
            decided(gone("esc-late-deny"), "denied"),
            hostile,
            long,
        ]
    }

    /// The audit page's figures: none, and some.
    fn summaries() -> Vec<AuditSummary> {
        let tally = |name: &str| Tally {
            name: name.to_owned(),
            total: 6,
            allowed: 3,
            denied: 2,
            neither: 1,
            chain: 2,
            person: 1,
            reviewer: 2,
            nobody: 1,
        };
        let some = AuditSummary {
            total: tally("all"),
            by_outcome: vec![tally("allowed"), tally("denied")],
            by_handler: vec![Verdicts {
                name: "builtin-commands".to_owned(),
                total: 4,
                allow: 1,
                deny: 1,
                ask: 1,
                abstain: 1,
            }],
            by_agent: vec![tally("claude")],
            by_developer: vec![tally("ali\u{200B}ce")],
            most_asked: vec![("rm -rf ~/\u{202E}hs.txt".to_owned(), 4)],
            broken: vec![crate::serve::db::BrokenChain {
                developer: "mallory".to_owned(),
                log: "log-1".to_owned(),
                seq: 3,
                why: "record 3 does not follow record 1".to_owned(),
            }],
        };
        vec![AuditSummary::default(), some]
    }

    /// Draws `view`; a page that cannot be drawn, or that draws a hidden character as it is,
    /// fails the test, naming it.
    fn drawn(pages: &Pages, view: View, what: &str) -> String {
        let live = Live {
            waiting: 3,
            version: "v1".to_owned(),
        };
        let (name, context) = view.page(&reviewer(), &live);
        let html = match pages.draw(name, context) {
            Ok(html) => html,
            Err(error) => panic!("{name} ({what}) cannot be drawn: {error:#}"),
        };
        let raw = html.chars().find(|c| visible::hidden(*c));
        assert_eq!(
            raw, None,
            "{name} ({what}) draws a hidden character as it is"
        );
        html
    }

    #[test]
    fn every_page_draws_in_every_state() {
        let pages = Pages::new().unwrap();
        let all = every_state();
        let (open, decided): (Vec<_>, Vec<_>) =
            all.iter().cloned().partition(|e| e.status == "open");
        let facets = [
            ("developer", "ali\u{200B}ce"),
            ("team", "payments"),
            ("agent", "claude"),
            ("kind", "execute"),
        ]
        .map(|(name, value)| Facet {
            name,
            values: vec![value.to_owned()],
        });
        let tidy = |pairs: serde_json::Value| {
            serde_json::from_value::<Filter>(pairs)
                .unwrap()
                .tidy()
                .unwrap()
        };
        let hostile = "rm \u{202E}hs\u{200B} \"><script>alert(1)</script>";
        let filters = [
            Filter::default(),
            tidy(json!({ "team": "payments", "developer": "ali\u{200B}ce", "from": "2026-11-01" })),
            tidy(json!({ "q": hostile, "page": "2", "decision": "denied", "by": "chain" })),
        ];
        let found = |rows: &[Escalation], page: i64, total: i64| Escalations {
            waiting: rows.iter().filter(|e| e.gate.waits()).count() as i64,
            listed: Listed {
                rows: rows.to_vec(),
                paged: Paged::of(page, total, rows.len()),
            },
        };
        let lists = [
            found(&[], 1, 0),
            found(&open, 1, open.len() as i64),
            found(&open, 2, 230),
            found(&[], 9, 230),
        ];
        for list in &lists {
            for filter in &filters {
                let view = View::Escalations {
                    open: true,
                    found: list,
                    filter,
                    facets: &facets,
                };
                let page = drawn(&pages, view, &format!("{} open", list.listed.rows.len()));
                assert!(page.contains("<title>(3) Queue"), "{page}");
                assert!(page.contains("data-version=\"v1\""), "{page}");
            }
        }
        let (awaited, stale): (Vec<_>, Vec<_>) = open.iter().partition(|e| e.gate.waits());
        assert_eq!(
            (awaited.len(), stale.len()),
            (5, 2),
            "waiting: polling, just arrived; not: stopped, never waited"
        );
        let lists = [
            found(&[], 1, 0),
            found(&decided, 1, decided.len() as i64),
            found(&decided, 3, 230),
        ];
        for list in &lists {
            for filter in &filters {
                let view = View::Escalations {
                    open: false,
                    found: list,
                    filter,
                    facets: &facets,
                };
                drawn(&pages, view, &format!("{} decided", list.listed.rows.len()));
            }
        }
        let searched = View::Escalations {
            open: false,
            found: &lists[2],
            filter: &filters[2],
            facets: &facets,
        };
        let page = drawn(&pages, searched, "a hostile search");
        for shown in [
            "found for <q class=\"query\">rm <span class=hidden>⟨U+202E⟩</span>hs<span class=hidden>⟨U+200B⟩</span> &quot;&gt;&lt;script&gt;",
            "value=\"rm ⟨U+202E⟩hs⟨U+200B⟩ &quot;&gt;&lt;script&gt;",
            "<a rel=\"prev\" href=\"&#x2f;history?q=rm+%E2%80%AEhs%E2%80%8B",
            "&amp;page=2\">",
            "101–107 of 230",
        ] {
            assert!(page.contains(shown), "no {shown} in:\n{page}");
        }
        assert!(!page.contains("<script>alert"), "{page}");
        let tokens = [token("bob", Role::Admin), token("alice@laptop", Role::Gate)];
        let audit_facets = &facets[..1];
        for summary in summaries() {
            for tokens in [&[][..], &tokens[..]] {
                for filter in &filters {
                    let view = View::Audit {
                        summary: &summary,
                        tokens,
                        filter,
                        facets: audit_facets,
                    };
                    drawn(&pages, view, "audit");
                }
            }
        }
        let record = |subject: &str, allowed: Option<bool>| AuditRecord {
            timestamp_ms: now() - 5_000,
            developer: "ali\u{200B}ce".to_owned(),
            agent: "claude".to_owned(),
            kind: "execute".to_owned(),
            subject: subject.to_owned(),
            decision: "ask".to_owned(),
            outcome: match allowed {
                Some(true) => "allowed",
                Some(false) => "denied",
                None => "neither",
            },
            decided_by: "reviewer".to_owned(),
            answer: "allow-once (reviewer: esc-1 by bob)".to_owned(),
            log: "log-1".to_owned(),
            seq: 1,
        };
        let records = [
            Listed {
                rows: vec![],
                paged: Paged::of(1, 0, 0),
            },
            Listed {
                rows: vec![record(hostile, Some(true)), record("ls", None)],
                paged: Paged::of(2, 52, 2),
            },
        ];
        for found in &records {
            for filter in &filters {
                let view = View::AuditRecords {
                    found,
                    filter,
                    facets: audit_facets,
                };
                drawn(&pages, view, "audit records");
            }
        }
        for escalation in &all {
            for (own, session) in [(false, &[][..]), (true, &all[..])] {
                let view = View::Escalation {
                    escalation,
                    own,
                    session,
                    previous: own.then_some("esc-open"),
                    next: own.then_some("esc-bare"),
                };
                drawn(&pages, view, &escalation.id);
            }
        }
        let page_of = |id: &str| {
            let escalation = all.iter().find(|e| e.id == id).unwrap();
            let view = View::Escalation {
                escalation,
                own: false,
                session: &all[..3],
                previous: Some("esc-open"),
                next: Some("esc-bare"),
            };
            drawn(&pages, view, id)
        };
        for (id, says) in [
            ("esc-open", "gate waiting"),
            (
                "esc-gone",
                "No gate is waiting for this decision: its gate stopped waiting",
            ),
            ("esc-nowait", "it was sent without <code>--wait</code>"),
            ("esc-delivered", "Allowed by bob"),
            ("esc-delivered", "delivered to the waiting gate"),
            ("esc-claimed", "claimed as a grant by a resumed session"),
            ("esc-on-its-way", "on its way to the waiting gate"),
            ("esc-late", "Allow proposed by bob: no gate received it"),
            ("esc-late-deny", "Denied by bob: no gate received it"),
            ("esc-bare", "No handler had an opinion"),
            ("esc-open", "Other escalations of this session"),
            ("esc-open", "href=\"/escalations/esc-bare\""),
            (
                "esc-open",
                "<a id=\"next-escalation\" href=\"/escalations/esc-bare\">",
            ),
            ("esc-open", "Keys: <kbd>a</kbd> allow"),
            ("esc-delivered", "<time datetime=\""),
        ] {
            let page = page_of(id);
            assert!(page.contains(says), "{id}: no {says} in:\n{page}");
        }
        assert!(!page_of("esc-late").contains("Allowed by bob"));
        let page = page_of("esc-hostile");
        for shown in [
            "~&#x2f;<span class=hidden>⟨U+202E⟩</span>hs.txt<span class=hidden>⟨U+200B⟩</span>",
            "echo &lt;script&gt;alert(1)&lt;&#x2f;script&gt;",
            "holds hidden characters",
            "ali<span class=hidden>⟨U+200B⟩</span>ce",
            "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;",
            "Codex cannot ask <span class=hidden>⟨U+202E⟩</span>anyone here",
            "Tidy up &lt;b&gt;nothing&lt;&#x2f;b&gt;",
            "abc1234 &lt;script&gt;",
            "src&#x2f;a.rs: +2 -1",
            "and more",
        ] {
            assert!(page.contains(shown), "no {shown} in:\n{page}");
        }
        for error in [None, Some("this token is unknown or revoked")] {
            pages.draw("login.html", login_page("csrf", error)).unwrap();
        }
        let refusal = Refusal::not_found("no escalation esc-x");
        for me in [Some(reviewer()), None] {
            let page = error_page(me.as_ref(), &refusal);
            pages.draw("error.html", page).unwrap();
        }
    }

    #[test]
    fn the_policy_page_draws_empty_with_proposals_and_with_a_replay() {
        use crate::replay::{Change, Group, Report};
        use crate::serve::policy::{Proposed, Replayed};
        use crate::verdict::Verdict;
        let pages = Pages::new().unwrap();
        let all = every_state();
        let hostile = "make deploy \u{202e}txt.hs";
        let proposed = [Proposed {
            rule: crate::review::proposal("make deploy").unwrap(),
            escalations: all.clone(),
        }];
        let change = Change {
            timestamp_ms: 1_700_000_000_000,
            developer: Some("ali\u{200b}ce".to_owned()),
            kind: "execute",
            subject: hostile.to_owned(),
            was: Verdict::Ask,
            now: Verdict::Allow,
            reasons: Vec::new(),
        };
        let replay = Replayed {
            handlers: "[[handler]]\nname = \"</textarea><script>x</script>\u{202e}\"\n".to_owned(),
            since: "7d".to_owned(),
            until: String::new(),
            report: Report {
                decided: 12,
                changed: 7,
                redacted: 1,
                skipped: 2,
                groups: vec![Group {
                    rule: "team: \u{202e}reason".to_owned(),
                    was: Verdict::Ask,
                    now: Verdict::Allow,
                    count: 7,
                    examples: vec![change],
                }],
            },
            cut: true,
        };
        let empty = drawn(
            &pages,
            View::Policy {
                proposed: &[],
                replay: None,
            },
            "no proposals",
        );
        assert!(empty.contains("No rule proposed yet"), "{empty}");
        assert!(
            empty.contains("action=\"/policy/replay#replay\""),
            "an admin's page: {empty}"
        );
        let page = drawn(
            &pages,
            View::Policy {
                proposed: &proposed,
                replay: Some(&replay),
            },
            "replayed",
        );
        for shown in [
            "approved-make-deploy",
            "Download all 1 as handlers.toml",
            "href=\"/escalations/esc-hostile\"",
            "12 request(s) decided again, 7 would change",
            "and 6 more",
            "2 record(s) left out",
            "Only the first 1000000 records",
            "make deploy <span class=hidden>⟨U+202E⟩</span>txt.hs",
            // In the text area, a hidden character is its escape as text (no markup there).
            "&lt;&#x2f;textarea&gt;&lt;script&gt;x&lt;&#x2f;script&gt;⟨U+202E⟩&quot;",
        ] {
            assert!(page.contains(shown), "no {shown} in:\n{page}");
        }
    }

    #[test]
    fn the_fleet_page_draws_empty_and_with_gates_flagged_first() {
        use crate::serve::fleet::Fleet;
        use crate::service::fleet::{AgentGate, GateReport, Layer};
        let pages = Pages::new().unwrap();
        let org = format!("sha256:{}", "a".repeat(64));
        let fleet = Fleet::resolve(Some(&org), None).unwrap();
        let empty = fleet.gates(Vec::new());
        let html = drawn(&pages, View::Fleet { gates: &empty }, "no gates");
        assert!(html.contains("No gate has reported yet"), "{html}");
        let report = |developer: &str, policy: &str, codex_gated: bool| GateReport {
            developer: developer.to_owned(),
            machine: "laptop".to_owned(),
            version: "0.1.0".to_owned(),
            via: "run".to_owned(),
            workspace: "/src/app".to_owned(),
            policy: Some(policy.to_owned()),
            layers: vec![Layer {
                tier: "org".to_owned(),
                file: "/etc/acp-gate/handlers.toml".to_owned(),
                sha256: Some(policy.to_owned()),
            }],
            chain_loads: true,
            agents: vec![AgentGate {
                agent: "codex".to_owned(),
                title: "Codex".to_owned(),
                found: true,
                gated: codex_gated,
                problems: Vec::new(),
            }],
        };
        let now = crate::serve::db::now();
        let other = format!("sha256:{}", "b".repeat(64));
        let gates = fleet.gates(vec![
            ("alice".into(), None, report("alice", &org, true), now, now),
            (
                "m\u{202e}allory".into(),
                Some("ops".into()),
                report("mallory", &other, false),
                now,
                now,
            ),
        ]);
        assert_eq!(gates.gates[0].report.developer, "mallory", "flagged first");
        let html = drawn(&pages, View::Fleet { gates: &gates }, "two gates");
        for shown in [
            "runs policy sha256:bbbbbbbbbbbb…, not the org&#x27;s published sha256:aaaaaaaaaaaa…",
            "Codex is not gated",
            "Codex: gated",
            "m<span class=hidden>⟨U+202E⟩</span>allory",
            "the org's</span>",
        ] {
            assert!(html.contains(shown), "no {shown} in:\n{html}");
        }
    }
}
