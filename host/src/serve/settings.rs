//! `serve.toml` and the command line's flags over it: where the service listens, its
//! database, how it is reached (TLS of its own, or behind a TLS proxy), its public address
//! (for links), its webhook, its rate limit and what it holds the fleet's gates to.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde::Deserialize;

use super::fleet::Fleet;

/// The file's keys (every one optional; flags win).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingsFile {
    pub listen: Option<String>,
    pub database: Option<String>,
    pub public_url: Option<String>,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    #[serde(default)]
    pub behind_tls_proxy: bool,
    pub webhook: Option<String>,
    pub rate_limit: Option<u32>,
    /// The org's published policy: its org file (relative to this file) or `sha256:…`.
    pub fleet_policy: Option<String>,
    /// How long a gate may go without reporting (`30m`, `24h`).
    pub silent_after: Option<String>,
}

impl SettingsFile {
    pub fn read(path: &Path) -> Result<SettingsFile> {
        let text = crate::config::read_file(path)?;
        let mut file: SettingsFile =
            toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        // Paths in the file are relative to it.
        let dir = path.parent().unwrap_or(Path::new("."));
        for path in [&mut file.tls_cert, &mut file.tls_key]
            .into_iter()
            .flatten()
        {
            *path = dir.join(&*path);
        }
        if let Some(policy) = &mut file.fleet_policy
            && !policy.starts_with("sha256:")
        {
            *policy = dir.join(&*policy).display().to_string();
        }
        Ok(file)
    }

    /// `silent_after`, read.
    pub fn silent_after(&self, path: &Path) -> Result<Option<std::time::Duration>> {
        (self.silent_after.as_deref())
            .map(|text| {
                crate::args::parse_duration(text)
                    .map_err(|e| anyhow::anyhow!("{}: silent_after: {e}", path.display()))
            })
            .transpose()
    }
}

/// How the service is reached.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// TLS of its own (rustls): a PEM certificate chain and its key.
    Tls { cert: PathBuf, key: PathBuf },
    /// Plain HTTP behind a proxy that terminates TLS (cookies are `Secure`).
    BehindTlsProxy,
    /// Plain HTTP on a loopback address (a developer's or a test's own service).
    Loopback,
}

#[derive(Debug, Clone)]
pub struct Settings {
    pub listen: SocketAddr,
    pub database: String,
    /// The address reviewers use, for links in notifications.
    pub public_url: Option<String>,
    pub transport: Transport,
    pub webhook: Option<String>,
    /// Requests per second per token (bursts of ten times that); 0: no limit.
    pub rate_limit: u32,
    /// The org's published policy and how long a gate may be silent.
    pub fleet: Fleet,
}

/// Requests per second per token when nothing says otherwise.
pub const RATE_LIMIT: u32 = 100;

impl Settings {
    /// Checks how the service would be reached: plain HTTP is refused on any address but
    /// loopback unless a TLS proxy is declared in front.
    pub fn resolve(
        listen: &str,
        database: String,
        public_url: Option<String>,
        tls: (Option<PathBuf>, Option<PathBuf>),
        behind_tls_proxy: bool,
        webhook: Option<String>,
        rate_limit: Option<u32>,
    ) -> Result<Settings> {
        let listen: SocketAddr = listen
            .parse()
            .map_err(|e| anyhow::anyhow!("--listen {listen}: not an address and port ({e})"))?;
        let transport = match (tls, behind_tls_proxy) {
            ((Some(cert), Some(key)), false) => Transport::Tls { cert, key },
            ((Some(_), None) | (None, Some(_)), _) => {
                bail!("--tls-cert and --tls-key go together")
            }
            ((Some(_), Some(_)), true) => {
                bail!(
                    "--behind-tls-proxy and --tls-cert: choose one (the proxy's TLS, or the service's)"
                )
            }
            ((None, None), true) => Transport::BehindTlsProxy,
            ((None, None), false) if listen.ip().is_loopback() => Transport::Loopback,
            ((None, None), false) => bail!(
                "--listen {listen}: plain HTTP is served only on loopback; give --tls-cert and --tls-key, or --behind-tls-proxy if a TLS proxy is in front"
            ),
        };
        if let Some(url) = &public_url {
            reqwest::Url::parse(url).map_err(|e| anyhow::anyhow!("--public-url {url}: {e}"))?;
        }
        Ok(Settings {
            listen,
            database,
            public_url: public_url.map(|u| u.trim_end_matches('/').to_owned()),
            transport,
            webhook,
            rate_limit: rate_limit.unwrap_or(RATE_LIMIT),
            fleet: Fleet::default(),
        })
    }

    /// Whether a TLS proxy is in front, whose `X-Forwarded-For` names the client.
    pub fn behind_proxy(&self) -> bool {
        self.transport == Transport::BehindTlsProxy
    }

    /// Whether cookies must be `Secure` (the page is reached over TLS).
    pub fn secure_cookies(&self) -> bool {
        self.transport != Transport::Loopback
    }
}
