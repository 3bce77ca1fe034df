//! `acp-gate plugin push|pull|package|sign|verify|keygen`: plugins as signed OCI artifacts, in
//! a registry or an image layout for offline sites.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;

use super::{read, runtime};
use crate::args::OutputFormat;
use crate::config::PluginRef;
use crate::distribution::artifact::{Packaged, Signature};
use crate::distribution::reference::{Location, RegistryRef};
use crate::distribution::registry::Registry;
use crate::distribution::signature::{self, PrivateKey, PublicKey};
use crate::distribution::store::Store;
use crate::distribution::{self, Reach, Trust, TrustedKey, layout};
use crate::exit;
use crate::resolve::resolve;
use crate::runtime::WIT_VERSION;

#[derive(Args)]
pub struct PushArgs {
    /// The plugin component.
    file: PathBuf,
    /// Where to push it: `[oci://]REGISTRY/REPOSITORY:TAG`.
    reference: String,
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    format: OutputFormat,
}

#[derive(Args)]
pub struct PullArgs {
    /// `[oci://]REGISTRY/REPOSITORY:TAG[@sha256:…]`, or `oci-layout://DIR@sha256:…`.
    reference: String,
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    format: OutputFormat,
}

#[derive(Args)]
pub struct PackageArgs {
    /// Plugin components (`.wasm`), or `oci://` references (copied with their signatures),
    /// then the image layout's directory (created, or added to).
    #[arg(required = true, num_args = 2.., value_name = "FILE|REF... DIR")]
    items: Vec<String>,
}

#[derive(Args)]
pub struct SignArgs {
    /// The private key: cosign's encrypted format (password in `$COSIGN_PASSWORD`), or a
    /// PKCS#8 / SEC1 PEM.
    #[arg(long, value_name = "KEY")]
    key: PathBuf,
    /// `oci://REF`, `oci-layout://DIR@sha256:…`, or a plugin file (its signature goes to
    /// FILE.sig, as `cosign sign-blob` writes it).
    target: String,
}

#[derive(Args)]
pub struct VerifyArgs {
    /// The public key (PEM), as `cosign verify --key` takes it.
    #[arg(long, value_name = "KEY")]
    key: PathBuf,
    /// `oci://REF`, `oci-layout://DIR@sha256:…`, or a plugin file (checked against FILE.sig).
    target: String,
}

#[derive(Args)]
pub struct KeygenArgs {
    /// Writes PREFIX.key (encrypted with `$COSIGN_PASSWORD`, in cosign's format) and PREFIX.pub.
    #[arg(long, default_value = "acp-gate", value_name = "PREFIX")]
    output_key_prefix: String,
}

/// A component checked to be an acp-gate plugin, packaged as a Wasm OCI artifact.
fn package_file(file: &Path) -> Result<Packaged> {
    let bytes = read(file)?;
    let info = runtime()?.inspect(&file.display().to_string(), &bytes)?;
    let prefix = "acp-gate:plugin/handler@";
    if !info.exports.iter().any(|e| e.starts_with(prefix)) {
        bail!(
            "{}: not an acp-gate plugin (it exports no {prefix}{WIT_VERSION}; exports: {:?})",
            file.display(),
            info.exports
        );
    }
    Ok(Packaged::new(bytes, &info))
}

fn print_pinned(location: &str, digest: &str, format: OutputFormat) {
    match format {
        OutputFormat::Text => println!("plugin = \"{location}\""),
        OutputFormat::Json => {
            println!(
                "{}",
                serde_json::json!({"plugin": location, "digest": digest})
            );
        }
    }
}

pub async fn push(args: PushArgs) -> Result<u8> {
    let reference = RegistryRef::parse(&args.reference)?;
    let Some(tag) = reference.tag.clone().filter(|_| reference.digest.is_none()) else {
        bail!(
            "{}: push to a tag (`REGISTRY/REPOSITORY:TAG`); the digest is printed",
            args.reference
        );
    };
    let packaged = package_file(&args.file)?;
    let digest = Registry::new(&reference)
        .push(&packaged, Some(&tag))
        .await?;
    // This machine then loads it offline too.
    let store = Store::open()?;
    store.put(&packaged.component)?;
    store.put(&packaged.config)?;
    store.put(&packaged.manifest)?;
    store.set_tag(&reference, &digest)?;
    print_pinned(
        &format!("oci://{}", reference.pinned(&digest)),
        &digest,
        args.format,
    );
    Ok(exit::OK)
}

pub async fn pull(args: PullArgs) -> Result<u8> {
    let location = location(&args.reference)?;
    let store = Store::open()?;
    let fetched = distribution::fetch(&location, &store, Reach::Refresh).await?;
    let pinned = match &location {
        Location::Registry(reference) => format!("oci://{}", reference.pinned(&fetched.digest)),
        layout => layout.to_string(),
    };
    if args.format == OutputFormat::Text {
        eprintln!(
            "{}: {} KiB component, {} signature(s) beside it, in {}",
            location,
            fetched.component.len().div_ceil(1024),
            fetched.signatures.len(),
            store.root().display()
        );
    }
    print_pinned(&pinned, &fetched.digest, args.format);
    Ok(exit::OK)
}

/// An `oci://` / `oci-layout://` reference (a relative layout taken from the current
/// directory); `None` for anything else (a plugin file, for the commands that take one).
fn distributed(text: &str) -> Result<Option<Location>> {
    Location::parse(text, &std::env::current_dir()?).transpose()
}

/// An `oci://` / `oci-layout://` reference, or a bare `REGISTRY/REPOSITORY…`.
fn location(text: &str) -> Result<Location> {
    match distributed(text)? {
        Some(location) => Ok(location),
        None => RegistryRef::parse(text).map(Location::Registry),
    }
}

pub async fn package(args: PackageArgs) -> Result<u8> {
    let (dir, items) = args.items.split_last().context("no directory")?;
    let dir = std::path::absolute(dir)?;
    let store = Store::open()?;
    for item in items {
        let digest = match distributed(item)? {
            None => {
                let file = Path::new(item);
                let packaged = package_file(file)?;
                let name = file
                    .file_stem()
                    .map_or("plugin".into(), |s| s.to_string_lossy().into_owned());
                layout::add(
                    &dir,
                    &name,
                    &packaged.manifest,
                    &[&packaged.config, &packaged.component],
                )?;
                packaged.digest()
            }
            Some(location) => {
                let fetched = distribution::fetch(&location, &store, Reach::Registry).await?;
                let name = match &location {
                    Location::Registry(r) => {
                        format!("{}:{}", r.repository, r.tag.as_deref().unwrap_or("latest"))
                    }
                    Location::Layout { .. } => fetched.digest.replace(':', "-"),
                };
                let config =
                    crate::distribution::artifact::Manifest::parse(&fetched.manifest)?.config;
                let config = store.get(&config.digest);
                let mut blobs: Vec<&[u8]> = vec![&fetched.component];
                if let Some(config) = &config {
                    blobs.push(config);
                }
                layout::add(&dir, &name, &fetched.manifest, &blobs)?;
                for signature in fetched.signatures {
                    layout::add_signature(&dir, &fetched.digest, signature)?;
                }
                fetched.digest
            }
        };
        println!("plugin = \"oci-layout://{}@{digest}\"", dir.display());
    }
    Ok(exit::OK)
}

/// `$COSIGN_PASSWORD`, as cosign reads it.
fn password() -> Result<Vec<u8>> {
    std::env::var("COSIGN_PASSWORD")
        .map(String::into_bytes)
        .map_err(|_| anyhow::anyhow!("the key is encrypted: set COSIGN_PASSWORD"))
}

pub async fn sign(args: SignArgs) -> Result<u8> {
    let pem = std::fs::read_to_string(&args.key)
        .with_context(|| format!("{}: cannot read", args.key.display()))?;
    let key =
        PrivateKey::from_pem(&pem, password).with_context(|| format!("{}", args.key.display()))?;
    let fingerprint = key.public_key().fingerprint();
    match distributed(&args.target)? {
        None => {
            let file = Path::new(&args.target);
            let signature = key.sign(&read(file)?);
            let path = distribution::detached_signature_path(file);
            std::fs::write(&path, format!("{signature}\n"))
                .with_context(|| format!("cannot write {}", path.display()))?;
            println!(
                "{}: signed with {fingerprint}; signature in {}",
                file.display(),
                path.display()
            );
        }
        Some(location) => {
            let store = Store::open()?;
            // A tag alone is signed as it is now in the registry, not as it was last pulled.
            let fetched = distribution::fetch(&location, &store, Reach::Refresh).await?;
            let identity = match &location {
                Location::Registry(r) => format!("{}/{}", r.registry, r.repository),
                Location::Layout { dir, .. } => dir.display().to_string(),
            };
            let payload = signature::payload(&identity, &fetched.digest);
            let signature = Signature {
                signature: key.sign(&payload),
                payload,
            };
            match &location {
                Location::Registry(reference) => {
                    Registry::new(reference)
                        .add_signature(&fetched.digest, signature.clone())
                        .await?;
                    store.add_signatures(&fetched.digest, &[signature])?;
                }
                Location::Layout { dir, digest } => layout::add_signature(dir, digest, signature)?,
            }
            println!("{location}: signed with {fingerprint}");
        }
    }
    Ok(exit::OK)
}

pub async fn verify(args: VerifyArgs) -> Result<u8> {
    let pem = std::fs::read_to_string(&args.key)
        .with_context(|| format!("{}: cannot read", args.key.display()))?;
    let key = PublicKey::from_pem(&pem).with_context(|| format!("{}", args.key.display()))?;
    let trust = Trust {
        keys: vec![TrustedKey {
            path: args.key.clone(),
            key,
        }],
        require_signatures: true,
        origin: "--key".into(),
    };
    let plugin = match distributed(&args.target)? {
        None => PluginRef::File(PathBuf::from(&args.target)),
        Some(location) => PluginRef::Oci(location),
    };
    let resolved = resolve(&plugin, Some(&trust), Reach::Registry)
        .await
        .with_context(|| args.target.clone())?;
    println!(
        "{}: verified, signed by {}{}",
        args.target,
        args.key.display(),
        resolved
            .manifest_digest
            .map(|d| format!(" (manifest {d})"))
            .unwrap_or_default()
    );
    Ok(exit::OK)
}

pub fn keygen(args: KeygenArgs) -> Result<u8> {
    let (private, public) = (
        PathBuf::from(format!("{}.key", args.output_key_prefix)),
        PathBuf::from(format!("{}.pub", args.output_key_prefix)),
    );
    for path in [&private, &public] {
        if path.exists() {
            bail!("{} exists; not overwritten", path.display());
        }
    }
    let password = std::env::var("COSIGN_PASSWORD").context(
        "set COSIGN_PASSWORD: the private key is written encrypted with it (as cosign does)",
    )?;
    let key = PrivateKey::generate();
    std::fs::write(&private, key.to_encrypted_pem(password.as_bytes())?)
        .with_context(|| format!("cannot write {}", private.display()))?;
    std::fs::write(&public, key.public_key().to_pem())
        .with_context(|| format!("cannot write {}", public.display()))?;
    println!(
        "private key {} (keep it secret), public key {} ({})",
        private.display(),
        public.display(),
        key.public_key().fingerprint()
    );
    Ok(exit::OK)
}
