//! The plugin runtime: one wasmtime engine with its instance pool ([`Runtime::new`]), loading
//! components ([`load`]: pin, grants, WIT version, compile cache), and running one sandboxed
//! evaluation in a fresh instance under CPU, memory and time limits ([`instance`]).
//!
//! - [`clock`]: the epoch clock that stops guest code at its CPU deadline;
//! - [`engine`]: the engine's settings (shared with `build.rs`);
//! - [`grants`]: what a plugin may import (the one place authority is decided);
//! - [`prepare`]: a handler's config prepared once per load, in a snapshot every instance starts from;
//! - [`sandbox`]: what an instance owns and the host functions it can call;
//! - [`shell`]: the `shell` import, a command read with the built-in plugins' shell crate;
//! - [`wit`]: the generated bindings and the conversions at the WIT boundary.

mod clock;
mod engine;
pub mod grants;
pub mod instance;
pub mod load;
mod prepare;
mod sandbox;
pub mod shell;
pub mod wit;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use tokio::sync::Semaphore;
use wasmtime::Engine;
use wasmtime::component::Linker;

use clock::Clock;
use engine::{Instances, POOL_INSTANCES};
pub use grants::{Grant, Need, default_grants};
pub use instance::{Batch, Evaluation, Instance, Interest, LoadedPlugin, Lowered};
pub use prepare::{FromCache, PrepareKey};
use sandbox::SandboxState;
pub use wit::WIT_VERSION;

use crate::cache::{CacheDirs, CompileCache};
use crate::verdict::Verdict;

/// How often the epoch ticks; a handler's CPU deadline is counted in these.
const EPOCH_TICK: Duration = Duration::from_millis(5);
/// Characters kept per reason and per log line.
const MAX_TEXT: usize = 2000;

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

/// What a component is: its digest, size, imports (with what each needs) and exports.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ComponentInfo {
    pub digest: String,
    pub size: usize,
    pub imports: Vec<(String, Need)>,
    pub exports: Vec<String>,
}

/// A plugin's answer: its verdict and its reason (empty for allow and abstain).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ruling {
    pub verdict: Verdict,
    pub reason: String,
}

impl Ruling {
    pub const ABSTAIN: Ruling = Ruling {
        verdict: Verdict::Abstain,
        reason: String::new(),
    };
}

/// Why a handler has no verdict. Its `on_error` verdict then counts instead (never allow).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The plugin could not be loaded (unreadable, bad pin, forbidden import, not a plugin).
    Load(String),
    /// It ran past its wall-clock timeout (blocked in the host, or the deadline's slack).
    Timeout { ms: u128 },
    /// It ran past its CPU deadline.
    Cpu { ms: u128 },
    /// It grew its memory past its limit.
    Memory { mib: usize, detail: String },
    /// It trapped (a panic, an unreachable, a failed instantiation).
    Trap(String),
    /// It returned an error instead of a verdict.
    Error(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Load(why) => write!(f, "failed to load: {why}"),
            Failure::Timeout { ms } => write!(f, "timed out after {ms} ms"),
            Failure::Cpu { ms } => write!(f, "exceeded its CPU deadline of {ms} ms"),
            Failure::Memory { mib, detail } => {
                write!(f, "exceeded its memory limit of {mib} MiB ({detail})")
            }
            Failure::Trap(why) => write!(f, "trapped: {why}"),
            Failure::Error(message) => write!(f, "plugin error: {message}"),
        }
    }
}

impl std::error::Error for Failure {}

impl serde::Serialize for Failure {
    /// As its message: the audit log's `error` field is text.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The one engine of the process, its linker, and the compile cache.
pub struct Runtime {
    engine: Engine,
    linker: Linker<SandboxState>,
    cache: CompileCache,
    /// Every component compiled (or taken from the cache) in this process, by sha256: a
    /// plugin named by several handlers is compiled once.
    compiled: std::sync::Mutex<std::collections::HashMap<String, wasmtime::component::Component>>,
    /// One permit per pool slot.
    slots: Arc<Semaphore>,
    /// Workspace roots as `paths.resolve` first found them (see [`crate::paths::Roots`]).
    roots: Arc<crate::paths::Roots>,
    /// Why the instance pool is not used, when it could not be set up.
    pub notice: Option<String>,
    /// Whether a handler keeps an instance made ahead of its next request: not for a process
    /// that decides one request and exits.
    spares: bool,
    /// Whether the built-ins' native code runs where it lies in the binary ([`CodeInPlace`]).
    code_in_place: bool,
    /// The epoch clock every store's CPU deadline is armed on.
    clock: Arc<Clock>,
}

/// How many requests a runtime is for, which decides how it is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Serving {
    /// Many (`run`, `proxy`, `check`, `hook serve`): an instance pool, spares made ahead.
    Many,
    /// One, in a process that exits after it (a hook call): instances allocated one by one,
    /// no spares.
    One,
}

impl Runtime {
    /// Builds the engine (async, epoch interruption) and starts its epoch ticker. Instances
    /// come from a pool, which reserves about 1 TiB of address space up front; where that is
    /// refused (`ulimit -v`, some containers) they are allocated one by one instead, with a
    /// notice. Compiled plugins are cached in `cache_dir`.
    pub fn new(cache_dir: Option<PathBuf>) -> Result<Arc<Runtime>> {
        Runtime::with_cache(CacheDirs {
            writable: cache_dir,
            ..CacheDirs::default()
        })
    }

    /// [`Runtime::new`], with compiled plugins read from and written to `dirs`.
    pub fn with_cache(dirs: CacheDirs) -> Result<Arc<Runtime>> {
        Runtime::serving(dirs, Serving::Many)
    }

    /// A runtime for `serving`, with compiled plugins read from and written to `dirs`.
    pub fn serving(dirs: CacheDirs, serving: Serving) -> Result<Arc<Runtime>> {
        let code_in_place = serving == Serving::One && CodeInPlace::works_here();
        let new_engine = |instances| {
            let mut config = engine::config(instances);
            if code_in_place {
                config.with_custom_code_memory(Some(Arc::new(CodeInPlace)));
            }
            Engine::new(&config)
        };
        let (engine, notice) = match serving {
            Serving::Many => match new_engine(Instances::Pooled) {
                Ok(engine) => (engine, None),
                Err(error) => (
                    new_engine(Instances::Unreserved)?,
                    Some(format!(
                        "the plugin instance pool could not be set up ({error:#}); instances are \
                         allocated one by one, which is slower (it needs ~1 TiB of address space: \
                         see `ulimit -v`)"
                    )),
                ),
            },
            // A memory's reservation is made at instantiation, too late to fall back: asked
            // for here.
            Serving::One if can_reserve_a_memory() => (new_engine(Instances::OneByOne)?, None),
            Serving::One => (new_engine(Instances::Unreserved)?, None),
        };
        let clock = Clock::start(&engine)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        wit::Plugin::add_to_linker::<_, wasmtime::component::HasSelf<_>>(&mut linker, |s| s)?;
        let cache = CompileCache::new(dirs, &engine);
        Ok(Arc::new(Runtime {
            engine,
            linker,
            cache,
            compiled: Default::default(),
            slots: Arc::new(Semaphore::new(POOL_INSTANCES as usize)),
            roots: Arc::default(),
            notice,
            spares: serving == Serving::Many,
            code_in_place,
            clock,
        }))
    }
}

/// Makes native code executable where it lies, as wasmtime does for the code it copies: code
/// it compiled or read is made read-only, then its text executable (`mprotect`); a built-in's
/// code in the binary (read-only pages already) gets the same last step. A process deciding
/// one request runs the built-ins there, sparing the copy of megabytes of code and the page
/// faults it takes.
struct CodeInPlace;

impl CodeInPlace {
    /// Where the built-ins' pages are pages: Linux on x86-64 (4 KiB), which `builtin`'s
    /// alignment is for.
    fn works_here() -> bool {
        cfg!(all(target_os = "linux", target_arch = "x86_64")) && page_size() == 4096
    }

    fn protect(ptr: *const u8, len: usize, protection: libc::c_int) -> wasmtime::Result<()> {
        // SAFETY: wasmtime passes the text of a code image it holds, page-aligned
        // (`required_alignment`); only its protection changes.
        let done = unsafe { libc::mprotect(ptr.cast_mut().cast(), len, protection) };
        if done != 0 {
            return Err(wasmtime::Error::msg(format!(
                "cannot change the protection of plugin code: {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok(())
    }
}

impl wasmtime::CustomCodeMemory for CodeInPlace {
    fn required_alignment(&self) -> usize {
        page_size()
    }

    fn publish_executable(&self, ptr: *const u8, len: usize) -> wasmtime::Result<()> {
        CodeInPlace::protect(ptr, len, libc::PROT_READ | libc::PROT_EXEC)
    }

    fn unpublish_executable(&self, ptr: *const u8, len: usize) -> wasmtime::Result<()> {
        CodeInPlace::protect(ptr, len, libc::PROT_READ | libc::PROT_WRITE)
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096)
}

/// Whether this process may reserve the address space of one plugin memory (4 GiB and its
/// guard), as the pool's configuration has wasmtime do at each instantiation.
fn can_reserve_a_memory() -> bool {
    const RESERVATION: usize = 8 << 30;
    // SAFETY: a fresh private mapping with no access, unmapped at once; nothing touches it.
    unsafe {
        let at = libc::mmap(
            std::ptr::null_mut(),
            RESERVATION,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        );
        if at == libc::MAP_FAILED {
            return false;
        }
        libc::munmap(at, RESERVATION);
    }
    true
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
