//! Content digests: the sha256 that pins a plugin and names a request in the audit log; and
//! the random ids nobody can guess (an audit log's, one ask's). A leaf.

use sha2::{Digest, Sha256};

/// The sha256 of `bytes`, as 64 lowercase hexadecimal digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `bytes` random bytes from the operating system, as hexadecimal digits.
pub fn random_hex(bytes: usize) -> String {
    use rand_core::RngCore;
    let mut random = vec![0u8; bytes];
    rand_core::OsRng.fill_bytes(&mut random);
    random.iter().map(|b| format!("{b:02x}")).collect()
}
