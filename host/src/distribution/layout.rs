//! OCI image layouts on disk (`oci-layout`, `index.json`, `blobs/sha256/…`): the offline bundle
//! `plugin package` writes for air-gapped sites, with cosign's signatures kept as the
//! `sha256-HEX.sig` manifests a registry would hold.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::artifact::{
    Descriptor, MANIFEST_MEDIA_TYPE, MAX_COMPONENT_BYTES, MAX_MANIFEST_BYTES, Manifest, Signature,
    check_blob, signature_manifest, signature_tag,
};
use crate::state::write_atomically;

const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";
const REF_NAME: &str = "org.opencontainers.image.ref.name";

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Index {
    schema_version: u32,
    #[serde(default)]
    media_type: Option<String>,
    manifests: Vec<Descriptor>,
}

/// Reads a blob of the layout, checked against its digest.
fn blob(dir: &Path, digest: &str, limit: u64, what: &str) -> Result<Vec<u8>> {
    let path = dir
        .join("blobs/sha256")
        .join(digest.trim_start_matches("sha256:"));
    let size = std::fs::metadata(&path)
        .with_context(|| format!("{} has no {what} {digest}", dir.display()))?
        .len();
    if size > limit {
        bail!(
            "{}: {what} {digest} is larger than {limit} bytes",
            dir.display()
        );
    }
    let bytes = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    check_blob(digest, &bytes, &format!("{}: {what}", dir.display()))?;
    Ok(bytes)
}

fn index(dir: &Path) -> Result<Index> {
    if !dir.join("oci-layout").is_file() {
        bail!(
            "{} is not an OCI image layout (no `oci-layout` file)",
            dir.display()
        );
    }
    let path = dir.join("index.json");
    crate::stamps::noted(&path);
    let bytes = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_slice(&bytes).with_context(|| format!("{}: not an OCI index", path.display()))
}

/// The manifest `digest` and its component, from the layout in `dir`, with the signatures the
/// layout holds for it.
pub fn read(dir: &Path, digest: &str) -> Result<(Vec<u8>, Vec<u8>, Vec<Signature>)> {
    let manifest_bytes = blob(dir, digest, MAX_MANIFEST_BYTES, "manifest")?;
    let manifest = Manifest::parse(&manifest_bytes)?;
    let layer = manifest.component_layer()?;
    let component = blob(dir, &layer.digest, MAX_COMPONENT_BYTES, "component")?;
    let mut signatures = Vec::new();
    let tag = signature_tag(digest);
    for entry in index(dir)?.manifests {
        let named = entry.annotations.as_ref().and_then(|a| a.get(REF_NAME));
        if named != Some(&tag) {
            continue;
        }
        let bytes = blob(dir, &entry.digest, MAX_MANIFEST_BYTES, "signature manifest")?;
        for (layer, signature) in Manifest::parse(&bytes)?.signature_layers() {
            signatures.push(Signature {
                payload: blob(dir, &layer.digest, MAX_MANIFEST_BYTES, "signature payload")?,
                signature: signature.to_owned(),
            });
        }
    }
    Ok((manifest_bytes, component, signatures))
}

/// Adds a manifest and its blobs to the layout in `dir` (created if need be), named `name` in
/// the index; an entry of the same name is replaced.
pub fn add(dir: &Path, name: &str, manifest: &[u8], blobs: &[&[u8]]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let marker = dir.join("oci-layout");
    if !marker.exists() {
        write_atomically(&marker, br#"{"imageLayoutVersion":"1.0.0"}"#)?;
    }
    let mut index = match dir.join("index.json").exists() {
        true => index(dir)?,
        false => Index {
            schema_version: 2,
            media_type: Some(INDEX_MEDIA_TYPE.to_owned()),
            manifests: Vec::new(),
        },
    };
    for bytes in blobs.iter().chain([&manifest]) {
        let descriptor = Descriptor::of("", bytes);
        let path = dir
            .join("blobs/sha256")
            .join(descriptor.digest.trim_start_matches("sha256:"));
        write_atomically(&path, bytes)?;
    }
    let mut entry = Descriptor::of(MANIFEST_MEDIA_TYPE, manifest);
    entry.annotations = Some([(REF_NAME.to_owned(), name.to_owned())].into());
    index
        .manifests
        .retain(|m| m.annotations.as_ref().and_then(|a| a.get(REF_NAME)) != Some(&name.to_owned()));
    index.manifests.push(entry);
    write_atomically(&dir.join("index.json"), &serde_json::to_vec_pretty(&index)?)
}

/// Adds a signature for the artifact `digest` to the layout in `dir`, keeping those it has.
pub fn add_signature(dir: &Path, digest: &str, signature: Signature) -> Result<()> {
    let (_, _, mut all) = read(dir, digest)?;
    if all.contains(&signature) {
        return Ok(());
    }
    all.push(signature);
    let (manifest, blobs) = signature_manifest(&all);
    let blobs: Vec<&[u8]> = blobs.iter().map(|(_, bytes)| bytes.as_slice()).collect();
    add(dir, &signature_tag(digest), &manifest, &blobs)
}
