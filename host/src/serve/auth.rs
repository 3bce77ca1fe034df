//! Who is calling: bearer tokens (stored as their sha256: a token is 32 random bytes, so a
//! fast hash is enough), their roles, a rate limit per token, a limit on unknown tokens per
//! client address, and the page's sessions (an HttpOnly, SameSite=Strict cookie, Secure under
//! TLS) with their CSRF tokens.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::extract::{ConnectInfo, FromRequestParts};
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

/// The sign-in form's cookie: the CSRF token of a form that signs in, set with the form.
pub const LOGIN_COOKIE: &str = "acp_gate_login";

/// How long a sign-in form stays good.
const LOGIN_FORM_SECONDS: i64 = 3600;

/// Lookups of tokens not known to be good, per client address: a burst of ten, then one a
/// second.
const UNKNOWN_PER_SECOND: u32 = 1;

/// The most token hashes [`Guesses`] remembers (as good, or being looked up).
const KNOWN: usize = 100_000;

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
        let mut buckets = lock(&self.buckets);
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

/// Tokens nobody issued, per client address. Each one costs a database lookup and may be a
/// guess, so an address that sends more than a few is refused (429) before its next lookup.
/// Tokens this instance found good are looked up whatever their address sent (and forgotten
/// once revoked): the gates that share an address with a broken or hostile one keep working.
/// A token is charged once while its lookup is under way: a gate that starts with a burst of
/// calls (a new token, or any token after a restart) is one unknown token, not one per call.
pub struct Guesses {
    lookups: RateLimiter,
    /// The hashes of the tokens and sessions found good, or being looked up since when.
    seen: Mutex<HashMap<String, Seen>>,
}

/// What [`Guesses`] knows of a token's hash.
enum Seen {
    Good,
    /// Charged to its address at this time; its lookup has not ended.
    LookingUp(Instant),
}

/// How long a lookup is taken to be under way (a lookup that failed never says it ended).
const LOOKUP_SECONDS: u64 = 5;

impl Default for Guesses {
    fn default() -> Guesses {
        Guesses {
            lookups: RateLimiter::new(UNKNOWN_PER_SECOND),
            seen: Mutex::default(),
        }
    }
}

impl Guesses {
    /// Whether the token (or session) hashed `hash` may be looked up for `client` now.
    pub fn may_look_up(&self, client: &str, hash: &str) -> bool {
        let mut seen = lock(&self.seen);
        match seen.get(hash) {
            Some(Seen::Good) => return true,
            Some(Seen::LookingUp(since)) if since.elapsed().as_secs() < LOOKUP_SECONDS => {
                return true;
            }
            _ => {}
        }
        if !self.lookups.allow(client) {
            return false;
        }
        if seen.len() >= KNOWN {
            // Forgetting costs a lookup each, from the budget of their address: no harm.
            seen.clear();
        }
        seen.insert(hash.to_owned(), Seen::LookingUp(Instant::now()));
        true
    }

    /// The lookup of `hash` found a live token (or session), or did not.
    pub fn found(&self, hash: &str, good: bool) {
        let mut seen = lock(&self.seen);
        if good {
            seen.insert(hash.to_owned(), Seen::Good);
        } else {
            seen.remove(hash);
        }
    }

    /// The refusal of an address that sent too many unknown tokens.
    pub fn refusal(client: &str) -> Refusal {
        Refusal::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!("too many unknown tokens from {client}: wait a few seconds"),
        )
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// The address a request in `parts` came from, as [`client_address`] reads it.
fn client_of(parts: &Parts, service: &Service) -> String {
    let peer = parts.extensions.get::<ConnectInfo<Peer>>().map(|c| c.0);
    match peer {
        Some(peer) => client_address(peer, &parts.headers, service.settings.behind_proxy()),
        None => "an unknown address".to_owned(),
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
        let hash = hash(secret);
        let client = client_of(parts, service);
        if !service.guesses.may_look_up(&client, &hash) {
            return Err(Guesses::refusal(&client));
        }
        let found = service.db.token_by_hash(&hash).await?;
        service.guesses.found(&hash, found.is_some());
        let Some(token) = found else {
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

/// The value of cookie `name` in a request's `headers`.
pub fn cookie_in<'a>(headers: &'a axum::http::HeaderMap, name: &str) -> Option<&'a str> {
    headers
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
        let secret = cookie_in(&parts.headers, COOKIE_NAME).ok_or_else(login)?;
        let session = hash(secret);
        let client = client_of(parts, service);
        if !service.guesses.may_look_up(&client, &session) {
            return Err(Guesses::refusal(&client).into_response());
        }
        let found = service
            .db
            .session(&session)
            .await
            .map_err(|e| Refusal::from(e).into_response())?;
        service.guesses.found(&session, found.is_some());
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

/// Who is calling, for holding back guesses: the client's address, or behind a TLS proxy the
/// address the proxy appended to `X-Forwarded-For` (anyone can send the header: it is believed
/// only from a proxy the settings say is there).
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
    set_cookie(COOKIE_NAME, secret, "/", SESSION_MS / 1000, secure)
}

/// The `Set-Cookie` value of a sign-in form's CSRF token (or of its end, with an empty one):
/// sent only with the form's own posts, never with another site's (SameSite=Strict), so a
/// sign-in another site posts has no token to match.
pub fn login_cookie(csrf: &str, secure: bool) -> String {
    set_cookie(LOGIN_COOKIE, csrf, "/login", LOGIN_FORM_SECONDS, secure)
}

/// A cookie `name=value` for `path`, for `seconds` (none when `value` is empty: its end).
fn set_cookie(name: &str, value: &str, path: &str, seconds: i64, secure: bool) -> String {
    let max_age = if value.is_empty() { 0 } else { seconds };
    let secure = if secure { "; Secure" } else { "" };
    format!("{name}={value}; Path={path}; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}")
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
        assert!(login_cookie("c", false).starts_with("acp_gate_login=c; Path=/login;"));
        assert!(login_cookie("", false).contains("Max-Age=0"));
    }

    #[test]
    fn an_address_sending_unknown_tokens_is_held_back_and_known_tokens_are_not() {
        let guesses = Guesses::default();
        let looked_up = (0..20)
            .filter(|n| guesses.may_look_up("10.0.0.1", &format!("guess {n}")))
            .count();
        assert_eq!(looked_up, 10, "a burst of ten, then one a second");
        assert!(guesses.may_look_up("10.0.0.2", "guess"), "another address");
        guesses.found("good", true);
        assert!(
            guesses.may_look_up("10.0.0.1", "good"),
            "a token found good"
        );
        guesses.found("good", false);
        assert!(!guesses.may_look_up("10.0.0.1", "good"), "once revoked");
    }

    #[test]
    fn a_burst_of_calls_with_one_new_token_is_one_unknown_token() {
        let guesses = Guesses::default();
        let started = (0..50)
            .filter(|_| guesses.may_look_up("10.0.0.1", "new"))
            .count();
        assert_eq!(started, 50, "every call while its lookup is under way");
        guesses.found("new", false);
        let after = (0..20)
            .filter(|n| guesses.may_look_up("10.0.0.1", &format!("guess {n}")))
            .count();
        assert_eq!(
            after, 9,
            "the new token cost one lookup of the burst of ten"
        );
    }
}
