//! Loading a plugin: check its sha256 pin, compile it (or take the verified cached artifact;
//! the built-in plugins' native code is in the binary), refuse imports beyond its grants,
//! check it was built for this host's WIT, and pre-link it.

use std::collections::{BTreeSet, HashMap};
use std::io::IsTerminal;
use std::sync::Arc;

use anyhow::{Result, bail};
use wasmtime::component::Component;

use super::grants::{Grant, Need, refused};
use super::instance::{Interest, LoadedPlugin, Prelinked};
use super::wit::{self, WIT_VERSION};
use super::{ComponentInfo, Runtime};
use crate::builtin;
use crate::digest::sha256_hex;

impl Runtime {
    /// Compiles (or takes from the cache) and describes a component, without checking grants:
    /// what `acp-gate plugin inspect` shows.
    pub fn inspect(&self, label: &str, bytes: &[u8]) -> Result<ComponentInfo> {
        let digest = component_digest(bytes);
        let component = self.compile(label, bytes, &digest)?;
        Ok(self.describe(&component, digest, bytes.len()))
    }

    /// Loads a plugin: checks the pin, compiles (or takes the cached artifact), refuses imports
    /// beyond `grants`, checks the export against this host's WIT, and pre-links it.
    pub fn load(
        &self,
        label: &str,
        bytes: &[u8],
        pin: Option<&str>,
        grants: &BTreeSet<Grant>,
    ) -> Result<LoadedPlugin> {
        self.load_digested(label, bytes, component_digest(bytes), pin, grants)
    }

    /// [`Runtime::load`] of a component whose sha256 ([`component_digest`]) is known.
    pub fn load_digested(
        &self,
        label: &str,
        bytes: &[u8],
        digest: String,
        pin: Option<&str>,
        grants: &BTreeSet<Grant>,
    ) -> Result<LoadedPlugin> {
        if let Some(pin) = pin
            && !pin.eq_ignore_ascii_case(&digest)
        {
            bail!("{label}: sha256 mismatch: handlers.toml pins {pin}, the component has {digest}");
        }
        let component = self.compile(label, bytes, &digest)?;
        let info = self.describe(&component, digest, bytes.len());
        let refused = refused(&info.imports, grants);
        if !refused.is_empty() {
            bail!(
                "{label}: imports what its handler does not grant: {}; grants go in the handler's `imports` in handlers.toml",
                refused.join(", ")
            );
        }
        let expected = format!("acp-gate:plugin/handler@{WIT_VERSION}");
        if let Some(other) = info
            .exports
            .iter()
            .filter_map(|e| e.strip_prefix("acp-gate:plugin/handler@"))
            .find(|version| !wit::runs_plugins_built_for(version))
        {
            bail!(
                "{label}: built for acp-gate:plugin@{other}, but this acp-gate implements \
                 acp-gate:plugin@{WIT_VERSION} and runs plugins built for {}.x; rebuild it against this acp-gate's wit/",
                WIT_VERSION
                    .rsplit_once('.')
                    .map_or(WIT_VERSION, |(minor, _)| minor)
            );
        }
        let instance_pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|e| anyhow::anyhow!("{label}: cannot be linked: {e:#}"))?;
        let pre = Prelinked::new(instance_pre).map_err(|e| {
            anyhow::anyhow!(
                "{label}: does not implement the `plugin` world of {expected} (exports: {:?}): {e}",
                info.exports
            )
        })?;
        Ok(LoadedPlugin {
            label: label.to_owned(),
            info,
            pre,
            spare: Arc::default(),
            interest: Interest::default(),
        })
    }

    pub(super) fn compile(&self, label: &str, bytes: &[u8], digest: &str) -> Result<Component> {
        let known = self.lock_compiled().get(digest).cloned();
        if let Some(component) = known {
            return Ok(component);
        }
        let component = self.compile_once(label, bytes, digest)?;
        self.lock_compiled()
            .insert(digest.to_owned(), component.clone());
        Ok(component)
    }

    fn lock_compiled(&self) -> std::sync::MutexGuard<'_, HashMap<String, Component>> {
        self.compiled.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn compile_once(&self, label: &str, bytes: &[u8], digest: &str) -> Result<Component> {
        check_is_component(label, bytes)?;
        let compile = || {
            Component::new(&self.engine, bytes)
                .map_err(|e| anyhow::anyhow!("{label}: not a valid WebAssembly component: {e:#}"))
        };
        // What the built-in plugins decide depends on no file an agent could write: their
        // native code is in the binary (`build.rs`), or, where that was compiled for another
        // engine (no instance pool here, another CPU), compiled in memory.
        if let Some(compiled) = builtin::compiled(bytes) {
            // SAFETY: `compiled` is part of this binary (static, never written): `build.rs`
            // wrote it with `Engine::precompile_component`; wasmtime checks it matches this
            // engine. In place, it starts on a page of its own (`builtin`), which the engine's
            // code memory makes executable.
            let ahead = match self.code_in_place {
                true => unsafe {
                    Component::deserialize_raw(&self.engine, std::ptr::NonNull::from(compiled))
                },
                false => unsafe { Component::deserialize(&self.engine, compiled) },
            };
            return ahead.or_else(|_| compile());
        }
        self.cache.get_or_compile(digest, || {
            // A first compile takes from ~0.1 s (Rust) to seconds (Python, JavaScript): say so.
            if std::io::stderr().is_terminal() {
                eprintln!(
                    "acp-gate: compiling {label} ({} KiB; first use, cached afterwards)…",
                    bytes.len() >> 10
                );
            }
            compile()
        })
    }

    fn describe(&self, component: &Component, digest: String, size: usize) -> ComponentInfo {
        let ty = component.component_type();
        let imports = ty
            .imports(&self.engine)
            .map(|(name, _)| (name.to_owned(), Need::of(name)))
            .collect();
        let exports = ty
            .exports(&self.engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        ComponentInfo {
            digest,
            size,
            imports,
            exports,
        }
    }
}

/// A component's sha256 in hexadecimal (a built-in's computed when the binary was built).
pub fn component_digest(bytes: &[u8]) -> String {
    builtin::sha256(bytes).map_or_else(|| sha256_hex(bytes), str::to_owned)
}

fn check_is_component(label: &str, bytes: &[u8]) -> Result<()> {
    match bytes.get(..8) {
        Some([0, b'a', b's', b'm', _, _, 1, 0]) => Ok(()),
        Some([0, b'a', b's', b'm', 1, 0, 0, 0]) => bail!(
            "{label}: is a core WebAssembly module, not a component (build it for wasm32-wasip2, \
             or wrap it with `wasm-tools component new`)"
        ),
        _ => bail!("{label}: is not a WebAssembly component (no `\\0asm` component header)"),
    }
}
