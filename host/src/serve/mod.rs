//! `acp-gate serve`: the organisation's review service. Gates send it the escalations nobody
//! at their terminal could answer; reviewers decide them on its page (or through its API);
//! each decision goes back to the waiting gate signed with the service's key. It also
//! collects every gate's audit log. It never re-decides a request: decisions are made on the
//! developer's machine, by the gate's chain.
//!
//! - [`settings`]: serve.toml and flags; [`db`]: storage (SQLite or PostgreSQL) and migrations;
//! - [`auth`]: tokens, roles, rate limits, page sessions; [`error`]: the one error type;
//! - [`find`]: the search, filters, time range and page a reviewer asks for;
//! - [`fleet`]: the gates that report, and what is wrong with each;
//! - [`identity`]: who a name stands for, in one normalised form; [`visible`]: hidden
//!   characters of a request's text made visible;
//! - [`api`]: the JSON API; [`page`]: the reviewers' page; [`decision`]: deciding;
//! - [`wake`]: waking waiting gates (LISTEN/NOTIFY across instances); [`waiting`]: whether a
//!   gate still waits, and whether a decision reached one; [`webhook`]: notifications;
//!   [`tls`]: serving over rustls.

pub mod api;
pub mod auth;
pub mod db;
pub mod decision;
pub mod error;
pub mod find;
pub mod fleet;
pub mod identity;
pub mod page;
pub mod policy;
pub mod settings;
pub mod tls;
pub mod visible;
pub mod waiting;
pub mod wake;
pub mod webhook;

use std::sync::Arc;

use anyhow::{Context, Result};
use axum::Router;
use axum::http::{HeaderValue, header};

use crate::distribution::signature::PrivateKey;
use db::{Db, Escalation};
use settings::{Settings, Transport};

/// Everything a request handler reaches.
pub struct Service {
    pub db: Db,
    pub key: PrivateKey,
    pub wake: Arc<wake::Wake>,
    pub limiter: auth::RateLimiter,
    pub guesses: auth::Guesses,
    pub settings: Settings,
    pub pages: page::Pages,
    webhook: Option<webhook::Webhook>,
}

impl Service {
    /// Opens the database (migrating it), loads or makes the signing key, and starts
    /// listening for other instances' decisions.
    pub async fn start(settings: Settings) -> Result<Arc<Service>> {
        let db = Db::open(&settings.database).await?;
        let key = db.signing_key().await?;
        let wake = Arc::new(wake::Wake::default());
        wake.clone()
            .listen(&db)
            .await
            .context("cannot LISTEN for the other instances' decisions")?;
        let webhook = settings
            .webhook
            .as_deref()
            .map(webhook::Webhook::new)
            .transpose()?;
        Ok(Arc::new(Service {
            db,
            key,
            wake,
            limiter: auth::RateLimiter::new(settings.rate_limit),
            guesses: auth::Guesses::default(),
            pages: page::Pages::new()?,
            webhook,
            settings,
        }))
    }

    /// The routes: the API, the page, and the headers every answer carries.
    pub fn router(self: &Arc<Service>) -> Router {
        api::routes()
            .merge(page::routes())
            .with_state(self.clone())
            .layer(axum::middleware::map_response(secured))
    }

    /// The page's link to an escalation.
    pub fn link(&self, id: &str) -> String {
        let base = self
            .settings
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", self.settings.listen));
        format!("{base}/escalations/{id}")
    }

    /// A new escalation arrived: the webhook hears of it (in the background).
    fn announce(&self, escalation: &Escalation) {
        if let Some(webhook) = &self.webhook {
            webhook.announce(escalation, &self.link(&escalation.id));
        }
    }
}

/// What every answer says about itself: no sniffing, no framing, no scripts but the page's own
/// file, no other origins.
const SECURITY_HEADERS: [(header::HeaderName, &str); 4] = [
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::REFERRER_POLICY, "same-origin"),
    (header::X_FRAME_OPTIONS, "DENY"),
    (
        header::CONTENT_SECURITY_POLICY,
        "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
];

async fn secured(mut response: axum::response::Response) -> axum::response::Response {
    for (name, value) in SECURITY_HEADERS {
        response
            .headers_mut()
            .entry(name)
            .or_insert(HeaderValue::from_static(value));
    }
    response
}

/// Runs the service until it is stopped (Ctrl-C or SIGTERM): requests under way finish first.
pub async fn run(settings: Settings) -> Result<()> {
    let transport = settings.transport.clone();
    let listen = settings.listen;
    let service = Service::start(settings).await?;
    let router = service.router();
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let bound = listener.local_addr()?;
    let scheme = match transport {
        Transport::Tls { .. } => "https",
        _ => "http",
    };
    eprintln!(
        "acp-gate serve: listening on {scheme}://{bound} (database: {}; decisions signed by key {})",
        db::redact_url(&service.db.url),
        service.key.public_key().fingerprint()
    );
    let wake = service.wake.clone();
    let stop = async move {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM can be handled");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        eprintln!("acp-gate serve: stopping");
        wake.close();
    };
    match transport {
        Transport::Tls { cert, key } => {
            let listener = tls::TlsListener::new(listener, &cert, &key)?;
            let app = router.into_make_service_with_connect_info::<auth::Peer>();
            axum::serve(listener, app)
                .with_graceful_shutdown(stop)
                .await?
        }
        _ => {
            let app = router.into_make_service_with_connect_info::<auth::Peer>();
            axum::serve(listener, app)
                .with_graceful_shutdown(stop)
                .await?
        }
    }
    Ok(())
}
