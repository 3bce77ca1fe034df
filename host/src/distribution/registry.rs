//! Talking to an OCI registry (the distribution API, through `oci-client`): manifests and
//! blobs by digest, pushes, and cosign's signatures under the `sha256-HEX.sig` tag.
//! Credentials come from the docker config file; plain HTTP only to a loopback registry.

use std::path::PathBuf;
use std::sync::Once;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};

use super::artifact::{
    DOCKER_MANIFEST_MEDIA_TYPE, Descriptor, MANIFEST_MEDIA_TYPE, MAX_MANIFEST_BYTES, Manifest,
    Packaged, Signature, check_blob, digest_of, signature_manifest, signature_tag,
};
use super::reference::RegistryRef;

/// One repository of one registry, with the credentials for it.
pub struct Registry {
    client: Client,
    auth: RegistryAuth,
    reference: RegistryRef,
}

impl Registry {
    pub fn new(reference: &RegistryRef) -> Registry {
        // reqwest is built without a default TLS provider: ring, installed once.
        static PROVIDER: Once = Once::new();
        PROVIDER.call_once(|| {
            let _ = rustls::crypto::ring::default_provider().install_default();
        });
        let protocol = match reference.is_loopback() {
            true => ClientProtocol::HttpsExcept(vec![reference.registry.clone()]),
            false => ClientProtocol::Https,
        };
        let client = Client::new(ClientConfig {
            protocol,
            connect_timeout: Some(Duration::from_secs(5)),
            read_timeout: Some(Duration::from_secs(60)),
            user_agent: concat!("acp-gate/", env!("CARGO_PKG_VERSION")),
            platform_resolver: None,
            ..ClientConfig::default()
        });
        Registry {
            client,
            auth: docker_credentials(&reference.registry).unwrap_or(RegistryAuth::Anonymous),
            reference: reference.clone(),
        }
    }

    fn at(&self, tag_or_digest: &str) -> Reference {
        let (registry, repository) = (
            self.reference.registry.clone(),
            self.reference.repository.clone(),
        );
        match tag_or_digest.starts_with("sha256:") {
            true => Reference::with_digest(registry, repository, tag_or_digest.to_owned()),
            false => Reference::with_tag(registry, repository, tag_or_digest.to_owned()),
        }
    }

    /// The manifest at a tag or digest, and its digest (checked when it was asked by digest);
    /// `None` when the registry has none there.
    pub async fn manifest(&self, tag_or_digest: &str) -> Result<Option<(Vec<u8>, String)>> {
        let pulled = self
            .client
            .pull_manifest_raw(
                &self.at(tag_or_digest),
                &self.auth,
                &[MANIFEST_MEDIA_TYPE, DOCKER_MANIFEST_MEDIA_TYPE],
            )
            .await;
        let bytes = match pulled {
            Ok((bytes, _)) => bytes.to_vec(),
            Err(error) if not_found(&error) => return Ok(None),
            Err(error) => return Err(self.failed(error)),
        };
        if bytes.len() as u64 > MAX_MANIFEST_BYTES {
            bail!("its manifest is larger than {MAX_MANIFEST_BYTES} bytes");
        }
        let digest = digest_of(&bytes);
        if tag_or_digest.starts_with("sha256:") {
            check_blob(tag_or_digest, &bytes, "the manifest the registry sent")?;
        }
        Ok(Some((bytes, digest)))
    }

    /// A blob, checked against its descriptor; a registry that sends more bytes than the
    /// descriptor says is cut off there.
    pub async fn blob(&self, descriptor: &Descriptor) -> Result<Vec<u8>> {
        let mut bytes = Capped {
            bytes: Vec::with_capacity(descriptor.size.min(MAX_MANIFEST_BYTES) as usize),
            limit: descriptor.size as usize,
        };
        self.client
            .pull_blob(
                &self.at(&descriptor.digest),
                descriptor.digest.as_str(),
                &mut bytes,
            )
            .await
            .map_err(|e| self.failed(e))?;
        check_blob(&descriptor.digest, &bytes.bytes, "a blob the registry sent")?;
        Ok(bytes.bytes)
    }

    /// Pushes a packaged plugin under `tag` (or by digest alone); returns the manifest digest.
    pub async fn push(&self, packaged: &Packaged, tag: Option<&str>) -> Result<String> {
        let digest = packaged.digest();
        let target = self.at(tag.unwrap_or(&digest));
        self.authorise_push(&target).await?;
        for blob in [&packaged.config, &packaged.component] {
            self.push_blob(&target, blob).await?;
        }
        self.push_manifest(&target, &packaged.manifest).await?;
        Ok(digest)
    }

    /// The cosign signatures stored beside the artifact `digest`.
    pub async fn signatures(&self, digest: &str) -> Result<Vec<Signature>> {
        let Some((bytes, _)) = self.manifest(&signature_tag(digest)).await? else {
            return Ok(Vec::new());
        };
        let manifest = Manifest::parse(&bytes).context("its signature manifest")?;
        let mut found = Vec::new();
        for (layer, signature) in manifest.signature_layers() {
            found.push(Signature {
                payload: self.blob(layer).await?,
                signature: signature.to_owned(),
            });
        }
        Ok(found)
    }

    /// Adds a signature beside the artifact `digest`, keeping the ones already there (as
    /// `cosign sign` does).
    pub async fn add_signature(&self, digest: &str, signature: Signature) -> Result<()> {
        let mut all = self.signatures(digest).await?;
        if all.contains(&signature) {
            return Ok(());
        }
        all.push(signature);
        let (manifest, blobs) = signature_manifest(&all);
        let target = self.at(&signature_tag(digest));
        self.authorise_push(&target).await?;
        for (_, blob) in &blobs {
            self.push_blob(&target, blob).await?;
        }
        self.push_manifest(&target, &manifest).await
    }

    async fn authorise_push(&self, target: &Reference) -> Result<()> {
        self.client
            .auth(target, &self.auth, RegistryOperation::Push)
            .await
            .map(drop)
            .map_err(|e| self.failed(e))
    }

    async fn push_blob(&self, target: &Reference, bytes: &[u8]) -> Result<()> {
        self.client
            .push_blob(target, bytes.to_vec(), &digest_of(bytes))
            .await
            .map(drop)
            .map_err(|e| self.failed(e))
    }

    async fn push_manifest(&self, target: &Reference, manifest: &[u8]) -> Result<()> {
        let content_type = MANIFEST_MEDIA_TYPE.parse().expect("a valid header value");
        self.client
            .push_manifest_raw(target, manifest.to_vec(), content_type)
            .await
            .map(drop)
            .map_err(|e| self.failed(e))
    }

    fn failed(&self, error: OciDistributionError) -> anyhow::Error {
        let registry = &self.reference.registry;
        match &error {
            OciDistributionError::RequestError(inner)
                if inner.is_connect() || inner.is_timeout() =>
            {
                anyhow!("registry {registry} is unreachable ({error})")
            }
            OciDistributionError::DigestError(_) => anyhow!(
                "registry {registry} sent content that does not match its digest (tampered or corrupted): {error}"
            ),
            OciDistributionError::UnauthorizedError { .. }
            | OciDistributionError::AuthenticationFailure(_) => anyhow!(
                "registry {registry} refused the credentials ({error}); they come from the docker config file (`docker login`)"
            ),
            _ => anyhow!("registry {registry}: {error}"),
        }
    }
}

/// A buffer that refuses to grow past `limit` bytes.
struct Capped {
    bytes: Vec<u8>,
    limit: usize,
}

impl tokio::io::AsyncWrite for Capped {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        data: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        if self.bytes.len() + data.len() > self.limit {
            return std::task::Poll::Ready(Err(std::io::Error::other(
                "the registry sent more bytes than the blob's descriptor says",
            )));
        }
        self.bytes.extend_from_slice(data);
        std::task::Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

fn not_found(error: &OciDistributionError) -> bool {
    match error {
        OciDistributionError::RegistryError { envelope, .. } => envelope.errors.iter().any(|e| {
            matches!(
                e.code,
                OciErrorCode::ManifestUnknown | OciErrorCode::NameUnknown
            )
        }),
        OciDistributionError::ServerError { code, .. } => *code == 404,
        OciDistributionError::ImageManifestNotFoundError(_) => true,
        _ => false,
    }
}

/// The registry's credentials from the docker config file (`$DOCKER_CONFIG/config.json`, else
/// `~/.docker/config.json`): an `auth` (base64 `user:password`), `username` and `password`,
/// or an `identitytoken`. Credential helpers are not run.
fn docker_credentials(registry: &str) -> Option<RegistryAuth> {
    let path = match std::env::var_os("DOCKER_CONFIG") {
        Some(dir) => PathBuf::from(dir).join("config.json"),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".docker/config.json"),
    };
    let config: serde_json::Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    credentials_in(&config, registry)
}

/// `registry`'s entry in a docker config's `auths` (keys may carry a scheme and a path).
fn credentials_in(config: &serde_json::Value, registry: &str) -> Option<RegistryAuth> {
    let (_, entry) = config.get("auths")?.as_object()?.iter().find(|(key, _)| {
        let host = key
            .trim_start_matches("https://")
            .trim_start_matches("http://");
        host.split('/').next() == Some(registry)
    })?;
    let field = |name: &str| {
        entry
            .get(name)
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
    };
    if let Some(token) = field("identitytoken") {
        return Some(RegistryAuth::Bearer(token.to_owned()));
    }
    if let (Some(user), Some(password)) = (field("username"), field("password")) {
        return Some(RegistryAuth::Basic(user.to_owned(), password.to_owned()));
    }
    let decoded = String::from_utf8(STANDARD.decode(field("auth")?).ok()?).ok()?;
    let (user, password) = decoded.split_once(':')?;
    Some(RegistryAuth::Basic(user.to_owned(), password.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_config_credentials_are_found_by_registry() {
        let config = serde_json::json!({"auths": {
            "https://registry.acme.internal/v1/": {"auth": STANDARD.encode("ci:s3cret")},
            "ghcr.io": {"username": "bot", "password": "token"},
            "quay.io": {"identitytoken": "refresh"},
            "other.io": {"auth": "!!"},
        }});
        let basic = |user: &str, password: &str| Some(format!("Basic({user}, {password})"));
        let shown = |registry: &str| {
            credentials_in(&config, registry).map(|auth| match auth {
                RegistryAuth::Basic(user, password) => format!("Basic({user}, {password})"),
                RegistryAuth::Bearer(token) => format!("Bearer({token})"),
                RegistryAuth::Anonymous => "Anonymous".into(),
            })
        };
        assert_eq!(shown("registry.acme.internal"), basic("ci", "s3cret"));
        assert_eq!(shown("ghcr.io"), basic("bot", "token"));
        assert_eq!(shown("quay.io").as_deref(), Some("Bearer(refresh)"));
        assert_eq!(shown("other.io"), None);
        assert_eq!(shown("acme.internal"), None);
    }
}
