//! The shapes on the wire: a plugin as a Wasm OCI artifact (CNCF TAG Runtime's format, what
//! `wkg` publishes) and cosign's signature manifest, built and checked here for both the
//! registry and the image layout.

use std::collections::BTreeMap;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::digest::sha256_hex;
use crate::runtime::ComponentInfo;

pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// Docker's schema 2 manifest, which cosign writes with `COSIGN_DOCKER_MEDIA_TYPES=1`: read
/// (a manifest of either type has the same fields), never written.
pub const DOCKER_MANIFEST_MEDIA_TYPE: &str = "application/vnd.docker.distribution.manifest.v2+json";
pub const WASM_CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
pub const WASM_LAYER_MEDIA_TYPE: &str = "application/wasm";
/// cosign's signature layer, and the annotation that carries the signature.
pub const SIMPLE_SIGNING_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
const IMAGE_CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";

/// The largest manifest and the largest component acp-gate takes from a registry or layout.
pub const MAX_MANIFEST_BYTES: u64 = 4 << 20;
pub const MAX_COMPONENT_BYTES: u64 = 256 << 20;

/// A content descriptor, as in the OCI image spec.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    pub media_type: String,
    pub digest: String,
    pub size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

impl Descriptor {
    pub fn of(media_type: &str, bytes: &[u8]) -> Descriptor {
        Descriptor {
            media_type: media_type.to_owned(),
            digest: digest_of(bytes),
            size: bytes.len() as u64,
            annotations: None,
        }
    }

    fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.as_ref()?.get(key).map(String::as_str)
    }
}

/// An OCI image manifest.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub schema_version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    pub config: Descriptor,
    pub layers: Vec<Descriptor>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

impl Manifest {
    pub fn parse(bytes: &[u8]) -> Result<Manifest> {
        let manifest: Manifest =
            serde_json::from_slice(bytes).context("not an OCI image manifest")?;
        if manifest.schema_version != 2 {
            bail!(
                "an OCI image manifest has schemaVersion 2, this one {}",
                manifest.schema_version
            );
        }
        if let Some(other) = manifest
            .media_type
            .as_deref()
            .filter(|m| ![MANIFEST_MEDIA_TYPE, DOCKER_MANIFEST_MEDIA_TYPE].contains(m))
        {
            bail!("manifest of type {other}, not {MANIFEST_MEDIA_TYPE}");
        }
        Ok(manifest)
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a manifest serialises")
    }

    /// The one `application/wasm` layer of a Wasm OCI artifact, after checking the config type.
    pub fn component_layer(&self) -> Result<&Descriptor> {
        if self.config.media_type != WASM_CONFIG_MEDIA_TYPE {
            bail!(
                "not a Wasm component artifact: its config is {}, not {WASM_CONFIG_MEDIA_TYPE}",
                self.config.media_type
            );
        }
        let [layer] = self.layers.as_slice() else {
            bail!(
                "a Wasm component artifact has exactly one layer, this one {}",
                self.layers.len()
            );
        };
        if layer.media_type != WASM_LAYER_MEDIA_TYPE {
            bail!(
                "its layer is {}, not {WASM_LAYER_MEDIA_TYPE}",
                layer.media_type
            );
        }
        if layer.size > MAX_COMPONENT_BYTES {
            bail!(
                "its component is {} bytes, more than acp-gate takes ({MAX_COMPONENT_BYTES})",
                layer.size
            );
        }
        Ok(layer)
    }

    /// cosign's signatures in a signature manifest: each simple-signing layer's payload
    /// descriptor and its signature annotation.
    pub fn signature_layers(&self) -> impl Iterator<Item = (&Descriptor, &str)> {
        self.layers
            .iter()
            .filter(|l| l.media_type == SIMPLE_SIGNING_MEDIA_TYPE && l.size <= MAX_MANIFEST_BYTES)
            .filter_map(|l| Some((l, l.annotation(SIGNATURE_ANNOTATION)?)))
    }
}

/// A plugin packaged as a Wasm OCI artifact: its manifest, config and component.
pub struct Packaged {
    pub manifest: Vec<u8>,
    pub config: Vec<u8>,
    pub component: Vec<u8>,
}

impl Packaged {
    /// Packages a component in the Wasm OCI format (`wkg`'s): an `application/wasm` layer and
    /// a `application/vnd.wasm.config.v0+json` config listing its exports and imports.
    pub fn new(component: Vec<u8>, info: &ComponentInfo) -> Packaged {
        let config = serde_json::json!({
            "created": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "architecture": "wasm",
            "os": "wasip2",
            "layerDigests": [digest_of(&component)],
            "component": {
                "exports": info.exports,
                "imports": info.imports.iter().map(|(name, _)| name).collect::<Vec<_>>(),
                "target": null,
            },
        });
        let config = serde_json::to_vec(&config).expect("a config serialises");
        let manifest = Manifest {
            schema_version: 2,
            media_type: Some(MANIFEST_MEDIA_TYPE.to_owned()),
            config: Descriptor::of(WASM_CONFIG_MEDIA_TYPE, &config),
            layers: vec![Descriptor::of(WASM_LAYER_MEDIA_TYPE, &component)],
            annotations: None,
        };
        Packaged {
            manifest: manifest.to_bytes(),
            config,
            component,
        }
    }

    pub fn digest(&self) -> String {
        digest_of(&self.manifest)
    }
}

/// One cosign signature: the simple-signing payload and its base64 signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    #[serde(with = "base64_bytes")]
    pub payload: Vec<u8>,
    pub signature: String,
}

/// cosign's signature manifest (the `sha256-HEX.sig` tag) holding `signatures`, with the blobs
/// it references: (manifest, [(descriptor, bytes)]).
pub fn signature_manifest(signatures: &[Signature]) -> (Vec<u8>, Vec<(Descriptor, Vec<u8>)>) {
    let mut blobs = Vec::new();
    let mut layers = Vec::new();
    for signature in signatures {
        let mut layer = Descriptor::of(SIMPLE_SIGNING_MEDIA_TYPE, &signature.payload);
        layer.annotations = Some(BTreeMap::from([(
            SIGNATURE_ANNOTATION.to_owned(),
            signature.signature.clone(),
        )]));
        blobs.push((layer.clone(), signature.payload.clone()));
        layers.push(layer);
    }
    // As cosign writes it: an image config whose rootfs lists the payloads.
    let config = serde_json::to_vec(&serde_json::json!({
        "architecture": "",
        "created": "0001-01-01T00:00:00Z",
        "history": [{"created": "0001-01-01T00:00:00Z"}],
        "os": "",
        "rootfs": {"type": "layers", "diff_ids": layers.iter().map(|l| &l.digest).collect::<Vec<_>>()},
        "config": {},
    }))
    .expect("a config serialises");
    let config_descriptor = Descriptor::of(IMAGE_CONFIG_MEDIA_TYPE, &config);
    blobs.push((config_descriptor.clone(), config));
    let manifest = Manifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.to_owned()),
        config: config_descriptor,
        layers,
        annotations: None,
    };
    (manifest.to_bytes(), blobs)
}

/// The tag cosign keeps an artifact's signatures under: `sha256-HEX.sig`.
pub fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replace(':', "-"))
}

/// `sha256:` and the hexadecimal sha256 of `bytes`.
pub fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{}", sha256_hex(bytes))
}

/// Checks that `bytes` are what `descriptor` names (digest, and size when given).
pub fn check_blob(descriptor_digest: &str, bytes: &[u8], what: &str) -> Result<()> {
    let actual = digest_of(bytes);
    if actual != descriptor_digest {
        bail!(
            "{what} does not match its digest: expected {descriptor_digest}, got {actual} (tampered or corrupted)"
        );
    }
    Ok(())
}

mod base64_bytes {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        STANDARD.decode(text).map_err(serde::de::Error::custom)
    }
}
