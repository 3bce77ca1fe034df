//! The on-disk cache of compiled plugins, keyed by the component's sha256 and the engine's
//! compatibility hash, so that a plugin is compiled once per machine and wasmtime version.
//!
//! A cache entry is native code that acp-gate will run, and wasmtime deserialises only trusted
//! bytes safely. So an entry is a header that binds it to its component's sha256, the engine's
//! compatibility hash and the sha256 of the compiled bytes, and all three are checked (after
//! reading the file once, from memory) before the bytes reach `Component::deserialize`: a
//! corrupted, truncated or swapped entry is compiled again, never loaded. Files are written
//! atomically (temp file, then rename); the user's cache directory is among the path
//! validator's protected paths, and an org's cache (`[settings] cache_dir`) is only read.
//! The built-in plugins never come from here: their native code is in the binary.
//!
//! Beside the compiled plugins, the cache keeps small records by key ([`CompileCache::kept`]:
//! what a plugin's `prepare` said of a config, see `runtime::prepare`), in the user's cache
//! only.

use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::digest::sha256_hex;

/// The first line of every entry; a new layout gets a new one.
const MAGIC: &[u8] = b"acp-gate compiled plugin v1\n";
/// The header: `MAGIC`, then the component's sha256, the engine key and the compiled bytes'
/// sha256, each in hexadecimal on a line of its own.
const HEADER_LEN: usize = MAGIC.len() + (64 + 1) + (16 + 1) + (64 + 1);
/// No entry is larger (a Python plugin's is ~100 MB): a bigger file is not read.
const MAX_ENTRY: u64 = 1 << 30;

/// Where compiled plugins are read from and written to.
#[derive(Debug, Clone, Default)]
pub struct CacheDirs {
    /// Read and written: the user's cache ([`CompileCache::default_dir`]), or the directory
    /// `acp-gate plugin precompile` fills.
    pub writable: Option<PathBuf>,
    /// A managed install's cache (the org file's `cache_dir`), never written: the plugins the
    /// org file pins come from it only (neither read from nor written to `writable`).
    pub managed: Option<Managed>,
    /// Filling `writable` ahead of time (`plugin precompile`): a write that fails is an
    /// error, not only time lost.
    pub precompile: bool,
}

#[derive(Debug, Clone)]
pub struct Managed {
    pub dir: PathBuf,
    /// The sha256 of every plugin the org file pins.
    pub digests: BTreeSet<String>,
}

pub struct CompileCache {
    dirs: CacheDirs,
    engine: Engine,
    engine_key: String,
}

impl CompileCache {
    pub fn new(dirs: CacheDirs, engine: &Engine) -> CompileCache {
        let mut hasher = std::hash::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        env!("CARGO_PKG_VERSION").hash(&mut hasher);
        CompileCache {
            dirs,
            engine: engine.clone(),
            engine_key: format!("{:016x}", hasher.finish()),
        }
    }

    /// The default location: `$ACP_GATE_CACHE_DIR`, else `$XDG_CACHE_HOME/acp-gate`, else
    /// `~/.cache/acp-gate`.
    pub fn default_dir() -> Option<PathBuf> {
        if let Some(dir) = std::env::var_os("ACP_GATE_CACHE_DIR") {
            return Some(dir.into());
        }
        let base = match std::env::var_os("XDG_CACHE_HOME") {
            Some(dir) => PathBuf::from(dir),
            None => PathBuf::from(std::env::var_os("HOME")?).join(".cache"),
        };
        Some(base.join("acp-gate"))
    }

    /// The compiled component whose sha256 is `digest`: from a verified cache entry when
    /// there is one, else from `compile`, then stored (never in a managed cache). A cache
    /// that cannot be read or written only costs time and never fails the load, unless
    /// `precompile`; an entry that is there but fails verification is reported and replaced.
    pub fn get_or_compile(
        &self,
        digest: &str,
        compile: impl FnOnce() -> Result<Component>,
    ) -> Result<Component> {
        let Some((path, writable)) = self.entry(digest) else {
            return compile();
        };
        if let Some(component) = self.read_reporting(&path, digest, writable) {
            return Ok(component);
        }
        let component = compile()?;
        if writable {
            let stored = component
                .serialize()
                .map_err(anyhow::Error::from)
                .and_then(|serialized| self.store(&path, digest, &serialized))
                .with_context(|| format!("{}: cannot write the compiled plugin", path.display()));
            if let Err(error) = stored
                && self.dirs.precompile
            {
                return Err(error);
            }
        }
        Ok(component)
    }

    /// The compiled component whose sha256 is `digest`, if the cache has a verified entry:
    /// for work that must know before it starts (a snapshot to take first).
    pub fn get(&self, digest: &str) -> Option<Component> {
        let (path, writable) = self.entry(digest)?;
        self.read_reporting(&path, digest, writable)
    }

    /// The record kept under `key` for this engine, if there is one.
    pub fn kept(&self, key: &str) -> Option<Vec<u8>> {
        std::fs::read(self.record_path(key)?).ok()
    }

    /// Keeps `record` under `key` for this engine (atomically); a cache that cannot be written
    /// only costs the work again at the next load (`plugin precompile` says so).
    pub fn keep(&self, key: &str, record: &[u8]) {
        let Some(path) = self.record_path(key) else {
            return;
        };
        if let Err(error) = crate::state::write_atomically(&path, record)
            && self.dirs.precompile
        {
            eprintln!("acp-gate: {error:#}");
        }
    }

    fn record_path(&self, key: &str) -> Option<PathBuf> {
        let dir = self.dirs.writable.as_ref()?;
        Some(dir.join(format!("{key}-{}.json", self.engine_key)))
    }

    /// Where the entry for `digest` is, and whether it may be written; `None` without a cache.
    fn entry(&self, digest: &str) -> Option<(PathBuf, bool)> {
        let name = format!("{digest}-{}.cwasm", self.engine_key);
        match (&self.dirs.writable, self.dirs.managed.as_ref()) {
            (Some(dir), _) if self.dirs.precompile => Some((dir.join(name), true)),
            (_, Some(managed)) if managed.digests.contains(digest) => {
                Some((managed.dir.join(name), false))
            }
            (Some(dir), _) => Some((dir.join(name), true)),
            (None, _) => None,
        }
    }

    /// [`Self::read`], saying why an entry that should be there is not used.
    fn read_reporting(&self, path: &Path, digest: &str, writable: bool) -> Option<Component> {
        match self.read(path, digest) {
            Ok(Some(component)) => return Some(component),
            Ok(None) if !writable => eprintln!(
                "acp-gate: {}: no compiled plugin there; compiling it in memory (`acp-gate \
                 plugin precompile` fills the org's cache)",
                path.display()
            ),
            Ok(None) => {}
            Err(error) => eprintln!("acp-gate: {error:#}; compiling the plugin again"),
        }
        None
    }

    /// The entry at `path` if there is none (`Ok(None)`), or it once verified; an error names
    /// the file and what is wrong with it.
    fn read(&self, path: &Path, digest: &str) -> Result<Option<Component>> {
        use std::os::unix::fs::OpenOptionsExt;
        // Non-blocking: a FIFO in its place must not hang the load.
        let file = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
        {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            other => other.with_context(|| format!("{}: cannot open", path.display()))?,
        };
        let invalid =
            |why: &str| anyhow::anyhow!("{}: not a valid cache entry ({why})", path.display());
        let metadata = file.metadata()?;
        if !metadata.is_file() || metadata.len() > MAX_ENTRY {
            return Err(invalid("not a regular file of at most 1 GiB"));
        }
        let mut bytes = Vec::with_capacity(metadata.len() as usize);
        file.take(MAX_ENTRY)
            .read_to_end(&mut bytes)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let payload = self.verify(&bytes, digest).map_err(&invalid)?;
        // SAFETY: the bytes are those `Component::serialize` wrote for the component whose
        // sha256 is `digest`, with an engine of this compatibility hash: the header says so
        // and the payload's sha256 matches it, checked above on this very copy in memory.
        // Only an entry crafted whole (native code, with its own sha256) by someone able to
        // write the cache directory passes; that directory is the gate's own (protected by
        // the path validator, or a managed install's root-owned one).
        let component = unsafe { Component::deserialize(&self.engine, payload) }
            .map_err(|e| invalid(&format!("{e:#}")))?;
        Ok(Some(component))
    }

    /// The compiled bytes in `entry` if its header binds them to `digest` and this engine.
    fn verify<'a>(&self, entry: &'a [u8], digest: &str) -> Result<&'a [u8], &'static str> {
        if entry.len() < HEADER_LEN {
            return Err("truncated");
        }
        let (header, payload) = entry.split_at(HEADER_LEN);
        let Some(fields) = header.strip_prefix(MAGIC) else {
            return Err("no acp-gate header");
        };
        let mut fields = fields.split(|&b| b == b'\n');
        if fields.next() != Some(digest.as_bytes()) {
            return Err("compiled from another component");
        }
        if fields.next() != Some(self.engine_key.as_bytes()) {
            return Err("compiled by another engine");
        }
        if fields.next() != Some(sha256_hex(payload).as_bytes()) {
            return Err("its compiled bytes do not match their sha256: corrupted or truncated");
        }
        Ok(payload)
    }

    fn store(&self, path: &Path, digest: &str, serialized: &[u8]) -> Result<()> {
        std::fs::create_dir_all(path.parent().context("no directory")?)?;
        let mut entry = Vec::with_capacity(HEADER_LEN + serialized.len());
        entry.extend_from_slice(MAGIC);
        for field in [digest, &self.engine_key, &sha256_hex(serialized)] {
            entry.extend_from_slice(field.as_bytes());
            entry.push(b'\n');
        }
        debug_assert_eq!(entry.len(), HEADER_LEN);
        entry.extend_from_slice(serialized);
        let temp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&temp, &entry)?;
        std::fs::rename(&temp, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&temp);
        })?;
        Ok(())
    }
}
