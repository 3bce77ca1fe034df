//! A handler's plugin as bytes: from the binary (built-ins), a file, or the distribution store
//! (a registry or an image layout), checked against the `[trust]` policy before anything loads.

use std::borrow::Cow;

use anyhow::{Context, Result, bail};

use crate::builtin;
use crate::config::PluginRef;
use crate::distribution::reference::Location;
use crate::distribution::{self, Reach, Trust, store::Store};

/// A plugin's component, and what was checked on the way.
pub struct Resolved {
    pub component: Cow<'static, [u8]>,
    /// The OCI manifest's digest, for a distributed plugin.
    pub manifest_digest: Option<String>,
    /// The trusted key that signed it, when the trust policy asked.
    pub signed_by: Option<String>,
    /// Where the bytes came from: `built in`, a file, `the local store`, a registry, a layout.
    pub from: String,
}

/// The component of `plugin`. With a `[trust]` that requires signatures, every plugin that is
/// not built in must be signed by a trusted key (a file by its detached `FILE.sig`), else it
/// does not load; the error says which and why. `reach`: how far a distributed plugin may be
/// fetched from.
pub async fn resolve(plugin: &PluginRef, trust: Option<&Trust>, reach: Reach) -> Result<Resolved> {
    let required = trust.filter(|t| t.require_signatures);
    match plugin {
        PluginRef::Builtin(name) => Ok(Resolved {
            component: Cow::Borrowed(
                builtin::bytes(name).context("built-in plugin missing from this binary")?,
            ),
            manifest_digest: None,
            signed_by: None,
            from: "built in".into(),
        }),
        PluginRef::File(path) => {
            crate::stamps::noted(path);
            let bytes =
                std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
            let signed_by = match required {
                None => None,
                Some(trust) => {
                    let signature_path = distribution::detached_signature_path(path);
                    crate::stamps::noted(&signature_path);
                    let Ok(signature) = std::fs::read_to_string(&signature_path) else {
                        bail!(
                            "not signed: no {} beside it, and {} requires signatures (`acp-gate plugin sign --key KEY {}` writes it)",
                            signature_path.display(),
                            trust.origin,
                            path.display()
                        );
                    };
                    let key = trust
                        .signer(&bytes, signature.trim())
                        .with_context(|| format!("{}", signature_path.display()))?;
                    Some(key.path.display().to_string())
                }
            };
            Ok(Resolved {
                component: Cow::Owned(bytes),
                manifest_digest: None,
                signed_by,
                from: path.display().to_string(),
            })
        }
        PluginRef::Oci(location) => {
            let store = Store::open()?;
            let mut fetched = distribution::fetch(location, &store, reach).await?;
            let signed_by = match required {
                None => None,
                Some(trust) => {
                    let mut signer = trust.artifact_signer(&fetched.digest, &fetched.signatures);
                    if signer.is_err() && fetched.offline && reach != Reach::StoreOnly {
                        // Signed since it was pulled, or the key rotated: ask the registry
                        // once; if it cannot be reached, the stored signatures' verdict stands.
                        if distribution::refresh_signatures(location, &store, &mut fetched)
                            .await
                            .is_ok()
                        {
                            signer = trust.artifact_signer(&fetched.digest, &fetched.signatures);
                        }
                    }
                    Some(signer?.path.display().to_string())
                }
            };
            Ok(Resolved {
                component: Cow::Owned(fetched.component),
                manifest_digest: Some(fetched.digest),
                signed_by,
                from: match (location, fetched.offline) {
                    (Location::Layout { .. }, _) => location.to_string(),
                    (_, true) => {
                        format!("{location} (from the store in {})", store.root().display())
                    }
                    (_, false) => format!("{location} (pulled)"),
                },
            })
        }
    }
}
