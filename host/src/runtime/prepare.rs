//! Preparing a handler's config once per load: the plugin's `prepare` export runs in an
//! instance, which is then snapshotted (wasmtime-wizer), so that every request's fresh
//! instance starts from the prepared memory instead of compiling the config again.
//!
//! What a request gets is unchanged: a fresh instance, in a wiped pool slot, under its limits.
//! Only its starting memory differs, and that memory is what the plugin's own code made of the
//! same config. The plugin checks, per request, that the state fits (the same config, the same
//! places); so a prepared plugin decides as the unprepared one. The snapshot is compiled once
//! per plugin, config and places, and kept in the compile cache.
//!
//! What `prepare` said (whether it keeps a state, and the plugin's interest) is kept in the
//! compile cache too ([`Prepared`]), under a key that also names the grants the plugin loaded
//! with: a later load of the same plugin, config, grants and places knows it without running
//! `prepare`, and one that decides a single request (a hook call) does not even load a plugin
//! whose interest that request is outside of.

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use wasmtime::Store;
use wasmtime::component::{Component, ComponentType, Instance, Lift, Lower, WasmList};
use wasmtime_wizer::{ComponentInstanceState, Wizer};

use std::collections::BTreeSet;

use super::grants::Grant;
use super::instance::{Interest, LoadedPlugin, Prelinked, describe_trap};
use super::sandbox::SandboxState;
use super::wit::{self, WIT_VERSION};
use super::{Limits, Runtime};
use crate::digest::sha256_hex;
use crate::request::SessionContext;

/// The least time `prepare` gets: it compiles a whole policy, however large, once.
const PREPARE_TIMEOUT: Duration = Duration::from_secs(10);

/// The WIT `places` record `prepare` takes.
#[derive(ComponentType, Lower, Debug)]
#[component(record)]
struct Places {
    #[component(name = "home-dir")]
    home_dir: String,
    cwd: String,
    #[component(name = "workspace-roots")]
    workspace_roots: Vec<String>,
}

/// What `prepare` made of a config (the WIT `preparation` record).
#[derive(ComponentType, Lift)]
#[component(record)]
struct Preparation {
    ready: bool,
    interest: WitInterest,
}

/// The WIT `interest` record.
#[derive(ComponentType, Lift)]
#[component(record)]
struct WitInterest {
    kinds: Option<Vec<wit::types::ToolKind>>,
    paths: bool,
}

/// What a plugin's `prepare` made of a config: whether it keeps a state worth a snapshot, and
/// the requests it can have an opinion on.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Prepared {
    pub ready: bool,
    pub interest: Interest,
}

/// What of a plugin's preparation the user's compile cache serves, and keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FromCache {
    /// Nothing: a managed install's org handlers run no code from where users can write.
    Nothing,
    /// The snapshot, not what `prepare` said: for a built-in plugin, whose checks nothing an
    /// agent could write may skip.
    Snapshot,
    /// The snapshot, and what `prepare` said.
    All,
}

/// What one preparation of a plugin depends on: the component (its sha256), its config and the
/// places it is prepared for name its snapshot; with the grants it loaded with (its load
/// refuses imports beyond them), they name what `prepare` said ([`Prepared`]).
#[derive(Debug, Clone)]
pub struct PrepareKey {
    snapshot: String,
    prepared: String,
}

impl PrepareKey {
    pub fn new(
        digest: &str,
        grants: &BTreeSet<Grant>,
        config: &str,
        context: &SessionContext,
    ) -> PrepareKey {
        let places = Places::of(context);
        let snapshot = sha256_hex(
            serde_json::json!({
                "component": digest,
                "config": config,
                "places": [places.home_dir, places.cwd, places.workspace_roots],
                "wizer": "wasmtime-wizer 48",
            })
            .to_string()
            .as_bytes(),
        );
        let prepared = sha256_hex(
            serde_json::json!({ "snapshot": snapshot, "grants": grants })
                .to_string()
                .as_bytes(),
        );
        PrepareKey { snapshot, prepared }
    }
}

impl Places {
    fn of(context: &SessionContext) -> Places {
        let text = |p: &std::path::Path| p.display().to_string();
        Places {
            home_dir: text(&context.home),
            cwd: text(&context.cwd),
            workspace_roots: context.workspace_roots.iter().map(|r| text(r)).collect(),
        }
    }
}

impl Runtime {
    /// What the compile cache kept of a preparation: known without running `prepare`.
    pub fn kept_preparation(&self, key: &PrepareKey) -> Option<Prepared> {
        serde_json::from_slice(&self.cache.kept(&key.prepared)?).ok()
    }

    /// `plugin` with the interest its `prepare` declares for `config`, and made ready for
    /// `config` in the places of `context` when it says its ready state is worth keeping; a
    /// plugin without `prepare` as it is. An error when the
    /// plugin refuses the config (a bad rule, a failing example) or its `prepare` fails.
    ///
    /// The snapshot is native code compiled for this config: it is kept in the user's compile
    /// cache, and what `prepare` said beside it (a later load does not run `prepare` again), as
    /// far as `from_cache` says; what is not is made at every load.
    #[allow(clippy::too_many_arguments)]
    pub async fn prepare(
        &self,
        plugin: LoadedPlugin,
        component: &[u8],
        config: &str,
        context: &SessionContext,
        key: &PrepareKey,
        limits: Limits,
        from_cache: FromCache,
    ) -> Result<LoadedPlugin> {
        let cached = from_cache != FromCache::Nothing;
        let export = format!("acp-gate:plugin/prepare@{WIT_VERSION}");
        if !plugin.info.exports.contains(&export) {
            return Ok(plugin);
        }
        let label = plugin.label.clone();
        let limits = Limits {
            timeout: (limits.timeout * 20).max(PREPARE_TIMEOUT),
            ..limits
        };
        let places = Places::of(context);
        let keeps_said = from_cache == FromCache::All;
        let kept = keeps_said.then(|| self.kept_preparation(key)).flatten();
        let preparation = match kept {
            Some(kept) => kept,
            None => {
                // Whether there is anything to keep, asked of an ordinary instance: cheap
                // when there is not (the SDK's plugins without a `Prepare` say so at once).
                // Its pool slot, and the instrumented instance's, are counted like an
                // evaluation's.
                let _slot = self.slots.clone().acquire_owned().await?;
                let mut store = self.store(limits);
                let instance = plugin
                    .pre
                    .pre
                    .instantiate_async(&mut store)
                    .await
                    .map_err(|e| anyhow::anyhow!("{label}: {}", describe_trap(&e, limits)))?;
                let said = call_prepare(&mut store, &instance, &export, config, &places, limits)
                    .await
                    .with_context(|| label.clone())?;
                let kinds = said
                    .interest
                    .kinds
                    .map(|kinds| kinds.into_iter().map(wit::kind_from_wit).collect());
                let prepared = Prepared {
                    ready: said.ready,
                    interest: Interest {
                        kinds,
                        paths: said.interest.paths,
                    },
                };
                if keeps_said && let Ok(record) = serde_json::to_vec(&prepared) {
                    self.cache.keep(&key.prepared, &record);
                }
                prepared
            }
        };
        let plugin = LoadedPlugin {
            interest: preparation.interest,
            ..plugin
        };
        if !preparation.ready || plugin.interest.is_none() {
            return Ok(plugin);
        }
        let key = &key.snapshot;
        let snapshot = match cached.then(|| self.cache.get(key)).flatten() {
            Some(snapshot) => snapshot,
            None => {
                if std::io::stderr().is_terminal() {
                    let when = if cached {
                        "first use, cached afterwards"
                    } else {
                        "at every start of a managed install"
                    };
                    eprintln!("acp-gate: preparing {label} for its config ({when})…");
                }
                let job = Job {
                    label: &label,
                    component,
                    export: &export,
                    config,
                    places: &places,
                    limits,
                    cached,
                };
                let bytes = self.snapshot(&job).await?;
                let compile = || {
                    Component::new(&self.engine, &bytes).map_err(|e| {
                        anyhow::anyhow!("{label}: its snapshot does not compile: {e:#}")
                    })
                };
                if cached {
                    self.cache.get_or_compile(key, compile)?
                } else {
                    compile()?
                }
            }
        };
        let judge = snapshot
            .get_export_index(None, &export)
            .and_then(|interface| snapshot.get_export_index(Some(&interface), "judge"));
        let pre = self
            .linker
            .instantiate_pre(&snapshot)
            .and_then(Prelinked::new)
            .map_err(|e| {
                anyhow::anyhow!("{label}: its prepared snapshot cannot be linked: {e:#}")
            })?;
        let Some(judge) = judge else {
            bail!("{label}: exports `prepare` without `judge`");
        };
        let pre = Prelinked {
            judge: Some(judge),
            ..pre
        };
        Ok(LoadedPlugin {
            pre,
            spare: Default::default(),
            ..plugin
        })
    }

    /// The component as it is once `prepare(config, places)` has run: an instrumented copy is
    /// instantiated, prepared, and its memories and globals written back as its initial state.
    /// The instrumented copy is compiled once per plugin (`cached`) or in memory.
    async fn snapshot(&self, job: &Job<'_>) -> Result<Vec<u8>> {
        let Job {
            label,
            component,
            export,
            config,
            places,
            limits,
            cached,
        } = *job;
        let wizer = Wizer::new();
        let (context, instrumented) = wizer
            .instrument_component(component)
            .map_err(|e| anyhow::anyhow!("{label}: cannot be snapshotted: {e:#}"))?;
        let instrumented = if cached {
            let label = format!("{label} (for preparing)");
            self.compile(&label, &instrumented, &sha256_hex(&instrumented))?
        } else {
            Component::new(&self.engine, &instrumented)
                .map_err(|e| anyhow::anyhow!("{label}: cannot be instrumented: {e:#}"))?
        };
        let _slot = self.slots.clone().acquire_owned().await?;
        let mut store = self.store(limits);
        let instance = self
            .linker
            .instantiate_async(&mut store, &instrumented)
            .await
            .map_err(|e| anyhow::anyhow!("{label}: {}", describe_trap(&e, limits)))?;
        if !call_prepare(&mut store, &instance, export, config, places, limits)
            .await?
            .ready
        {
            bail!("{label}: `prepare` kept its state once, then not: it must be deterministic");
        }
        self.clock.arm(&mut store, limits.timeout);
        let snapshot = wizer
            .snapshot_component(&context, &mut Snapshotted { store, instance })
            .await
            .map_err(|e| anyhow::anyhow!("{label}: cannot be snapshotted: {e:#}"))?;
        Ok(snapshot)
    }
}

/// What a snapshot is taken of: a plugin, its config and places, and how.
struct Job<'a> {
    label: &'a str,
    component: &'a [u8],
    /// The `prepare` interface's export name.
    export: &'a str,
    config: &'a str,
    places: &'a Places,
    limits: Limits,
    /// Whether the instrumented copy's compiled code may come from the compile cache.
    cached: bool,
}

/// Calls `prepare` in `instance`: what it made of the config; an error for the plugin's own
/// `err` or a failure (trap, deadline, memory).
async fn call_prepare(
    store: &mut Store<SandboxState>,
    instance: &Instance,
    export: &str,
    config: &str,
    places: &Places,
    limits: Limits,
) -> Result<Preparation> {
    let state = store.data_mut();
    state.cwd = places.cwd.clone().into();
    state.home = places.home_dir.clone().into();
    state.workspace_roots = places.workspace_roots.iter().map(Into::into).collect();
    let interface = instance
        .get_export_index(&mut *store, None, export)
        .context("no `prepare` interface")?;
    let func = instance
        .get_export_index(&mut *store, Some(&interface), "prepare")
        .context("no `prepare` function")?;
    let prepare = instance
        .get_typed_func::<(&str, &Places), (std::result::Result<Preparation, String>,)>(
            &mut *store,
            func,
        )
        .map_err(|e| anyhow::anyhow!("`prepare` has the wrong type: {e:#}"))?;
    match prepare.call_async(&mut *store, (config, places)).await {
        Err(trap) => bail!("`prepare` failed: {}", describe_trap(&trap, limits)),
        Ok((Err(message),)) => bail!("refuses its config: {}", super::clean(&message)),
        Ok((Ok(preparation),)) => Ok(preparation),
    }
}

/// An instrumented instance, as wasmtime-wizer reads its state: through the accessor functions
/// the instrumentation exported.
struct Snapshotted {
    store: Store<SandboxState>,
    instance: Instance,
}

impl Snapshotted {
    async fn call<R: Lift + 'static, T>(
        &mut self,
        interface: &str,
        func: &str,
        read: impl FnOnce(&mut Store<SandboxState>, R) -> T,
    ) -> T {
        let store = &mut self.store;
        // wizer asks only for what its own instrumentation added: a failure is a bug in it.
        let (_, interface) = self
            .instance
            .get_export(&mut *store, None, interface)
            .expect("wizer's accessor interface");
        let (_, func) = self
            .instance
            .get_export(&mut *store, Some(&interface), func)
            .expect("wizer's accessor");
        let func = self
            .instance
            .get_typed_func::<(), (R,)>(&mut *store, func)
            .expect("wizer's accessor type");
        let (value,) = func
            .call_async(&mut *store, ())
            .await
            .expect("wizer's accessor call");
        read(store, value)
    }
}

impl ComponentInstanceState for Snapshotted {
    async fn call_func_ret_list_u8(
        &mut self,
        instance: &str,
        func: &str,
        contents: impl FnOnce(&[u8]) + Send,
    ) {
        self.call(instance, func, |store, list: WasmList<u8>| {
            contents(list.as_le_slice(&*store))
        })
        .await
    }

    async fn call_func_ret_s32(&mut self, instance: &str, func: &str) -> i32 {
        self.call(instance, func, |_, v| v).await
    }

    async fn call_func_ret_s64(&mut self, instance: &str, func: &str) -> i64 {
        self.call(instance, func, |_, v| v).await
    }

    async fn call_func_ret_f32(&mut self, instance: &str, func: &str) -> u32 {
        self.call(instance, func, |_, v: f32| v.to_bits()).await
    }

    async fn call_func_ret_f64(&mut self, instance: &str, func: &str) -> u64 {
        self.call(instance, func, |_, v: f64| v.to_bits()).await
    }
}
