//! Plugins distributed as OCI artifacts: fetching an `oci://` or `oci-layout://` plugin into
//! the local store (so later loads are offline), and the org's trust policy that a plugin must
//! be signed by one of its keys before it loads.

pub mod artifact;
pub mod layout;
pub mod reference;
pub mod registry;
pub mod signature;
pub mod store;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use self::artifact::{Manifest, Signature};
use self::reference::{Location, RegistryRef};
use self::registry::Registry;
use self::signature::PublicKey;
use self::store::Store;

/// A distributed plugin, fetched and checked against its digests.
pub struct Fetched {
    /// The manifest's digest.
    pub digest: String,
    pub manifest: Vec<u8>,
    pub component: Vec<u8>,
    /// The signatures found beside it (not yet verified).
    pub signatures: Vec<Signature>,
    /// It came from the local store, not the network (or the layout on disk).
    pub offline: bool,
}

/// How far a fetch may go for what the local store does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// The store only: a project's `handlers.toml` comes with a cloned repository, which must
    /// not make acp-gate contact a registry of its choosing.
    StoreOnly,
    /// The registry, for what the store lacks; a tag alone resolves as it last did.
    Registry,
    /// The registry, and a tag alone is resolved there again (`plugin pull`, `plugin sign`).
    Refresh,
}

/// Fetches a plugin: from the local store when it has the pinned digest, else from the
/// registry (into the store), as far as `reach` allows; an image layout is read where it is.
pub async fn fetch(location: &Location, store: &Store, reach: Reach) -> Result<Fetched> {
    match location {
        Location::Layout { dir, digest } => {
            let (manifest, component, signatures) = layout::read(dir, digest)?;
            Ok(Fetched {
                digest: digest.clone(),
                manifest,
                component,
                signatures,
                offline: true,
            })
        }
        Location::Registry(reference) => fetch_from_registry(reference, store, reach).await,
    }
}

async fn fetch_from_registry(
    reference: &RegistryRef,
    store: &Store,
    reach: Reach,
) -> Result<Fetched> {
    let registry = Registry::new(reference);
    let known = match (&reference.digest, reach) {
        (Some(digest), _) => Some(digest.clone()),
        (None, Reach::Refresh) => None,
        (None, _) => store.tag(reference),
    };
    let not_in_store = || {
        anyhow::anyhow!(
            "oci://{reference} is not in the local store, and a project's handlers.toml does not make acp-gate contact a registry; pull it yourself if you trust it (`acp-gate plugin pull oci://{reference}`)"
        )
    };
    let digest = match known {
        Some(digest) => digest,
        None if reach == Reach::StoreOnly => return Err(not_in_store()),
        None => {
            let tag = reference
                .tag
                .as_deref()
                .context("neither a tag nor a digest")?;
            let Some((_, digest)) = registry.manifest(tag).await? else {
                bail!("registry {} has no {reference}", reference.registry);
            };
            store.set_tag(reference, &digest)?;
            digest
        }
    };
    if let Some(fetched) = from_store(store, &digest)? {
        return Ok(fetched);
    }
    if reach == Reach::StoreOnly {
        return Err(not_in_store());
    }
    // A first pull goes to the network (at load, never while a request waits): say so.
    if std::io::stderr().is_terminal() {
        eprintln!(
            "acp-gate: pulling oci://{} into {} (first use; offline afterwards)…",
            reference.pinned(&digest),
            store.root().display()
        );
    }
    let Some((manifest, _)) = registry.manifest(&digest).await? else {
        bail!(
            "registry {} has no manifest {digest} in {}",
            reference.registry,
            reference.repository
        );
    };
    let parsed = Manifest::parse(&manifest)?;
    let component = registry.blob(parsed.component_layer()?).await?;
    let config = registry.blob(&parsed.config).await?;
    let signatures = registry.signatures(&digest).await?;
    // The blobs first: a manifest in the store promises its blobs are there too.
    store.put(&component)?;
    store.put(&config)?;
    store.put(&manifest)?;
    store.add_signatures(&digest, &signatures)?;
    Ok(Fetched {
        digest,
        manifest,
        component,
        signatures,
        offline: false,
    })
}

/// The artifact `digest` from the store, if it has the manifest and its component intact.
fn from_store(store: &Store, digest: &str) -> Result<Option<Fetched>> {
    let Some(manifest) = store.get(digest) else {
        return Ok(None);
    };
    let layer = Manifest::parse(&manifest)
        .and_then(|m| m.component_layer().cloned())
        .with_context(|| format!("the store's copy of {digest}"))?;
    let Some(component) = store.get(&layer.digest) else {
        return Ok(None);
    };
    Ok(Some(Fetched {
        digest: digest.to_owned(),
        manifest,
        component,
        signatures: store.signatures(digest),
        offline: true,
    }))
}

/// The sha256 (hexadecimal) of the component a pinned reference names, from the store or the
/// layout, without the network: how a managed compile cache recognises the org's plugins.
pub fn component_sha256(location: &Location) -> Option<String> {
    let digest = location.digest()?;
    let manifest = match location {
        Location::Registry(_) => Store::open().ok()?.get(digest)?,
        Location::Layout { dir, digest } => layout::read(dir, digest).ok()?.0,
    };
    let layer = Manifest::parse(&manifest)
        .ok()?
        .component_layer()
        .ok()?
        .digest
        .clone();
    layer.strip_prefix("sha256:").map(str::to_owned)
}

/// Looks for new signatures of a stored artifact in its registry (after none of the stored
/// ones verified); keeps what it finds.
pub async fn refresh_signatures(
    location: &Location,
    store: &Store,
    fetched: &mut Fetched,
) -> Result<()> {
    let Location::Registry(reference) = location else {
        return Ok(());
    };
    let found = Registry::new(reference).signatures(&fetched.digest).await?;
    store.add_signatures(&fetched.digest, &found)?;
    fetched.signatures = store.signatures(&fetched.digest);
    Ok(())
}

/// The org file's `[trust]`: the public keys plugins may be signed with, and whether every
/// plugin that is not built in must be.
#[derive(Debug, Clone)]
pub struct Trust {
    pub keys: Vec<TrustedKey>,
    pub require_signatures: bool,
    /// Where it was set (`FILE:LINE`), for messages.
    pub origin: String,
}

#[derive(Debug, Clone)]
pub struct TrustedKey {
    pub path: PathBuf,
    pub key: PublicKey,
}

impl Trust {
    /// The trusted key that signed the artifact `digest`: one of `signatures` whose payload
    /// names `digest` and that verifies with a trusted key. The error says why none did.
    pub fn artifact_signer(&self, digest: &str, signatures: &[Signature]) -> Result<&TrustedKey> {
        if signatures.is_empty() {
            bail!(
                "not signed (no cosign signature beside {digest}), and {} requires signatures",
                self.origin
            );
        }
        let mut why = Vec::new();
        for signature in signatures {
            if let Err(e) = signature::check_payload(&signature.payload, digest) {
                why.push(format!("{e:#}"));
                continue;
            }
            match self.signer(&signature.payload, &signature.signature) {
                Ok(key) => return Ok(key),
                Err(e) => why.push(format!("{e:#}")),
            }
        }
        bail!("no valid signature by a trusted key: {}", why.join("; "))
    }

    /// The trusted key whose signature `signature_b64` of `payload` is.
    pub fn signer(&self, payload: &[u8], signature_b64: &str) -> Result<&TrustedKey> {
        if self.keys.is_empty() {
            bail!(
                "signed, but {} trusts no key (an empty trust list trusts nothing)",
                self.origin
            );
        }
        self.keys
            .iter()
            .find(|k| k.key.verify(payload, signature_b64).is_ok())
            .with_context(|| {
                format!(
                    "signed by a key {} does not trust (trusted: {})",
                    self.origin,
                    self.keys
                        .iter()
                        .map(|k| k.path.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    }
}

/// The detached signature of a plugin file: `FILE.sig`, as `cosign sign-blob` writes it.
pub fn detached_signature_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".sig");
    PathBuf::from(name)
}
