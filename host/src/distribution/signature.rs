//! Cosign-compatible keyed signatures: ECDSA P-256 keys in cosign's PEM formats, the
//! simple-signing payload cosign signs for an image, signing and offline verification.
//!
//! The formats, as cosign (v1 to v3) and its libraries write them:
//! - `cosign.pub`: PEM `PUBLIC KEY`, the SubjectPublicKeyInfo DER of an ECDSA P-256 key.
//! - `cosign.key`: PEM `ENCRYPTED SIGSTORE PRIVATE KEY` (cosign v2+; v1 wrote `ENCRYPTED COSIGN
//!   PRIVATE KEY`) around the JSON of go-securesystemslib's `encrypted` package:
//!   `{"kdf":{"name":"scrypt","params":{"N":..,"r":8,"p":1},"salt":B64},"cipher":{"name":"nacl/secretbox","nonce":B64},"ciphertext":B64}`,
//!   the secretbox key being scrypt(password, salt, N, r, p, 32) and the plaintext the key's PKCS#8 DER.
//! - A signature: base64 (standard alphabet) of an ASN.1 DER ECDSA signature over SHA-256 of
//!   the payload; for an image, the payload is the simple-signing JSON of [`payload`].

use std::fmt;

use anyhow::{Context, Result, anyhow, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use crypto_secretbox::XSalsa20Poly1305;
use crypto_secretbox::aead::{Aead, KeyInit};
use p256::SecretKey;
use p256::ecdsa::signature::{Signer as _, Verifier as _};
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use p256::elliptic_curve::zeroize::Zeroizing;
use p256::pkcs8::der::asn1::{ContextSpecific, OctetStringRef};
use p256::pkcs8::der::{Decode, Reader, SliceReader, TagNumber};
use p256::pkcs8::spki::{AlgorithmIdentifierRef, SubjectPublicKeyInfoRef};
use p256::pkcs8::{
    DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, ObjectIdentifier,
    PrivateKeyInfo,
};
use rand_core::{OsRng, RngCore};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The `critical.type` of a cosign image signature payload.
const SIGNATURE_TYPE: &str = "cosign container image signature";
/// The PEM label cosign v2+ writes for its encrypted private keys.
const SIGSTORE_KEY_LABEL: &str = "ENCRYPTED SIGSTORE PRIVATE KEY";
/// The PEM label cosign v1 wrote (still read by cosign).
const COSIGN_KEY_LABEL: &str = "ENCRYPTED COSIGN PRIVATE KEY";
const SCRYPT: &str = "scrypt";
const SECRETBOX: &str = "nacl/secretbox";
/// scrypt parameters (N, r, p) for keys we write: go-securesystemslib's "legacy" set, which
/// every cosign version reads (cosign v2+ itself writes N=65536).
const WRITE_SCRYPT: (u64, u32, u32) = (32768, 8, 1);
/// The scrypt parameters cosign (go-securesystemslib `CheckParams`) accepts when reading; nothing
/// else is accepted, which also bounds the memory a key file can make us spend (N=131072: 128 MiB).
const READ_SCRYPT: [(u64, u32, u32); 3] = [(32768, 8, 1), (65536, 8, 1), (131072, 8, 1)];
const SALT_LEN: usize = 32;
const NONCE_LEN: usize = 24;

const OID_EC_PUBLIC_KEY: &str = "1.2.840.10045.2.1";
const OID_P256: &str = "1.2.840.10045.3.1.7";

/// An ECDSA P-256 public key, as in `cosign.pub`.
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey {
    key: VerifyingKey,
}

impl PublicKey {
    /// A PEM `PUBLIC KEY` (SubjectPublicKeyInfo, ECDSA P-256), as `cosign generate-key-pair` writes cosign.pub.
    pub fn from_pem(text: &str) -> Result<PublicKey> {
        let (label, der) = pem_block(text)?;
        match label.as_str() {
            "PUBLIC KEY" => {}
            l if l.ends_with("PRIVATE KEY") => bail!(
                "this is a private key (PEM {l}); a public key (PEM PUBLIC KEY, like cosign.pub) is needed"
            ),
            l => bail!("expected a PEM PUBLIC KEY (like cosign.pub), found PEM {l}"),
        }
        let spki = SubjectPublicKeyInfoRef::try_from(der.as_slice())
            .map_err(|_| anyhow!("PEM PUBLIC KEY does not hold a valid SubjectPublicKeyInfo"))?;
        require_p256(&spki.algorithm)?;
        let key = VerifyingKey::from_public_key_der(&der)
            .map_err(|_| anyhow!("PEM PUBLIC KEY does not hold a valid ECDSA P-256 point"))?;
        Ok(PublicKey { key })
    }

    /// The key as PEM `PUBLIC KEY`, byte for byte as cosign writes cosign.pub.
    pub fn to_pem(&self) -> String {
        pem_encode("PUBLIC KEY", &self.spki_der())
    }

    /// `sha256:` + hex of the SPKI DER: how keys are named in messages.
    pub fn fingerprint(&self) -> String {
        let digest = Sha256::digest(self.spki_der());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        format!("sha256:{hex}")
    }

    /// Verifies a base64 (standard alphabet) ASN.1 DER ECDSA-P256-SHA256 signature of `payload`
    /// (what cosign stores in the `dev.cosignproject.cosign/signature` annotation and what
    /// `cosign sign-blob` prints).
    pub fn verify(&self, payload: &[u8], signature_b64: &str) -> Result<()> {
        // `cosign sign-blob` output saved to a file ends with a newline; ignore whitespace.
        let compact: String = signature_b64
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect();
        let der = BASE64
            .decode(compact)
            .map_err(|_| anyhow!("the signature is not valid base64"))?;
        let signature = Signature::from_der(&der)
            .map_err(|_| anyhow!("the signature is not an ASN.1 DER ECDSA P-256 signature"))?;
        self.key.verify(payload, &signature).map_err(|_| {
            anyhow!(
                "the signature does not verify with key {}",
                self.fingerprint()
            )
        })
    }

    fn spki_der(&self) -> Vec<u8> {
        // Encoding a valid P-256 point as SPKI cannot fail.
        self.key
            .to_public_key_der()
            .map(|d| d.into_vec())
            .unwrap_or_default()
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.fingerprint())
    }
}

/// An ECDSA P-256 private key, as in `cosign.key`. Its `Debug` shows only the public key's
/// fingerprint.
#[derive(Clone)]
pub struct PrivateKey {
    key: SecretKey,
}

impl PrivateKey {
    /// A new random key.
    pub fn generate() -> PrivateKey {
        PrivateKey {
            key: SecretKey::random(&mut OsRng),
        }
    }

    /// Reads `ENCRYPTED SIGSTORE PRIVATE KEY` / `ENCRYPTED COSIGN PRIVATE KEY` (cosign's format:
    /// PEM around JSON {kdf:{name:"scrypt",params:{N,r,p},salt}, cipher:{name:"nacl/secretbox",nonce}, ciphertext},
    /// base64 std fields, key = scrypt(password, salt, N, r, p, 32 bytes), plaintext = PKCS#8 DER),
    /// plain PKCS#8 `PRIVATE KEY` and SEC1 `EC PRIVATE KEY`. `password` is called only for an encrypted key.
    pub fn from_pem(text: &str, password: impl FnOnce() -> Result<Vec<u8>>) -> Result<PrivateKey> {
        let (label, der) = pem_block(text)?;
        let der = Zeroizing::new(der);
        let key = match label.as_str() {
            SIGSTORE_KEY_LABEL | COSIGN_KEY_LABEL => {
                let password = Zeroizing::new(password()?);
                from_pkcs8(&decrypt(&der, &password)?)?
            }
            "PRIVATE KEY" => from_pkcs8(&der)?,
            "EC PRIVATE KEY" => from_sec1(&der)?,
            "RSA PRIVATE KEY" => bail!("{}", unsupported("RSA")),
            "ENCRYPTED PRIVATE KEY" => bail!(
                "PKCS#8-encrypted keys (PEM ENCRYPTED PRIVATE KEY) are not supported: decrypt it (openssl pkey) or use a cosign key"
            ),
            "PUBLIC KEY" => bail!(
                "this is a public key; signing needs the private key (PEM {SIGSTORE_KEY_LABEL}, like cosign.key)"
            ),
            l => bail!(
                "unsupported PEM {l}: expected {SIGSTORE_KEY_LABEL} (cosign.key), PRIVATE KEY or EC PRIVATE KEY"
            ),
        };
        Ok(PrivateKey { key })
    }

    /// cosign's encrypted format (PEM label `ENCRYPTED SIGSTORE PRIVATE KEY`, scrypt N=32768 r=8 p=1, random 32-byte salt, 24-byte nonce),
    /// so `cosign sign --key` can use a key acp-gate made.
    pub fn to_encrypted_pem(&self, password: &[u8]) -> Result<String> {
        let pkcs8 = self
            .key
            .to_pkcs8_der()
            .map_err(|_| anyhow!("cannot encode the private key as PKCS#8"))?;
        let mut salt = [0u8; SALT_LEN];
        let mut nonce = [0u8; NONCE_LEN];
        OsRng.fill_bytes(&mut salt);
        OsRng.fill_bytes(&mut nonce);
        let (n, r, p) = WRITE_SCRYPT;
        let box_key = derive_key(password, &salt, n, r, p)?;
        let ciphertext = XSalsa20Poly1305::new(box_key.as_slice().into())
            .encrypt(nonce.as_slice().into(), pkcs8.as_bytes())
            .map_err(|_| anyhow!("cannot encrypt the private key"))?;
        let envelope = Envelope {
            kdf: Kdf {
                name: SCRYPT.to_owned(),
                params: ScryptParams { n, r, p },
                salt: BASE64.encode(salt),
            },
            cipher: Cipher {
                name: SECRETBOX.to_owned(),
                nonce: BASE64.encode(nonce),
            },
            ciphertext: BASE64.encode(ciphertext),
        };
        let json = serde_json::to_vec(&envelope).context("cannot encode the encrypted key")?;
        Ok(pem_encode(SIGSTORE_KEY_LABEL, &json))
    }

    /// The key as plain PKCS#8 PEM `PRIVATE KEY`, for a store that is itself protected (the
    /// review service keeps its signing key in its database).
    pub fn to_pem(&self) -> Result<String> {
        let pkcs8 = self
            .key
            .to_pkcs8_der()
            .map_err(|_| anyhow!("cannot encode the private key as PKCS#8"))?;
        Ok(pem_encode("PRIVATE KEY", pkcs8.as_bytes()))
    }

    /// The key's public half.
    pub fn public_key(&self) -> PublicKey {
        PublicKey {
            key: VerifyingKey::from(SigningKey::from(&self.key)),
        }
    }

    /// base64 DER ECDSA-P256-SHA256 signature of `payload`.
    pub fn sign(&self, payload: &[u8]) -> String {
        let signature: Signature = SigningKey::from(&self.key).sign(payload);
        BASE64.encode(signature.to_der().as_bytes())
    }
}

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PrivateKey(public {})", self.public_key().fingerprint())
    }
}

/// The simple-signing payload cosign signs for an image, byte for byte as cosign writes it:
/// {"critical":{"identity":{"docker-reference":REF},"image":{"docker-manifest-digest":DIGEST},"type":"cosign container image signature"},"optional":null}
///
/// cosign puts the repository without tag or digest in `docker-reference` (e.g.
/// `index.docker.io/library/busybox`, or `ghcr.io/org/plugin`); `manifest_digest` is `sha256:<hex>`.
pub fn payload(docker_reference: &str, manifest_digest: &str) -> Vec<u8> {
    format!(
        r#"{{"critical":{{"identity":{{"docker-reference":{}}},"image":{{"docker-manifest-digest":{}}},"type":"{SIGNATURE_TYPE}"}},"optional":null}}"#,
        json_string(docker_reference),
        json_string(manifest_digest),
    )
    .into_bytes()
}

/// Checks that a payload is a cosign container-image signature payload of `manifest_digest`
/// (type string and digest must match exactly; identity is not checked, as `cosign verify` does not by default). Errors say what differs.
pub fn check_payload(payload: &[u8], manifest_digest: &str) -> Result<()> {
    let parsed: SimpleSigning = serde_json::from_slice(payload).map_err(|e| {
        anyhow!("the signature payload is not a cosign simple-signing payload: {e}")
    })?;
    let critical = parsed.critical;
    match critical.kind.as_deref() {
        Some(SIGNATURE_TYPE) => {}
        Some(other) => bail!(
            "the signature payload is of type \"{}\", not \"{SIGNATURE_TYPE}\"",
            other.escape_debug()
        ),
        None => bail!("the signature payload has no type (expected {SIGNATURE_TYPE:?})"),
    }
    match critical.image.and_then(|i| i.docker_manifest_digest) {
        Some(found) if found == manifest_digest => Ok(()),
        Some(found) => bail!(
            "the signature is for {}, not {manifest_digest}",
            found.escape_debug()
        ),
        None => bail!("the signature payload names no manifest digest"),
    }
}

/// The shape of a simple-signing payload, as far as [`check_payload`] reads it.
#[derive(Deserialize)]
struct SimpleSigning {
    critical: Critical,
}

#[derive(Deserialize)]
struct Critical {
    #[serde(rename = "type")]
    kind: Option<String>,
    image: Option<Image>,
}

#[derive(Deserialize)]
struct Image {
    #[serde(rename = "docker-manifest-digest")]
    docker_manifest_digest: Option<String>,
}

/// go-securesystemslib's `encrypted` JSON, fields in the order Go writes them.
#[derive(Serialize, Deserialize)]
struct Envelope {
    kdf: Kdf,
    cipher: Cipher,
    ciphertext: String,
}

#[derive(Serialize, Deserialize)]
struct Kdf {
    name: String,
    params: ScryptParams,
    salt: String,
}

#[derive(Serialize, Deserialize)]
struct ScryptParams {
    #[serde(rename = "N")]
    n: u64,
    r: u32,
    p: u32,
}

#[derive(Serialize, Deserialize)]
struct Cipher {
    name: String,
    nonce: String,
}

/// The PKCS#8 DER inside a cosign encrypted key.
fn decrypt(json: &[u8], password: &[u8]) -> Result<Zeroizing<Vec<u8>>> {
    let envelope: Envelope = serde_json::from_slice(json).map_err(|_| {
        anyhow!("not a cosign encrypted key (its content is not the expected JSON)")
    })?;
    if envelope.kdf.name != SCRYPT {
        bail!(
            "unsupported key derivation {:?} in the encrypted key (cosign uses scrypt)",
            envelope.kdf.name
        );
    }
    if envelope.cipher.name != SECRETBOX {
        bail!(
            "unsupported cipher {:?} in the encrypted key (cosign uses nacl/secretbox)",
            envelope.cipher.name
        );
    }
    let ScryptParams { n, r, p } = envelope.kdf.params;
    if !READ_SCRYPT.contains(&(n, r, p)) {
        bail!(
            "unsupported scrypt parameters N={n} r={r} p={p} in the encrypted key (cosign accepts N=32768, 65536 or 131072 with r=8 p=1)"
        );
    }
    let field = |name: &str, value: &str| {
        BASE64
            .decode(value)
            .map_err(|_| anyhow!("the encrypted key's {name} is not valid base64"))
    };
    let salt = field("salt", &envelope.kdf.salt)?;
    let nonce = field("nonce", &envelope.cipher.nonce)?;
    let ciphertext = field("ciphertext", &envelope.ciphertext)?;
    if nonce.len() != NONCE_LEN {
        bail!(
            "the encrypted key's nonce has {} bytes, not {NONCE_LEN}",
            nonce.len()
        );
    }
    let box_key = derive_key(password, &salt, n, r, p)?;
    XSalsa20Poly1305::new(box_key.as_slice().into())
        .decrypt(nonce.as_slice().into(), ciphertext.as_slice())
        .map(Zeroizing::new)
        .map_err(|_| anyhow!("wrong password (or not a cosign key): the key does not decrypt"))
}

/// scrypt(password, salt, N, r, p) → the 32-byte secretbox key.
fn derive_key(password: &[u8], salt: &[u8], n: u64, r: u32, p: u32) -> Result<Zeroizing<[u8; 32]>> {
    if !n.is_power_of_two() {
        bail!("scrypt N={n} is not a power of two");
    }
    // `n` is a power of two below 2^64, so its log fits in a u8.
    let log_n = u8::try_from(n.trailing_zeros()).context("scrypt N out of range")?;
    let params = scrypt::Params::new(log_n, r, p, 32)
        .map_err(|_| anyhow!("invalid scrypt parameters N={n} r={r} p={p}"))?;
    let mut key = Zeroizing::new([0u8; 32]);
    scrypt::scrypt(password, salt, &params, key.as_mut_slice())
        .map_err(|_| anyhow!("scrypt key derivation failed"))?;
    Ok(key)
}

/// A PKCS#8 `PrivateKeyInfo` DER holding a P-256 key.
fn from_pkcs8(der: &[u8]) -> Result<SecretKey> {
    let info =
        PrivateKeyInfo::try_from(der).map_err(|_| anyhow!("not a valid PKCS#8 private key"))?;
    require_p256(&info.algorithm)?;
    SecretKey::from_pkcs8_der(der)
        .map_err(|_| anyhow!("not a valid PKCS#8 ECDSA P-256 private key"))
}

/// A SEC1 `ECPrivateKey` DER holding a P-256 key.
fn from_sec1(der: &[u8]) -> Result<SecretKey> {
    if let Some(curve) = sec1_curve(der)
        && curve.to_string() != OID_P256
    {
        bail!(
            "{}",
            unsupported(&format!("ECDSA {}", curve_name(&curve.to_string())))
        );
    }
    SecretKey::from_sec1_der(der).map_err(|_| anyhow!("not a valid SEC1 ECDSA P-256 private key"))
}

/// The named curve of a SEC1 `ECPrivateKey` (`SEQUENCE { version, privateKey, [0] parameters OPTIONAL, [1] publicKey OPTIONAL }`).
fn sec1_curve(der: &[u8]) -> Option<ObjectIdentifier> {
    let mut reader = SliceReader::new(der).ok()?;
    reader
        .sequence(|r| {
            u8::decode(r)?;
            OctetStringRef::decode(r)?;
            let curve = ContextSpecific::<ObjectIdentifier>::decode_explicit(r, TagNumber::N0)?;
            let rest = r.remaining_len();
            r.read_slice(rest)?;
            Ok(curve.map(|c| c.value))
        })
        .ok()
        .flatten()
}

/// Fails unless the algorithm is ECDSA on P-256, naming what it is.
fn require_p256(algorithm: &AlgorithmIdentifierRef<'_>) -> Result<()> {
    let oid = algorithm.oid.to_string();
    let curve = algorithm.parameters_oid().ok().map(|c| c.to_string());
    if oid == OID_EC_PUBLIC_KEY && curve.as_deref() == Some(OID_P256) {
        return Ok(());
    }
    let name = match (oid.as_str(), curve.as_deref()) {
        (OID_EC_PUBLIC_KEY, Some(curve)) => format!("ECDSA {}", curve_name(curve)),
        (OID_EC_PUBLIC_KEY, None) => "ECDSA without a named curve".to_owned(),
        ("1.2.840.113549.1.1.1" | "1.2.840.113549.1.1.10", _) => "RSA".to_owned(),
        ("1.3.101.112", _) => "Ed25519".to_owned(),
        ("1.3.101.113", _) => "Ed448".to_owned(),
        (other, _) => format!("with algorithm OID {other}"),
    };
    bail!("{}", unsupported(&name))
}

fn curve_name(oid: &str) -> String {
    match oid {
        OID_P256 => "P-256".to_owned(),
        "1.3.132.0.33" => "P-224".to_owned(),
        "1.3.132.0.34" => "P-384".to_owned(),
        "1.3.132.0.35" => "P-521".to_owned(),
        "1.3.132.0.10" => "secp256k1".to_owned(),
        other => format!("curve {other}"),
    }
}

fn unsupported(key_type: &str) -> String {
    format!(
        "unsupported key type {key_type}: only ECDSA P-256 keys (cosign generate-key-pair's default) are supported"
    )
}

/// The label and content of the first PEM block in `text` (text around it is ignored, as Go's
/// `pem.Decode` does).
fn pem_block(text: &str) -> Result<(String, Vec<u8>)> {
    const BEGIN: &str = "-----BEGIN ";
    let start = text
        .find(BEGIN)
        .context("not a PEM file (no -----BEGIN line)")?;
    let rest = &text[start + BEGIN.len()..];
    let label_end = rest
        .find("-----")
        .filter(|&i| !rest[..i].contains('\n'))
        .context("not a PEM file (malformed -----BEGIN line)")?;
    let label = &rest[..label_end];
    let body = &rest[label_end + 5..];
    let end_line = format!("-----END {label}-----");
    let end = body
        .find(&end_line)
        .with_context(|| format!("PEM {label} has no {end_line} line"))?;
    if label == "EC PARAMETERS" {
        // `openssl ecparam -genkey` writes the curve's parameters before the key.
        return pem_block(&body[end + end_line.len()..]);
    }
    let base64: String = body[..end]
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    let der = BASE64
        .decode(base64)
        .map_err(|_| anyhow!("PEM {label} is not valid base64"))?;
    Ok((label.to_owned(), der))
}

/// PEM as Go's `pem.EncodeToMemory` writes it: 64-column base64 lines, LF, final newline.
fn pem_encode(label: &str, der: &[u8]) -> String {
    let base64 = BASE64.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in base64.as_bytes().chunks(64) {
        // base64 output is ASCII, so every chunk is valid UTF-8.
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// `s` as a JSON string literal (serde_json's escaping matches Go's for the characters
/// references and digests can hold).
fn json_string(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real `cosign sign --key` signature as cosign stored it in a registry, with its key:
    /// containers/image `signature/fixtures/cosign.pub` and
    /// `signature/fixtures/dir-img-cosign-valid/signature-1` (the layer's payload and its
    /// `dev.cosignproject.cosign/signature` annotation); the manifest beside it,
    /// `dir-img-cosign-valid/manifest.json`, has the digest the payload names.
    const COSIGN_PUB: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEFNLqFhf4fiN6o/glAuYnq2jYUeL0
vRuLu/z39pmbVwS9ff5AYnlwaP9sxREajdLY9ynM6G1sy6AAmb7Z63TsLg==
-----END PUBLIC KEY-----
";
    const COSIGN_REFERENCE: &str = "192.168.64.2:5000/cosign-signed-single-sample";
    const COSIGN_DIGEST: &str =
        "sha256:634a8f35b5f16dcf4aaa0822adc0b1964bb786fca12f6831de8ddc45e5986a00";
    const COSIGN_PAYLOAD: &str = r#"{"critical":{"identity":{"docker-reference":"192.168.64.2:5000/cosign-signed-single-sample"},"image":{"docker-manifest-digest":"sha256:634a8f35b5f16dcf4aaa0822adc0b1964bb786fca12f6831de8ddc45e5986a00"},"type":"cosign container image signature"},"optional":null}"#;
    const COSIGN_SIGNATURE: &str = "MEYCIQDmtamqYPjMg81nqeBhptrPls44aA/r7PwLmspINJY4MwIhANKRpqe2E9UCBtGFdPoz/8jAbaQm4uP4h+IpwKTE6ClR";

    /// Another real cosign image signature: sigstore-rs `src/crypto/verification_key.rs` tests
    /// (`verify_signature_success`) with `PUBLIC_KEY` from `src/crypto/mod.rs`.
    const BUSYBOX_PUB: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAENptdY/l3nB0yqkXLBWkZWQwo6+cu
OSWS1X9vPavpiQOoTTGC0xX57OojUadxF1cdQmrsiReWg2Wn4FneJfa8xw==
-----END PUBLIC KEY-----";
    const BUSYBOX_PAYLOAD: &str = r#"{"critical":{"identity":{"docker-reference":"registry-testing.svc.lan/busybox"},"image":{"docker-manifest-digest":"sha256:f3cfc9d0dbf931d3db4685ec659b7ac68e2a578219da4aae65427886e649b06b"},"type":"cosign container image signature"},"optional":null}"#;
    const BUSYBOX_SIGNATURE: &str = "MEUCIQD6q/COgzOyW0YH1Dk+CCYSt4uAhm3FDHUwvPI55zwnlwIgE0ZK58ZOWpZw8YVmBapJhBqCfdPekIknimuO0xH8Jh8=";

    /// Written by `cosign generate-key-pair` itself (v2+: SIGSTORE label, scrypt N=65536) with an
    /// empty password: sigstore-rs `tests/data/keys/cosign_generated_encrypted_empty_private.key`.
    const COSIGN_GENERATED_KEY: &str = "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----
eyJrZGYiOnsibmFtZSI6InNjcnlwdCIsInBhcmFtcyI6eyJOIjo2NTUzNiwiciI6
OCwicCI6MX0sInNhbHQiOiJFY3pJR3Z0bnpFcCsxaEpudERnbGI1UnoxN3gwQVMy
YklvWGRNcDQrU1NJPSJ9LCJjaXBoZXIiOnsibmFtZSI6Im5hY2wvc2VjcmV0Ym94
Iiwibm9uY2UiOiJtSVVKbG1OMzNINExvZ0dhaG5MamdmK3R4SmJwci93MCJ9LCJj
aXBoZXJ0ZXh0IjoiM3FtS2FidXRuYm1WT1IvTkZGM2NDaUErTXp1WWQ5L0VERDVI
MVlUSGhQVzZsSzAvdjVqdDZCQzlsME12NGV5am9qZkl0d3B6a2JJOXQrZGx5VXZ3
VUgvMWZjbkFZT2dEdXRLQzkvSkNiOE02SVY2VHpVaDF5c0ZFWDFzeG9xb1FzeUpL
bjM0UVlldFNlaVdDaGtmUHUyZXByQjFEV0pwekdzTGZIakxNVTkzOEdmNk1xM1A0
N0ZSd2syZzY1cFZnSGMwVWV1L1N1OUs0Zmc9PSJ9
-----END ENCRYPTED SIGSTORE PRIVATE KEY-----
";
    /// Its public key, as `openssl pkey -pubout` derives it from the decrypted key.
    const COSIGN_GENERATED_PUB: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEGmsWpZNuu+SUX70n3lVK4JLsaoV7
T+rhea2rQUu29EQiatoLB06QdsmSd+GsQGlQzfcDtsKPzb+B2zLggrWZjg==
-----END PUBLIC KEY-----
";

    /// cosign's own test key, password "hello": sigstore/cosign `pkg/cosign/keys_test.go` `pemsigstorekey`.
    const COSIGN_TEST_KEY: &str = "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----
eyJrZGYiOnsibmFtZSI6InNjcnlwdCIsInBhcmFtcyI6eyJOIjozMjc2OCwiciI6
OCwicCI6MX0sInNhbHQiOiI3T3VGd2VsbWZZNXVId2NoaURSc210anNwZ2ZlZjFG
Mk5lOGFDTjVLYVpZPSJ9LCJjaXBoZXIiOnsibmFtZSI6Im5hY2wvc2VjcmV0Ym94
Iiwibm9uY2UiOiJQNHk4OGhCb3ZTa09MbXN0bFVBaGJwdDJ0K2xTNUxQSCJ9LCJj
aXBoZXJ0ZXh0IjoiMnB1QzdyZldJOWh3bnJlQ2s4aUZDRlVwQlRrSzRJNlIvbFBF
cnBDekpXUGpJWXl4eGVIL1A2VW52cFJHdVhla1NNb3JMdGhLamdoQ1JlNy82NDVH
QWtoVm1LRC92eEF0S2EvbE1abENSQ3FlekJGUFd1dzNpeFRtZ2xhb2J1ZFVSbUVs
bmNGOGlZbzBTMVl6Y1ZOMVFwY2J2c0dNcUlYRzVlbmdteGp5dCtBcXlyZTF0Q0Y0
V01tU1BlaEljNlBqd2h1Q2xHaVpJUWRvTGc9PSJ9
-----END ENCRYPTED SIGSTORE PRIVATE KEY-----";
    /// Its public key, as `openssl pkey -pubout` derives it from the decrypted key.
    const COSIGN_TEST_PUB: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE7z9gA/tqa9iHt/f9F3ulyVi4lwqU
LfHWfhG2mK4eyJ8LDcLstb+VVhxj3pkMjc3fNo+sSfiIY2NLR7c+DG1V4w==
-----END PUBLIC KEY-----
";
    /// A key with cosign v1's PEM label, password "hello": sigstore/cosign
    /// `pkg/cosign/keys_test.go` `pemcosignkey` (commented "RSA" there, but a P-256 key).
    const COSIGN_V1_KEY: &str = "-----BEGIN ENCRYPTED COSIGN PRIVATE KEY-----
eyJrZGYiOnsibmFtZSI6InNjcnlwdCIsInBhcmFtcyI6eyJOIjozMjc2OCwiciI6
OCwicCI6MX0sInNhbHQiOiJ4WWdoc09JTUxUWGNOT0RsclNIOUNKc1FlOVFnZmN1
cmUrMXlLdHh1TlkwPSJ9LCJjaXBoZXIiOnsibmFtZSI6Im5hY2wvc2VjcmV0Ym94
Iiwibm9uY2UiOiI0cS9PSlVmaXJkSUkrUjZ0ajZBMmcyQ0JqL25xdFNicCJ9LCJj
aXBoZXJ0ZXh0IjoiKzB4Q3NzcFN0WStBczdKanJpOWtsbHBWd2JhcUI4ZWJNdWto
eS9aVE1MSXRsL3B1YS9jWVJvbytLRGxMWWdmOW1kSjk4K1FnQW9oTktoYnJPMTcw
MHdBY1JTMjFDOE4zQUNJRUVZaWpOMllBNnMraGJSbkhjUnd4eGhDMDFtb2FvL0dO
Y1pmbEJheXZMV3pXblo4d2NDZ2ZpT1o1VXlRTEFJMHh0dnR6dEh3cTdDV1Vhd3V4
RlhlNDZzck9TUE9SNHN6bytabWErUGovSFE9PSJ9
-----END ENCRYPTED COSIGN PRIVATE KEY-----";

    /// Valid keys of other types, from sigstore/cosign `pkg/cosign/keys_test.go`
    /// (`ed25519key`, `validecp384`, `invalidrsawithpubkey`), and its P-256 `validecp256`.
    const ED25519_PKCS8: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIALEbo1EFnWFqBK/wC+hhypG/8hXEerwdNetAoFoFVdv
-----END PRIVATE KEY-----";
    const P384_SEC1: &str = "-----BEGIN EC PRIVATE KEY-----
MIGkAgEBBDDWIebxSdyJVber6J/l5MKnD0+VU0b7fcjY/RbIxuIsHLVIvwJrSohY
r3gJ/iJmIKGgBwYFK4EEACKhZANiAAQeoKZkkc1GafmIgp1tbNbMBjr2EdvX2dtT
lGhzHJgE0YB6TavazcYH1iOBNmX7/pInCopiyWbjF/5olrRKJMG6DQz80td++fYf
O4tr+Z3nyUgRGmf/fqYA4PSN30CuOMU=
-----END EC PRIVATE KEY-----";
    const RSA_PUB: &str = "-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAx5piWVlE62NnZ0UzJ8Z6
oKiKOC4dbOZ1HsNhIRtqkM+Oq4G+25yq6P+0JU/Qvr9veOGEb3R/J9u8JBo+hv2i
5X8OtgvP2V2pi6f1s6vK7L0+6uRb4YTT/UdMshaVf97MgEqbq41Jf/cuvh+3AV0t
Z1BpixZg4aXMKpY6HUP69lbsu27oSUN1myMv7TSgZiV4CYs3l/gkEfpysBptWlcH
Ruw5RsB+C0RbjRtbJ/5VxmE/vd3Mlafd5t1WSpMb8yf0a84u5NFaXwZ7CweMfXeO
ddS0yb19ShSuW3PPRadruBM1mq15js9GfagPxDS75Imcs+fA62lWvHxEujTGjYHx
awIDAQAB
-----END PUBLIC KEY-----";
    const P256_SEC1: &str = "-----BEGIN EC PRIVATE KEY-----
MHcCAQEEIIGhcmCI5F7BPMH4r3pWCpQdAsveErdU5DjvVQerErJuoAoGCCqGSM49
AwEHoUQDQgAE+9E3Qe+h25ofmz3Uo2T004Dfy49iX06MMbxf9rsGmLkOPrS0KYDl
1QMfFuSbrtf8wTWNT9HNxrW/Foz39mDhHw==
-----END EC PRIVATE KEY-----";

    fn password(p: &'static str) -> impl FnOnce() -> Result<Vec<u8>> {
        move || Ok(p.as_bytes().to_vec())
    }

    fn no_password() -> Result<Vec<u8>> {
        panic!("the password was asked for an unencrypted key")
    }

    fn error(result: Result<impl fmt::Debug>) -> String {
        format!("{:#}", result.expect_err("expected an error"))
    }

    /// The JSON inside an encrypted-key PEM.
    fn envelope_json(pem: &str) -> serde_json::Value {
        let (_, json) = pem_block(pem).expect("PEM");
        serde_json::from_slice(&json).expect("JSON")
    }

    #[test]
    fn real_cosign_signatures_verify() {
        let key = PublicKey::from_pem(COSIGN_PUB).expect("cosign.pub");
        key.verify(COSIGN_PAYLOAD.as_bytes(), COSIGN_SIGNATURE)
            .expect("the real cosign signature verifies");
        // As `cosign sign-blob > file` leaves it.
        key.verify(COSIGN_PAYLOAD.as_bytes(), &format!("{COSIGN_SIGNATURE}\n"))
            .expect("a trailing newline is ignored");
        PublicKey::from_pem(BUSYBOX_PUB)
            .expect("busybox key")
            .verify(BUSYBOX_PAYLOAD.as_bytes(), BUSYBOX_SIGNATURE)
            .expect("the real busybox signature verifies");
    }

    #[test]
    fn tampered_payload_fails() {
        let key = PublicKey::from_pem(COSIGN_PUB).expect("cosign.pub");
        let tampered = COSIGN_PAYLOAD.replace("634a8f35", "634a8f36");
        let message = error(key.verify(tampered.as_bytes(), COSIGN_SIGNATURE));
        assert!(message.contains("does not verify"), "{message}");
        assert!(message.contains(&key.fingerprint()), "{message}");
    }

    #[test]
    fn wrong_key_fails() {
        let other = PublicKey::from_pem(BUSYBOX_PUB).expect("busybox key");
        let message = error(other.verify(COSIGN_PAYLOAD.as_bytes(), COSIGN_SIGNATURE));
        assert!(message.contains("does not verify"), "{message}");
        let generated = PrivateKey::generate().public_key();
        assert!(
            generated
                .verify(COSIGN_PAYLOAD.as_bytes(), COSIGN_SIGNATURE)
                .is_err()
        );
    }

    #[test]
    fn malformed_signatures_fail_clearly() {
        let key = PublicKey::from_pem(COSIGN_PUB).expect("cosign.pub");
        let message = error(key.verify(b"x", "not base64!"));
        assert!(message.contains("not valid base64"), "{message}");
        let message = error(key.verify(b"x", &BASE64.encode(b"not DER")));
        assert!(message.contains("not an ASN.1 DER"), "{message}");
    }

    /// Go's ecdsa.Sign does not normalize S, so half of cosign's signatures have a high S;
    /// both forms must verify, as they do in cosign.
    #[test]
    fn high_and_low_s_both_verify() {
        let key = PublicKey::from_pem(COSIGN_PUB).expect("cosign.pub");
        let der = BASE64.decode(COSIGN_SIGNATURE).expect("base64");
        let signature = Signature::from_der(&der).expect("DER");
        let (r, s) = signature.split_scalars();
        let flipped = Signature::from_scalars(r, -s).expect("scalars");
        let high = [signature, flipped]
            .into_iter()
            .filter(|sig| sig.normalize_s().is_some())
            .count();
        assert_eq!(high, 1, "exactly one of the two has a high S");
        for sig in [signature, flipped] {
            key.verify(
                COSIGN_PAYLOAD.as_bytes(),
                &BASE64.encode(sig.to_der().as_bytes()),
            )
            .expect("verifies");
        }
    }

    #[test]
    fn public_key_pem_round_trips_byte_for_byte() {
        let key = PublicKey::from_pem(COSIGN_PUB).expect("cosign.pub");
        assert_eq!(key.to_pem(), COSIGN_PUB);
        // sha256sum of the base64-decoded body of cosign.pub.
        assert_eq!(
            key.fingerprint(),
            "sha256:c87a79018f346cc02482448b77296b0bea143ef2ccab99b04776fb0f638f301f"
        );
        assert_eq!(
            format!("{key:?}"),
            format!("PublicKey({})", key.fingerprint())
        );
        let with_text = format!("cosign.pub from CI\n{COSIGN_PUB}trailing\n");
        assert_eq!(
            PublicKey::from_pem(&with_text).expect("surrounding text"),
            key
        );
    }

    #[test]
    fn payload_is_byte_exact() {
        assert_eq!(
            payload(COSIGN_REFERENCE, COSIGN_DIGEST),
            COSIGN_PAYLOAD.as_bytes()
        );
        assert_eq!(
            payload(
                "registry-testing.svc.lan/busybox",
                "sha256:f3cfc9d0dbf931d3db4685ec659b7ac68e2a578219da4aae65427886e649b06b"
            ),
            BUSYBOX_PAYLOAD.as_bytes()
        );
    }

    #[test]
    fn check_payload_accepts_its_digest_only() {
        check_payload(COSIGN_PAYLOAD.as_bytes(), COSIGN_DIGEST).expect("real payload");
        check_payload(&payload("ghcr.io/org/plugin", "sha256:ab"), "sha256:ab")
            .expect("generated payload");

        let other = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
        let message = error(check_payload(COSIGN_PAYLOAD.as_bytes(), other));
        assert!(
            message.contains(COSIGN_DIGEST) && message.contains(other),
            "{message}"
        );

        let retyped = COSIGN_PAYLOAD.replace(SIGNATURE_TYPE, "atomic container signature");
        let message = error(check_payload(retyped.as_bytes(), COSIGN_DIGEST));
        assert!(message.contains("atomic container signature"), "{message}");
        let multiline = payload("r", "sha256:ab\nforged: yes");
        let message = error(check_payload(&multiline, "sha256:ab"));
        assert!(!message.contains('\n'), "one line: {message}");

        let untyped = r#"{"critical":{"image":{"docker-manifest-digest":"sha256:ab"}}}"#;
        let message = error(check_payload(untyped.as_bytes(), "sha256:ab"));
        assert!(message.contains("no type"), "{message}");

        let no_digest = format!(r#"{{"critical":{{"type":"{SIGNATURE_TYPE}"}}}}"#);
        let message = error(check_payload(no_digest.as_bytes(), "sha256:ab"));
        assert!(message.contains("no manifest digest"), "{message}");

        let message = error(check_payload(b"{\"_type\":\"in-toto\"}", "sha256:ab"));
        assert!(
            message.contains("not a cosign simple-signing payload"),
            "{message}"
        );
        assert!(!message.contains('\n'), "one line: {message}");
    }

    /// Decrypting checks the secretbox MAC, and parsing the PKCS#8 checks the public key inside it.
    #[test]
    fn real_cosign_key_decrypts_and_signs() {
        let key = PrivateKey::from_pem(COSIGN_TEST_KEY, password("hello")).expect("decrypts");
        assert_eq!(key.public_key().to_pem(), COSIGN_TEST_PUB);
        let signature = key.sign(COSIGN_PAYLOAD.as_bytes());
        PublicKey::from_pem(COSIGN_TEST_PUB)
            .expect("public key")
            .verify(COSIGN_PAYLOAD.as_bytes(), &signature)
            .expect("verifies");
    }

    #[test]
    fn cosign_v1_label_reads() {
        let key = PrivateKey::from_pem(COSIGN_V1_KEY, password("hello")).expect("decrypts");
        let signature = key.sign(b"blob");
        key.public_key()
            .verify(b"blob", &signature)
            .expect("verifies");
        assert_ne!(key.public_key().to_pem(), COSIGN_TEST_PUB);
    }

    #[test]
    fn cosign_v2_key_with_empty_password_decrypts() {
        assert_eq!(
            envelope_json(COSIGN_GENERATED_KEY)["kdf"]["params"]["N"],
            65536
        );
        let key = PrivateKey::from_pem(COSIGN_GENERATED_KEY, password("")).expect("decrypts");
        assert_eq!(key.public_key().to_pem(), COSIGN_GENERATED_PUB);
    }

    #[test]
    fn wrong_password_fails_cleanly() {
        let message = error(PrivateKey::from_pem(COSIGN_TEST_KEY, password("wrong")));
        assert!(
            message.starts_with("wrong password (or not a cosign key)"),
            "{message}"
        );
        assert!(!message.contains('\n'), "one line: {message}");
    }

    #[test]
    fn password_callback_errors_pass_through() {
        let message = error(PrivateKey::from_pem(COSIGN_TEST_KEY, || {
            anyhow::bail!("no terminal to ask for the password")
        }));
        assert_eq!(message, "no terminal to ask for the password");
    }

    #[test]
    fn generated_key_round_trips_through_cosign_format() {
        let key = PrivateKey::generate();
        let pem = key.to_encrypted_pem(b"s3cret").expect("encrypts");
        assert!(pem.starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n"));
        assert!(pem.ends_with("-----END ENCRYPTED SIGSTORE PRIVATE KEY-----\n"));
        assert!(pem.lines().all(|l| l.len() <= 64), "64-column lines");

        // The JSON has the layout of a real cosign key, field for field and in order.
        let (_, json) = pem_block(&pem).expect("PEM");
        let (_, real) = pem_block(COSIGN_TEST_KEY).expect("PEM");
        let shape = |json: &[u8]| {
            let text = String::from_utf8(json.to_vec()).expect("UTF-8");
            let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            let mut text = text;
            for field in [
                &value["kdf"]["salt"],
                &value["cipher"]["nonce"],
                &value["ciphertext"],
            ] {
                let field = field.as_str().expect("string");
                text = text.replace(field, "B64");
            }
            text
        };
        assert_eq!(shape(&json), shape(&real));
        let envelope = envelope_json(&pem);
        let decoded_len =
            |v: &serde_json::Value| BASE64.decode(v.as_str().expect("str")).expect("b64").len();
        assert_eq!(decoded_len(&envelope["kdf"]["salt"]), 32);
        assert_eq!(decoded_len(&envelope["cipher"]["nonce"]), 24);

        let read = PrivateKey::from_pem(&pem, password("s3cret")).expect("reads back");
        assert_eq!(read.public_key(), key.public_key());
        let signature = read.sign(b"payload");
        key.public_key()
            .verify(b"payload", &signature)
            .expect("verifies");
        assert!(key.public_key().verify(b"payloaD", &signature).is_err());
    }

    #[test]
    fn plain_pkcs8_and_sec1_keys_read() {
        let secret = SecretKey::random(&mut OsRng);
        let expected = PublicKey {
            key: VerifyingKey::from(SigningKey::from(&secret)),
        };
        let pkcs8 = secret
            .to_pkcs8_pem(p256::pkcs8::LineEnding::LF)
            .expect("PKCS#8");
        let sec1 = secret
            .to_sec1_pem(p256::pkcs8::LineEnding::LF)
            .expect("SEC1");
        assert!(pkcs8.starts_with("-----BEGIN PRIVATE KEY-----"));
        assert!(sec1.starts_with("-----BEGIN EC PRIVATE KEY-----"));
        for pem in [pkcs8.as_str(), sec1.as_str()] {
            let key = PrivateKey::from_pem(pem, no_password).expect("reads");
            assert_eq!(key.public_key(), expected);
        }
        PrivateKey::from_pem(P256_SEC1, no_password).expect("cosign's SEC1 test key");
    }

    #[test]
    fn other_key_types_are_named_as_unsupported() {
        let message = error(PrivateKey::from_pem(ED25519_PKCS8, no_password));
        assert!(
            message.starts_with("unsupported key type Ed25519"),
            "{message}"
        );
        let message = error(PrivateKey::from_pem(P384_SEC1, no_password));
        assert!(
            message.starts_with("unsupported key type ECDSA P-384"),
            "{message}"
        );
        let message = error(PublicKey::from_pem(RSA_PUB));
        assert!(message.starts_with("unsupported key type RSA"), "{message}");
        let rsa_private = "-----BEGIN RSA PRIVATE KEY-----\nMAA=\n-----END RSA PRIVATE KEY-----\n";
        let message = error(PrivateKey::from_pem(rsa_private, no_password));
        assert!(message.starts_with("unsupported key type RSA"), "{message}");
        // An Ed25519 SubjectPublicKeyInfo: algorithm 1.3.101.112, 32-byte key.
        let mut spki = vec![
            0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
        ];
        spki.extend([7u8; 32]);
        let message = error(PublicKey::from_pem(&pem_encode("PUBLIC KEY", &spki)));
        assert!(
            message.starts_with("unsupported key type Ed25519"),
            "{message}"
        );
    }

    #[test]
    fn an_openssl_ecparam_key_reads_past_its_parameters() {
        let key = PrivateKey::generate();
        let sec1 = key.key.to_sec1_pem(Default::default()).unwrap();
        let text = format!(
            "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n{}",
            sec1.as_str()
        );
        let read = PrivateKey::from_pem(&text, || unreachable!("not encrypted")).unwrap();
        assert_eq!(read.public_key(), key.public_key());
    }

    #[test]
    fn the_wrong_kind_of_pem_is_named() {
        let message = error(PublicKey::from_pem(COSIGN_TEST_KEY));
        assert!(message.contains("this is a private key"), "{message}");
        let message = error(PrivateKey::from_pem(COSIGN_PUB, no_password));
        assert!(message.contains("this is a public key"), "{message}");
        let message = error(PublicKey::from_pem("ssh-ed25519 AAAA user@host"));
        assert!(message.contains("not a PEM file"), "{message}");
        let truncated = COSIGN_PUB.replace("-----END PUBLIC KEY-----", "");
        let message = error(PublicKey::from_pem(&truncated));
        assert!(
            message.contains("no -----END PUBLIC KEY----- line"),
            "{message}"
        );
    }

    #[test]
    fn encrypted_keys_outside_cosign_parameters_are_refused_before_scrypt() {
        let (_, json) = pem_block(COSIGN_TEST_KEY).expect("PEM");
        let text = String::from_utf8(json).expect("UTF-8");
        let huge = text.replace(r#""N":32768"#, r#""N":1073741824"#);
        let message = error(PrivateKey::from_pem(
            &pem_encode(SIGSTORE_KEY_LABEL, huge.as_bytes()),
            password("hello"),
        ));
        assert!(
            message.contains("unsupported scrypt parameters N=1073741824"),
            "{message}"
        );
        let argon = text.replace(r#""name":"scrypt""#, r#""name":"argon2""#);
        let message = error(PrivateKey::from_pem(
            &pem_encode(SIGSTORE_KEY_LABEL, argon.as_bytes()),
            password("hello"),
        ));
        assert!(
            message.contains("unsupported key derivation \"argon2\""),
            "{message}"
        );
        let message = error(PrivateKey::from_pem(
            &pem_encode(SIGSTORE_KEY_LABEL, b"garbage"),
            password("hello"),
        ));
        assert!(message.contains("not a cosign encrypted key"), "{message}");
    }

    #[test]
    fn debug_shows_no_key_material() {
        let key = PrivateKey::generate();
        let shown = format!("{key:?}");
        assert_eq!(
            shown,
            format!("PrivateKey(public {})", key.public_key().fingerprint())
        );
        let secret: String = key
            .key
            .to_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert!(!shown.contains(&secret));
    }
}
