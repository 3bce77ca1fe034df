//! Content digests: the sha256 that pins a plugin and names a request in the audit log. A leaf.

use sha2::{Digest, Sha256};

/// The sha256 of `bytes`, as 64 lowercase hexadecimal digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
