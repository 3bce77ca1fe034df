//! Serving over TLS with rustls (ring): the certificate chain and key from PEM files, and a
//! listener whose handshakes run in tasks of their own, so that a slow client never holds the
//! accepting of others.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// How long a client may take over its handshake.
const HANDSHAKE: Duration = Duration::from_secs(10);

pub struct TlsListener {
    local: std::net::SocketAddr,
    accepted: mpsc::Receiver<(TlsStream<TcpStream>, std::net::SocketAddr)>,
}

impl TlsListener {
    pub fn new(listener: TcpListener, cert: &Path, key: &Path) -> Result<TlsListener> {
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
            .and_then(|certs| certs.collect())
            .map_err(|e| anyhow!("--tls-cert {}: {e}", cert.display()))?;
        let private = PrivateKeyDer::from_pem_file(key)
            .map_err(|e| anyhow!("--tls-key {}: {e}", key.display()))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .context("TLS: no protocol versions")?
            .with_no_client_auth()
            .with_single_cert(chain, private)
            .with_context(|| {
                format!(
                    "--tls-cert {} and --tls-key {} do not go together",
                    cert.display(),
                    key.display()
                )
            })?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let local = listener.local_addr()?;
        let (sender, accepted) = mpsc::channel(256);
        tokio::spawn(async move {
            loop {
                let Ok((stream, peer)) = listener.accept().await else {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                let (acceptor, sender) = (acceptor.clone(), sender.clone());
                tokio::spawn(async move {
                    if let Ok(Ok(stream)) =
                        tokio::time::timeout(HANDSHAKE, acceptor.accept(stream)).await
                    {
                        let _ = sender.send((stream, peer)).await;
                    }
                });
            }
        });
        Ok(TlsListener { local, accepted })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.accepted.recv().await {
            Some(accepted) => accepted,
            // The accepting task ends only with the runtime.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}
