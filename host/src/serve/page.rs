//! The reviewers' page: server-rendered HTML (minijinja templates compiled into the binary,
//! escaped by default), one stylesheet and no script. A reviewer signs in with their token
//! (it becomes a session cookie); every form that changes something carries the session's
//! CSRF token and must come from the page's own origin.

use std::sync::Arc;

use axum::Form;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use minijinja::{Environment, Value as Template, context};
use serde::Deserialize;

use super::Service;
use super::auth::{self, Reviewer};
use super::db::{Filter, Role};
use super::decision::Choice;
use super::error::Refusal;

/// The templates, by name, as compiled into the binary.
const TEMPLATES: &[(&str, &str)] = &[
    ("base.html", include_str!("page/base.html")),
    ("login.html", include_str!("page/login.html")),
    ("queue.html", include_str!("page/queue.html")),
    ("escalation.html", include_str!("page/escalation.html")),
    ("history.html", include_str!("page/history.html")),
    ("audit.html", include_str!("page/audit.html")),
    ("error.html", include_str!("page/error.html")),
];

const STYLESHEET: &str = include_str!("page/page.css");

/// The largest form the page takes.
const MAX_FORM: usize = 16 << 10;

pub struct Pages {
    env: Environment<'static>,
}

impl Pages {
    pub fn new() -> anyhow::Result<Pages> {
        let mut env = Environment::new();
        for (name, source) in TEMPLATES {
            env.add_template(name, source)
                .map_err(|e| anyhow::anyhow!("page template {name}: {e}"))?;
        }
        env.add_filter("ago", ago);
        env.add_filter("when", when);
        env.add_filter("pretty", |value: Template| {
            serde_json::to_string_pretty(&value).unwrap_or_default()
        });
        Ok(Pages { env })
    }

    fn render(&self, name: &str, context: Template) -> Response {
        match self.env.get_template(name).and_then(|t| t.render(context)) {
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

/// A time in milliseconds as a UTC date and time.
fn when(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_default()
}

pub fn routes() -> axum::Router<Arc<Service>> {
    axum::Router::new()
        .route("/", get(|| async { Redirect::to("/queue") }))
        .route("/static/page.css", get(stylesheet))
        .route("/login", get(login_form).post(login))
        .route("/logout", post(logout))
        .route("/queue", get(queue))
        .route("/history", get(history))
        .route("/audit", get(audit))
        .route("/escalations/{id}", get(escalation))
        .route("/escalations/{id}/decide", post(decide))
        .layer(DefaultBodyLimit::max(MAX_FORM))
}

async fn stylesheet() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "max-age=3600"),
        ],
        STYLESHEET,
    )
}

/// A page, or a page that says what went wrong.
type PageResult = Result<Response, Response>;

fn failed(service: &Service, reviewer: Option<&Reviewer>, refusal: Refusal) -> Response {
    let status = refusal.status;
    let mut page = service.pages.render(
        "error.html",
        context! { me => reviewer.map(|r| &r.token), csrf => reviewer.map(|r| &r.csrf), status => status.as_u16(), message => refusal.message },
    );
    *page.status_mut() = status;
    page
}

/// Forms that change something must come from this page: SameSite=Strict keeps the cookie
/// off other sites' requests, the CSRF token proves the form is ours, and an `Origin` of
/// another site is refused outright.
fn check_form(reviewer: &Reviewer, headers: &HeaderMap, csrf: &str) -> Result<(), Refusal> {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let origin = headers.get(header::ORIGIN).and_then(|h| h.to_str().ok());
    if let (Some(origin), Some(host)) = (origin, host) {
        let origin_host = origin.split("://").nth(1).unwrap_or(origin);
        if origin != "null" && origin_host != host {
            return Err(Refusal::forbidden(
                "this form was sent from another site: refused",
            ));
        }
    }
    if !auth::same_secret(csrf, &reviewer.csrf) {
        return Err(Refusal::forbidden(
            "this form is stale or was not sent from this page (CSRF token): reload and try again",
        ));
    }
    Ok(())
}

async fn login_form(State(service): State<Arc<Service>>) -> Response {
    service.pages.render("login.html", context! {})
}

#[derive(Deserialize)]
struct LoginForm {
    token: String,
}

async fn login(
    State(service): State<Arc<Service>>,
    ConnectInfo(peer): ConnectInfo<auth::Peer>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    let fail = |message: &str| {
        let mut page = service
            .pages
            .render("login.html", context! { error => message });
        *page.status_mut() = StatusCode::UNAUTHORIZED;
        page
    };
    // Guessing tokens is slowed down per client address.
    let behind_proxy = service.settings.transport == super::settings::Transport::BehindTlsProxy;
    let client = auth::client_address(peer, &headers, behind_proxy);
    if !service.limiter.allow(&format!("login:{client}")) {
        return fail("too many attempts: wait a minute");
    }
    let token = match service
        .db
        .token_by_hash(&auth::hash(form.token.trim()))
        .await
    {
        Ok(Some(token)) => token,
        Ok(None) => return fail("this token is unknown or revoked"),
        Err(error) => return failed(&service, None, error.into()),
    };
    if !token.role.reviews() {
        return fail("this is a gate's token: sign in with a reviewer's token");
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
    let cookie = auth::session_cookie(&secret, service.settings.secure_cookies());
    ([(header::SET_COOKIE, cookie)], Redirect::to("/queue")).into_response()
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
    if let Err(refusal) = check_form(&reviewer, &headers, &form.csrf) {
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

async fn queue(
    State(service): State<Arc<Service>>,
    reviewer: Reviewer,
    Query(filter): Query<Filter>,
) -> PageResult {
    let fail = |e: anyhow::Error| failed(&service, Some(&reviewer), e.into());
    let filter = Filter {
        team: filter.team.filter(|v| !v.is_empty()),
        agent: filter.agent.filter(|v| !v.is_empty()),
        kind: filter.kind.filter(|v| !v.is_empty()),
    };
    let open = service.db.list(true, &filter, 200).await.map_err(fail)?;
    let [teams, agents, kinds] = service.db.facets().await.map_err(fail)?;
    Ok(service.pages.render(
        "queue.html",
        context! { me => &reviewer.token, csrf => &reviewer.csrf, page => "queue", open, filter, teams, agents, kinds },
    ))
}

async fn history(State(service): State<Arc<Service>>, reviewer: Reviewer) -> PageResult {
    let decided = service
        .db
        .list(false, &Filter::default(), 200)
        .await
        .map_err(|e| failed(&service, Some(&reviewer), e.into()))?;
    Ok(service.pages.render(
        "history.html",
        context! { me => &reviewer.token, csrf => &reviewer.csrf, page => "history", decided },
    ))
}

async fn audit(State(service): State<Arc<Service>>, reviewer: Reviewer) -> PageResult {
    let summary = service
        .db
        .audit_summary()
        .await
        .map_err(|e| failed(&service, Some(&reviewer), e.into()))?;
    let tokens = match reviewer.token.role {
        Role::Admin => service
            .db
            .tokens()
            .await
            .map_err(|e| failed(&service, Some(&reviewer), e.into()))?,
        _ => Vec::new(),
    };
    Ok(service.pages.render(
        "audit.html",
        context! { me => &reviewer.token, csrf => &reviewer.csrf, page => "audit", summary, tokens },
    ))
}

async fn escalation(
    State(service): State<Arc<Service>>,
    reviewer: Reviewer,
    Path(id): Path<String>,
) -> PageResult {
    let escalation = match service.db.escalation(&id).await {
        Ok(Some(escalation)) => escalation,
        Ok(None) => {
            return Err(failed(
                &service,
                Some(&reviewer),
                Refusal::not_found(format!("no escalation {id}")),
            ));
        }
        Err(error) => return Err(failed(&service, Some(&reviewer), error.into())),
    };
    let own = reviewer.token.person() == super::db::person(&escalation.requester)
        || reviewer.token.person() == escalation.submission.developer;
    Ok(service.pages.render(
        "escalation.html",
        context! { me => &reviewer.token, csrf => &reviewer.csrf, page => "queue", e => escalation, own },
    ))
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
    let decided = match check_form(&reviewer, &headers, &form.csrf) {
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
