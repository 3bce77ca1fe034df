//! The plugin runtime: one wasmtime engine, loading components (pin, grants, compile cache),
//! and running one sandboxed evaluation in a fresh instance under CPU, memory and time limits.
//!
//! Every evaluation gets an instance no request has used. Making one and wiping it afterwards
//! are kept off the request's path: each handler has a spare instance made in the background,
//! which the next request takes, and the instances a decision used are dropped in the
//! background once it is made ([`Batch`]).

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use sha2::{Digest, Sha256};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, StoreLimits,
    StoreLimitsBuilder,
};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::cache::CompileCache;
use crate::request::{self, ToolRequest};

mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "plugin",
        exports: { default: async },
    });
}

use bindings::acp_gate::plugin::{log, paths, types};

/// The WIT package version this host implements.
pub const WIT_VERSION: &str = "0.1.0";

/// How often the epoch ticks; a handler's CPU deadline is counted in these.
const EPOCH_TICK: Duration = Duration::from_millis(5);
/// How many plugin instances may be live at once: the size of the instance pool. More
/// concurrent evaluations wait for a slot.
const POOL_INSTANCES: u32 = 128;
/// Log lines kept per evaluation, and characters per line and per reason.
const MAX_LOG_LINES: usize = 32;
const MAX_TEXT: usize = 2000;

/// A plugin's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Deny(String),
    Ask(String),
    Abstain,
}

/// Per-evaluation limits, set per handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub timeout: Duration,
    pub memory_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_millis(250),
            memory_bytes: 64 << 20,
        }
    }
}

/// What a plugin may import. Each grant covers a set of interfaces; WASI interfaces that give
/// access to the outside world are never granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Grant {
    /// `acp-gate:plugin/log`.
    Log,
    /// `acp-gate:plugin/paths`: host-resolved facts about paths.
    Paths,
    /// `wasi:cli/*` and `wasi:io/*`, served empty: no environment, no arguments, no stdin,
    /// output discarded. Language runtimes import these even when they never use them.
    WasiCli,
    /// `wasi:clocks/*`: the real clocks.
    WasiClocks,
    /// `wasi:random/*`.
    WasiRandom,
    /// `wasi:filesystem/*`, served with no preopened directory: no file can be opened.
    WasiFilesystem,
}

impl Grant {
    pub const ALL: [Grant; 6] = [
        Grant::Log,
        Grant::Paths,
        Grant::WasiCli,
        Grant::WasiClocks,
        Grant::WasiRandom,
        Grant::WasiFilesystem,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Grant::Log => "log",
            Grant::Paths => "paths",
            Grant::WasiCli => "wasi-cli",
            Grant::WasiClocks => "wasi-clocks",
            Grant::WasiRandom => "wasi-random",
            Grant::WasiFilesystem => "wasi-filesystem",
        }
    }

    pub fn parse(name: &str) -> Option<Grant> {
        Grant::ALL.into_iter().find(|g| g.name() == name)
    }
}

/// What importing an interface takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Need {
    /// Nothing: the contract's own types carry no authority.
    Nothing,
    Grant(Grant),
    /// acp-gate never grants it (sockets, HTTP, unknown interfaces).
    Refused,
}

impl Need {
    fn of(import: &str) -> Need {
        let interface = import.split('@').next().unwrap_or(import);
        match interface {
            "acp-gate:plugin/types" => Need::Nothing,
            "acp-gate:plugin/log" => Need::Grant(Grant::Log),
            "acp-gate:plugin/paths" => Need::Grant(Grant::Paths),
            _ if interface.starts_with("wasi:cli/") || interface.starts_with("wasi:io/") => {
                Need::Grant(Grant::WasiCli)
            }
            _ if interface.starts_with("wasi:clocks/") => Need::Grant(Grant::WasiClocks),
            _ if interface.starts_with("wasi:random/") => Need::Grant(Grant::WasiRandom),
            _ if interface.starts_with("wasi:filesystem/") => Need::Grant(Grant::WasiFilesystem),
            _ => Need::Refused,
        }
    }
}

/// The grants every plugin has unless its entry says otherwise.
pub fn default_grants() -> BTreeSet<Grant> {
    [Grant::Log, Grant::WasiCli].into()
}

/// The one engine of the process, its linker, and the compile cache.
pub struct Runtime {
    engine: Engine,
    linker: Linker<SandboxState>,
    cache: Option<CompileCache>,
    /// One permit per pool slot.
    slots: Arc<Semaphore>,
    /// Why the instance pool is not used, when it could not be set up.
    pub notice: Option<String>,
}

/// What a component is: its digest, size, imports (with what each needs) and exports.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ComponentInfo {
    pub digest: String,
    pub size: usize,
    pub imports: Vec<(String, Need)>,
    pub exports: Vec<String>,
}

/// A plugin compiled, checked and pre-linked: ready to instantiate per request.
pub struct LoadedPlugin {
    pub label: String,
    pub info: ComponentInfo,
    pre: bindings::PluginPre<SandboxState>,
    /// An instance made ahead of the next request, never called yet.
    spare: Arc<Mutex<Option<Instance>>>,
}

/// The result of one evaluation: the verdict, or why there is none.
pub struct Evaluation {
    pub outcome: Result<Verdict, String>,
    pub logs: Vec<String>,
    pub elapsed: Duration,
}

impl Runtime {
    /// Builds the engine (async, epoch interruption) and starts its epoch ticker. Instances
    /// come from a pool, which reserves about 1 TiB of address space up front; where that is
    /// refused (`ulimit -v`, some containers) they are allocated one by one instead, with a
    /// notice.
    pub fn new(cache_dir: Option<PathBuf>) -> Result<Arc<Runtime>> {
        let engine = |pool: bool| {
            let mut config = Config::new();
            config.epoch_interruption(true);
            config.wasm_component_model(true);
            if pool {
                config.allocation_strategy(InstanceAllocationStrategy::Pooling(instance_pool()));
            } else {
                // No 4 GiB reservation per memory either: bounds are checked in code instead.
                config
                    .memory_reservation(0)
                    .memory_guard_size(0)
                    .memory_reservation_for_growth(0);
            }
            Engine::new(&config)
        };
        let (engine, notice) = match engine(true) {
            Ok(engine) => (engine, None),
            Err(error) => (
                engine(false)?,
                Some(format!(
                    "the plugin instance pool could not be set up ({error:#}); instances are \
                     allocated one by one, which is slower (it needs ~1 TiB of address space: \
                     see `ulimit -v`)"
                )),
            ),
        };
        let weak = engine.weak();
        std::thread::Builder::new()
            .name("acp-gate-epoch".into())
            .spawn(move || {
                while let Some(engine) = weak.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(EPOCH_TICK);
                }
            })?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        bindings::Plugin::add_to_linker::<_, wasmtime::component::HasSelf<_>>(&mut linker, |s| s)?;
        let cache = cache_dir.map(|dir| CompileCache::new(dir, &engine));
        Ok(Arc::new(Runtime {
            engine,
            linker,
            cache,
            slots: Arc::new(Semaphore::new(POOL_INSTANCES as usize)),
            notice,
        }))
    }

    /// Compiles (or takes from the cache) and describes a component, without checking grants:
    /// what `acp-gate plugin inspect` shows.
    pub fn inspect(&self, label: &str, bytes: &[u8]) -> Result<ComponentInfo> {
        let digest = hex(&Sha256::digest(bytes));
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
        let digest = hex(&Sha256::digest(bytes));
        if let Some(pin) = pin
            && !pin.eq_ignore_ascii_case(&digest)
        {
            bail!("{label}: sha256 mismatch: handlers.toml pins {pin}, the file has {digest}");
        }
        let component = self.compile(label, bytes, &digest)?;
        let info = self.describe(&component, digest, bytes.len());
        let refused: Vec<String> = info
            .imports
            .iter()
            .filter_map(|(import, need)| match need {
                Need::Nothing => None,
                Need::Grant(grant) if grants.contains(grant) => None,
                Need::Grant(grant) => {
                    Some(format!("`{import}` (needs the `{}` grant)", grant.name()))
                }
                Need::Refused => Some(format!("`{import}` (never granted to plugins)")),
            })
            .collect();
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
            .find(|version| !runs_plugins_built_for(version))
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
        let pre = bindings::PluginPre::new(instance_pre).map_err(|e| {
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
        })
    }

    fn compile(&self, label: &str, bytes: &[u8], digest: &str) -> Result<Component> {
        check_is_component(label, bytes)?;
        // A first compile takes from ~0.1 s (Rust) to seconds (Python, JavaScript): say so.
        let progress = || {
            if std::io::stderr().is_terminal() {
                eprintln!(
                    "acp-gate: compiling {label} ({} KiB; first use, cached afterwards)…",
                    bytes.len() >> 10
                );
            }
        };
        match &self.cache {
            Some(cache) => cache.get_or_compile(digest, bytes, progress),
            None => {
                progress();
                Component::new(&self.engine, bytes)
            }
        }
        .map_err(|e| anyhow::anyhow!("{label}: not a valid WebAssembly component: {e:#}"))
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

    /// Evaluations whose clean-up waits for the end of the batch (see [`Batch`]).
    pub fn batch(self: &Arc<Self>) -> Batch {
        Batch {
            runtime: self.clone(),
            used: Vec::new(),
        }
    }

    /// One evaluation, in a batch of its own.
    pub async fn evaluate(
        self: &Arc<Self>,
        plugin: &LoadedPlugin,
        request: &ToolRequest,
        config: &str,
        limits: Limits,
    ) -> Evaluation {
        self.batch().evaluate(plugin, request, config, limits).await
    }

    /// A fresh instance of `plugin` in its own store, with `limits`, once a pool slot is free.
    pub async fn instantiate(
        &self,
        plugin: &LoadedPlugin,
        limits: Limits,
    ) -> Result<Instance, String> {
        let slot = self
            .slots
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| e.to_string())?;
        self.instantiate_in(&plugin.pre, slot, limits).await
    }

    async fn instantiate_in(
        &self,
        pre: &bindings::PluginPre<SandboxState>,
        slot: OwnedSemaphorePermit,
        limits: Limits,
    ) -> Result<Instance, String> {
        let mut store = Store::new(&self.engine, SandboxState::new(limits));
        store.limiter(|state| &mut state.limits);
        store.set_epoch_deadline(ticks(limits.timeout));
        store.epoch_deadline_trap();
        match pre.instantiate_async(&mut store).await {
            Ok(bindings) => Ok(Instance {
                store,
                bindings,
                limits,
                _slot: slot,
            }),
            Err(trap) => Err(describe_trap(&trap, limits)),
        }
    }
}

/// Evaluations that leave their clean-up to the end: each runs in a fresh instance (the
/// handler's spare if there is one, else one made now), and when the batch is dropped, one
/// background task drops the instances used (wiping their pool slots) and makes new spares.
/// Wiping a slot makes the kernel interrupt every core of the process (TLB shootdown): done
/// while the next handler of a decision runs, it would slow that handler down.
pub struct Batch {
    runtime: Arc<Runtime>,
    used: Vec<Used>,
}

/// What a batch has to clean up for one evaluation.
struct Used {
    instance: Option<Instance>,
    pre: bindings::PluginPre<SandboxState>,
    spare: Arc<Mutex<Option<Instance>>>,
    limits: Limits,
}

impl Batch {
    /// Runs one evaluation. Never panics and never returns `Allow` for a failure: every trap,
    /// timeout, memory cap or plugin error comes back as `Err(why)`.
    pub async fn evaluate(
        &mut self,
        plugin: &LoadedPlugin,
        request: &ToolRequest,
        config: &str,
        limits: Limits,
    ) -> Evaluation {
        let started = Instant::now();
        let deadline = limits.timeout + EPOCH_TICK * 4;
        let spare = lock(&plugin.spare).take().filter(|s| s.limits == limits);
        let run = async {
            let mut instance = match spare {
                Some(instance) => instance,
                None => self.runtime.instantiate(plugin, limits).await?,
            };
            let outcome = instance.evaluate(request, config).await;
            Ok::<_, String>((outcome, instance.take_logs(), instance))
        };
        // The epoch deadline stops guest code; the wall clock also stops a guest blocked in the host.
        let (outcome, logs, instance) = match tokio::time::timeout(deadline, run).await {
            Err(_) => (
                Err(format!("timed out after {} ms", limits.timeout.as_millis())),
                Vec::new(),
                None,
            ),
            Ok(Err(error)) => (Err(error), Vec::new(), None),
            Ok(Ok((outcome, logs, instance))) => (outcome, logs, Some(instance)),
        };
        self.used.push(Used {
            instance,
            pre: plugin.pre.clone(),
            spare: plugin.spare.clone(),
            limits,
        });
        Evaluation {
            outcome,
            logs,
            elapsed: started.elapsed(),
        }
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        let (runtime, mut used) = (self.runtime.clone(), std::mem::take(&mut self.used));
        let Ok(background) = tokio::runtime::Handle::try_current() else {
            return;
        };
        background.spawn(async move {
            for used in &mut used {
                drop(used.instance.take());
            }
            for used in used {
                // A spare only while half the pool stays free for evaluations.
                if lock(&used.spare).is_some()
                    || runtime.slots.available_permits() < POOL_INSTANCES as usize / 2
                {
                    continue;
                }
                let Ok(slot) = runtime.slots.clone().try_acquire_owned() else {
                    continue;
                };
                if let Ok(instance) = runtime.instantiate_in(&used.pre, slot, used.limits).await {
                    lock(&used.spare).get_or_insert(instance);
                }
            }
        });
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// A live plugin instance. The chain uses each one for a single request (isolation); the
/// benchmark also measures calling one repeatedly.
pub struct Instance {
    store: Store<SandboxState>,
    bindings: bindings::Plugin,
    limits: Limits,
    /// The pool slot it occupies, given back when it is dropped.
    _slot: OwnedSemaphorePermit,
}

impl Instance {
    /// Calls the plugin's `evaluate` under the CPU deadline. A trap leaves the instance unusable.
    pub async fn evaluate(
        &mut self,
        request: &ToolRequest,
        config: &str,
    ) -> Result<Verdict, String> {
        self.store.set_epoch_deadline(ticks(self.limits.timeout));
        let state = self.store.data_mut();
        state.cwd.clone_from(&request.cwd);
        state.home.clone_from(&request.home);
        let wit_request = to_wit(request);
        match self
            .bindings
            .acp_gate_plugin_handler()
            .call_evaluate(&mut self.store, &wit_request, config)
            .await
        {
            Err(trap) => Err(describe_trap(&trap, self.limits)),
            Ok(Err(message)) => Err(format!("plugin error: {}", clean(&message))),
            Ok(Ok(verdict)) => Ok(from_wit(verdict)),
        }
    }

    pub fn take_logs(&mut self) -> Vec<String> {
        std::mem::take(&mut self.store.data_mut().logs)
    }
}

/// Whether this host runs a plugin built for WIT `version`: the same major.minor (patch
/// releases only add documentation and compatible fixes).
fn runs_plugins_built_for(version: &str) -> bool {
    let major_minor = |v: &str| v.split('.').take(2).map(str::to_owned).collect::<Vec<_>>();
    major_minor(version) == major_minor(WIT_VERSION)
}

/// Fresh instances come from a pool set up once: each costs a slot's reset (memory back to its
/// copy-on-write image) instead of mapping and unmapping memory, which is most of what a
/// fresh instance used to cost. Isolation is the same: a slot is wiped between instances.
fn instance_pool() -> PoolingAllocationConfig {
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(POOL_INSTANCES)
        // Language runtimes (Python, JavaScript) are components of several core modules.
        .total_core_instances(POOL_INSTANCES * 8)
        .total_memories(POOL_INSTANCES * 2)
        .total_tables(POOL_INSTANCES * 8)
        .total_stacks(POOL_INSTANCES)
        .max_memories_per_module(1)
        .table_elements(1 << 17)
        // No `linear_memory_keep_resident`: with 2 MiB a decision was ~35% faster, but every
        // slot the pool ever used kept its 2 MiB, and `run` grew to 330 MB (BENCHMARKS.md).
        // `memory_mb` is at most 4096; each handler's own cap is its store's limiter.
        .max_memory_size(4 << 30);
    pool
}

fn ticks(timeout: Duration) -> u64 {
    (timeout.as_micros() / EPOCH_TICK.as_micros()).max(1) as u64 + 1
}

fn describe_trap(error: &wasmtime::Error, limits: Limits) -> String {
    let text = format!("{error:#}");
    if let Some(wasmtime::Trap::Interrupt) = error.downcast_ref::<wasmtime::Trap>() {
        return format!(
            "exceeded its CPU deadline of {} ms",
            limits.timeout.as_millis()
        );
    }
    if text.contains("memory")
        && (text.contains("limit") || text.contains("grow") || text.contains("minimum"))
    {
        return format!(
            "exceeded its memory limit of {} MiB ({})",
            limits.memory_bytes >> 20,
            clean(&text)
        );
    }
    format!("trapped: {}", clean(&text))
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

/// Keeps plugin text printable and bounded: it reaches terminals and logs.
pub(crate) fn clean(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| if c.is_control() && c != '\n' { ' ' } else { c })
        .filter(|c| !matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'))
        .take(MAX_TEXT)
        .collect();
    if text.chars().count() > MAX_TEXT {
        out.push('…');
    }
    out
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What one sandboxed instance owns: an empty WASI context, its limits and its log.
struct SandboxState {
    wasi: WasiCtx,
    table: ResourceTable,
    limits: StoreLimits,
    logs: Vec<String>,
    /// The directories `paths.resolve` works from: the request's, set when it is called.
    cwd: PathBuf,
    home: PathBuf,
}

impl SandboxState {
    fn new(limits: Limits) -> SandboxState {
        SandboxState {
            // No env, no args, no preopens, no stdin; stdout and stderr discarded.
            wasi: WasiCtx::builder().build(),
            table: ResourceTable::new(),
            limits: StoreLimitsBuilder::new()
                .memory_size(limits.memory_bytes)
                .instances(64)
                .tables(64)
                .memories(64)
                .table_elements(1 << 20)
                .trap_on_grow_failure(true)
                .build(),
            logs: Vec::new(),
            cwd: PathBuf::new(),
            home: PathBuf::new(),
        }
    }
}

impl WasiView for SandboxState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl types::Host for SandboxState {}

impl log::Host for SandboxState {
    fn write(&mut self, level: log::Level, message: String) {
        if self.logs.len() < MAX_LOG_LINES {
            let level = match level {
                log::Level::Debug => "debug",
                log::Level::Info => "info",
                log::Level::Warn => "warn",
                log::Level::Error => "error",
            };
            self.logs.push(format!("{level}: {}", clean(&message)));
        }
    }
}

impl paths::Host for SandboxState {
    fn resolve(&mut self, path: String) -> paths::Resolution {
        let r = crate::paths::resolve(&path, &self.cwd, &self.home);
        paths::Resolution {
            canonical: r.canonical.display().to_string(),
            exists: r.exists,
            through_symlink: r.through_symlink,
            case_insensitive: r.case_insensitive,
        }
    }
}

fn to_wit(r: &ToolRequest) -> types::Request {
    let path_string = |p: &Path| p.display().to_string();
    types::Request {
        session_id: r.session_id.clone(),
        tool_call_id: r.tool_call_id.clone(),
        title: r.title.clone(),
        kind: kind_to_wit(r.kind),
        declared_kind: r.declared_kind.map(kind_to_wit),
        tool_name: r.tool_name.clone(),
        source: match r.source {
            request::RequestSource::PermissionRequest => types::RequestSource::PermissionRequest,
            request::RequestSource::FsRead => types::RequestSource::FsRead,
            request::RequestSource::FsWrite => types::RequestSource::FsWrite,
            request::RequestSource::TerminalCreate => types::RequestSource::TerminalCreate,
        },
        command: r.command.as_ref().map(|c| types::CommandLine {
            argv: c.argv.clone(),
            shell: c.shell.clone(),
        }),
        paths: r
            .paths
            .iter()
            .map(|p| types::PathRef {
                raw: p.raw.clone(),
                absolute: path_string(&p.absolute),
                access: match p.access {
                    request::Access::Read => types::Access::Read,
                    request::Access::Write => types::Access::Write,
                    request::Access::Delete => types::Access::Delete,
                },
                origin: p.origin.clone(),
            })
            .collect(),
        diffs: r
            .diffs
            .iter()
            .map(|d| types::Diff {
                path: path_string(&d.path),
                old_text: d.old_text.clone(),
                new_text: d.new_text.clone(),
            })
            .collect(),
        cwd: path_string(&r.cwd),
        workspace_roots: r.workspace_roots.iter().map(|p| path_string(p)).collect(),
        home_dir: path_string(&r.home),
        options: r
            .options
            .iter()
            .map(|o| types::PermissionOption {
                id: o.id.clone(),
                name: o.name.clone(),
                kind: match o.kind {
                    request::OptionKind::AllowOnce => types::OptionKind::AllowOnce,
                    request::OptionKind::AllowAlways => types::OptionKind::AllowAlways,
                    request::OptionKind::RejectOnce => types::OptionKind::RejectOnce,
                    request::OptionKind::RejectAlways => types::OptionKind::RejectAlways,
                },
            })
            .collect(),
        received_at_ms: r.received_at_ms,
        raw_json: r.raw.to_string(),
    }
}

fn kind_to_wit(kind: request::ToolKind) -> types::ToolKind {
    use request::ToolKind as K;
    match kind {
        K::Read => types::ToolKind::Read,
        K::Edit => types::ToolKind::Edit,
        K::Delete => types::ToolKind::Delete,
        K::Move => types::ToolKind::Move,
        K::Search => types::ToolKind::Search,
        K::Execute => types::ToolKind::Execute,
        K::Think => types::ToolKind::Think,
        K::Fetch => types::ToolKind::Fetch,
        K::SwitchMode => types::ToolKind::SwitchMode,
        K::Other => types::ToolKind::Other,
    }
}

fn from_wit(verdict: types::Verdict) -> Verdict {
    match verdict {
        types::Verdict::Allow => Verdict::Allow,
        types::Verdict::Deny(reason) => Verdict::Deny(clean(&reason)),
        types::Verdict::Ask(reason) => Verdict::Ask(clean(&reason)),
        types::Verdict::Abstain => Verdict::Abstain,
    }
}
