//! The on-disk cache of compiled plugins, keyed by the component's sha256 and the engine's
//! compatibility hash, so that a plugin is compiled once per machine and wasmtime version.
//!
//! The cache holds native code that acp-gate will run: its directory is among the path
//! validator's protected paths, and files are written atomically (temp file, then rename).

use std::hash::{Hash, Hasher};
use std::path::PathBuf;

use anyhow::Result;
use wasmtime::Engine;
use wasmtime::component::Component;

pub struct CompileCache {
    dir: PathBuf,
    engine: Engine,
    engine_key: String,
}

impl CompileCache {
    pub fn new(dir: PathBuf, engine: &Engine) -> CompileCache {
        let mut hasher = std::hash::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        env!("CARGO_PKG_VERSION").hash(&mut hasher);
        CompileCache {
            dir,
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

    /// The compiled component for `bytes` (whose sha256 is `digest`): from the cache when a
    /// compatible artifact is there, else compiled now and stored. A cache that cannot be read
    /// or written only costs time; it never fails the load. `compiling` is called before a
    /// compilation starts, so the caller can show progress.
    pub fn get_or_compile(
        &self,
        digest: &str,
        bytes: &[u8],
        compiling: impl FnOnce(),
    ) -> wasmtime::Result<Component> {
        let path = self.dir.join(format!("{digest}-{}.cwasm", self.engine_key));
        if path.exists() {
            // SAFETY: the file was written by `Component::serialize` of this engine
            // configuration (the name carries its compatibility hash), and wasmtime checks the
            // header again. The directory is protected from agents by the path validator.
            if let Ok(component) = unsafe { Component::deserialize_file(&self.engine, &path) } {
                return Ok(component);
            }
        }
        compiling();
        let component = Component::new(&self.engine, bytes)?;
        if let Ok(serialized) = component.serialize() {
            let _ = self.store(&path, &serialized);
        }
        Ok(component)
    }

    fn store(&self, path: &std::path::Path, bytes: &[u8]) -> Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let temp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&temp, bytes)?;
        std::fs::rename(&temp, path)?;
        Ok(())
    }
}
