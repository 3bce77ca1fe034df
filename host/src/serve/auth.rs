//! Who is calling: bearer tokens (stored as their sha256: a token is 32 random bytes, so a
//! fast hash is enough), their roles, a rate limit per token, and the page's sessions (an
//! HttpOnly, SameSite=Strict cookie, Secure under TLS) with their CSRF tokens.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::header::{AUTHORIZATION, COOKIE};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Redirect, Response};
use base64::Engine as _;

use super::Service;
use super::db::{Db, Role, Token};
use super::error::Refusal;
use crate::digest::sha256_hex;

/// The page's session cookie.
pub const COOKIE_NAME: &str = "acp_gate_session";

/// How long a page session lasts.
pub const SESSION_MS: i64 = 12 * 3600 * 1000;

/// A new secret: `prefix` and 32 random bytes, base64url.
pub fn new_secret(prefix: &str) -> String {
    use rand_core::RngCore;
    let mut bytes = [0u8; 32];
    rand_core::OsRng.fill_bytes(&mut bytes);
    format!(
        "{prefix}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

/// Makes a token of `role` for `name` and stores it; returns its record and its secret (shown
/// once, stored only as a hash).
pub async fn issue(
    db: &Db,
    name: &str,
    role: Role,
    team: Option<&str>,
) -> anyhow::Result<(Token, String)> {
    let secret = new_secret("acpg_");
    let token = Token {
        id: new_secret("tok_")[..16].to_owned(),
        name: name.to_owned(),
        role,
        team: team.map(str::to_owned),
        created_ms: super::db::now(),
        revoked_ms: None,
    };
    db.insert_token(&token, &hash(&secret)).await?;
    Ok((token, secret))
}

/// How a secret is stored.
pub fn hash(secret: &str) -> String {
    sha256_hex(secret.as_bytes())
}

/// Compares two secrets in time that does not depend on where they differ.
pub fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// A token bucket per key (a token's id, or a login's address).
pub struct RateLimiter {
    /// Requests per second, sustained; 0: no limit.
    rate: f64,
    burst: f64,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl RateLimiter {
    pub fn new(per_second: u32) -> RateLimiter {
        RateLimiter {
            rate: f64::from(per_second),
            burst: f64::from(per_second) * 10.0,
            buckets: Mutex::default(),
        }
    }

    /// Whether `key` may make one more request now.
    pub fn allow(&self, key: &str) -> bool {
        if self.rate == 0.0 {
            return true;
        }
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() > 100_000 {
            // Full buckets say nothing: forget them rather than grow without end.
            buckets.retain(|_, (tokens, _)| *tokens < self.burst);
        }
        let (tokens, at) = buckets.entry(key.to_owned()).or_insert((self.burst, now));
        *tokens = (*tokens + now.duration_since(*at).as_secs_f64() * self.rate).min(self.burst);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// The caller of an API route: the live token its `Authorization: Bearer` names, within its
/// rate limit.
pub struct Caller(pub Token);

impl FromRequestParts<Arc<Service>> for Caller {
    type Rejection = Refusal;

    async fn from_request_parts(
        parts: &mut Parts,
        service: &Arc<Service>,
    ) -> Result<Caller, Refusal> {
        let header = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let Some(secret) = header.strip_prefix("Bearer ").map(str::trim) else {
            return Err(Refusal::new(
                StatusCode::UNAUTHORIZED,
                "no token: send `Authorization: Bearer TOKEN` (acp-gate serve token create)",
            ));
        };
        let Some(token) = service.db.token_by_hash(&hash(secret)).await? else {
            return Err(Refusal::new(
                StatusCode::UNAUTHORIZED,
                "this token is unknown or revoked",
            ));
        };
        if !service.limiter.allow(&token.id) {
            return Err(Refusal::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!("token `{}` is over its rate limit; slow down", token.name),
            ));
        }
        Ok(Caller(token))
    }
}

/// A signed-in reviewer on the page: the session cookie's token and the session's CSRF token.
pub struct Reviewer {
    pub token: Token,
    pub csrf: String,
    /// The cookie's hash, to end the session.
    pub session: String,
}

/// The value of cookie `name` in the request.
pub fn cookie<'a>(parts: &'a Parts, name: &str) -> Option<&'a str> {
    parts
        .headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// A page for signed-in reviewers sends anyone else to the login page.
impl FromRequestParts<Arc<Service>> for Reviewer {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        service: &Arc<Service>,
    ) -> Result<Reviewer, Response> {
        let login = || Redirect::to("/login").into_response();
        let secret = cookie(parts, COOKIE_NAME).ok_or_else(login)?;
        let session = hash(secret);
        let found = service
            .db
            .session(&session)
            .await
            .map_err(|e| Refusal::from(e).into_response())?;
        match found {
            Some((token, csrf)) if token.role.reviews() => Ok(Reviewer {
                token,
                csrf,
                session,
            }),
            _ => Err(login()),
        }
    }
}

/// The address a request came from: the client's, or on a service behind a TLS proxy, the
/// one the proxy names in `X-Forwarded-For` (the proxy is trusted to set it).
#[derive(Clone, Copy, Debug)]
pub struct Peer(pub std::net::SocketAddr);

impl
    axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, tokio::net::TcpListener>>
    for Peer
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, tokio::net::TcpListener>) -> Peer {
        Peer(*stream.remote_addr())
    }
}

impl
    axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, super::tls::TlsListener>>
    for Peer
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, super::tls::TlsListener>) -> Peer {
        Peer(*stream.remote_addr())
    }
}

/// Who is signing in, for slowing down guesses: the client's address.
pub fn client_address(peer: Peer, parts: &axum::http::HeaderMap, behind_proxy: bool) -> String {
    let forwarded = parts
        .get("x-forwarded-for")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(',').next_back())
        .map(str::trim);
    match forwarded {
        Some(address) if behind_proxy => address.to_owned(),
        _ => peer.0.ip().to_string(),
    }
}

/// The `Set-Cookie` value of a new session (or of its end, with an empty secret).
pub fn session_cookie(secret: &str, secure: bool) -> String {
    let max_age = if secret.is_empty() {
        0
    } else {
        SESSION_MS / 1000
    };
    let secure = if secure { "; Secure" } else { "" };
    format!("{COOKIE_NAME}={secret}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_over_its_rate_is_held_back_and_others_are_not() {
        let limiter = RateLimiter::new(1);
        let allowed = (0..20).filter(|_| limiter.allow("a")).count();
        assert_eq!(allowed, 10, "a burst of ten, then one a second");
        assert!(limiter.allow("b"));
        assert!(RateLimiter::new(0).allow("a"));
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "abcd"));
        assert_ne!(new_secret("x"), new_secret("x"));
        assert!(session_cookie("s", true).contains("HttpOnly; SameSite=Strict"));
        assert!(session_cookie("s", true).ends_with("; Secure"));
    }
}
