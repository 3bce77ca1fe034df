//! The references that name a distributed plugin: `oci://REGISTRY/REPOSITORY[:TAG][@sha256:…]`
//! and `oci-layout://DIR@sha256:…`, parsed strictly (a mistake names what is wrong).

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

/// Where a distributed plugin is: a registry repository, or an OCI image layout on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Registry(RegistryRef),
    /// An OCI image layout (`plugin package`): a directory, and the manifest's digest.
    Layout {
        dir: PathBuf,
        digest: String,
    },
}

/// `REGISTRY/REPOSITORY[:TAG][@sha256:…]`: the registry is always named (no default registry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryRef {
    pub registry: String,
    pub repository: String,
    pub tag: Option<String>,
    /// `sha256:` and 64 lowercase hexadecimal digits: the manifest's digest.
    pub digest: Option<String>,
}

impl Location {
    /// Reads `oci://…` or `oci-layout://…`; a relative layout directory is taken against `base`.
    /// `None` when `text` has neither scheme.
    pub fn parse(text: &str, base: &Path) -> Option<Result<Location>> {
        if let Some(rest) = text.strip_prefix("oci://") {
            return Some(RegistryRef::parse(rest).map(Location::Registry));
        }
        let rest = text.strip_prefix("oci-layout://")?;
        Some((|| {
            let Some((dir, digest)) = rest.rsplit_once('@') else {
                bail!(
                    "`{text}`: an image layout is named with its manifest's digest: oci-layout://DIR@sha256:…"
                );
            };
            if dir.is_empty() {
                bail!("`{text}`: no directory before `@`");
            }
            Ok(Location::Layout {
                dir: base.join(dir),
                digest: parse_digest(digest)?,
            })
        })())
    }

    /// The manifest digest the reference pins, if it pins one.
    pub fn digest(&self) -> Option<&str> {
        match self {
            Location::Registry(reference) => reference.digest.as_deref(),
            Location::Layout { digest, .. } => Some(digest),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Registry(reference) => write!(f, "oci://{reference}"),
            Location::Layout { dir, digest } => {
                write!(f, "oci-layout://{}@{digest}", dir.display())
            }
        }
    }
}

impl RegistryRef {
    /// Reads `REGISTRY/REPOSITORY[:TAG][@sha256:…]` (an `oci://` prefix is allowed).
    pub fn parse(text: &str) -> Result<RegistryRef> {
        let text = text.strip_prefix("oci://").unwrap_or(text);
        let (name, digest) = match text.split_once('@') {
            Some((name, digest)) => (name, Some(parse_digest(digest)?)),
            None => (text, None),
        };
        let Some((registry, path)) = name.split_once('/') else {
            bail!("`{text}`: expected REGISTRY/REPOSITORY[:TAG][@sha256:DIGEST]");
        };
        let (repository, tag) = match path.rsplit_once(':') {
            Some((repository, tag)) if !tag.contains('/') => (repository, Some(tag)),
            _ => (path, None),
        };
        let host_ok = !registry.is_empty()
            && registry
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b));
        if !host_ok {
            bail!("`{text}`: `{registry}` is not a registry host[:port]");
        }
        let repository_ok = !repository.is_empty()
            && repository.split('/').all(|part| {
                !part.is_empty()
                    && part.bytes().all(|b| {
                        b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b)
                    })
                    && part.as_bytes()[0].is_ascii_alphanumeric()
            });
        if !repository_ok {
            bail!(
                "`{text}`: `{repository}` is not a repository name (lowercase letters, digits, `._-`, parts separated by `/`)"
            );
        }
        if let Some(tag) = tag {
            let tag_ok = (1..=128).contains(&tag.len())
                && tag.as_bytes()[0] != b'.'
                && tag.as_bytes()[0] != b'-'
                && tag
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
            if !tag_ok {
                bail!("`{text}`: `{tag}` is not a tag (letters, digits, `._-`, at most 128)");
            }
        }
        if tag.is_none() && digest.is_none() {
            bail!("`{text}`: name a tag (`:1.0`) or a digest (`@sha256:…`)");
        }
        Ok(RegistryRef {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            tag: tag.map(str::to_owned),
            digest,
        })
    }

    /// The same repository at `digest` (the tag kept, for the pinned line).
    pub fn pinned(&self, digest: &str) -> RegistryRef {
        RegistryRef {
            digest: Some(digest.to_owned()),
            ..self.clone()
        }
    }

    /// The registry is this machine: plain HTTP is allowed only there.
    pub fn is_loopback(&self) -> bool {
        let host = match self.registry.rsplit_once(':') {
            Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
            _ => &self.registry,
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

impl fmt::Display for RegistryRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

/// `sha256:` and 64 hexadecimal digits, lowercased.
pub fn parse_digest(text: &str) -> Result<String> {
    let Some(hex) = text.strip_prefix("sha256:") else {
        bail!("`{text}`: a digest is `sha256:` and 64 hexadecimal digits");
    };
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!("`{text}`: a digest is `sha256:` and 64 hexadecimal digits");
    }
    Ok(format!("sha256:{}", hex.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn registry_references_read_strictly() {
        let r = RegistryRef::parse(&format!("oci://127.0.0.1:5000/acme/policy:1.2@{D}")).unwrap();
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str(), r.tag.as_deref()),
            ("127.0.0.1:5000", "acme/policy", Some("1.2"))
        );
        assert_eq!(r.digest.as_deref(), Some(D));
        assert!(r.is_loopback());
        assert_eq!(r.to_string(), format!("127.0.0.1:5000/acme/policy:1.2@{D}"));
        let bare = RegistryRef::parse(&format!("ghcr.io/acme/policy@{D}")).unwrap();
        assert_eq!(bare.tag, None);
        assert!(!bare.is_loopback());
        assert!(RegistryRef::parse("[::1]:5000/p:1").unwrap().is_loopback());
        assert!(
            !RegistryRef::parse("localhost.evil.com/p:1")
                .unwrap()
                .is_loopback()
        );
        for bad in [
            "acme/policy",                     // no tag nor digest
            "policy:1",                        // no registry
            "ghcr.io/Acme/policy:1",           // uppercase repository
            "ghcr.io/acme/policy:-x",          // bad tag
            "ghcr.io/acme/policy@sha256:1234", // short digest
            "ghcr.io/acme/policy@md5:0123",    // other algorithm
        ] {
            assert!(RegistryRef::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn layouts_are_named_by_digest_relative_to_the_file() {
        let base = Path::new("/etc/acp-gate");
        let Some(Ok(Location::Layout { dir, digest })) =
            Location::parse(&format!("oci-layout://bundle@{D}"), base)
        else {
            panic!("not a layout")
        };
        assert_eq!(
            (dir.as_path(), digest.as_str()),
            (Path::new("/etc/acp-gate/bundle"), D)
        );
        assert!(matches!(
            Location::parse("oci-layout://bundle", base),
            Some(Err(_))
        ));
        assert!(Location::parse("plugins/x.wasm", base).is_none());
    }
}
