//! The local store of pulled plugins under acp-gate's data directory: blobs by sha256, each
//! checked against its digest on every read, the signatures found beside each artifact, and
//! the last digest each tag resolved to. What loads offline comes from here.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::artifact::{Signature, digest_of};
use super::reference::RegistryRef;
use crate::state::write_atomically;

pub struct Store {
    root: PathBuf,
}

impl Store {
    /// `$ACP_GATE_DATA_DIR/oci`, else `$XDG_DATA_HOME/acp-gate/oci`, else
    /// `~/.local/share/acp-gate/oci`.
    pub fn open() -> Result<Store> {
        let data = match std::env::var_os("ACP_GATE_DATA_DIR") {
            Some(dir) => PathBuf::from(dir),
            None => match std::env::var_os("XDG_DATA_HOME") {
                Some(dir) => PathBuf::from(dir).join("acp-gate"),
                None => PathBuf::from(
                    std::env::var_os("HOME").context("no data directory: set ACP_GATE_DATA_DIR")?,
                )
                .join(".local/share/acp-gate"),
            },
        };
        Ok(Store {
            root: data.join("oci"),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn blob_path(&self, digest: &str) -> PathBuf {
        self.root
            .join("blobs/sha256")
            .join(digest.trim_start_matches("sha256:"))
    }

    /// The blob named `digest`, if the store has it intact. One that fails its digest is
    /// removed (it will be pulled again).
    pub fn get(&self, digest: &str) -> Option<Vec<u8>> {
        let path = self.blob_path(digest);
        let bytes = std::fs::read(&path).ok()?;
        if digest_of(&bytes) != digest {
            let _ = std::fs::remove_file(&path);
            return None;
        }
        Some(bytes)
    }

    /// Stores a blob under its own digest, atomically.
    pub fn put(&self, bytes: &[u8]) -> Result<String> {
        let digest = digest_of(bytes);
        write_atomically(&self.blob_path(&digest), bytes)?;
        Ok(digest)
    }

    /// The signatures found so far for the artifact `digest` (unverified: they are checked
    /// against the trusted keys on every load).
    pub fn signatures(&self, digest: &str) -> Vec<Signature> {
        let path = self.signatures_path(digest);
        crate::stamps::noted(&path);
        std::fs::read(path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Adds signatures for `digest` to those already kept.
    pub fn add_signatures(&self, digest: &str, found: &[Signature]) -> Result<()> {
        let mut all = self.signatures(digest);
        let before = all.len();
        for signature in found {
            if !all.contains(signature) {
                all.push(signature.clone());
            }
        }
        if all.len() == before {
            return Ok(());
        }
        write_atomically(&self.signatures_path(digest), &serde_json::to_vec(&all)?)
    }

    fn signatures_path(&self, digest: &str) -> PathBuf {
        self.root
            .join("signatures")
            .join(format!("{}.json", digest.trim_start_matches("sha256:")))
    }

    /// The digest `reference`'s tag resolved to when it was last pulled.
    pub fn tag(&self, reference: &RegistryRef) -> Option<String> {
        let path = self.tag_path(reference)?;
        crate::stamps::noted(&path);
        let text = std::fs::read_to_string(path).ok()?;
        super::reference::parse_digest(text.trim()).ok()
    }

    pub fn set_tag(&self, reference: &RegistryRef, digest: &str) -> Result<()> {
        match self.tag_path(reference) {
            Some(path) => write_atomically(&path, digest.as_bytes()),
            None => Ok(()),
        }
    }

    fn tag_path(&self, reference: &RegistryRef) -> Option<PathBuf> {
        let tag = reference.tag.as_deref()?;
        let name = format!("{}/{}:{tag}", reference.registry, reference.repository);
        Some(
            self.root
                .join("tags")
                .join(crate::digest::sha256_hex(name.as_bytes())),
        )
    }
}
