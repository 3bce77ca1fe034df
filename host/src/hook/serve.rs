//! `acp-gate hook serve`: the agents' HTTP hooks answered from a resident chain (Claude Code's
//! `http` hook type POSTs the same JSON a command hook reads on stdin), on a loopback port or a
//! Unix socket: local to the developer, not the organisation's review service. Each call is
//! decided, recorded and answered as a hook process does it ([`Decider::respond`]), without
//! a process to start or a chain to load.
//!
//! `POST /hook/AGENT` (`claude`, `codex`, `gemini`, `copilot`) with the hook's payload as the
//! body; the answer is the agent's own output JSON (an empty body: no decision). Where a hook
//! process would exit with code 2 to block, the server answers the agent's deny: an HTTP hook
//! has no exit code. With a token, a request without `Authorization: Bearer TOKEN` is refused.
//!
//! axum (on the tokio runtime acp-gate already runs, HTTP/1 only, no default features): a
//! well-kept router and server over hyper, which the organisation's review service uses too,
//! so it is built once.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path as Route, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use super::once::{Decider, Received, Transport};
use crate::request::hook::Agent;

/// Where the server listens.
#[derive(Debug, Clone)]
pub enum Listen {
    /// A loopback address (`127.0.0.1:PORT`, `[::1]:PORT`; port 0: any free one).
    Tcp(SocketAddr),
    /// A Unix socket at this path (made; one left there by an earlier server is replaced).
    Unix(PathBuf),
}

/// What every request shares: the resident chain, and the token requests must carry.
struct Served {
    decider: Decider,
    token: Option<String>,
}

/// Serves hook calls with `decider` until the process is stopped. `ready` is called with
/// where it listens (`127.0.0.1:PORT`, or the socket's path) once it does.
pub async fn serve(
    decider: Decider,
    listen: Listen,
    token: Option<String>,
    ready: impl FnOnce(&str),
) -> Result<()> {
    let served = Arc::new(Served { decider, token });
    let app = Router::new()
        .route("/hook/{agent}", post(hook))
        .with_state(served);
    match listen {
        Listen::Tcp(address) => {
            if !address.ip().is_loopback() {
                bail!(
                    "{address}: `hook serve` listens on loopback only (it answers for this \
                     developer's agents; the organisation's review service is another one)"
                );
            }
            let listener = tokio::net::TcpListener::bind(address)
                .await
                .with_context(|| format!("cannot listen on {address}"))?;
            ready(&listener.local_addr()?.to_string());
            axum::serve(listener, app).await?;
        }
        Listen::Unix(path) => {
            if path.exists() {
                std::fs::remove_file(&path)
                    .with_context(|| format!("{}: cannot replace it", path.display()))?;
            }
            let listener = tokio::net::UnixListener::bind(&path)
                .with_context(|| format!("cannot listen on {}", path.display()))?;
            ready(&path.display().to_string());
            axum::serve(listener, app).await?;
        }
    }
    Ok(())
}

/// `POST /hook/AGENT`: one hook call.
async fn hook(
    State(served): State<Arc<Served>>,
    Route(agent): Route<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(agent) = Agent::named(&agent) else {
        let known = Agent::ALL.map(Agent::name).join(", ");
        return (
            StatusCode::NOT_FOUND,
            format!("no agent `{agent}`: {known}"),
        )
            .into_response();
    };
    if let Some(token) = &served.token {
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if given != Some(token.as_str()) {
            return (StatusCode::UNAUTHORIZED, "no valid bearer token").into_response();
        }
    }
    let received = Received::read(agent, &body);
    let reply = served
        .decider
        .respond(agent, received, Transport::Http)
        .await;
    ([(header::CONTENT_TYPE, "application/json")], reply.stdout).into_response()
}
